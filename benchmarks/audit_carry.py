"""Replay: does carrying the calibration-error posterior from round to round narrow the recall
interval of a labelling session's audit?

    python benchmarks/audit_carry.py benchmarks/results/er/coverage/walmart_amazon-unc-1 [...]

The "recalibrated" prior (:mod:`pairlab.evaluation.audit_prior`) puts a grid over a level shift
and a tail slope of each round's calibration; one round's 14 audit pairs move it little. If the
active learner's calibration errs the same way every round (too steep, as the Walmart-Amazon
sessions showed), the grid's weights after round r are a prior for round r + 1. This replays
the recorded coverage checks (hypergeometric audit hits per stratum, as
:func:`~pairlab.evaluation.audit_estimate.replay_coverage`) and prints, for the latest round of
each prefix of a session, the coverage and mean width of the share-found interval with the
earlier rounds' log-likelihoods carried at weight lambda (0: the round alone, 1: in full).
Not a test: it informs the estimator. Result (committed checks of Walmart-Amazon seeds 1 and 2):
the widths stay 0.75-0.81; carrying does not make the interval informative.
"""

from __future__ import annotations

import argparse
import json
import sys
from dataclasses import replace
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))


def replay(checks: list[dict], lam: float, repeats: int, seed: int, n_draws: int = 2000) -> dict:
    """Coverage, mean width and mean point of the latest round's share-found interval."""
    from scipy.special import betaln

    from pairlab.evaluation.audit_estimate import _hits, _interval, _replayed_design
    from pairlab.evaluation.audit_prior import rate_prior

    designs = [
        _replayed_design(c["strata"], c["audit_size"], "recalibrated", 1.0, c.get("floor"))
        for c in checks
    ]
    beliefs = [rate_prior(a.rates, sizes=a.unlabelled) for a, _ in designs]
    last = checks[-1]["strata"]
    found = int(np.sum(last["known"]))
    truth = found / (found + int(np.sum(last["positives_unlabelled"])))
    rng = np.random.default_rng(seed)
    hits, widths, points = [], [], []
    for _ in range(repeats):
        carried = 0.0
        for i, ((audit, p_unl), belief) in enumerate(zip(designs, beliefs)):
            n = audit.allocation
            k = np.bincount(audit.stratum, weights=_hits(audit, p_unl, rng), minlength=len(n))
            if i < len(designs) - 1:  # an earlier round: its evidence on the grid, carried
                a, b = belief.a + k, belief.b + n - k
                carried = carried + lam * (betaln(a, b) - betaln(belief.a, belief.b)).sum(axis=1)
                continue
            post = belief.posterior(k, n)
            post = replace(post, log_weight=post.log_weight + carried)
            rest = audit.unlabelled - n
            draws = audit.known.sum() + k.sum() + rng.binomial(rest, post.draw(n_draws, rng)).sum(1)
            lo, hi = _interval(found / np.maximum(draws, found), 0.95)
            total = audit.known.sum() + k.sum() + (rest * post.mean()).sum()
            hits.append(lo - 1e-9 <= truth <= hi + 1e-9)
            widths.append(hi - lo)
            points.append(found / max(found, total))
    return {
        "truth": truth,
        "coverage": float(np.mean(hits)),
        "mean_width": float(np.mean(widths)),
        "mean_estimate": float(np.mean(points)),
    }


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("folders", nargs="+", help="folders of coverage_round_XX.json checks")
    parser.add_argument("--repeats", type=int, default=300)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)
    for folder in args.folders:
        checks = [
            json.loads(p.read_text()) for p in sorted(Path(folder).glob("coverage_round_*.json"))
        ]
        checks = [c for c in checks if "strata" in c]
        for i, check in enumerate(checks):
            row = {
                "session": Path(folder).name,
                "round": check["round"],
                "labelled": check["labelled"],
            }
            for lam in (0.0, 0.5, 1.0):
                out = replay(checks[: i + 1], lam, args.repeats, args.seed)
                row["truth"] = round(out["truth"], 3)
                row[f"lambda_{lam}"] = {
                    k: round(out[k], 3) for k in ("coverage", "mean_width", "mean_estimate")
                }
            print(json.dumps(row), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
