"""One small active-learning sweep for the reliability tests, run as its own process so a test
can SIGKILL it: real data, the real CosineBERT, smoke sizes.

    python run_target.py ROOT STATUS [--kill-at MOMENT [--when before|after] [--delay S]] [--fake]

ROOT receives the run folders; STATUS gets one line per moment (``stage <round> <name>``,
``write <n> <file>``, ``done``), flushed at once, so a test knows where a kill landed. With
``--kill-at write:<file>`` the process SIGKILLs itself at its first atomic rename onto a file of
that name: ``before`` it (the temporary is written, the real file not yet) or just ``after``;
with ``--kill-at stage:<round>:<name>``, ``--delay`` seconds after it enters that stage. $PAIRLAB_CACHE_DIR and
$PAIRLAB_DATA_DIR come from the environment.
"""

from __future__ import annotations

import argparse
import os
import signal
import sys

SIZES = {"qqp": {"train": 120, "dev": 60, "test": 60}}
PARAMS = dict(
    dataset="qqp",
    data_dir=None,
    seed=0,
    fractions=[0.5, 0.25, 0.25],
    max_items=SIZES,
    model=None,
    max_seq_length=32,
    near_m=10,
    n_random=2000,
    n1=8,
    rounds=5,
    growth=1.5,
    candidate_m=10,
    cosine_epochs=1,
    learning_rate=2e-5,
    batch_size=16,
    n_boot=50,
    curve=False,
)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("root")
    parser.add_argument("status")
    parser.add_argument("--kill-at", default="")
    parser.add_argument("--when", choices=["before", "after"], default="before")
    parser.add_argument("--delay", type=float, default=0.0)
    parser.add_argument("--strategy", default="uncertainty")
    parser.add_argument(
        "--fake",
        action="store_true",
        help="the tests' fast stand-in learner and synthetic pools (no model)",
    )
    args = parser.parse_args(argv)
    status = open(args.status, "a", buffering=1)

    def note(line: str) -> None:
        status.write(line + "\n")
        status.flush()
        os.fsync(status.fileno())

    writes = [0]
    real_replace = os.replace

    def die():
        note(
            f"killed {args.kill_at} {args.when if args.kill_at.startswith('write') else ''}".strip()
        )
        os.kill(os.getpid(), signal.SIGKILL)

    def replace(src, dst, *a, **k):  # every atomic write in pairlab ends in os.replace
        writes[0] += 1
        name = os.path.basename(str(dst))
        note(f"write {writes[0]} {name}")
        target = args.kill_at == f"write:{name}"
        if target and args.when == "before":
            die()
        out = real_replace(src, dst, *a, **k)
        if target and args.when == "after":
            die()
        return out

    os.replace = replace

    def on_event(event, **p):
        if event == "stage_started":
            note(f"stage {p['round']} {p['stage']}")
            if args.kill_at == f"stage:{p['round']}:{p['stage']}":
                import threading

                threading.Timer(args.delay, die).start()
        elif event in ("run_started", "run_reused", "run_waiting", "run_finished"):
            note(f"event {event}")

    note("stage 0 prepare")
    if args.fake:
        sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
        from conftest import BASE, EVAL_SETS, POOLS, VECTORS, FakeLearner

        from pairlab.active import ActiveConfig, ActiveRun, run_folder

        config = ActiveConfig(strategy=args.strategy, seed=0, **{**BASE, "rounds": 4})
        folder = run_folder(args.root, config, POOLS, EVAL_SETS)
        ActiveRun(
            config, POOLS, EVAL_SETS, folder, learner=FakeLearner(VECTORS), callbacks=[on_event]
        ).run()
    else:
        from pairlab import experiments

        prepared, settings = experiments.prepare_active(PARAMS, show=False)
        experiments.sweep(prepared, [args.strategy], [0], settings, args.root, callbacks=[on_event])
    note("done")
    return 0


if __name__ == "__main__":
    sys.exit(main())
