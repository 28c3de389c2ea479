"""What a labelling session gives the person: ``labels.csv`` (every answer), the trained model
(a sentence-transformers folder), ``matches.csv`` (every pair of the whole collection the model
calls a match at a threshold chosen for a target precision, found by candidate search over all
records, with the person's own answers applied) and, for one table, ``clusters.csv`` (connected
components of the matches: one cluster id per record)."""
from __future__ import annotations

import shutil
from pathlib import Path

import numpy as np
import pandas as pd

from ..annotators.person import SessionStore
from ..data.pairs import isin_sorted
from ..io import write_atomic, write_json

__all__ = ["export_session", "label_frame", "find_matches", "clusters", "precision_threshold",
           "match_quality"]

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
    return pd.DataFrame({"pair_id": ids, "left_id": left_ids, "right_id": right_ids,
                         "left": left, "right": right, "label": current["label"].to_numpy(),
                         "answer": current["label"].map(LABELS).to_numpy(),
                         "answered_at": current["created_at"].to_numpy(),
                         "seconds": current["seconds"].to_numpy(),
                         "annotator": current["annotator"].to_numpy(),
                         "round": current["round"].to_numpy(),
                         "audit": (current["kind"] == "audit").to_numpy()})


def precision_threshold(proba: np.ndarray, target: float) -> float:
    """The lowest probability t such that the pairs at or above t have an expected precision
    (their mean calibrated probability) of at least ``target``; 1.0 when none does."""
    if not 0.0 < target <= 1.0:
        raise ValueError(f"target precision must be in (0, 1], got {target!r}")
    p = np.sort(np.asarray(proba, np.float64))[::-1]
    if not len(p):
        return 1.0
    expected = np.cumsum(p) / np.arange(1, len(p) + 1)
    ok = np.nonzero(expected >= target)[0]
    return float(p[ok[-1]]) if len(ok) else 1.0


def find_matches(pool, model, labels: pd.DataFrame, *, target_precision: float = 0.9,
                 m: int = 20) -> tuple[pd.DataFrame, dict]:
    """Every pair among each record's ``m`` nearest neighbours under ``model`` whose calibrated
    probability reaches the threshold for ``target_precision`` (:func:`precision_threshold`),
    plus the pairs the person said match, minus those they said do not. Returns the matches
    (left_id, right_id, score, source) and what was decided (threshold, counts)."""
    from ..evaluation.candidates import neighbour_pairs

    left = model.embed(pool.left_texts, show_progress=False)
    right = left if pool.symmetric else model.embed(pool.right_texts, show_progress=False)
    ids, cosine = neighbour_pairs(pool.space, left, right, m=min(m, pool.space.n_right))
    proba = model.calibration.proba(cosine)
    threshold = precision_threshold(proba, target_precision)
    said = labels.set_index("pair_id")["label"] if len(labels) else pd.Series(dtype=np.int64)
    yes = np.sort(said.index[said == 1].to_numpy(np.int64))
    no = np.sort(said.index[said == 0].to_numpy(np.int64))
    model_ids = ids[(proba >= threshold) & ~isin_sorted(ids, no)]
    chosen = np.union1d(model_ids, yes)
    score = np.full(len(chosen), np.nan)
    at = np.searchsorted(ids, chosen)
    found = (at < len(ids)) & (ids[np.minimum(at, len(ids) - 1)] == chosen)
    score[found] = proba[at[found]]
    left_ids, right_ids = pool.record_ids(chosen)
    frame = pd.DataFrame({"left_id": left_ids, "right_id": right_ids, "score": score,
                          "source": np.where(isin_sorted(chosen, yes), "labelled", "model"),
                          "pair_id": chosen})
    decided = {"target_precision": target_precision, "threshold": threshold,
               "candidates": int(len(ids)), "neighbours": int(m), "by_model": int(len(model_ids)),
               "labelled_matches": int(len(yes)), "rejected_by_person": int(isin_sorted(ids, no).sum()),
               "expected_precision": float(proba[proba >= threshold].mean()) if (proba >= threshold).any() else None}
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
    return pd.DataFrame({"id": pool.left.ids, "cluster": cluster, "size": sizes[component],
                         "text": pool.left.texts}).sort_values(["cluster", "id"], kind="stable")


def export_session(session, folder: Path, *, target_precision: float = 0.9,
                   m: int | None = None) -> dict:
    """Write the session's labels, model, matches and clusters under ``folder``."""
    from ..models.cosinebert import CosineBERT

    folder.mkdir(parents=True, exist_ok=True)
    labels = label_frame(session.pool, session.store)
    write_atomic(folder / "labels.csv", lambda tmp: labels.to_csv(tmp, index=False))
    out = {"labels": int(np.isin(labels["label"], (0, 1)).sum()), "folder": str(folder)}
    source = session.folder / "run" / "model"
    if not source.is_dir():
        raise FileNotFoundError(f"{source} holds no final model yet: the session has not "
                                "finished its rounds (labels.csv is written)")
    shutil.rmtree(folder / "model", ignore_errors=True)
    shutil.copytree(source, folder / "model")
    model = CosineBERT.load(folder / "model")
    matches, decided = find_matches(session.pool, model, labels, target_precision=target_precision,
                                    m=m or session.config.candidate_m)
    write_atomic(folder / "matches.csv", lambda tmp: matches.drop(columns="pair_id").to_csv(tmp, index=False))
    out.update(matches=int(len(matches)), **decided)
    if session.pool.symmetric:
        table = clusters(session.pool, matches["pair_id"].to_numpy(np.int64))
        write_atomic(folder / "clusters.csv", lambda tmp: table.to_csv(tmp, index=False))
        out["clusters"] = int((table.drop_duplicates("cluster")["size"] > 1).sum())
    write_json(folder / "export.json", out)
    return out


def match_quality(session, exported: dict) -> dict:
    """Precision, recall and F1 of an export's matches against the pool's truth (a simulation),
    and the recall of the matches the person's labels found (``true_recall``)."""
    matches = pd.read_csv(Path(exported["folder"]) / "matches.csv", dtype={"left_id": str, "right_id": str})
    pool = session.pool
    ids = np.sort(pool.pair_ids(matches["left_id"].to_numpy(object), matches["right_id"].to_numpy(object)))
    hit = int(isin_sorted(ids, pool.positives).sum())
    precision = hit / len(ids) if len(ids) else 0.0
    recall = hit / len(pool.positives)
    f1 = 2 * precision * recall / (precision + recall) if hit else 0.0
    found = session.store.history().drop_duplicates("pair_id", keep="last")
    yes = np.sort(found.loc[found["label"] == 1, "pair_id"].to_numpy(np.int64))
    return {"precision": precision, "recall": recall, "f1": f1,
            "true_recall": float(isin_sorted(yes, pool.positives).sum() / len(pool.positives)),
            "true_positives": int(len(pool.positives))}
