"""A table of one device record of ``benchmarks/paper_on_device.py`` (its run folders' configs,
rounds and results, and its timings): per run, the precision, rounds, labels, positives found,
test AP with its 95% interval, P@R20 and the seconds per stage summed over the rounds.

    python benchmarks/gpu_record.py benchmarks/results/gpu-h200-2026-11-26
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

STAGES = ("embed", "search", "select", "train", "evaluate")


def rows(folder: Path) -> list[dict]:
    out = []
    for run in sorted((folder / "runs").iterdir()):
        config = json.loads((run / "config.json").read_text())
        rounds = [json.loads(p.read_text()) for p in sorted((run / "rounds").glob("round_*.json"))]
        result = run / "result.json"
        test = json.loads(result.read_text()).get("test", {}) if result.is_file() else {}
        row = {
            "run": run.name.split("-")[0] + f" seed {config['seed']}",
            "precision": config.get("precision", "fp32"),
            "rounds": f"{len(rounds)} of {config['rounds']}",
            "labels": sum(r["batch"] for r in rounds),
            "positives": rounds[-1]["positives_found"] if rounds else 0,
            "test AP": f"{test['ap']:.3f} [{test['ap_ci'][0]:.3f}, {test['ap_ci'][1]:.3f}]"
            if test
            else "(unfinished)",
            "P@R20": f"{test['p_at_r20']:.3f}" if test else "",
        }
        for stage in STAGES:
            row[f"{stage} s"] = round(sum(r["seconds"].get(stage, 0.0) for r in rounds))
        out.append(row)
    return out


def markdown(folder: Path) -> str:
    table = rows(folder)
    head = list(table[0])
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    lines += ["| " + " | ".join(str(r[k]) for k in head) + " |" for r in table]
    device = json.loads((folder / "device.json").read_text())
    timings = json.loads((folder / "timings.json").read_text())
    lines.append("")
    lines.append(
        f"{device.get('gpu', 'no GPU')}, torch {device['torch']}, {device['cpus']} CPUs; "
        f"{len(timings)} processes side by side; wall seconds (exit): "
        + ", ".join(f"{k} {v['seconds']} ({v['exit']})" for k, v in timings.items())
    )
    return "\n".join(lines)


if __name__ == "__main__":
    print(markdown(Path(sys.argv[1])))
