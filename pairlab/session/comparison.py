"""With the oracle as the person: what the session's strategy found against other strategies
(random labelling, static retrieval) at the same budget, each run as an oracle session of its
own beside the first."""
from __future__ import annotations

import numpy as np
import pandas as pd

__all__ = ["compare_strategies"]


def compare_strategies(session, strategies, *, learner=None) -> pd.DataFrame:
    """One row per strategy (the session's first): labels, matches found, labels per match found,
    and the share of all true matches found. Needs the oracle (the truth is what is counted)."""
    from .session import LabelingSession

    if session.annotator != "oracle":
        raise ValueError("compare needs the oracle as the person: the matches found are counted "
                         "against the truth, which a person's session does not know")
    rows = [_row(session.config.strategy, session, learner)]
    for strategy in strategies:
        if strategy == session.config.strategy:
            continue
        other = LabelingSession(session.pool.left, session.folder.with_name(f"{session.folder.name}-{strategy}"),
                                **{**session.options, "strategy": strategy, "audit_share": 0.0})
        rows.append(_row(strategy, other, learner))
    return pd.DataFrame(rows).set_index("strategy")


def _row(strategy: str, session, learner) -> dict:
    result = session.result() or session.run(learner=learner)
    found = result["positives_found"]
    return {"strategy": strategy, "labels": result["labels"], "matches found": found,
            "labels per match": result["labels"] / found if found else np.inf,
            "share of all matches": found / len(session.pool.positives)}
