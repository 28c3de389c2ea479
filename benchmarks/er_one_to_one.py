"""Would a one-to-one rule raise a two-table export's F1? An offline check on a finished
session folder (``benchmarks/er_sessions.py --folder``): no training, no new labels.

Walmart-Amazon's true matches are one-to-one (853 pairs, no record in two). The export keeps
the person's matches and adds the final bi-encoder's candidates at the threshold the
calibration expects to give precision 0.9. This script scores the same candidates with the
session's exported model and compares that export with a one-to-one one: the candidates whose
records are in no labelled match and that are each other's best (mutual best by calibrated
probability), added above each of several thresholds. It prints one JSON line per rule,
scored against the table's true matches over all pairs.

    PAIRLAB_DATA_DIR=../shared/data python benchmarks/er_one_to_one.py walmart_amazon \\
        /work/er-runs/wa-unc-1-b1280 --seed 1 --budget 1280 --coverage 100 \\
        --matches-per-record 1 --precision fp32 >> benchmarks/results/er/one_to_one.log

The session's settings (benchmarks/er_sessions.py's, the same flags) must be the ones it ran
with: they key its run folder."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]


def quality(chosen: np.ndarray, positives: np.ndarray) -> dict:
    tp = int(np.isin(chosen, positives).sum())
    p, r = tp / max(len(chosen), 1), tp / len(positives)
    return {
        "matches": int(len(chosen)),
        "precision": round(p, 3),
        "recall": round(r, 3),
        "f1": round(2 * p * r / max(p + r, 1e-12), 3),
    }


def mutual_best(left: np.ndarray, right: np.ndarray, proba: np.ndarray) -> np.ndarray:
    """Positions of the pairs whose probability is the highest of their left record's and of
    their right record's."""
    import pandas as pd

    frame = pd.DataFrame({"l": left, "r": right, "p": proba})
    best_l = frame.groupby("l")["p"].transform("max").to_numpy()
    best_r = frame.groupby("r")["p"].transform("max").to_numpy()
    return np.nonzero((proba == best_l) & (proba == best_r))[0]


def main(argv=None) -> int:
    sys.path.insert(0, str(ROOT / "benchmarks"))
    from er_sessions import open_session, session_arguments

    from pairlab.models.cosinebert import CosineBERT
    from pairlab.session import export as pick
    from pairlab.session.export import label_frame

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    session_arguments(parser)
    parser.add_argument("folder", help="a finished session folder with its export/")
    args = parser.parse_args(argv)
    if args.precision is None:
        parser.error("--precision: the one the session trained with (it keys the run folder)")
    session = open_session(args, args.folder)
    pool, positives = session.pool, np.sort(session.pool.positives)
    model = CosineBERT.load(Path(args.folder) / "export" / "model")
    found = pick.candidates(pool, model, args.candidate_m)
    ids, proba = found.ids, model.calibration.proba(found.cosine)
    labels = label_frame(pool, session.store)
    labels = labels[labels["label"].isin((0, 1))]
    if not len(labels):
        raise SystemExit(
            f"{args.folder} holds no answers under these settings: pass the ones the session "
            "ran with (they key its run folder)"
        )
    yes = np.sort(labels.loc[labels["label"] == 1, "pair_id"].to_numpy(np.int64))
    no = np.sort(labels.loc[labels["label"] == 0, "pair_id"].to_numpy(np.int64))
    head = {"table": args.table, "seed": args.seed, "labelled_matches": int(len(yes))}

    def line(rule: str, chosen: np.ndarray, **extra) -> None:
        print(json.dumps({**head, "rule": rule, **extra, **quality(chosen, positives)}))

    threshold = pick.precision_threshold(proba, 0.9)
    line(
        "export (target precision 0.9)",
        np.union1d(ids[(proba >= threshold) & ~np.isin(ids, no)], yes),
        threshold=round(threshold, 3),
    )
    lefts, rights = pool.space.decode(ids)
    yes_left, yes_right = pool.space.decode(yes)
    free = ~(np.isin(lefts, yes_left) | np.isin(rights, yes_right) | np.isin(ids, no))
    at = np.nonzero(free)[0]
    best = at[mutual_best(lefts[at], rights[at], proba[at])]
    head["unfound_true"] = int(len(positives) - len(yes))
    head["mutual_best"] = int(len(best))
    head["mutual_best_true"] = int(np.isin(ids[best], positives).sum())
    threshold = pick.precision_threshold(proba[best], 0.9)
    line(
        "one-to-one, target precision 0.9",
        np.union1d(ids[best[proba[best] >= threshold]], yes),
        threshold=round(threshold, 3),
    )
    for t in (0.5, 0.3, 0.2, 0.1, 0.05):
        line(f"one-to-one, p >= {t}", np.union1d(ids[best[proba[best] >= t]], yes), threshold=t)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
