"""How far am I? From round 2, an audit sample over the model's score strata, mixed in with the
batch, estimates the matches in the whole collection, the share found and the model's precision
and recall (:mod:`pairlab.evaluation.audit_estimate`). Each round's design is saved before its
pairs are posted (``audit/round_XX.npz``); the pairs excluded from its frame (labelled, its
batch, earlier audits) count as their strata's census, so no pair is audited twice.
"""

from __future__ import annotations

from dataclasses import asdict, replace
from pathlib import Path

import numpy as np

from ..annotators.person import SessionStore
from ..evaluation.audit import Audit, PairCosine, draw_audit, stratify
from ..evaluation.audit_estimate import combine_rounds, coverage, estimate
from ..io import read_json, write_atomic, write_json

__all__ = ["SessionAudit", "MIN_ROUND"]

MIN_ROUND = 2  # round 1 selects with the pretrained encoder, which has no calibrated probability


class SessionAudit:
    """Draws, keeps and reads back a session's audit rounds in ``folder``."""

    def __init__(
        self,
        folder,
        *,
        seed: int = 0,
        n_strata: int = 12,
        coverage: int = 0,
        matches_per_record: float | None = None,
    ):
        self.folder, self.seed, self.n_strata = Path(folder), int(seed), int(n_strata)
        self.coverage = int(coverage)  # with the truth known: fresh audits redrawn each round
        # the "bounded" prior: at most this many matches a record of the smaller side remain
        self.matches_per_record = matches_per_record

    def assumption(self, space, ids, labels) -> dict:
        """How many matches a record the estimate assumes, from the answers so far (pair ids,
        1/0/-1 ``labels``): ``matches_per_record`` while no record has more labelled matches
        than it allows (rounded up, at least 1), else one more than the most any record has
        (``most``); ``records_over``: the records beyond the stated bound. None where no bound
        is stated (``per_record`` None: the calibration's prior)."""
        m = self.matches_per_record
        use = {"matches_per_record": m, "records_over": 0, "most": 0, "per_record": m}
        if m is None:
            return use
        left, right = space.decode(np.asarray(ids, np.int64)[np.asarray(labels) == 1])
        sides = [np.concatenate([left, right])] if space.symmetric else [left, right]
        counts = [np.bincount(side) for side in sides if len(side)]
        use["most"] = max((int(c.max()) for c in counts), default=0)
        use["records_over"] = sum(int((c > max(np.ceil(m), 1)).sum()) for c in counts)
        if use["records_over"]:  # the answers break the stated bound: room for one more
            use["per_record"] = float(use["most"] + 1)
        return use

    def bound(self, space, use: dict) -> dict:
        """The prior settings of a draw on ``space`` under ``use`` (:meth:`assumption`): the
        bounded prior at ``per_record`` matches a record of the smaller side, or none."""
        if use["per_record"] is None:
            return {}
        records = space.n_left if space.symmetric else min(space.n_left, space.n_right)
        return {"prior": "bounded", "max_positives": float(use["per_record"] * records)}

    def path(self, round: int) -> Path:
        return self.folder / f"round_{round:02d}.npz"

    # -- the worker's side: PersonAnnotator(audit=...) ------------------------------------------

    def __call__(self, round: int, state, batch, n: int) -> tuple[np.ndarray, np.ndarray]:
        """Round ``round``'s audit of ``n`` pairs (ids, strata), drawn once and kept."""
        if self.path(round).is_file():
            design = self.load(round)[0]
            return design.ids, design.stratum
        if round < MIN_ROUND or state.model is None or n <= 0:
            return np.empty(0, np.int64), np.empty(0, np.int64)
        if one_class(state.model):  # its probabilities were never fitted to both answers
            skipped = {"round": round, "why": "one_class"}
            write_json(self.folder / f"skipped_round_{round:02d}.json", skipped)
            return np.empty(0, np.int64), np.empty(0, np.int64)
        left, right = state.embeddings  # under the selection model: the one trained so far
        calibration = state.model.calibration
        threshold = calibration.mean + calibration.std * (-calibration.bias / calibration.weight)
        rates = audit_calibration(state, left, right)
        strata = stratify(
            state.pool.space,
            left,
            right,
            probability=rates.proba,
            n_strata=self.n_strata,
            threshold=float(threshold),
            seed=self.seed + round,
        )
        answered = state.labels >= 0
        # earlier rounds' audit pairs join the census beside the batch: never drawn twice, so
        # every audit pair is a question of the budget (their answers are read at estimate time)
        excluded = np.union1d(np.union1d(state.labelled, batch), state.held_out)
        labels = np.zeros(len(excluded), np.int8)  # the batch's answers come later (a census)
        labels[np.searchsorted(excluded, state.labelled[answered])] = state.labels[answered] == 1
        n = min(n, int(strata.sizes.sum() - len(excluded)))
        floor = 1 if n >= strata.n_strata else 0  # a small audit goes where it informs most
        use = self.assumption(state.pool.space, state.labelled, state.labels)
        prior = self.bound(state.pool.space, use)
        design = draw_audit(
            strata, n, excluded, labels, seed=[self.seed, round], floor=floor, **prior
        )
        self._save(round, design, excluded, strata.stratum_of(excluded))
        if self.coverage and getattr(state.pool, "truth_known", False):
            result = coverage(
                strata,
                state.pool.positives,
                excluded,
                n,
                repeats=self.coverage,
                seed=[self.seed, round, 1],
                floor=floor,
                **prior,
            )  # how often fresh audits' 95% intervals cover the truth
            write_json(
                self.folder / f"coverage_round_{round:02d}.json",
                {"round": round, "labelled": int(len(excluded)), **result, **use},
            )
        return design.ids, design.stratum

    def coverage_rounds(self) -> list[dict]:
        """The coverage checks written so far, by round."""
        return [read_json(p) for p in sorted(self.folder.glob("coverage_round_*.json"))]

    def _save(self, round: int, design: Audit, excluded, excluded_stratum) -> None:
        # max_positives None saved as NaN: an .npz holds no None
        arrays = {k: np.asarray(np.nan if v is None else v) for k, v in asdict(design).items()}
        write_atomic(
            self.path(round),
            lambda tmp: np.savez(
                tmp, excluded=excluded, excluded_stratum=excluded_stratum, **arrays
            ),
        )

    # -- reading back ---------------------------------------------------------------------------

    def load(self, round: int) -> tuple[Audit, np.ndarray, np.ndarray]:
        """Round ``round``'s design, the pairs excluded from its frame (labelled before it, and
        its batch) and their strata."""
        with np.load(self.path(round)) as f:
            values = {k: f[k] for k in f.files}
        excluded, excluded_stratum = values.pop("excluded"), values.pop("excluded_stratum")
        scalars = {k: values.pop(k).item() for k in ("prior", "strength", "design_variance")}
        bound = float(values.pop("max_positives"))
        scalars["max_positives"] = None if np.isnan(bound) else bound
        return Audit(**values, **scalars), excluded, excluded_stratum

    def skipped(self) -> list[dict]:
        """The rounds that drew no audit, and why ("one_class": the model saw one answer only,
        so its scores cannot stratify an audit)."""
        return [read_json(p) for p in sorted(self.folder.glob("skipped_round_*.json"))]

    def rounds(self) -> list[int]:
        return sorted(int(p.stem.split("_")[1]) for p in self.folder.glob("round_*.npz"))

    def audit_answers(self, store: SessionStore) -> int:
        """Audit pairs answered yes or no so far, over every round."""
        return int(sum((store.answers(self.load(r)[0].ids) >= 0).sum() for r in self.rounds()))

    def estimate(self, store: SessionStore, space) -> dict | None:
        """The estimates from every audit round's answers so far: the total and the share found
        combined over rounds, the model's precision and recall from the latest round's strata.
        None before one audit answer per stratum (``n_strata``): with fewer, most strata rest on
        the prior alone (a session of nearly all matches first said 100% found with 2% found).
        Every round is estimated under the bound the answers allow now (:meth:`assumption`): it
        rises once a record has more labelled matches than ``matches_per_record``."""
        if self.audit_answers(store) < self.n_strata:
            return None
        found = int(store.counts()["positives"])
        use = self.assumption(space, *store.labelled())
        bound = self.bound(space, use).get("max_positives")
        audits, labels = [], []
        for r in self.rounds():
            design, excluded, excluded_stratum = self.load(r)
            if design.prior == "bounded":
                design = replace(design, max_positives=bound)
            answers = store.answers(design.ids)
            keep = answers >= 0
            if not keep.any():
                continue
            census = store.answers(excluded) == 1  # the labelled positives of each stratum, now
            known = np.bincount(excluded_stratum[census], minlength=len(design.sizes))
            answered = dict(ids=design.ids[keep], stratum=design.stratum[keep])
            audits.append(replace(design, **answered, known=known.astype(np.int64)))
            labels.append(answers[keep].astype(np.int64))
        if not audits:
            return None
        combined = combine_rounds(audits, labels, found=found)
        latest = estimate(audits[-1], labels[-1], found=found)
        rested = [r["prior_weight"] for r in combined["rounds"]]
        return {
            **{k: v for k, v in combined.items() if k != "rounds"},
            "prior_weight": float(np.dot(combined["weights"], rested)),  # unfound: from scores
            "assumption": use,
            **{k: latest[k] for k in ("precision", "precision_ci", "recall", "recall_ci")},
            "audit_labels": int(sum(len(y) for y in labels)),
            "audit_positives": int(sum(int(y.sum()) for y in labels)),
            "audit_rounds": len(audits),
            "bound": audits[-1].max_positives,  # unlabelled matches assumed at most (or None)
        }


def audit_calibration(state, left, right):
    """The strata's prior rates: the model's cosines on its answered training pairs refitted
    with Platt's targets (``smoothed``). The model's own calibration, fitted for uncertainty
    sampling, puts rates near the threshold at 1e-14 on a few separable pairs."""
    from ..models.cosinebert import Calibration

    answered = state.labels >= 0
    cosine = PairCosine(state.pool.space, left, right)(state.labelled[answered])
    return Calibration.fit(cosine, state.labels[answered] == 1, smoothed=True)


def one_class(model) -> bool:
    """Whether ``model`` was trained on one answer only, so that its calibration is the trained
    head's, never fitted to both (:meth:`CosineBERT.train`)."""
    return "one class" in str(getattr(model, "info", {}).get("calibration", ""))
