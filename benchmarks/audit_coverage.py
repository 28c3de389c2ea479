"""Coverage of the audit's 95% intervals on a real pool with every match known.

    OMP_NUM_THREADS=1 python benchmarks/audit_coverage.py --out /tmp/audit.json
    python benchmarks/audit_coverage.py --budgets 200 600 1400 --share 0.1 --repeats 100 \
        --priors calibrated:1 oasis:2 jeffreys wald --out /tmp/audit.json
    python benchmarks/audit_coverage.py --two-rounds --out /tmp/audit-rounds.json

Walmart x Amazon (2,554 x 22,068 = 56.4M pairs, 853 matches). The model is the pretrained
MiniLM cosine, calibrated by a logistic fit weighted to the pool on ``--calibration`` pairs
drawn from each Walmart item's nearest Amazon item and as many uniform pairs (true labels);
its threshold is the cosine where the calibrated probability is 1/2. The person's labels are
simulated as static retrieval: the ``k`` top-cosine pairs of the pool, their positives the
found set. For each budget ``k`` an audit of ``share * k`` pairs is drawn ``--repeats`` times
and the coverage and mean width of each 95% interval are reported (``--two-rounds``: instead,
consecutive budgets as two rounds, the second drawn after the first's audit pairs were
labelled, combined by :func:`combine_rounds`). Embeddings are encoded
once and cached as .npy under ``--cache`` (outside the repository). Not a test: no threshold.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from pairlab.data.pairs import PairSpace, as_id_set, isin_sorted  # noqa: E402
from pairlab.evaluation.audit import draw_audit, stratify  # noqa: E402
from pairlab.evaluation.audit_estimate import combine_rounds, coverage  # noqa: E402

FIELDS = ("title", "brand", "modelno")


def load(data: Path, cache: Path):
    """(left embeddings, right embeddings, space, positive ids): rows in id order."""
    import pandas as pd

    tables = {}
    for name in ("walmart", "amazon"):
        df = pd.read_csv(data / f"{name}.csv", dtype=str, keep_default_na=False)
        df = df.assign(id=df["id"].astype(int)).sort_values("id")
        path = cache / f"{name}.npy"
        if not path.exists():
            from pairlab.models.embed import encode

            texts = [
                " | ".join(f"{f}: {r[f].strip()}" for f in FIELDS if r[f].strip())
                for _, r in df.iterrows()
            ]
            cache.mkdir(parents=True, exist_ok=True)
            np.save(path, encode(texts, None, cache=False, show_progress=False))
        tables[name] = (df["id"].to_numpy(), np.load(path))
    (left_ids, left), (right_ids, right) = tables["walmart"], tables["amazon"]
    matches = pd.read_csv(data / "matches.csv")
    space = PairSpace(len(left_ids), len(right_ids), False)
    positives = as_id_set(
        space.encode(
            np.searchsorted(left_ids, matches["walmart_id"].to_numpy()),
            np.searchsorted(right_ids, matches["amazon_id"].to_numpy()),
        )
    )
    return left, right, space, positives


def calibrate(space, left, right, positives, n: int, seed: int):
    """Logistic p(match | cosine) fitted on ``n`` top-1-neighbour pairs and ``n`` uniform pairs,
    each weighted by the share of the pool it stands for. Returns (a, b, labels used)."""
    from sklearn.linear_model import LogisticRegression

    rng = np.random.default_rng(seed)
    top1 = as_id_set(space.encode(np.arange(space.n_left), np.argmax(left @ right.T, axis=1)))
    near = np.sort(rng.choice(top1, size=n, replace=False))
    rand = space.sample(n, rng, exclude=top1)
    ids = np.r_[near, rand]
    i, j = space.decode(ids)
    x = np.einsum("nd,nd->n", left[i].astype(np.float64), right[j].astype(np.float64))
    y = isin_sorted(ids, positives).astype(int)
    w = np.r_[np.full(n, len(top1) / n), np.full(n, (space.n_pairs - len(top1)) / n)]
    mu, sd = x.mean(), x.std()
    fit = LogisticRegression(C=1e4, max_iter=10_000, tol=1e-10)
    fit.fit(((x - mu) / sd)[:, None], y, sample_weight=w / w.mean())
    b = float(fit.coef_[0, 0] / sd)
    return float(fit.intercept_[0] - b * mu), b, int(y.sum())


def two_rounds(
    strata, positives, ranked, budgets, share, *, repeats, seed, prior, strength, draws
) -> dict:
    """Coverage of the share found after two audit rounds, combined: round 1 at ``budgets[0]``,
    round 2 at ``budgets[1]`` with round 1's audit pairs labelled too (they are labels)."""
    rng = np.random.default_rng(seed)
    first = np.sort(ranked[: budgets[0]])
    hits, widths, start = [], [], time.perf_counter()
    for _ in range(repeats):
        a1 = draw_audit(
            strata,
            round(share * budgets[0]),
            first,
            isin_sorted(first, positives).astype(int),
            seed=rng,
            prior=prior,
            strength=strength,
        )
        labelled = np.union1d(ranked[: budgets[1]], a1.ids)
        labels = isin_sorted(labelled, positives).astype(int)
        a2 = draw_audit(
            strata,
            round(share * budgets[1]),
            labelled,
            labels,
            seed=rng,
            prior=prior,
            strength=strength,
        )
        y = [isin_sorted(a.ids, positives).astype(int) for a in (a1, a2)]
        found = int(labels.sum() + y[1].sum())
        out = combine_rounds([a1, a2], y, found=found, n_draws=draws, seed=rng)
        lo, hi = out["recall_found_ci"]
        hits.append(lo <= found / len(positives) <= hi)
        widths.append(hi - lo)
    return {
        "coverage": float(np.mean(hits)),
        "mean_width": float(np.mean(widths)),
        "weights": out["weights"],
        "seconds": time.perf_counter() - start,
    }


def main(argv=None) -> dict:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", type=Path, default=Path("/work/shared/data/er/walmart_amazon"))
    parser.add_argument("--cache", type=Path, default=Path("/tmp/audit_wa"))
    parser.add_argument("--budgets", type=int, nargs="+", default=[200, 600, 1400])
    parser.add_argument("--share", type=float, default=0.1, help="audit size / budget")
    parser.add_argument("--repeats", type=int, default=100)
    parser.add_argument(
        "--priors",
        nargs="+",
        default=["calibrated:1"],
        help="name[:strength] of audit.prior_strength, or wald",
    )
    parser.add_argument("--calibration", type=int, default=300)
    parser.add_argument("--n-strata", type=int, default=12)
    parser.add_argument("--draws", type=int, default=4000)
    parser.add_argument("--seed", type=int, default=0, help="seed of the audits and strata")
    parser.add_argument(
        "--calibration-seed",
        type=int,
        default=0,
        help="seed of the calibration pairs (another calibration, same pool)",
    )
    parser.add_argument(
        "--two-rounds",
        action="store_true",
        help="instead: consecutive budgets as two audit rounds, combined",
    )
    parser.add_argument("--out", type=Path, required=True)
    args = parser.parse_args(argv)

    start = time.perf_counter()
    left, right, space, positives = load(args.data, args.cache)
    a, b, cal_pos = calibrate(
        space, left, right, positives, args.calibration, args.calibration_seed
    )

    def probability(s):
        return 1.0 / (1.0 + np.exp(-(a + b * np.asarray(s, dtype=np.float64))))

    t0 = time.perf_counter()
    strata = stratify(
        space,
        left,
        right,
        probability=probability,
        threshold=-a / b,
        n_strata=args.n_strata,
        seed=args.seed,
    )
    strata_s = time.perf_counter() - t0
    truth_by_stratum = np.bincount(strata.stratum_of(positives), minlength=strata.n_strata)
    print(
        f"{space.n_pairs:,} pairs, {len(positives)} positives; calibration on {2 * args.calibration} "
        f"pairs ({cal_pos} positive): logit = {a:.2f} + {b:.2f} cos, threshold cos {-a / b:.3f}; "
        f"strata in {strata_s:.1f} s"
    )
    print("stratum sizes   ", strata.sizes.tolist())
    print("positives (true)", truth_by_stratum.tolist())
    print("expected (calib)", np.round(strata.prob_sums, 1).tolist())
    order = np.argsort(-strata.scorer(strata.top_ids), kind="stable")
    rows = []
    header = (
        f"{'budget':>6} {'found':>5} {'audit':>5} {'method':>13} {'cover R':>7} {'width R':>7} "
        f"{'cover T':>7} {'width T':>8} {'cover P':>7} {'cover r':>7} {'prior w':>7} {'s':>5}"
    )
    print(header)
    for budget in [] if args.two_rounds else args.budgets:
        labelled = np.sort(strata.top_ids[order[:budget]])
        n = max(1, round(args.share * budget))
        for spec in args.priors:
            name, _, strength = spec.partition(":")
            method = "wald" if name == "wald" else "bayes"
            result = coverage(
                strata,
                positives,
                labelled,
                n,
                repeats=args.repeats,
                seed=args.seed,
                method=method,
                prior="calibrated" if method == "wald" else name,
                strength=float(strength or 1.0),
                n_draws=args.draws,
            )
            row = {"budget": budget, "audit_size": n, "method": spec, **result}
            rows.append(row)
            c, w = result["coverage"], result["mean_width"]
            print(
                f"{budget:>6} {int(round(result['truth']['recall_found'] * len(positives))):>5} "
                f"{n:>5} {spec:>13} {c['recall_found']:>7.2f} {w['recall_found']:>7.3f} "
                f"{c['total']:>7.2f} {w['total']:>8.0f} {c.get('precision', np.nan):>7.2f} "
                f"{c.get('recall', np.nan):>7.2f} {result['mean_prior_weight']:>7.2f} "
                f"{result['seconds']:>5.0f}",
                flush=True,
            )
    combined = []
    for b1, b2 in zip(args.budgets, args.budgets[1:]) if args.two_rounds else []:
        name, _, strength = args.priors[0].partition(":")
        result = two_rounds(
            strata,
            positives,
            strata.top_ids[order],
            (b1, b2),
            args.share,
            repeats=args.repeats,
            seed=args.seed,
            prior=name,
            strength=float(strength or 1.0),
            draws=args.draws,
        )
        combined.append({"budgets": [b1, b2], "method": args.priors[0], **result})
        print(
            f"two rounds {b1} + {b2} ({args.priors[0]}): coverage {result['coverage']:.2f}, "
            f"mean width {result['mean_width']:.3f}, weights "
            f"{np.round(result['weights'], 2).tolist()}, {result['seconds']:.0f} s"
        )
    out = {
        "pairs": space.n_pairs,
        "positives": len(positives),
        "calibration": {"a": a, "b": b, "pairs": 2 * args.calibration, "positives": cal_pos},
        "strata": {
            "lower": strata.lower.tolist(),
            "sizes": strata.sizes.tolist(),
            "positives": truth_by_stratum.tolist(),
            "expected": strata.prob_sums.tolist(),
            "seconds": strata_s,
        },
        "args": {k: str(v) if isinstance(v, Path) else v for k, v in vars(args).items()},
        "rows": rows,
        "two_rounds": combined,
        "seconds": time.perf_counter() - start,
    }
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(out, indent=1, default=float))
    return out


if __name__ == "__main__":
    main()
