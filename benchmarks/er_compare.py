"""Matches found per label on a real table: a finished oracle session (``er_sessions.py
--folder``) against random labelling and static retrieval at the same budget, each run as an
oracle session of its own beside it (notebook 10's section 5, :func:`compare_strategies`).
Prints one JSON line.

    OMP_NUM_THREADS=2 PAIRLAB_DATA_DIR=../shared/data python benchmarks/er_compare.py \\
        walmart_amazon --seed 1 --budget 1280 --one-to-one --matches-per-record 1 \\
        --folder /tmp/wa/unc-s1-o2o >> benchmarks/results/er/compare-walmart_amazon.log

The session's settings must be the ones it ran with (they key its run folder); the others run
without the audit, in ``<folder>-random`` and ``<folder>-static_retrieval``.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))


def main(argv=None) -> int:
    from er_sessions import open_session, session_arguments

    from pairlab.models.training import native_bf16
    from pairlab.session import compare_strategies
    from pairlab.session.comparison import comparison_record

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    session_arguments(parser)
    parser.add_argument("--folder", required=True, help="the finished session's folder")
    args = parser.parse_args(argv)
    if args.precision is None:
        args.precision = "bf16" if native_bf16() else "fp32"
    session = open_session(args, Path(args.folder))
    if session.result() is None:
        raise SystemExit(f"{args.folder} holds no finished session with these settings")
    started = time.perf_counter()
    table = compare_strategies(session, ["random", "static_retrieval"])
    print(
        json.dumps(
            {
                "table": args.table,
                "seed": args.seed,
                "one_to_one": args.one_to_one,
                "precision": args.precision,
                "rows": comparison_record(table),
                "seconds": round(time.perf_counter() - started, 1),
            }
        )
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
