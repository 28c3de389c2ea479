"""What a labelling session gives the person: ``labels.csv`` (every answer), the trained model,
``matches.csv`` (every pair the matcher calls a match at the threshold for a target precision,
the person's answers applied) and, for one table, ``clusters.csv`` (one cluster id per record)."""

from __future__ import annotations

import shutil
from pathlib import Path

import numpy as np
import pandas as pd

from ..annotators.person import SessionStore
from ..data.pairs import isin_sorted
from ..io import write_atomic, write_json

__all__ = [
    "export_session",
    "label_frame",
    "find_matches",
    "clusters",
    "match_quality",
    "pair_quality",
]

LABELS = {1: "match", 0: "no match", -1: "unsure"}


def label_frame(pool, store: SessionStore) -> pd.DataFrame:
    """Every pair with a current answer, in the order answered: both records' ids and texts,
    the answer (1, 0, -1: unsure), when, by whom, its round and whether it was an audit pair."""
    history = store.history()
    current = history.drop_duplicates("pair_id", keep="last")
    current = current[current["label"].isin((1, 0, -1))].sort_values("id")
    ids = current["pair_id"].to_numpy(np.int64)
    left_ids, right_ids = pool.record_ids(ids)
    left, right = pool.texts(ids)
    return pd.DataFrame(
        {
            "pair_id": ids,
            "left_id": left_ids,
            "right_id": right_ids,
            "left": left,
            "right": right,
            "label": current["label"].to_numpy(),
            "answer": current["label"].map(LABELS).to_numpy(),
            "answered_at": current["created_at"].to_numpy(),
            "seconds": current["seconds"].to_numpy(),
            "annotator": current["annotator"].to_numpy(),
            "round": current["round"].to_numpy(),
            "audit": (current["kind"] == "audit").to_numpy(),
        }
    )


def find_matches(ids: np.ndarray, matcher, labels: pd.DataFrame, pool) -> tuple[pd.DataFrame, dict]:
    """The matches of ``matcher`` (a :class:`.matchers.Matcher` over the candidate ``ids``):
    the candidates at or above its threshold, plus the pairs the person said match, minus those
    they said do not. Returns the matches (left_id, right_id, score, source) and what was
    decided (threshold, counts)."""
    said = labels.set_index("pair_id")["label"] if len(labels) else pd.Series(dtype=np.int64)
    yes = np.sort(said.index[said == 1].to_numpy(np.int64))
    no = np.sort(said.index[said == 0].to_numpy(np.int64))
    above = matcher.proba >= matcher.threshold
    model_ids = ids[above & ~isin_sorted(ids, no)]
    chosen = np.union1d(model_ids, yes)
    score = np.full(len(chosen), np.nan)
    at = np.searchsorted(ids, chosen)
    found = (at < len(ids)) & (ids[np.minimum(at, len(ids) - 1)] == chosen)
    score[found] = matcher.proba[at[found]]
    left_ids, right_ids = pool.record_ids(chosen)
    frame = pd.DataFrame(
        {
            "left_id": left_ids,
            "right_id": right_ids,
            "score": score,
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
    from scipy.sparse import coo_matrix
    from scipy.sparse.csgraph import connected_components

    n = pool.space.n_left
    i, j = pool.space.decode(np.asarray(pair_ids, np.int64))
    graph = coo_matrix((np.ones(len(i)), (i, j)), shape=(n, n))
    _, component = connected_components(graph, directed=False)
    sizes = np.bincount(component)
    rank = np.empty(len(sizes), np.int64)
    rank[np.lexsort((np.arange(len(sizes)), -sizes))] = np.arange(len(sizes))
    cluster = rank[component]
    return pd.DataFrame(
        {"id": pool.left.ids, "cluster": cluster, "size": sizes[component], "text": pool.left.texts}
    ).sort_values(["cluster", "id"], kind="stable")


def export_session(
    session,
    folder: Path,
    *,
    target_precision: float = 0.9,
    m: int | None = None,
    matcher: str = "auto",
    cross_encoder_epochs: int = 3,
) -> dict:
    """Write the session's labels, model, matches and clusters under ``folder``. ``matcher``:
    which model decides the matches (:mod:`.matchers`): ``"bi-encoder"`` (the session's final
    CosineBERT), ``"cross-encoder"`` (ConcatBERT trained on the session's training labels,
    re-scoring the bi-encoder's candidates) or ``"auto"`` (both, the one whose export the
    audit estimates the higher F1)."""
    from ..active.store import round_ids
    from ..models.cosinebert import CosineBERT
    from ..models.training import TrainConfig
    from . import matchers as pick
    from .audit import SessionAudit

    if matcher not in pick.MATCHERS:
        raise ValueError(f"matcher must be one of {pick.MATCHERS}, got {matcher!r}")
    folder.mkdir(parents=True, exist_ok=True)
    labels = label_frame(session.pool, session.store)
    write_atomic(folder / "labels.csv", lambda tmp: labels.to_csv(tmp, index=False))
    out = {"labels": int(np.isin(labels["label"], (0, 1)).sum()), "folder": str(folder)}
    source = session.folder / "run" / "model"
    if not source.is_dir():
        raise FileNotFoundError(
            f"{source} holds no final model yet: the session has not "
            "finished its rounds (labels.csv is written)"
        )
    shutil.rmtree(folder / "model", ignore_errors=True)
    shutil.copytree(source, folder / "model")
    model = CosineBERT.load(folder / "model")
    config = session.config
    found = pick.candidates(session.pool, model, m or config.candidate_m)
    options = [pick.bi_encoder(model, found, target_precision)]
    trained = np.unique(np.concatenate([np.empty(0, np.int64), *round_ids(session.folder / "run")]))
    answered = labels[labels["label"].isin((0, 1))]
    training = answered[isin_sorted(answered["pair_id"].to_numpy(np.int64), trained)]
    skipped = pick.untrainable(training["label"]) if matcher != "bi-encoder" else None
    if matcher == "cross-encoder" and skipped:
        raise ValueError(f"matcher='cross-encoder': {skipped}")
    if matcher != "bi-encoder" and not skipped:
        options.append(
            pick.cross_encoder(
                session.pool,
                found,
                training,
                target_precision,
                model=config.model,
                config=TrainConfig(
                    epochs=cross_encoder_epochs,
                    seed=config.seed,
                    max_seq_length=config.max_seq_length,
                    precision=config.precision,
                    batch_order=config.batch_order,
                ),
                cache=session.folder / "cache",
            )
        )
    audit = SessionAudit(session.folder / "audit")
    estimate = audit.estimate(session.store)
    yes = np.sort(answered.loc[answered["label"] == 1, "pair_id"].to_numpy(np.int64))
    best, choice = pick.choose(
        options,
        found,
        said_yes=yes,
        labelled=np.sort(labels["pair_id"].to_numpy(np.int64)),
        trained=trained,
        audit=audit,
        store=session.store,
        total=estimate["total"] if estimate else None,
    )
    if matcher != "auto":
        best = next(o for o in options if o.name == matcher)
        choice = {"chosen": matcher, "why": "asked for"}
    elif skipped:
        choice["why"] = f"{skipped}; {choice['why']}"
    matches, decided = find_matches(found.ids, best, labels, session.pool)
    write_atomic(
        folder / "matches.csv", lambda tmp: matches.drop(columns="pair_id").to_csv(tmp, index=False)
    )
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


def match_quality(session, exported: dict) -> dict:
    """Precision, recall and F1 of an export's matches against the pool's truth (a simulation),
    and the recall of the matches the person's labels found (``true_recall``)."""
    matches = pd.read_csv(
        Path(exported["folder"]) / "matches.csv", dtype={"left_id": str, "right_id": str}
    )
    pool = session.pool
    scored = pair_quality(
        pool.pair_ids(matches["left_id"].to_numpy(object), matches["right_id"].to_numpy(object)),
        pool.positives,
    )
    found = session.store.history().drop_duplicates("pair_id", keep="last")
    yes = np.sort(found.loc[found["label"] == 1, "pair_id"].to_numpy(np.int64))
    return {k: scored[k] for k in ("precision", "recall", "f1")} | {
        "true_recall": float(isin_sorted(yes, pool.positives).sum() / len(pool.positives)),
        "true_positives": int(len(pool.positives)),
    }
