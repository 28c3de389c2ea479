"""What a labelling session gives the person: ``labels.csv`` (every answer), the trained model,
``matches.csv`` (the pairs a matcher calls matches at a target precision, the person's answers
applied) and, for one table, ``clusters.csv`` (one cluster id per record). The matcher is the
session's bi-encoder or a cross-encoder trained on its labels re-scoring the candidates; the
audit pairs, never trained on, estimate each one's F1 (:func:`choose`)."""

from __future__ import annotations

import shutil
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd

from ..active.store import round_ids
from ..annotators.person import SAID, SessionStore
from ..data.build import components
from ..data.pairs import isin_sorted
from ..evaluation.candidates import neighbour_pairs
from ..io import write_atomic, write_json
from ..models.training import TrainConfig
from .audit import SessionAudit

__all__ = [
    "export_session",
    "label_frame",
    "find_matches",
    "clusters",
    "match_quality",
    "pair_quality",
    "read_matches",
    "MATCHERS",
    "Candidates",
    "Matcher",
    "precision_threshold",
    "candidates",
    "final_model",
    "bi_encoder",
    "cross_encoder",
    "untrainable",
    "audit_rounds",
    "audit_counts",
    "choose",
    "quality_intervals",
]

MATCHERS = ("auto", "bi-encoder", "cross-encoder")


@dataclass(frozen=True)
class Candidates:
    """Each record's ``m`` nearest neighbours under the final bi-encoder: sorted pair ids and
    their cosines."""

    ids: np.ndarray
    cosine: np.ndarray
    m: int


@dataclass
class Matcher:
    """One matcher's view of the candidates: its probability of each, the threshold for the
    target precision, and what the audit estimates of its predictions (``estimate``)."""

    name: str
    proba: np.ndarray
    threshold: float
    estimate: dict | None = None

    def predicted(self, ids: np.ndarray) -> np.ndarray:
        return ids[self.proba >= self.threshold]


def precision_threshold(proba: np.ndarray, target: float) -> float:
    """The lowest probability t such that the pairs at or above t have an expected precision
    (their mean calibrated probability) of at least ``target``; 1.0 when none does."""
    if not 0.0 < target <= 1.0:
        raise ValueError(f"target precision must be in (0, 1], got {target!r}")
    p = np.sort(np.asarray(proba, np.float64))[::-1]
    expected = np.cumsum(p) / np.arange(1, len(p) + 1)
    ok = np.nonzero(expected >= target)[0]
    return float(p[ok[-1]]) if len(ok) else 1.0


def final_model(folder: Path):
    """The session in ``folder``'s final bi-encoder, its embeddings kept under a digest of its
    weights: the worker embeds the records with it as the rounds end, the export reads them."""
    from ..models.cosinebert import CosineBERT
    from ..models.embed import model_fingerprint

    source = Path(folder) / "run" / "model"
    if not source.is_dir():
        raise FileNotFoundError(
            f"{source} holds no final model yet: the session has not finished its rounds"
        )
    model = CosineBERT.load(source)
    model.output_cache = Path(folder) / "cache" / model_fingerprint(str(source))[:16]
    return model


def candidates(pool, model, m: int) -> Candidates:
    left = model.embed(pool.left_texts)
    right = left if pool.symmetric else model.embed(pool.right_texts)
    ids, cosine = neighbour_pairs(pool.space, left, right, m=min(m, pool.space.n_right))
    return Candidates(ids, cosine, m)


def bi_encoder(model, found: Candidates, target_precision: float) -> Matcher:
    proba = model.calibration.proba(found.cosine)
    return Matcher("bi-encoder", proba, precision_threshold(proba, target_precision))


def cross_encoder(
    pool, found: Candidates, labels, target_precision: float, *, config, model=None, cache=None
) -> Matcher:
    """ConcatBERT trained on ``labels`` (a frame of ``pair_id``, ``label`` 0/1: the session's
    training labels, never the audit) with ``config`` (a :class:`TrainConfig`), scoring the
    candidates. With a ``cache`` folder, the scores are kept under a key of everything that
    decides them: exporting again after a restart reads them back instead of training."""
    from ..active.behaviour import code_digest
    from ..models.concatbert import ConcatBERT
    from ..models.embed import cached_array, model_fingerprint, text_digest
    from ..models.inference import backend, cache_tag

    ids = labels["pair_id"].to_numpy(np.int64)
    y = labels["label"].to_numpy()
    if (why := untrainable(y)) is not None:
        raise ValueError(why)
    train_texts, found_texts = pool.texts(ids), pool.texts(found.ids)

    def score() -> np.ndarray:
        trained = ConcatBERT.train(*train_texts, y, model=model, config=config)
        return trained.logits(*found_texts, batch_size=128, show_progress=True)

    key = cache and text_digest(
        *train_texts,
        *found_texts,
        head=[
            "export cross-encoder logits",
            code_digest(ConcatBERT, cross_encoder)[:12],
            model_fingerprint(model),
            config.to_dict(),
            np.asarray(y, dtype=np.int8).tolist(),
            *cache_tag(backend("cross-encoder")),
        ],
    )
    if key and (Path(cache) / f"{key}.npy").is_file():
        print(f"cross-encoder: scores read back from {Path(cache) / key}.npy (same labels)")
    logits = cached_array(cache, key, score)
    proba = 1.0 / (1.0 + np.exp(-logits))
    return Matcher("cross-encoder", proba, precision_threshold(proba, target_precision))


def untrainable(labels) -> str | None:
    """Why a cross-encoder cannot learn from these 0/1 ``labels`` (None: it can): it needs both
    answers (an easy table's first labels are often all matches)."""
    y = np.asarray(labels)
    if len(np.unique(y)) < 2:
        kind = "matches" if len(y) and y[0] == 1 else "non-matches"
        return f"the cross-encoder needs both answers to learn from: all {len(y)} training labels are {kind}"
    return None


def audit_rounds(audit, store, held) -> list:
    """Each round of ``audit`` (a :class:`~.audit.SessionAudit`) as its design and the answers in
    ``store`` to its pairs (-1: none yet, or a pair in the sorted ``held``, trained on)."""
    designs = [audit.load(r)[0] for r in audit.rounds()]
    return [(d, np.where(isin_sorted(d.ids, held), -1, store.answers(d.ids))) for d in designs]


def audit_counts(rounds, matcher, found: Candidates, predicted, level=0.95) -> dict | None:
    """The true positives among ``predicted`` (sorted ids of the unlabelled candidates
    ``matcher`` calls matches): their probabilities, each corrected by the mean residual (answer
    minus probability) of the audit pairs the matcher calls matches, weighted by their strata (a
    ratio estimator, Särndal et al. 1992, 7.3.1: a mean scales to the calls unlabelled now, where
    a total would scale to those at the draw). ``rounds``: :func:`audit_rounds`, replicates of
    the mean: its interval at ``level`` takes their spread (Student's t; at least the spread the
    model's probabilities of the audited calls imply, as rounds whose calls all match agree by
    chance) and the predicted pairs' own outcomes under the corrected probabilities, widened by
    half a pair (a count's continuity correction: a few predicted pairs are a handful of yes/no
    outcomes); with fewer than two rounds holding a call it is 0 to all, as the audit cannot bound
    them. None without two answered rounds."""
    from scipy.stats import t as student

    calls = matcher.predicted(found.ids)
    means, hits, answers, noise = [], [], [], []
    for design, y in rounds:
        keep = y >= 0
        if not keep.any():
            continue
        answers.append(int(keep.sum()))
        ids, stratum, y = design.ids[keep], design.stratum[keep], y[keep]
        hit = isin_sorted(ids, calls)
        if hit.any():
            n = np.bincount(stratum, minlength=len(design.sizes))
            weight = (design.unlabelled[stratum] / n[stratum])[hit]  # what each stood for
            proba = matcher.proba[np.searchsorted(found.ids, ids[hit])]
            means.append(float(weight @ (y[hit] - proba) / weight.sum()))
            noise.append(float(weight**2 @ (proba * (1 - proba)) / weight.sum() ** 2))
            hits.append(int(hit.sum()))
    if len(answers) < 2:
        return None
    p = matcher.proba[isin_sorted(found.ids, predicted)]
    out = {
        "expected_tp": float(p.sum()),
        "audit_answers": sum(answers),
        "audit_rounds": len(answers),
        "audit_predicted": sum(hits),  # audit answers among the calls
    }
    share = np.asarray(hits) / max(sum(hits), 1)
    mean = float(share @ means)
    q = np.clip(p + mean, 0, 1)  # the corrected probabilities
    tp = float(q.sum())
    out.update(tp=tp, fp=len(p) - tp, tp_ci=[0.0, float(len(p))])  # no spread: no bound
    if len(means) >= 2:
        spread = float(share**2 @ (np.asarray(means) - mean) ** 2) * len(share) / (len(share) - 1)
        spread = max(spread, float(share**2 @ noise))  # rounds alike by chance: the model's own
        sd = np.sqrt(len(p) ** 2 * spread + float((q * (1 - q)).sum()))
        half = float(student.ppf((1 + level) / 2, len(share) - 1) * sd) + 0.5
        out["tp_ci"] = [max(tp - half, 0.0), min(tp + half, float(len(p)))]
    return out


def choose(
    matchers: list[Matcher],
    found: Candidates,
    *,
    said_yes: np.ndarray,
    labelled: np.ndarray,
    rounds: list,
    total: float | None,
    total_ci=None,
) -> tuple[Matcher, dict]:
    """Estimate each matcher's export quality from the audit (:func:`audit_counts`) and pick the
    best F1 (``why``: "higher_f1"), else the first matcher, the bi-encoder ("no_audit_estimate").
    ``said_yes``: the person's yes answers (all exported); ``labelled``: every answered pair
    (sorted; its answers replace the matchers' predictions); ``rounds``: :func:`audit_rounds`;
    ``total``: the audit's estimated matching pairs, ``total_ci`` its interval (None: ``total``);
    the ``*_ci`` intervals: :func:`quality_intervals`."""
    for matcher in matchers:
        predicted = np.setdiff1d(matcher.predicted(found.ids), labelled)
        counts = audit_counts(rounds, matcher, found, predicted)
        estimate = {
            "predicted": int(len(predicted)),
            "threshold": matcher.threshold,
            "exported": int(len(predicted) + len(said_yes)),
        }
        if counts is not None and total:
            tp = len(said_yes) + counts["tp"]
            matching = max(total, tp)  # the estimated total cannot be below what is found
            estimate.update(
                counts,
                precision_unlabelled=counts["tp"] / len(predicted) if len(predicted) else None,
                precision=tp / estimate["exported"] if estimate["exported"] else None,
                f1=2 * tp / (estimate["exported"] + matching),
                recall=tp / matching,
                **quality_intervals(
                    len(said_yes), len(predicted), counts["tp_ci"], total_ci or (total, total)
                ),
            )
        matcher.estimate = estimate
    scored = [m for m in matchers if m.estimate.get("f1") is not None]
    if not scored:
        return matchers[0], {"chosen": matchers[0].name, "why": "no_audit_estimate"}
    best = max(scored, key=lambda m: m.estimate["f1"])
    return best, {"chosen": best.name, "why": "higher_f1"}


def quality_intervals(yes: int, predicted: int, tp_ci, total_ci) -> dict:
    """The intervals of an export's precision, recall and F1, each monotone in the true positives
    and the total, so the corners of theirs: ``yes`` labelled matches and ``predicted`` unlabelled
    pairs exported, ``tp_ci`` the true positives' interval among those (None: 0 to all),
    ``total_ci`` the matching pairs'."""
    lo, hi = tp_ci if tp_ci is not None else (0.0, float(predicted))
    tp = (yes + lo, yes + hi)  # true positives exported: low, high
    exported = yes + predicted
    t_lo, t_hi = total_ci
    worst, best = max(t_hi, tp[0]), max(t_lo, tp[1])  # the total cannot be below what is found
    return {
        "precision_ci": [tp[0] / exported, tp[1] / exported] if exported else None,
        "recall_ci": [tp[0] / worst, tp[1] / best],
        "f1_ci": [2 * tp[0] / (exported + worst), 2 * tp[1] / (exported + best)],
    }


LABEL_COLUMNS = (
    "pair_id left_id right_id left right label answer answered_at seconds annotator round audit"
).split()


def label_frame(pool, store: SessionStore) -> pd.DataFrame:
    """Every pair with a current answer, in the order answered: both records' ids and texts,
    the answer (1, 0, -1: unsure; people who disagree: their majority, unsure on a tie), when,
    by whom (the last to answer), its round and whether it was an audit pair."""
    mine = store.history().drop_duplicates(["pair_id", "annotator"], keep="last")
    frame = mine[mine["label"].isin((1, 0, -1))].drop_duplicates("pair_id", keep="last")
    frame = frame.sort_values("id").reset_index(drop=True)
    frame["pair_id"] = ids = frame["pair_id"].to_numpy(np.int64)
    frame["label"] = store.answers(ids)
    frame["left_id"], frame["right_id"] = pool.record_ids(ids)
    frame["left"], frame["right"] = pool.texts(ids)
    frame["answer"] = frame["label"].map(SAID).to_numpy()
    frame["audit"] = frame["kind"] == "audit"
    return frame.rename(columns={"created_at": "answered_at"})[LABEL_COLUMNS]


def find_matches(ids: np.ndarray, matcher, labels: pd.DataFrame, pool) -> tuple[pd.DataFrame, dict]:
    """The matches of ``matcher`` (a :class:`Matcher` over the candidate ``ids``): the candidates
    at or above its threshold, plus the pairs the person said match, minus those they said do not
    (left_id, right_id, score, source, pair_id); and what was decided (threshold, counts)."""
    said, label = labels["pair_id"].to_numpy(np.int64), labels["label"].to_numpy()
    yes, no = np.sort(said[label == 1]), np.sort(said[label == 0])
    above = matcher.proba >= matcher.threshold
    model_ids = ids[above & ~isin_sorted(ids, no)]
    chosen = np.union1d(model_ids, yes)
    left_ids, right_ids = pool.record_ids(chosen)
    frame = pd.DataFrame(
        {
            "left_id": left_ids,
            "right_id": right_ids,
            "score": pd.Series(matcher.proba, ids).reindex(chosen).to_numpy(np.float64),
            "source": np.where(isin_sorted(chosen, yes), "labelled", "model"),
            "pair_id": chosen,
        }
    )
    decided = {
        "matcher": matcher.name,
        "threshold": matcher.threshold,
        "candidates": int(len(ids)),
        "by_model": int(len(model_ids)),
        "labelled_matches": int(len(yes)),
        "rejected_by_person": int(isin_sorted(ids, no).sum()),
        "expected_precision": float(matcher.proba[above].mean()) if above.any() else None,
    }
    return frame, decided


def clusters(pool, pair_ids) -> pd.DataFrame:
    """One cluster id per record of a one-table pool: connected components of ``pair_ids``
    (records matching nothing are clusters of one), the largest cluster first."""
    component = components(pool.space.n_left, *pool.space.decode(np.asarray(pair_ids, np.int64)))
    sizes = np.bincount(component)
    rank = np.argsort(np.argsort(-sizes, kind="stable"))  # ties: the lower component first
    return pd.DataFrame(
        {
            "id": pool.left.ids,
            "cluster": rank[component],
            "size": sizes[component],
            "text": pool.left.texts,
        }
    ).sort_values(["cluster", "id"], kind="stable")


def export_session(
    session,
    folder: Path,
    *,
    target_precision: float = 0.9,
    m: int | None = None,
    matcher: str = "bi-encoder",
) -> dict:
    """Write the session's labels, model, matches and clusters under ``folder``. ``matcher``:
    ``"bi-encoder"`` (the session's final CosineBERT), ``"cross-encoder"`` (ConcatBERT trained
    on the session's training labels: tens of minutes on 25,000 records and 2 cores) or
    ``"auto"`` (the one :func:`choose` picks). The result's ``why``: "asked_for", "higher_f1",
    "no_audit_estimate" or "cross_encoder_untrainable" (its training labels all one answer)."""
    if matcher not in MATCHERS:
        raise ValueError(f"matcher must be one of {MATCHERS}, got {matcher!r}")
    labels = label_frame(session.pool, session.store)
    write_atomic(folder / "labels.csv", lambda tmp: labels.to_csv(tmp, index=False))
    out = {"labels": int(np.isin(labels["label"], (0, 1)).sum()), "folder": str(folder)}
    if session.process is not None and session.process.is_alive():
        print("the worker is preparing the export (its progress is in the widget): waiting")
        session.wait()
    model = final_model(session.folder)
    shutil.rmtree(folder / "model", ignore_errors=True)
    shutil.copytree(session.folder / "run" / "model", folder / "model")
    config = session.config
    found = candidates(session.pool, model, m or config.candidate_m)
    options = [bi_encoder(model, found, target_precision)]
    trained = np.unique(np.concatenate([np.empty(0, np.int64), *round_ids(session.folder / "run")]))
    answered = labels[labels["label"].isin((0, 1))]
    training = answered[isin_sorted(answered["pair_id"].to_numpy(np.int64), trained)]
    skipped = untrainable(training["label"]) if matcher == "auto" else None
    if matcher != "bi-encoder" and not skipped:  # asked for, untrainable: cross_encoder says why
        options.append(
            cross_encoder(
                session.pool,
                found,
                training,
                target_precision,
                model=config.model,
                config=TrainConfig(
                    epochs=3,
                    seed=config.seed,
                    max_seq_length=config.max_seq_length,
                    precision=config.precision,
                    batch_order=config.batch_order,
                ),
                cache=session.folder / "cache",
            )
        )
    audit = SessionAudit(
        session.folder / "audit", matches_per_record=session.settings.matches_per_record
    )
    estimate = audit.estimate(session.store, session.pool.space)
    yes = np.sort(answered.loc[answered["label"] == 1, "pair_id"].to_numpy(np.int64))
    best, choice = choose(
        options,
        found,
        said_yes=yes,
        labelled=np.sort(labels["pair_id"].to_numpy(np.int64)),
        rounds=audit_rounds(audit, session.store, trained),
        total=estimate["total"] if estimate else None,
        total_ci=estimate["total_ci"] if estimate else None,
    )
    if matcher != "auto":
        best = next(o for o in options if o.name == matcher)
        choice = {"chosen": matcher, "why": "asked_for"}
    elif skipped:
        choice["why"] = "cross_encoder_untrainable"
    matches, decided = find_matches(found.ids, best, labels, session.pool)
    shown = matches.drop(columns="pair_id")
    write_atomic(folder / "matches.csv", lambda tmp: shown.to_csv(tmp, index=False))
    out.update(
        matches=int(len(matches)),
        target_precision=target_precision,
        neighbours=found.m,
        **decided,
        **choice,
        estimates={o.name: o.estimate for o in options},
    )
    if session.pool.symmetric:
        table = clusters(session.pool, matches["pair_id"].to_numpy(np.int64))
        write_atomic(folder / "clusters.csv", lambda tmp: table.to_csv(tmp, index=False))
        out["clusters"] = int((table.drop_duplicates("cluster")["size"] > 1).sum())
    write_json(folder / "export.json", out)
    return out


def pair_quality(ids, positives) -> dict:
    """Precision, recall and F1 of the pair ids ``ids`` against the sorted ``positives``."""
    ids = np.sort(np.asarray(ids, np.int64))
    hit = int(isin_sorted(ids, positives).sum())
    precision = hit / len(ids) if len(ids) else 0.0
    recall = hit / len(positives)
    f1 = 2 * precision * recall / (precision + recall) if hit else 0.0
    return {
        "matches": int(len(ids)),
        "true_matches": hit,
        "precision": precision,
        "recall": recall,
        "f1": f1,
    }


def read_matches(folder, pool) -> tuple[pd.DataFrame, np.ndarray]:
    """The export in ``folder``'s ``matches.csv`` and its pairs' ids in ``pool``."""
    matches = pd.read_csv(Path(folder) / "matches.csv", dtype={"left_id": str, "right_id": str})
    return matches, pool.pair_ids(*(matches[c].to_numpy(object) for c in ("left_id", "right_id")))


def match_quality(session, exported: dict) -> dict:
    """Precision, recall and F1 of an export's matches against the pool's truth (a simulation),
    and the recall of the matches the person's labels found (``true_recall``)."""
    pool = session.pool
    scored = pair_quality(read_matches(exported["folder"], pool)[1], pool.positives)
    ids, labels = session.store.labelled()
    yes = ids[labels == 1]
    return {k: scored[k] for k in ("precision", "recall", "f1")} | {
        "true_recall": float(isin_sorted(yes, pool.positives).sum() / len(pool.positives)),
        "true_positives": int(len(pool.positives)),
    }
