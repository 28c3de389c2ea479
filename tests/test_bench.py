"""The benchmark's report (not its timings: benchmarks are not tests)."""
import json

import pytest

from pairlab import report
from pairlab.paths import project_root

ROOT = project_root()
RESULTS = sorted((ROOT / "benchmarks" / "results").glob("*.json"))


def test_there_are_committed_results_to_render():
    assert RESULTS, "benchmarks/results/ holds no results: run `make bench` and commit the file"


def test_benchmarks_readme_is_the_rendering_of_the_committed_results():
    rendered = report.render("benchmarks/README.md")
    assert (ROOT / "benchmarks" / "README.md").read_text() == rendered, \
        "benchmarks/README.md differs from its rendering: run `make docs`"
    for path in RESULTS:
        assert f"benchmarks/results/{path.name}" in rendered


@pytest.mark.parametrize("path", RESULTS, ids=lambda p: p.stem)
def test_every_timed_row_is_one_table_line_with_its_ratio(path):
    results = json.loads(path.read_text())
    table = report.bench_table(results)
    timed = [r for r in results["rows"] if "speed_ratio" in r]
    assert table.count("\n| ") == len(timed)  # one line per compared row under the header
    for r in timed:
        assert f"| {r['row']} |" in table and f"{r['speed_ratio']:.1f}x" in table
    assert all(f"{k} {v:.1f} s" in table for r in results["rows"] if "seconds" in r
               for k, v in r["seconds"].items())


def test_a_missing_results_folder_is_an_error_not_an_empty_page(tmp_path):
    (tmp_path / "docs").mkdir()
    (tmp_path / "docs" / "benchmarks.md.j2").write_text("{{ bench }}")
    with pytest.raises(FileNotFoundError, match="benchmarks/results"):
        report.render("benchmarks/README.md", tmp_path)


def test_a_changed_number_makes_the_page_stale(tmp_path):
    import shutil

    for part in ("docs", "benchmarks/results"):
        shutil.copytree(ROOT / part, tmp_path / part)
    (tmp_path / "benchmarks" / "README.md").write_text(report.render("benchmarks/README.md", tmp_path))
    assert report.stale(tmp_path, ["benchmarks/README.md"]) == []
    path = tmp_path / "benchmarks" / "results" / RESULTS[0].name
    results = json.loads(path.read_text())
    results["rows"][0]["speed_ratio"] += 1.0
    path.write_text(json.dumps(results))
    assert report.stale(tmp_path, ["benchmarks/README.md"]) == ["benchmarks/README.md"]


RAY_RESULTS = sorted((ROOT / "benchmarks" / "results" / "ray").glob("*.json"))


def test_ray_page_is_the_rendering_of_the_committed_ray_benchmark():
    assert RAY_RESULTS, "benchmarks/results/ray/ holds no results: run `make bench-ray` and commit it"
    rendered = report.render("docs/ray.md")
    assert (ROOT / "docs" / "ray.md").read_text() == rendered, \
        "docs/ray.md differs from its rendering: run `make docs`"
    for path in RAY_RESULTS:
        results = json.loads(path.read_text())
        assert f"benchmarks/results/ray/{path.name}" in rendered
        assert results["speedup"] == results["sequential"]["seconds"] / results["ray"]["seconds"]
        assert f"**{results['speedup']:.2f}x**" in rendered
