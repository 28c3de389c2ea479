"""With the oracle as the person: what the session's strategy found against other strategies
(random labelling, static retrieval) at the same budget, each run as an oracle session of its
own beside the first."""
from __future__ import annotations

import numpy as np
import pandas as pd

__all__ = ["compare_strategies", "coverage_sessions", "coverage_table"]


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
                                **{**session.options, "strategy": strategy, "audit_share": 0.0,
                                    "coverage": 0})
        rows.append(_row(strategy, other, learner))
    return pd.DataFrame(rows).set_index("strategy")


def _row(strategy: str, session, learner) -> dict:
    result = session.result() or session.run(learner=learner)
    found = result["positives_found"]
    return {"strategy": strategy, "labels": result["labels"], "matches found": found,
            "labels per match": result["labels"] / found if found else np.inf,
            "share of all matches": found / len(session.pool.positives)}


def coverage_sessions(session, seeds, *, learner=None) -> list:
    """``session`` and oracle sessions like it with other ``seeds`` (other trajectories), each
    run with its per-round coverage checks (``coverage`` fresh audits a round)."""
    from .session import LabelingSession

    if session.annotator != "oracle" or not session.coverage:
        raise ValueError("coverage needs the oracle as the person and coverage > 0 (fresh audits "
                         "per round)")
    sessions = [session]
    for seed in seeds:
        if seed == session.config.seed:
            continue
        sessions.append(LabelingSession(session.pool.left, session.folder.with_name(
            f"{session.folder.name}-seed{seed}"), **{**session.options, "seed": seed}))
    for other in sessions:
        if other.result() is None:
            other.run(learner=learner)
    return sessions


def coverage_table(sessions) -> dict:
    """``{budget: {"covered", "sessions", "mean_width", "repeats", "truth"}}`` of the estimated
    share found (recall of the labels), pooled over the sessions' fresh audits at each budget (the
    labels the strategy had asked when the round's audit was drawn)."""
    by_budget = {}
    for session in sessions:
        schedule = np.cumsum(session.config.schedule())
        for check in session.coverage_checks():
            budget = int(schedule[check["round"] - 1])
            by_budget.setdefault(budget, []).append(check)
    out = {}
    for budget, checks in sorted(by_budget.items()):
        repeats = np.array([c["repeats"] for c in checks])
        covered = np.array([c["coverage"]["recall_found"] for c in checks])
        width = np.array([c["mean_width"]["recall_found"] for c in checks])
        out[budget] = {"covered": float(np.sum(covered * repeats) / repeats.sum()),
                       "sessions": len(checks), "repeats": int(repeats.sum()),
                       "mean_width": float(np.sum(width * repeats) / repeats.sum()),
                       "truth": [c["truth"]["recall_found"] for c in checks]}
    return out
