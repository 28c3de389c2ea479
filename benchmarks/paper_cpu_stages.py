"""The stage table of paper-cpu runs (issue 35): seconds per stage and round, peak memory, and
training's pairs per second as a share of what this CPU's matrix multiplication allows.

    python benchmarks/paper_cpu_stages.py results/paper-cpu/archive/wikiqa/uncertainty-seed0-* \
        --out benchmarks/results/paper-cpu/stages.json

Each run is read from its committed record (``rounds/round_XX.json``: the loop's stage timer,
``labels.npz``: the pairs it labelled). Training a round passes ``epochs`` x its labels pairs
through the encoder forward and backward; each pair is two texts (a question and a sentence),
so a pair costs ``3 x 2 x (non-embedding parameters)`` FLOPs per word piece of the two texts
(forward, and twice that backward). The limit is this machine's measured matmul rate at the
run's precision (fp32, or bf16 where the run trained in bf16). Measure on a quiet machine:
``--matmul`` runs the rate probe, other processes on the cores lower it.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

STAGES = ("embed", "search", "select", "train", "export", "evaluate")


def matmul_rate(dtype: str, n: int = 2048, repeat: int = 5) -> float:
    """FLOP/s of an n x n matrix product in ``dtype`` (the best of ``repeat``)."""
    import torch

    kind = {"fp32": torch.float32, "bf16": torch.bfloat16}[dtype]
    a, b = torch.randn(n, n, dtype=kind), torch.randn(n, n, dtype=kind)
    torch.matmul(a, b)
    best = float("inf")
    for _ in range(repeat):
        start = time.perf_counter()
        torch.matmul(a, b)
        best = min(best, time.perf_counter() - start)
    return 2 * n**3 / best


def word_pieces(pool, ids: np.ndarray, max_seq_length: int) -> np.ndarray:
    """Word pieces of each pair's two texts, each cut at ``max_seq_length``."""
    from pairlab.models.embed import load_encoder

    tokenizer = load_encoder(None, max_seq_length=max_seq_length).tokenizer
    left, right = pool.texts(ids)
    count = lambda texts: np.array(
        [
            min(len(t), max_seq_length)
            for t in tokenizer(list(map(str, texts)))["input_ids"]  # noqa: E731
        ]
    )
    return count(left) + count(right)


def run_table(folder: Path, pool, rates: dict, flops_per_token: float) -> dict:
    config = json.loads((folder / "config.json").read_text())
    with np.load(folder / "labels.npz") as f:
        ids, rounds = f["ids"], f["rounds"]
    pieces = word_pieces(pool, ids, config["max_seq_length"])
    precision = config.get("precision", "fp32")
    rows = []
    for path in sorted((folder / "rounds").glob("round_*.json")):
        record = json.loads(path.read_text())
        r = record["round"]
        trained = rounds <= r
        seconds = {
            s: round(record["seconds"].get(s, 0.0), 1) for s in STAGES if s in record["seconds"]
        }
        row = {
            "round": r,
            "labels": record["labels"],
            "seconds": seconds,
            "total_s": round(sum(seconds.values()), 1),
            "peak_rss_mb": record.get("peak_rss_mb"),
        }
        train = record["seconds"].get("train")
        if train:
            pairs = config["epochs"] * int(trained.sum())
            tokens = config["epochs"] * int(pieces[trained].sum())
            row.update(
                train_pairs_per_s=round(pairs / train, 1),
                word_pieces_per_pair=round(float(pieces[trained].mean()), 1),
                train_hardware_share=round(
                    tokens * 3 * flops_per_token / train / rates[precision], 3
                ),
            )
        rows.append(row)
    total = sum(row["total_s"] for row in rows)
    return {
        "run": folder.name,
        "strategy": config["strategy"],
        "seed": config["seed"],
        "precision": precision,
        "batch_order": config.get("batch_order", "random"),
        "rounds": rows,
        "total_s": round(total, 1),
        "total_min": round(total / 60, 1),
        "stage_totals_s": {
            s: round(sum(row["seconds"].get(s, 0.0) for row in rows), 1) for s in STAGES
        },
    }


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("runs", nargs="+", type=Path, help="archived run folders")
    parser.add_argument("--out", required=True)
    parser.add_argument(
        "--rates-from",
        type=Path,
        default=None,
        help="take the matmul rates from a train_speed.json measured on a quiet "
        "machine instead of measuring them now",
    )
    args = parser.parse_args(argv)
    import torch

    from pairlab.data.loaders import load_task
    from pairlab.models.embed import load_encoder

    torch.set_num_threads(os.cpu_count() or 1)
    if args.rates_from:
        rates = {
            d: g * 1e9 for d, g in json.loads(args.rates_from.read_text())["matmul_gflops"].items()
        }
    else:
        rates = {d: matmul_rate(d) for d in ("fp32", "bf16")}
    encoder = load_encoder(None)
    flops_per_token = 2 * sum(
        p.numel() for n, p in encoder.named_parameters() if "embeddings" not in n
    )
    pool = load_task("wikiqa")["train"]
    out = {
        "matmul_gflops": {d: round(r / 1e9, 1) for d, r in rates.items()},
        "matmul_from": str(args.rates_from) if args.rates_from else "measured now",
        "flops_per_token_forward": flops_per_token,
        "load_average": os.getloadavg(),
        "cpus": os.cpu_count(),
        "runs": [run_table(folder, pool, rates, flops_per_token) for folder in args.runs],
    }
    Path(args.out).parent.mkdir(parents=True, exist_ok=True)
    Path(args.out).write_text(json.dumps(out, indent=1) + "\n")
    for run in out["runs"]:
        print(run["run"], run["precision"], f"{run['total_min']} min", run["stage_totals_s"])
        for row in run["rounds"]:
            print(
                "  ",
                row["round"],
                row["labels"],
                row["seconds"],
                row.get("train_pairs_per_s"),
                row.get("train_hardware_share"),
            )
    return 0


if __name__ == "__main__":
    sys.exit(main())
