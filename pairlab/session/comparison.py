"""With the oracle as the person: the session's strategy against others at the same budget, and
the coverage of its audit's intervals over seeds, each an oracle session beside the first."""

from __future__ import annotations

import numpy as np
import pandas as pd

from ..active.strategies import CandidateSearch, make_strategy
from ..evaluation.audit_estimate import replay_combined
from ..io import json_row

__all__ = ["compare_strategies", "comparison_record", "coverage_sessions", "coverage_table"]


def compare_strategies(session, strategies, *, learner=None) -> pd.DataFrame:
    """One row per strategy (the session's first, with the oracle): labels, matches found, labels
    per match (None where it found none) and the share of all true matches found."""
    if session.settings.annotator != "oracle":
        raise ValueError(
            "compare needs the oracle as the person: the matches found are counted "
            "against the truth, which a person's session does not know"
        )
    rows = [_row(session.config.strategy, session, learner)]
    for strategy in strategies:
        if strategy == session.config.strategy:
            continue
        # the session's one-to-one rule where the other strategy picks among candidates too
        # (random labelling draws from the whole pool: the rule has nothing to narrow)
        one_to_one = session.settings.one_to_one and isinstance(
            make_strategy(strategy), CandidateSearch
        )
        other = session.sibling(
            session.folder.with_name(f"{session.folder.name}-{strategy}"),
            strategy=strategy,
            audit_share=0.0,
            coverage=0,
            one_to_one=one_to_one,
        )
        rows.append(_row(strategy, other, learner))
    return pd.DataFrame(rows, dtype=object).set_index("strategy")  # None stays None, not NaN


def comparison_record(frame: pd.DataFrame | None) -> list[dict] | None:
    """:func:`compare_strategies`' table as the metrics file's ``comparison`` rows (snake_case
    keys); None without one."""
    if frame is None:
        return None
    return [json_row(row) for row in frame.reset_index().to_dict("records")]


def _row(strategy: str, session, learner) -> dict:
    result = session.result() or session.run(learner=learner)
    found = result["positives_found"]
    return {
        "strategy": strategy,
        "labels": result["labels"],
        "matches found": found,
        "labels per match": result["labels"] / found if found else None,  # none found: undefined
        "share of all matches": found / len(session.pool.positives),
    }


def coverage_sessions(session, seeds, *, learner=None) -> list:
    """``session`` and oracle sessions like it with other ``seeds``, each run with its checks."""
    if session.settings.annotator != "oracle" or not session.settings.coverage:
        raise ValueError(
            "coverage needs the oracle as the person and coverage > 0 (fresh audits per round)"
        )
    name = session.folder.name
    others = [s for s in seeds if s != session.config.seed]
    sessions = [
        session,
        *(session.sibling(session.folder.with_name(f"{name}-seed{s}"), seed=s) for s in others),
    ]
    for other in sessions:
        if other.result() is None:
            other.run(learner=learner)
    return sessions


def coverage_table(sessions, *, seed: int = 0) -> dict:
    """``{budget: {"covered", "mean_width", "round_*", "sessions", "repeats", "truth"}}`` of the
    share found, pooled over sessions: audit rounds so far combined, ``round_*`` the round's."""
    by_budget = {}
    for session in sessions:
        schedule = np.cumsum(session.config.schedule())
        checks = session.coverage_checks()
        for i, check in enumerate(checks):
            repeats, round = int(check["repeats"]), int(check["round"])
            shown = replay_combined(checks[: i + 1], repeats=repeats, seed=[seed, round])
            budget = int(schedule[check["round"] - 1])
            by_budget.setdefault(budget, []).append((check, shown))
    out = {}
    for budget, pairs in sorted(by_budget.items()):
        repeats = np.array([c["repeats"] for c, _ in pairs])

        def pooled(values):
            return float(np.average(values, weights=repeats))

        out[budget] = {
            "covered": pooled([s["coverage"]["recall_found"] for _, s in pairs]),
            "mean_width": pooled([s["mean_width"]["recall_found"] for _, s in pairs]),
            "round_covered": pooled([c["coverage"]["recall_found"] for c, _ in pairs]),
            "round_width": pooled([c["mean_width"]["recall_found"] for c, _ in pairs]),
            "sessions": len(pairs),
            "repeats": int(repeats.sum()),
            "truth": [c["truth"]["recall_found"] for c, _ in pairs],
        }
    return out
