"""The benchmark's report (not its timings: benchmarks are not tests)."""
import importlib.util
import json
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def _bench():
    spec = importlib.util.spec_from_file_location("bench", ROOT / "benchmarks" / "bench.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_committed_results_render_as_the_readme_table():
    bench = _bench()
    for path in sorted((ROOT / "benchmarks" / "results").glob("*.json")):
        results = json.loads(path.read_text())
        table = bench.markdown(results)
        timed = [r for r in results["rows"] if "speed_ratio" in r]
        assert table.count("\n| ") == len(timed)  # one line per compared row under the header
        for r in timed:
            assert f"| {r['row']} |" in table and f"{r['speed_ratio']:.1f}x" in table
        assert all(f"{k} {v:.1f} s" in table for r in results["rows"] if "seconds" in r
                   for k, v in r["seconds"].items())
