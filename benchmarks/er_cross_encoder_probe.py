"""Does the export's cross-encoder learn from a session's worth of labels? A probe on
Walmart-Amazon, outside the session: ConcatBERT at several learning rates and epochs against
CosineBERT trained on the same pairs and the pretrained cosine.

Training pairs: BM25's 10 nearest Amazon records of 1,400 random Walmart records, 250 of their
matches and 400 of their non-matches (a session's label mix, 650 pairs). Test: the 5 nearest of
300 other Walmart records (1,500 pairs, 98 matches). Prints AP and the best F1 over thresholds
on the test pairs, and the training seconds, one line per setting:

    PAIRLAB_DATA_DIR=../shared/data OMP_NUM_THREADS=2 python benchmarks/er_cross_encoder_probe.py \\
        pre cos2 2e-5:3 1e-4:3 1e-4:6 >> benchmarks/results/er/cross_encoder_probe.log

A setting is ``pre`` (pretrained cosine), ``cosN`` (CosineBERT, N epochs, its learning rate) or
``LR:EPOCHS`` (ConcatBERT). Training runs in bf16 with length-ordered batches where the CPU has
native bfloat16 (as the sessions), else fp32. Not a test: no threshold.
"""

from __future__ import annotations

import os
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))


def main(argv=None) -> int:
    import bm25s
    import pandas as pd
    from sklearn.metrics import average_precision_score

    from pairlab.data import load_items
    from pairlab.models.concatbert import ConcatBERT
    from pairlab.models.cosinebert import CosineBERT
    from pairlab.models.embed import load_encoder
    from pairlab.models.training import TrainConfig, native_bf16

    settings = (argv if argv is not None else sys.argv[1:]) or ["pre", "cos2", "2e-5:3"]
    data = Path(os.environ.get("PAIRLAB_DATA_DIR", ROOT.parent / "shared" / "data"))
    folder = data / "er" / "walmart_amazon"
    fields = ["title", "brand", "modelno", "price"]
    left = load_items(folder / "walmart.csv", text=fields, id="id")
    right = load_items(folder / "amazon.csv", text=fields, id="id")
    m = pd.read_csv(folder / "matches.csv")
    truth = set(zip(m.walmart_id.astype(str), m.amazon_id.astype(str)))
    lt, rt = list(left.texts), list(right.texts)
    lid, rid = [str(x) for x in left.ids], [str(x) for x in right.ids]
    bm25 = bm25s.BM25()
    bm25.index(bm25s.tokenize(rt, show_progress=False), show_progress=False)
    near, _ = bm25.retrieve(bm25s.tokenize(lt, show_progress=False), k=10, show_progress=False)
    rng = np.random.default_rng(0)
    order = rng.permutation(len(lt))

    def pairs(rows, k):
        a, b, y = [], [], []
        for i in rows:
            for j in near[i][:k]:
                a.append(lt[i])
                b.append(rt[j])
                y.append(int((lid[i], rid[j]) in truth))
        return a, b, np.array(y)

    a, b, y = pairs(order[:1400], 10)
    pos, neg = np.flatnonzero(y == 1), np.flatnonzero(y == 0)
    keep = np.concatenate([pos[:250], rng.choice(neg, 400, replace=False)])
    train = [a[i] for i in keep], [b[i] for i in keep], y[keep]
    test = pairs(order[1400:1700], 5)
    precision = "bf16" if native_bf16() else "fp32"
    print(
        f"train {len(keep)} ({train[2].sum()} matches), test {len(test[2])} ({test[2].sum()} matches), {precision}"
    )
    for setting in settings:
        t = time.time()
        if setting == "pre":
            model = load_encoder(None)
            u = model.encode(test[0], normalize_embeddings=True)
            v = model.encode(test[1], normalize_embeddings=True)
            scores, trained = (u * v).sum(1), 0.0
        elif setting.startswith("cos"):
            config = TrainConfig(
                epochs=int(setting[3:] or 2), seed=0, precision=precision, batch_order="length"
            )
            model = CosineBERT.train(*train, config=config, quiet=True)
            trained = time.time() - t
            scores = model.calibration.proba(model.cosine(test[0], test[1]))
        else:
            lr, epochs = setting.split(":")
            config = TrainConfig(
                learning_rate=float(lr),
                epochs=int(epochs),
                seed=0,
                precision=precision,
                batch_order="length",
            )
            model = ConcatBERT.train(*train, config=config)
            trained = time.time() - t
            scores = model.logits(test[0], test[1], batch_size=128, show_progress=False)
        ranked = test[2][np.argsort(-scores)]
        f1 = 2 * np.cumsum(ranked) / (np.arange(1, len(ranked) + 1) + ranked.sum())
        print(
            f"{setting}: AP {average_precision_score(test[2], scores):.3f} best F1 {f1.max():.3f} "
            f"train {trained:.0f} s"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
