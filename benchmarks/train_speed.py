"""CosineBERT's training speed on WikiQA pairs under each speed setting, beside the matmul rate.

    python benchmarks/train_speed.py --pairs 2048 --out benchmarks/results/paper-cpu/train_speed.json

Trains one epoch (batch 16, 128 word pieces, MiniLM) on the first ``--pairs`` labels of the
paper-cpu seed round (the committed archive's ``labels.npz``: real WikiQA pairs with their
labels), once per setting: the fp32 reference (random order), length-ordered batches, and
bf16 with length-ordered batches (eager attention on CPU). Pairs per second include loading and
calibration, as a round pays them; the share of the limit counts 3 x 2 x (non-embedding
parameters) FLOPs per word piece of a pair's two texts against the matmul rate at the
setting's precision. On a CPU without native bfloat16 the bf16 row is left out (training
refuses it there) and the bf16 rate is a small probe's. Run it on a quiet machine.
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
sys.path.insert(0, str(ROOT / "benchmarks"))

SETTINGS = (("fp32", "random"), ("fp32", "length"), ("bf16", "length"))
ARCHIVE = ROOT / "results" / "paper-cpu" / "archive" / "wikiqa"


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pairs", type=int, default=2048)
    parser.add_argument("--out", required=True)
    args = parser.parse_args(argv)
    import torch
    from paper_cpu_stages import matmul_rate, word_pieces

    from pairlab.data.loaders import load_task
    from pairlab.models.cosinebert import CosineBERT
    from pairlab.models.embed import load_encoder
    from pairlab.models.training import TrainConfig, native_bf16

    torch.set_num_threads(os.cpu_count() or 1)
    labels = next(p for p in sorted(ARCHIVE.glob("*/labels.npz")))
    with np.load(labels) as f:
        ids, y = f["ids"][: args.pairs], f["labels"][: args.pairs]
    pool = load_task("wikiqa")["train"]
    left, right = pool.texts(ids)
    pieces = int(word_pieces(pool, ids, 128).sum())
    encoder = load_encoder(None)
    flops = 2 * sum(p.numel() for n, p in encoder.named_parameters() if "embeddings" not in n)
    native = native_bf16()
    # without native bfloat16 a 2048-square bf16 product takes tens of seconds: a smaller probe
    rates = {
        "fp32": matmul_rate("fp32"),
        "bf16": matmul_rate("bf16", *(() if native else (512, 2))),
    }
    settings = [s for s in SETTINGS if native or s[0] != "bf16"]
    rows = []
    for precision, order in settings:
        config = TrainConfig(epochs=1, batch_size=16, precision=precision, batch_order=order)
        start = time.perf_counter()
        model = CosineBERT.train(left, right, y, config=config, quiet=True)
        seconds = time.perf_counter() - start
        rows.append(
            {
                "precision": precision,
                "batch_order": order,
                "seconds": round(seconds, 1),
                "pairs_per_s": round(len(y) / seconds, 1),
                "limit_share": round(pieces * 3 * flops / seconds / rates[precision], 3),
                "calibration_log_loss": model.info.get("calibration_log_loss"),
            }
        )
        print(rows[-1], flush=True)
    out = {
        "pairs": int(len(y)),
        "positives": int(y.sum()),
        "word_pieces": pieces,
        "source": str(labels.relative_to(ROOT)),
        "matmul_gflops": {d: round(r / 1e9, 1) for d, r in rates.items()},
        "load_average": os.getloadavg(),
        "cpus": os.cpu_count(),
        "cpu_capability": torch.backends.cpu.get_cpu_capability(),
        "native_bf16": native,
        "rows": rows,
    }
    Path(args.out).parent.mkdir(parents=True, exist_ok=True)
    Path(args.out).write_text(json.dumps(out, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
