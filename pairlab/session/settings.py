"""A labelling session's settings, declared once: :class:`SessionSettings`, validated where it is
built, and its plan of rounds (:meth:`SessionSettings.rounds`): how many pairs each round shows,
and how many of them the audit takes, so that ``budget`` is every answer the person gives."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field

import numpy as np

__all__ = ["SessionSettings", "ANNOTATORS", "round_half_up"]

ANNOTATORS = ("person", "oracle")  # oracle: the truth plays the person (papermill, CI, coverage)


def round_half_up(x: float) -> int:
    return int(np.floor(x + 0.5))


def _positive_int(name: str, value) -> None:
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < 1:
        raise ValueError(f"{name} must be a positive integer, got {value!r}")


@dataclass(frozen=True)
class SessionSettings:
    """What a :class:`~pairlab.session.LabelingSession` does with its records (its data, the
    records and the pairs known, travel beside it). ``budget``: the answers the person gives,
    the audit's included, shown ``batch`` pairs a round (the last round takes the rest);
    ``audit_share`` of each round's pairs from the second are the audit's (round 1 has no
    model to stratify by; a strategy that never trains one draws no audit). ``train``: more
    :class:`~pairlab.active.config.ActiveConfig` fields for the loop."""

    strategy: str = "uncertainty"
    batch: int = 64
    budget: int = 1408
    annotator: str = "person"
    audit_share: float = 0.1
    spares: int | None = None  # person only; None: a batch's worth
    candidate_m: int = 20
    seed: int = 0
    epochs: object = 2
    max_seq_length: int = 128
    coverage: int = 0  # oracle only: fresh audits redrawn each round to check the intervals
    matches_per_record: float | None = 1.0
    one_to_one: bool = False
    train: dict = field(default_factory=dict)

    def __post_init__(self):
        if self.annotator not in ANNOTATORS:
            raise ValueError(f"annotator must be one of {ANNOTATORS}, got {self.annotator!r}")
        if not isinstance(self.strategy, str):
            raise TypeError(f"strategy must be a strategy's name, got {self.strategy!r}")
        for name in ("batch", "budget", "candidate_m", "max_seq_length"):
            _positive_int(name, getattr(self, name))
        share = self.audit_share
        if isinstance(share, bool) or not isinstance(share, (int, float)) or not 0 <= share < 1:
            raise ValueError(f"audit_share must be a number in [0, 1), got {share!r}")
        if self.spares is not None and (
            isinstance(self.spares, bool)
            or not isinstance(self.spares, (int, np.integer))
            or self.spares < 0
        ):
            raise ValueError(f"spares must be None or an integer >= 0, got {self.spares!r}")
        if isinstance(self.coverage, bool) or not isinstance(self.coverage, (int, np.integer)):
            raise ValueError(f"coverage must be an integer >= 0, got {self.coverage!r}")
        if self.coverage < 0:
            raise ValueError(f"coverage must be an integer >= 0, got {self.coverage!r}")
        bound = self.matches_per_record
        if bound is not None and (isinstance(bound, bool) or not bound > 0):
            raise ValueError(f"matches_per_record must be > 0, got {bound!r}")
        if not isinstance(self.one_to_one, (bool, np.bool_)):
            raise TypeError(f"one_to_one must be True or False, got {self.one_to_one!r}")
        if not isinstance(self.train, dict):
            raise TypeError(f"train must be a dict of ActiveConfig fields, got {self.train!r}")

    @property
    def who(self) -> str:
        """The name the answers are stored under."""
        return "oracle" if self.annotator == "oracle" else "person"

    @property
    def spare_pairs(self) -> int:
        """Candidates beyond each batch for the person while the model trains (oracle: none)."""
        if self.annotator != "person":
            return 0
        return self.batch if self.spares is None else int(self.spares)

    @property
    def coverage_repeats(self) -> int:
        """Fresh audits a round for the coverage checks (the oracle's only: they need the truth)."""
        return int(self.coverage) if self.annotator == "oracle" else 0

    def rounds(self, *, audited: bool = True) -> tuple[tuple[int, ...], tuple[int, ...]]:
        """``(shown, audit)``: the pairs each round shows (``batch``, the last the rest), and how
        many of them the audit takes: ``audit_share`` of them from round 2, at least one left
        for the strategy; none where ``audited`` is False (a strategy without a trained model).
        ``sum(shown) == budget``; the strategy picks ``shown - audit`` pairs a round."""
        rounds, rest = divmod(self.budget, self.batch)
        shown = (self.batch,) * rounds + ((rest,) if rest else ())
        return shown, audits(shown, self.audit_share if audited else 0.0, first=1)

    def to_dict(self) -> dict:
        return asdict(self)


def audits(shown, share: float, *, first: int) -> tuple[int, ...]:
    """The audit's pairs in each round of ``shown`` pairs, numbered from ``first``: none in
    round 1, else ``audit_share`` of the round's pairs, rounded, leaving the strategy one."""
    return tuple(
        0 if i < 2 or s < 2 else min(round_half_up(s * share), s - 1)
        for i, s in enumerate(shown, start=first)
    )
