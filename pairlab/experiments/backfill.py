"""Table 3's zero-shot row for a profile's committed notebook-03 metrics recorded before the
notebook computed it: ``python -m pairlab.experiments.backfill results/cpu``.

The row needs none of the runs: it is the pretrained encoder's cosine on the test strata every
run was measured on, and those strata follow from the recorded config (data, seed, ``near_m``,
``n_random``). So the row is computed by the notebook's own functions (:func:`.sweeps.
prepare_active`, :func:`.sweeps.zero_shot`) from ``03_cosinebert_active_learning.config.json``
and put first in the metrics file beside it, marked with the command that made it. A file
that has the row already is left alone."""

from __future__ import annotations

import argparse
import datetime
import json
from pathlib import Path

from ..active.config import LoopSettings
from ..evaluation.strata import EvalConfig
from ..io import write_json
from .sweeps import ZERO_SHOT, prepare_active, with_zero_shot, zero_shot

__all__ = ["NOTEBOOK", "backfill_zero_shot", "main"]

NOTEBOOK = "03_cosinebert_active_learning"


def backfill_zero_shot(folder) -> list[str]:
    """Add the zero-shot row to ``<folder>/03_cosinebert_active_learning.metrics.json`` for
    every task that lacks it; the tasks it was added for (none: nothing written)."""
    folder = Path(folder)
    metrics_path, config_path = (
        folder / f"{NOTEBOOK}.{kind}.json" for kind in ("metrics", "config")
    )
    for path in (metrics_path, config_path):
        if not path.is_file():
            raise FileNotFoundError(f"no {path.name} in {folder}: run notebook 03 there first")
    metrics, params = (json.loads(path.read_text()) for path in (metrics_path, config_path))
    missing = [task for task, rows in metrics.items() if ZERO_SHOT not in rows]
    if not missing:
        return []
    prepared, _ = prepare_active(params, show=False)
    prepared = {task: prepared[task] for task in missing}
    loop = LoopSettings.from_params(params)
    zero = zero_shot(
        prepared,
        model=loop.model,
        max_seq_length=loop.max_seq_length,
        n_boot=loop.n_boot,
        seed=EvalConfig.from_params(params).seed,
    )
    made = f"python -m pairlab.experiments.backfill {folder} ({datetime.date.today().isoformat()})"
    for entry in zero.values():
        entry["recorded_by"] = made
    write_json(metrics_path, with_zero_shot(metrics, zero))
    return missing


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "folders", nargs="+", help="results/<profile> folders holding notebook 03's files"
    )
    for folder in parser.parse_args(argv).folders:
        added = backfill_zero_shot(folder)
        print(
            f"{folder}: zero-shot row added for {', '.join(added)}"
            if added
            else f"{folder}: every task has its zero-shot row already"
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
