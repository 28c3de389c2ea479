"""Where a finished two-table session's labels went: how many of its non-matches paired a record
that already had a labelled match. An offline check on a session folder
(``benchmarks/er_sessions.py --folder``): no model, no new labels.

Walmart-Amazon's true matches are one-to-one (853 pairs, no record in two), so once a record's
match is labelled, every later pair of that record is a non-match: a label a one-to-one rule
would have spent on another record. This counts them in answer order, per round of 128 answers
and in total, and prints one JSON line.

    PAIRLAB_DATA_DIR=../shared/data python benchmarks/er_label_use.py walmart_amazon --export \\
        /tmp/wa/adaptive-s0 >> benchmarks/results/er/label_use-walmart_amazon.log
"""

from __future__ import annotations

import argparse
import json
import sqlite3
import sys
from pathlib import Path

import numpy as np
import pandas as pd

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))


def spent_on_matched(left: np.ndarray, right: np.ndarray, label: np.ndarray) -> np.ndarray:
    """For answers in order (record indices and 0/1 labels): True where a non-match pairs a
    record that an earlier answer had already labelled a match."""
    matched_left, matched_right = set(), set()
    out = np.zeros(len(label), bool)
    for k, (i, j, y) in enumerate(zip(left.tolist(), right.tolist(), label.tolist())):
        if y == 1:
            matched_left.add(i)
            matched_right.add(j)
        else:
            out[k] = i in matched_left or j in matched_right
    return out


def export_quality(folder: Path, oracle) -> dict:
    """Precision, recall and F1 of ``folder/export/matches.csv`` (written by
    ``session.export``) against the table's true matches (``oracle``: its matches file), and
    the matcher the export used."""
    exported = pd.read_csv(folder / "export" / "matches.csv", dtype=str)
    truth = pd.read_csv(oracle, dtype=str)
    true = set(zip(truth.iloc[:, 0], truth.iloc[:, 1]))
    hit = len(true & set(zip(exported["left_id"], exported["right_id"])))
    p, r = hit / max(len(exported), 1), hit / len(true)
    info = json.loads((folder / "export" / "export.json").read_text())
    return {
        "matcher": info["matcher"],
        "matches": int(len(exported)),
        "precision": round(p, 4),
        "recall": round(r, 4),
        "f1": round(2 * p * r / (p + r), 4) if hit else 0.0,
    }


def main(argv=None) -> int:
    from er_sessions import TABLES, records

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("table", choices=sorted(TABLES))
    parser.add_argument("folder", help="the session folder (its labels.sqlite)")
    parser.add_argument("--per", type=int, default=128, help="answers per reported slice")
    parser.add_argument(
        "--export",
        action="store_true",
        help="also score the session's export (<folder>/export/matches.csv) against the truth",
    )
    args = parser.parse_args(argv)

    _, right, oracle = records(args.table)
    positives = pd.read_csv(oracle)
    with sqlite3.connect(f"file:{Path(args.folder) / 'labels.sqlite'}?mode=ro", uri=True) as db:
        rows = np.array(db.execute("SELECT pair_id, label FROM answers ORDER BY id").fetchall())
        shown = dict(db.execute("SELECT key, value FROM status").fetchall()).get("estimate")
    config = json.loads((Path(args.folder) / "run" / "config.json").read_text())
    # the last answer of each pair is the one that counts (an undo writes a new row)
    _, last = np.unique(rows[::-1, 0], return_index=True)
    rows = rows[np.sort(len(rows) - 1 - last)]
    rows = rows[np.isin(rows[:, 1], (0, 1))]
    left, right_i = np.divmod(rows[:, 0], len(right))  # two-table pair ids: left * n_right + right
    wasted = spent_on_matched(left, right_i, rows[:, 1])
    slices = range(0, len(rows), args.per)
    print(
        json.dumps(
            {
                "table": args.table,
                "folder": str(args.folder),
                "strategy": config["strategy"],
                "strategy_params": config.get("strategy_params", {}),
                "seed": config["seed"],
                "precision": config.get("precision", "fp32"),
                "answers": int(len(rows)),
                "matches": int(rows[:, 1].sum()),
                "non_matches": int((rows[:, 1] == 0).sum()),
                "non_matches_of_matched_records": int(wasted.sum()),
                "per_slice": [int(wasted[s : s + args.per].sum()) for s in slices],
                "true_share_found": round(float(rows[:, 1].sum()) / len(positives), 3),
                "last_estimate_shown": shown,  # the session's own stopping sentence
                **({"export": export_quality(Path(args.folder), oracle)} if args.export else {}),
            }
        )
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
