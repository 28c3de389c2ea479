"""Documents rendered from committed results (``results/``, ``benchmarks/results/``) through the
Jinja templates in ``docs/``: no number in them is typed by hand.

    python -m pairlab.report                  # render the documents
    python -m pairlab.report --check          # exit 1 when a document differs from its rendering
    python -m pairlab.report --collect cpu    # copy runs/cpu/*.{metrics,config}.json to results/cpu/
"""

from __future__ import annotations

import argparse
import json
import shutil
import sys
from dataclasses import asdict
from pathlib import Path

from .metrics_files import check
from .paths import project_root
from .profiles import BASE
from .templating import FILTERS, environment, markdown

__all__ = [
    "DOCUMENTS",
    "FILTERS",
    "environment",
    "markdown",
    "PROFILE_ORDER",
    "bench_table",
    "collect",
    "layer_rows",
    "load_results",
    "render",
    "run_compute",
    "stale",
]

# document -> its template (paths relative to the project root)
DOCUMENTS = {
    "README.md": "docs/README.md.j2",
    "RESULTS.md": "docs/RESULTS.md.j2",
    "benchmarks/README.md": "docs/benchmarks.md.j2",
    "RELIABILITY.md": "docs/RELIABILITY.md.j2",
    "docs/ray.md": "docs/ray.md.j2",
    "WORKSHOP.md": "docs/WORKSHOP.md.j2",
    "ARCHITECTURE.md": "docs/ARCHITECTURE.md.j2",
}
# a notebook's reference results come from the first of these profiles that recorded them
PROFILE_ORDER = ("paper", "cpu", "demo", "quick", "smoke")


def layer_rows(root: Path | None = None) -> list[tuple]:
    """``(layer number or "", module, purpose)`` for each module of the layer list that
    ``tests/test_layers.py`` states and enforces (read from its source, not imported)."""
    import ast

    source = ((root or project_root()) / "tests" / "test_layers.py").read_text()
    value = next(
        node.value
        for node in ast.parse(source).body
        if isinstance(node, ast.Assign) and [t.id for t in node.targets] == ["LAYERS"]
    )
    return [
        (rank if k == 0 else "", name, purpose)
        for rank, layer in enumerate(ast.literal_eval(value), 1)
        for k, (name, purpose) in enumerate(layer.items())
    ]


def load_results(root: Path | None = None) -> dict:
    """``{profile: {notebook: {"metrics": ..., "config": ...}}}`` from ``results/``."""
    root = root or project_root()
    out: dict = {}
    for path in sorted((root / "results").glob("*/*.metrics.json")):
        notebook = path.name.removesuffix(".metrics.json")
        config = path.with_name(f"{notebook}.config.json")
        if not config.is_file():
            raise FileNotFoundError(
                f"{path} has no {config.name} beside it: a result without "
                "its parameters cannot be audited"
            )
        out.setdefault(path.parent.name, {})[notebook] = {
            # its declared layout, or an error naming what differs
            "metrics": check(notebook, json.loads(path.read_text()), source=str(path)),
            "config": json.loads(config.read_text()),
        }
    return out


def _jsons(folder: Path, pattern: str = "*.json", key=lambda path: path.stem) -> dict:
    """``{key(path): value}`` of the JSON files matching ``pattern`` in ``folder``, in order."""
    return {key(path): json.loads(path.read_text()) for path in sorted(folder.glob(pattern))}


def _reliability(root: Path) -> dict:
    """``{test name: figures}`` from ``results/reliability/`` (``make test-reliability``), the
    bad-input catalogue's rows (``bad_input*.json``, one per test worker) under ``"bad_input"``."""
    out = _jsons(root / "results" / "reliability")
    rows = [row for name in list(out) if name.startswith("bad_input") for row in out.pop(name)]
    if rows:
        out["bad_input"] = sorted(rows, key=lambda r: (r["row"], r["input"]))
    return out


def _profile_purposes(root: Path) -> list[tuple[str, str]]:
    """``(name, purpose)`` of every profile, from its first line (``# name: purpose``)."""
    out = []
    for path in sorted((root / "profiles").glob("*.yaml")):
        if path.stem == BASE:  # the shared settings every profile is read over: not one to run
            continue
        first = path.read_text().splitlines()[0] if path.read_text() else ""
        if not first.startswith(f"# {path.stem}:"):
            raise ValueError(f"{path} must start with a line '# {path.stem}: <what it is for>'")
        out.append((path.stem, first.removeprefix(f"# {path.stem}:").strip()))
    return out


def _default_profile(root: Path) -> str:
    """The profile ``make run`` uses (the Makefile's ``PROFILE ?=``)."""
    for line in (root / "Makefile").read_text().splitlines():
        if line.replace(" ", "").startswith("PROFILE?="):
            return line.split("=", 1)[1].strip()
    raise ValueError("the Makefile sets no default PROFILE")


def run_compute(notebooks: dict | None) -> tuple[float, int]:
    """``(seconds, runs)``: what a profile's active-learning runs computed, from one profile's
    :func:`load_results` entry: each summary's ``seconds_per_run`` for each of its ``runs``, a
    run that several notebooks read back counted once."""
    per_run: dict[str, float] = {}

    def walk(node):
        if isinstance(node, dict) and "seconds_per_run" in node:  # a sweep's summary
            seconds = float(sum(node["seconds_per_run"].values()))
            per_run.update(dict.fromkeys(node["runs"], seconds))
        elif isinstance(node, (dict, list)):
            for value in node.values() if isinstance(node, dict) else node:
                walk(value)

    for entry in (notebooks or {}).values():
        walk(entry["metrics"])
    return sum(per_run.values()), len(per_run)


def collect(profile: str, root: Path) -> list[Path]:
    """Copy a finished run's metrics, config and timings files into ``results/<profile>/``."""
    source, target = root / "runs" / profile, root / "results" / profile
    found = sorted(source.glob("*.metrics.json"))
    if not found:
        raise FileNotFoundError(f"no metrics files in {source}: run `make run PROFILE={profile}`")
    target.mkdir(parents=True, exist_ok=True)
    configs = [m.with_name(m.name.replace(".metrics.json", ".config.json")) for m in found]
    files = [*found, *configs, *source.glob("timings.json")]
    return [Path(shutil.copy2(path, target / path.name)) for path in files]


def bench_table(results: dict) -> str:
    """A benchmark results file as a markdown table, with the round's stages below it."""
    return markdown("bench_table", results, template="report.md.j2")


def find_row(results: dict, start: str) -> dict | None:
    """The first row of a benchmark results file whose name starts with ``start``, or None."""
    return next((r for r in results["rows"] if r["row"].startswith(start)), None)


def bench_row(results: dict, start: str) -> dict:
    """:func:`find_row`, or a KeyError where the results have no such row."""
    if (found := find_row(results, start)) is None:
        raise KeyError(f"no benchmark row starting {start!r} in the {results['profile']} results")
    return found


def _frame(records: list[dict], columns: dict):
    """A table of JSON records; ``columns`` maps each key shown, in order, to its header."""
    import pandas as pd

    return pd.DataFrame(records)[list(columns)].rename(columns=columns)


def reference(results: dict, notebook: str):
    """``(profile, record)`` of the first profile in :data:`PROFILE_ORDER` that recorded
    ``notebook``, else ``(None, None)``."""
    found = (p for p in PROFILE_ORDER if notebook in results.get(p, {}))
    return next(((p, results[p][notebook]) for p in found), (None, None))


HEADLINE_ORDER = ("paper", "paper-cpu", "paper-cpu-qqp", "cpu", "demo", "quick", "smoke")


def headline_findings(results: dict) -> list[dict]:
    """The core paper's headline as finding records, one per task, each from the largest
    profile whose notebook 03 ran on that task (with its notebook 05's efficiency)."""
    from .experiments.findings import adaptive_vs_static

    out: dict = {}  # task -> its finding, from the first profile in HEADLINE_ORDER with one
    for profile in HEADLINE_ORDER:
        record = results.get(profile, {}).get("03_cosinebert_active_learning")
        curves = results.get(profile, {}).get("05_budget_curves")
        for task, strategies in (record or {}).get("metrics", {}).items():
            efficiency = (curves or {}).get("metrics", {}).get(task, {}).get("efficiency")
            found = None if task in out else adaptive_vs_static(task, strategies, efficiency)
            if found is not None:
                out[task] = {**asdict(found), "profile": profile}
    return list(out.values())


def render(document: str, root: Path | None = None) -> str:
    """The text of ``document`` (a key of :data:`DOCUMENTS`) rendered from the committed files."""
    from . import experiments, workshop
    from .data import paper

    root = root or project_root()
    if document not in DOCUMENTS:
        raise ValueError(f"unknown document {document!r}; known: {sorted(DOCUMENTS)}")
    bench = root / "benchmarks" / "results"
    results, reliability, ray_bench = load_results(root), _reliability(root), _jsons(bench / "ray")
    timings = _jsons(root / "results", "*/timings.json", lambda path: path.parent.name)
    er_sessions, bench = _jsons(bench / "er"), _jsons(bench)
    needs = {  # a document -> what it renders, where, and how to make it
        "RESULTS.md": (results, "results/<profile>/*.metrics.json", ""),
        "benchmarks/README.md": (bench, "benchmarks/results/*.json", ""),
        "RELIABILITY.md": (reliability, "results/reliability/*.json", "make test-reliability"),
        "docs/ray.md": (ray_bench, "benchmarks/results/ray/*.json", "make bench-ray"),
    }
    found, where, make = needs.get(document, (True, "", ""))
    if not found:
        raise FileNotFoundError(f"no {where} under {root}" + (f": run `{make}`" if make else ""))
    extra: dict = {}
    if document == "README.md":
        extra = {"profiles": _profile_purposes(root), "default_profile": _default_profile(root)}
    elif document == "ARCHITECTURE.md":
        extra = {"layer_rows": layer_rows(root)}
    elif document == "WORKSHOP.md":
        quick = timings.get("quick")
        extra = {"quick": quick, "guide": workshop.guide(root, (quick or {}).get("notebooks"))}
    return (
        environment(root)
        .get_template(DOCUMENTS[document])
        .render(
            **extra,
            # the README's make-run line gives the record alone (compute=False)
            timing_cell=lambda p, compute=True: markdown(
                "timing_cell",
                timings.get(p),
                *(run_compute(results.get(p)) if compute else (0.0, 0)),
                template="report.md.j2",
            ),
            results=results,
            bench=bench,
            reference=lambda nb: reference(results, nb),
            bench_table=bench_table,
            row=bench_row,
            find_row=find_row,
            profile_order=PROFILE_ORDER,
            paper=paper,
            experiments=experiments,
            frame=_frame,
            reliability=reliability,
            ray_bench=ray_bench,
            headline_findings=lambda: headline_findings(results),
            strategies_of=lambda m: {t: v["strategies"] for t, v in m.items()},
            er_sessions=lambda: er_sessions,
        )
    )


def stale(root: Path, documents=tuple(DOCUMENTS)) -> list[str]:
    """Those of ``documents`` whose committed text differs from their rendering."""
    return [
        doc
        for doc in documents
        if not (root / doc).is_file() or (root / doc).read_text() != render(doc, root)
    ]


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="exit 1 if a document is stale")
    parser.add_argument("--collect", metavar="PROFILE", help="copy runs/PROFILE's metrics first")
    args = parser.parse_args(argv)
    root = project_root()
    if args.collect:
        for path in collect(args.collect, root):
            print(f"collected {path.relative_to(root)}")
    if args.check:
        out_of_date = stale(root)
        for doc in out_of_date:
            print(f"{doc} differs from its rendering: run `make docs`", file=sys.stderr)
        return 1 if out_of_date else 0
    for doc in DOCUMENTS:
        (root / doc).write_text(render(doc, root))
        print(f"rendered {doc}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
