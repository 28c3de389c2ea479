"""Replay the recorded coverage checks of simulated labelling sessions under other audit priors.

    python benchmarks/audit_replay.py /tmp/er/walmart_amazon-unc-1/audit [more audit folders] \
        --level-sd 1.2 --slope-sd 0.3 --repeats 400

Each ``coverage_round_XX.json`` a session writes with ``coverage=N`` (the oracle as the person)
keeps, per stratum, the frame of that round's audit and the true positives in it
(:func:`pairlab.evaluation.audit_estimate.coverage`). The estimator reads counts only, so
:func:`~pairlab.evaluation.audit_estimate.replay_coverage` redraws the audit's hits as
hypergeometric counts under the prior given here, at the round's own audit size (or
``--audit``), and prints per round how often the 95% interval of the share found covers the
truth, with its mean width: for that round's audit alone (``round_*``) and for what the session
shows, the estimate combined over every audit round so far (``shown_*``). Not a test: it
informs the prior's settings.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("folders", nargs="+", help="session audit folders (<session>/audit)")
    parser.add_argument("--level-sd", type=float, default=None)
    parser.add_argument("--slope-sd", type=float, default=None)
    parser.add_argument("--slope-centre", type=float, default=None, help="prior mean of log(beta)")
    parser.add_argument(
        "--max-positives",
        type=float,
        default=None,
        help="bound on the unlabelled positives the prior may expect (e.g. the records of the "
        "smaller side: about one match each)",
    )
    parser.add_argument("--prior", default="recalibrated")
    parser.add_argument(
        "--as-the-session",
        action="store_true",
        help="each round and the ones before it under the prior and bound its check records "
        "(the bound the answers allowed then), as the session estimates (issue 59)",
    )
    parser.add_argument(
        "--audit", type=int, default=None, help="audit pairs a round (default: the round's)"
    )
    parser.add_argument("--repeats", type=int, default=400)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)

    from pairlab.evaluation import audit_prior
    from pairlab.evaluation.audit_estimate import replay_combined, replay_coverage

    if args.level_sd is not None:
        audit_prior.LEVEL_SD = args.level_sd
    if args.slope_sd is not None:
        audit_prior.SLOPE_SD = args.slope_sd
    if args.slope_centre is not None:
        audit_prior.SLOPE_CENTRE = args.slope_centre
    bound = {}
    if args.prior == "bounded":  # the session's prior: the bound is its argument
        bound = {"max_positives": args.max_positives}
    elif args.max_positives is not None:
        audit_prior.MAX_POSITIVES = args.max_positives
    print(
        f"prior {args.prior}: level sd {audit_prior.LEVEL_SD}, slope centre "
        f"{audit_prior.SLOPE_CENTRE} sd {audit_prior.SLOPE_SD}, max positives "
        f"{audit_prior.MAX_POSITIVES}"
    )
    rows = []
    for folder in args.folders:
        checks = [
            json.loads(p.read_text()) for p in sorted(Path(folder).glob("coverage_round_*.json"))
        ]
        checks = [c for c in checks if "strata" in c]
        for i, check in enumerate(checks):
            if args.audit:
                check = {**check, "audit_size": args.audit}
                checks[i] = check
            prior, bounded = args.prior, bound
            if args.as_the_session:
                prior, bounded = check["prior"], {"max_positives": check["max_positives"]}
            out = replay_coverage(
                check["strata"],
                check["audit_size"],
                repeats=args.repeats,
                seed=args.seed,
                prior=prior,
                floor=check.get("floor"),
                **bounded,
            )
            shown = replay_combined(
                checks[: i + 1], repeats=args.repeats, seed=args.seed, prior=prior, **bounded
            )
            rows.append(
                {
                    "session": Path(folder).name
                    if Path(folder).name != "audit"
                    else Path(folder).parent.name,
                    "round": check["round"],
                    "prior": prior,
                    "labelled": check["labelled"],
                    "truth": round(out["truth"]["recall_found"], 3),
                    "round_estimate": round(out["mean_estimate"]["recall_found"], 3),
                    "round_coverage": round(out["coverage"]["recall_found"], 3),
                    "round_width": round(out["mean_width"]["recall_found"], 3),
                    "shown_audit_pairs": shown["audit_pairs"],
                    "shown_estimate": round(shown["mean_estimate"]["recall_found"], 3),
                    "shown_coverage": round(shown["coverage"]["recall_found"], 3),
                    "shown_width": round(shown["mean_width"]["recall_found"], 3),
                }
            )
            print(json.dumps(rows[-1]), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
