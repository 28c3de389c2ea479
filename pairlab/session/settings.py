"""A labelling session's settings, declared once and validated where built
(:class:`SessionSettings`), and its plan of rounds (:meth:`SessionSettings.rounds`)."""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from ..active.strategies import positive

__all__ = ["SessionSettings", "ANNOTATORS"]

ANNOTATORS = ("person", "oracle")  # oracle: the truth plays the person (papermill, CI, coverage)


def split(total: int, batch: int) -> tuple[int, ...]:
    """``total`` pairs in rounds of ``batch``, the last round the rest."""
    rounds, rest = divmod(total, batch)
    return (batch,) * rounds + ((rest,) if rest else ())


@dataclass(frozen=True)
class SessionSettings:
    """What a :class:`~pairlab.session.LabelingSession` does with its records. ``annotator``:
    ``"person"`` (the widget) or ``"oracle"`` (the truth answers). ``budget``: the answers given,
    the audit's and the spares' included, ``batch`` a round at most; ``audit_share`` of each
    round's from the second are the audit's. ``matches_per_record``: the estimate's assumption, at most that many matches a
    record left to find (``None``: calibration alone). ``one_to_one``: a matched record's pairs
    are never asked. ``agreement_share``: of the pairs asked, those asked of two people (a team
    labelling at once: their agreement is measured; a tie waits for a third person). ``train``: more :class:`~pairlab.active.config.ActiveConfig` fields."""

    strategy: str = "uncertainty"
    batch: int = 64
    budget: int = 1408
    annotator: str = "person"
    audit_share: float = 0.1
    spares: int | None = None  # person only: a round's beyond its own; None: kept topped up
    candidate_m: int = 20
    seed: int = 0
    epochs: object = 2
    max_seq_length: int = 128
    coverage: int = 0  # with oracle_pairs: fresh audits redrawn each round to check intervals
    matches_per_record: float | None = 1.0
    one_to_one: bool = False
    agreement_share: float = 0.0
    train: dict = field(default_factory=dict)

    def __post_init__(self):
        if self.annotator not in ANNOTATORS:
            raise ValueError(f"annotator must be one of {ANNOTATORS}, got {self.annotator!r}")
        if not isinstance(self.strategy, str):
            raise TypeError(f"strategy must be a strategy's name, got {self.strategy!r}")
        for name in ("batch", "budget", "candidate_m", "max_seq_length"):
            positive(name, getattr(self, name))
        if self.spares is not None:
            positive("spares", self.spares, minimum=0)
        positive("coverage", self.coverage, minimum=0)
        for name in ("audit_share", "agreement_share"):
            share = getattr(self, name)
            if isinstance(share, bool) or not isinstance(share, (int, float)) or not 0 <= share < 1:
                raise ValueError(f"{name} must be a number in [0, 1), got {share!r}")
        bound = self.matches_per_record
        if bound is not None and (isinstance(bound, bool) or not bound > 0):
            raise ValueError(f"matches_per_record must be > 0, got {bound!r}")
        if not isinstance(self.one_to_one, (bool, np.bool_)):
            raise TypeError(f"one_to_one must be True or False, got {self.one_to_one!r}")
        if not isinstance(self.train, dict):
            raise TypeError(f"train must be a dict of ActiveConfig fields, got {self.train!r}")

    def rounds(self, *, audited: bool = True, done: int = 0) -> tuple[tuple[int, ...], ...]:
        """``(shown, audit)``: the pairs each round shows (``sum(shown) == budget``; the first
        ``done`` in the rounds a run of that budget had) and the audit's among them
        (:func:`audits`; none where ``audited`` is False)."""
        shown = split(done, self.batch) + split(self.budget - done, self.batch)
        return shown, audits(shown, self.audit_share if audited else 0.0)


def audits(shown, share: float) -> tuple[int, ...]:
    """The audit's pairs in each round of ``shown`` pairs: none in round 1, else ``share`` of
    the round's pairs, rounded, leaving the strategy one."""
    return tuple(
        0 if i < 2 or s < 2 else min(int(np.floor(s * share + 0.5)), s - 1)  # half up
        for i, s in enumerate(shown, start=1)
    )
