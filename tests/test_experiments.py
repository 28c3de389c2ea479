"""Sweep summaries: the metrics file's shape and arithmetic, and the tables built from it; the
sweep's backends without Ray installed (tests/test_distributed.py runs them on Ray)."""

import sys

import numpy as np
import pytest
from conftest import BASE, EVAL_SETS, POOLS, VECTORS, FakeLearner, run

from pairlab import experiments
from pairlab.active.config import LoopSettings
from pairlab.data import paper
from pairlab.io import to_json


@pytest.fixture(scope="module")
def results(tmp_path_factory):
    root = tmp_path_factory.mktemp("sweep")
    out = {}
    for strategy in ("random", "uncertainty"):
        for seed in (0, 1):
            active, _ = run(root, strategy=strategy, seed=seed)
            out[("toy", strategy, seed)] = active.run()
    return out


def test_summary_holds_mean_std_and_per_seed_test_metrics(results):
    summary = experiments.summarise(results)
    assert list(summary["toy"]) == ["random", "uncertainty"]  # the sweep's order
    entry = summary["toy"]["uncertainty"]
    per_seed = [results[("toy", "uncertainty", s)]["test"]["ap"] for s in (0, 1)]
    assert entry["ap"]["per_seed"] == per_seed
    assert entry["ap"]["mean"] == pytest.approx(np.mean(per_seed))
    assert entry["ap"]["std"] == pytest.approx(np.std(per_seed))
    assert entry["labels"] == 57 and entry["seeds"] == [0, 1] and len(entry["runs"]) == 2
    assert [r["labels"] for r in entry["dev_ap_per_round"]] == [12, 30, 57]
    assert set(entry["seconds_per_run"]) == {"embed", "search", "select", "train", "evaluate"}
    found = summary["toy"]["random"]["positives_found"]["per_seed"]
    assert found == [results[("toy", "random", s)]["positives_found"] for s in (0, 1)]


def test_tables_and_frames_from_a_sweep(results):
    summary = experiments.summarise(results)
    ref = {"toy": {"uncertainty": {"ap": 0.325, "p_at_r20": 0.602}}}
    t3 = experiments.table3(summary, ref)
    assert t3.loc[("toy", "uncertainty"), "AP (paper)"] == "32.5"
    assert t3.loc[("toy", "random"), "AP (paper)"] == "-"
    t4 = experiments.table4(summary, {"toy": {"random": 1}}, {"toy": {"labels": 100}})
    assert t4.loc[("toy", "random"), "paper share"] == "1.0%"
    curves = experiments.curves(results)
    assert len(curves) == 4 * 3 and set(curves["round"]) == {1, 2, 3}
    calibration = experiments.calibration(results)
    assert set(calibration.index.get_level_values("round")) == {2, 3}  # round 1: pretrained
    assert "train" in experiments.stage_times(results).columns


def test_paper_reference_tables_agree_with_the_budget():
    for task in ("qqp", "wikiqa"):
        assert set(paper.TABLE4[task]) <= set(paper.TABLE3[task])
        assert max(paper.TABLE4[task].values()) < paper.BUDGET[task]["labels"]


def test_figures_draw_every_strategy(results):
    from pairlab.widgets import plots

    fig = plots.active_curves_figure(experiments.curves(results))
    assert {t.name for t in fig.data if t.name} == {"random", "uncertainty"}
    summary = experiments.summarise(results)
    bars = plots.positives_figure(
        summary, paper={"toy": {"positives": {"random": 1}, "labels": 100}}
    )
    assert list(bars.data[0].x) == ["toy: random", "toy: uncertainty"]


def test_judge_says_whether_a_gap_is_told_from_noise():
    from pairlab.experiments.summaries import judge

    def rec(value, ci=None, seeds=None):
        return {"ap": value, **({"ap_ci": ci} if ci else {}), "per_seed": {"ap": seeds or [value]}}

    assert (
        judge(rec(0.8, [0.75, 0.85]), rec(0.6, [0.55, 0.7]), "ap")
        == "yes (0.800 vs 0.600; 95% intervals apart)"
    )
    assert judge(rec(0.6, [0.55, 0.7]), rec(0.8, [0.69, 0.85]), "ap").startswith(
        "no (0.600 vs 0.800; 95% intervals overlap"
    )
    # no intervals: the seeds' spread (ddof 1) decides; 0.02 apart is inside a std of 0.1, 0.3 is not
    noisy = rec(0.52, seeds=[0.42, 0.52, 0.62])
    assert "within the seeds' std 0.100" in judge(noisy, rec(0.5, seeds=[0.5, 0.5, 0.5]), "ap")
    assert "above the seeds' std 0.100" in judge(
        rec(0.82, seeds=[0.72, 0.82, 0.92]), rec(0.5, seeds=[0.5] * 3), "ap"
    )
    assert (
        judge(rec(0.7), rec(0.6), "ap")
        == "yes (0.700 vs 0.600; one seed, no interval: the gap cannot be judged)"
    )


def test_without_ray_the_local_backend_runs_and_the_ray_backend_says_how_to_install_it(
    tmp_path, monkeypatch
):
    monkeypatch.setitem(sys.modules, "ray", None)  # `import ray` fails as when it is not installed
    prepared = {"toy": (POOLS, EVAL_SETS)}
    settings = LoopSettings(**{k: v for k, v in BASE.items() if k != "task"})
    fake = lambda config: FakeLearner(VECTORS)  # noqa: E731
    done = experiments.sweep(prepared, ["random"], [0], settings, tmp_path, learner=fake)
    assert list(done) == [("toy", "random", 0)] and done[("toy", "random", 0)]["labels"] == 57
    with pytest.raises(
        ImportError,
        match=r"^backend='ray' needs Ray, which is not installed: "
        r"pip install 'pairlab\[ray\]'$",
    ):
        experiments.sweep(
            prepared,
            ["random", "uncertainty"],
            [0],
            settings,
            tmp_path,
            backend="ray",
            learner=fake,
        )
    read_back = experiments.sweep(prepared, ["random"], [0], settings, tmp_path, backend="ray")
    assert to_json(read_back) == to_json(done)  # finished runs are read back without Ray
    with pytest.raises(ValueError, match="backend must be one of"):
        experiments.sweep(prepared, ["random"], [0], settings, tmp_path, backend="dask")
    with pytest.raises(ValueError, match="is for backend='ray'"):
        experiments.sweep(prepared, ["random"], [0], settings, tmp_path, address="auto")


def test_a_run_on_ray_asks_for_a_gpu_where_the_cluster_has_one():
    from pairlab.experiments.distributed import gpus_per_run

    class Cluster:  # what gpus_per_run asks of Ray
        def __init__(self, **resources):
            self.resources = resources

        def cluster_resources(self):
            return self.resources

    assert gpus_per_run(Cluster(CPU=16, GPU=4), None) == 1
    assert gpus_per_run(Cluster(CPU=2), None) == 0
    assert gpus_per_run(Cluster(CPU=16, GPU=4), 0.5) == 0.5  # two runs share a GPU
