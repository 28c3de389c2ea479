"""Where the unseen matches sit against the calibration, early in a Walmart-Amazon session.

    python benchmarks/calibration_tail.py ROUNDS   # e.g. 2: a model trained on rounds 1-2's labels

Trains the round-(ROUNDS+1) model of the seed-0 uncertainty session (its folder /tmp/er/wa-unc-0,
from benchmarks/er_sessions.py; labels from its run folder, the oracle's answers) and compares,
per audit stratum, the matches not yet labelled with what three calibrations of the same cosines
expect: the model's (logistic, C = 1e4, as CosineBERT fits it), Platt's smoothed targets, and a
ridge (C = 1). Not a test: it asks whether regularising the calibration fixes the audit prior's
tail (benchmarks/results/er/calibration_tail-*.log: it does not; the tail is not logistic).
"""

import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "benchmarks"))
sys.path.insert(0, str(ROOT))
from er_sessions import records  # noqa: E402 (after the path set-up)
from scipy.special import expit  # noqa: E402 (after the path set-up)
from sklearn.linear_model import LogisticRegression  # noqa: E402 (after the path set-up)

from pairlab.active.store import round_ids  # noqa: E402 (after the path set-up)
from pairlab.evaluation.audit import stratify  # noqa: E402 (after the path set-up)
from pairlab.models.cosinebert import Calibration, CosineBERT  # noqa: E402 (after the path set-up)
from pairlab.models.training import TrainConfig  # noqa: E402 (after the path set-up)
from pairlab.session import LabelingSession  # noqa: E402 (after the path set-up)

t0 = time.time()
left, right, oracle = records("walmart_amazon")
s = LabelingSession(
    left,
    "/tmp/er/wa-unc-0",
    right=right,
    annotator="oracle",
    oracle_pairs=oracle,
    budget=1408,
    batch=128,
    audit_share=0.1,
    candidate_m=20,
    seed=0,
    precision="bf16",
    batch_order="length",
)
pool = s.pool
rounds = round_ids("/tmp/er/wa-unc-0/run")
ids = np.sort(np.concatenate(rounds[: int(sys.argv[1])]))
y = pool.labels(ids)
i, j = pool.space.decode(ids)
lt = [pool.left_texts[k] for k in i]
rt = [pool.right_texts[k] for k in j]
print("labels", len(ids), "positives", int(y.sum()), flush=True)
model = CosineBERT.train(
    lt,
    rt,
    y,
    config=TrainConfig(epochs=2, seed=0, precision="bf16", batch_order="length"),
    quiet=True,
)
print("trained", time.time() - t0, flush=True)
L = model.embed(pool.left_texts, show_progress=False)
R = model.embed(pool.right_texts, show_progress=False)
print("embedded", time.time() - t0, flush=True)
cos = np.einsum("nd,nd->n", L[i].astype(np.float64), R[j].astype(np.float64))
cal = model.calibration
m, sd = cos.mean(), cos.std()
x = ((cos - m) / sd)[:, None]
npos, nneg = int(y.sum()), int(len(y) - y.sum())
tp, tn = (npos + 1) / (npos + 2), 1 / (nneg + 2)
X = np.r_[x, x]
Y = np.r_[np.ones(len(y)), np.zeros(len(y))]
W = np.r_[np.where(y == 1, tp, tn), np.where(y == 1, 1 - tp, 1 - tn)]
platt = LogisticRegression(C=1e4, max_iter=10000).fit(X, Y, sample_weight=W)
ridge = LogisticRegression(C=1.0, max_iter=10000).fit(x, y)
cals = {
    "model": cal,
    "platt": Calibration(m, sd, float(platt.coef_[0, 0]), float(platt.intercept_[0])),
    "ridge": Calibration(m, sd, float(ridge.coef_[0, 0]), float(ridge.intercept_[0])),
}
for k, c in cals.items():
    print(k, f"weight {c.weight:.2f} bias {c.bias:.2f}")
thr = cal.mean + cal.std * (-cal.bias / cal.weight)
np.set_printoptions(linewidth=220, precision=2)
st = None
for k, c in cals.items():
    st = stratify(
        pool.space,
        L,
        R,
        probability=lambda v, c=c: expit(c.logits(v)),
        n_strata=12,
        threshold=float(thr),
        seed=3,
    )
    lab_h = np.bincount(st.stratum_of(ids), minlength=st.n_strata)
    lab_sum = np.bincount(st.stratum_of(ids), weights=expit(c.logits(cos)), minlength=st.n_strata)
    unl = st.sizes - lab_h
    exp_unseen = np.maximum(st.prob_sums - lab_sum, 0)
    true_h = np.bincount(st.stratum_of(pool.positives), minlength=st.n_strata) - np.bincount(
        st.stratum_of(ids[y == 1]), minlength=st.n_strata
    )
    print(k, "expected unseen", exp_unseen.round(1), f"sum {exp_unseen.sum():.0f}")
print("true unseen", true_h, true_h.sum())
print("sizes", st.sizes)
print("done", time.time() - t0)
