"""Notebook 09's computations: the separation of curves, candidate recall read from run folders
old and new, the encoder experiment's gap and its trend on results with known answers, the
zero-shot static precision against a real static-retrieval run, and the metrics file."""

import json
import math
from dataclasses import replace

import pandas as pd
import pytest
from conftest import BASE, EVAL_SETS, POOLS, VECTORS, FakeLearner

from pairlab import experiments, report
from pairlab.active import ActiveRun, run_folder
from pairlab.active.config import LoopSettings
from pairlab.experiments import adaptivity, encoders
from pairlab.experiments.sweeps import sweep

SETTINGS = LoopSettings(**{k: v for k, v in BASE.items() if k != "task"})  # the task is its own


def curve_rows(strategy, seed, ap, half, labels=(10, 20, 40, 80)):
    return [
        {
            "task": "toy",
            "strategy": strategy,
            "seed": seed,
            "round": k + 1,
            "labels": n,
            "positives_found": n // 2,
            "ap": a,
            "ap_lo": a - half,
            "ap_hi": a + half,
            "p_at_r20": a,
        }
        for k, (n, a) in enumerate(zip(labels, ap))
    ]


CURVES = pd.DataFrame(
    curve_rows("uncertainty", 0, [0.30, 0.38, 0.45, 0.60], 0.05)  # gap .00 .08 .15 .30
    + curve_rows("static_retrieval", 0, [0.30, 0.30, 0.30, 0.30], 0.05)
    + curve_rows("uncertainty", 1, [0.30, 0.32, 0.34, 0.36], 0.05)  # never 0.10 apart
    + curve_rows("static_retrieval", 1, [0.30, 0.30, 0.30, 0.30], 0.05)
)


def test_separation_per_seed_and_of_the_mean_curves():
    frame = adaptivity.separation(CURVES).set_index("seed")
    assert frame.loc[0, "uncertainty above from"] == 40  # the gap first exceeds 0.10 at 40 labels
    assert math.isnan(frame.loc[1, "uncertainty above from"])
    assert frame.loc["mean", "uncertainty above from"] == 80  # mean gap .00 .05 .095 .18
    assert frame["static_retrieval above from"].isna().all()
    assert frame.loc[0, "final gap"] == pytest.approx(0.30)


def toy_results(tmp_path, strategies=("uncertainty", "random")):
    prepared = {"toy": (POOLS, EVAL_SETS)}
    return sweep(
        prepared, strategies, [0], SETTINGS, tmp_path, learner=lambda c: FakeLearner(VECTORS)
    )


def test_recall_frame_reads_new_and_old_run_folders(tmp_path):
    results = toy_results(tmp_path)
    frame = adaptivity.recall_frame(results)
    assert set(frame["strategy"]) == {"uncertainty"}  # random sampling searches no candidates
    assert frame["candidate_recall"].tolist() == [
        r["candidate_recall"] for r in results[("toy", "uncertainty", 0)]["records"]
    ]
    for record in results[("toy", "uncertainty", 0)]["records"]:  # as a folder from before
        del record["candidate_recall"]
    assert adaptivity.recall_frame(results)["candidate_recall"].isna().all()


def test_overlap_is_the_share_of_a_runs_labels_the_other_also_collected(tmp_path):
    import numpy as np

    from pairlab.active.store import round_ids

    results = toy_results(tmp_path, strategies=("uncertainty", "static_retrieval", "random"))
    frame = adaptivity.overlap_frame(results, tmp_path)
    assert set(frame["strategy"]) == {"uncertainty"} and frame["round"].tolist() == [1, 2, 3]
    ours, theirs = (
        round_ids(tmp_path / "toy" / results[("toy", s, 0)]["folder"])
        for s in ("uncertainty", "static_retrieval")
    )
    assert frame["overlap"].iloc[0] == 1.0  # round 1 is static retrieval for every strategy
    a, b = np.concatenate(ours), np.concatenate(theirs)
    assert frame["overlap"].iloc[-1] == pytest.approx(len(np.intersect1d(a, b)) / len(a))
    assert frame["overlap"].iloc[-1] < 1.0
    assert frame["labels"].iloc[-1] == len(a) == 57
    against_random = adaptivity.overlap_frame(results, tmp_path, b="random")
    assert against_random["overlap"].iloc[-1] < 1.0


def test_budget_runs_and_the_scale_notebook_09_reads_its_regime_from():
    strategies, seeds = adaptivity.budget_runs([0, 1, 2], [0])
    assert [getattr(s, "label", s) for s in strategies] == list(seeds)
    assert seeds == {
        "uncertainty": [0, 1, 2],
        "static_retrieval": [0, 1, 2],
        "adaptive_retrieval": [0],
        "random_candidates": [0],
    }
    static = next(s for s in strategies if getattr(s, "label", "") == "static_retrieval")
    assert static.fields("toy", 0) == {"curve": True}
    row = experiments.scale({"toy": (POOLS, EVAL_SETS)}, SETTINGS).loc["toy"]
    assert (row["n1"], row["rounds"], row["labels"]) == (12, 3, 57)
    assert row["labels per positive"] == pytest.approx(57 / POOLS["train"].n_positives)


def encoder_results(gaps: dict, seeds=(0, 1), labels=100) -> dict:
    """Results whose test AP is 0.5 for static retrieval and 0.5 + gap (+ 0.01 per seed) for
    uncertainty sampling."""
    out = {}
    for n, gap in gaps.items():
        for seed in seeds:
            for strategy, ap in (
                ("static_retrieval", 0.5),
                ("uncertainty", 0.5 + gap + 0.01 * seed),
            ):
                out[(n, labels, strategy, seed)] = {
                    "test": {"ap": ap, "ap_ci": [ap - 0.02, ap + 0.02]},
                    "config": {"task": "toy"},
                    "labels": labels,
                }
    return out


ZERO = pd.DataFrame(
    {
        "layers": [6, 4, 2, 0],
        "zero-shot AP": [0.6, 0.5, 0.4, 0.2],
        "AP lo": [0.5] * 4,
        "AP hi": [0.7] * 4,
        "static precision": [0.8, 0.6, 0.4, 0.1],
        "static labels": [100] * 4,
    }
).set_index("layers")


def test_the_gap_per_encoder_and_its_trend_have_known_values():
    table = encoders.encoder_table(encoder_results({6: 0.0, 4: 0.02, 2: 0.05, 0: 0.10}), ZERO)
    assert table.loc[(2, 100), "gap"] == pytest.approx(0.055)  # seeds: 0.05 and 0.06
    assert table.loc[(2, 100), "gap per seed"] == pytest.approx([0.05, 0.06])
    assert table.loc[(2, 100), "gap std"] == pytest.approx(0.005)
    assert "95% intervals apart" in table.loc[(0, 100), "judged"]
    assert "overlap" in table.loc[(6, 100), "judged"]
    trend = encoders.gap_trend(table).loc[100]
    assert trend["spearman rho"] == pytest.approx(-1.0)  # weaker encoder, larger gap, every step
    assert (trend["weakest"], trend["strongest"]) == (0, 6)
    assert trend["weakest minus strongest"] == pytest.approx(0.10)
    assert trend["per seed"] == pytest.approx([0.10, 0.10])
    flat = encoders.gap_trend(
        encoders.encoder_table(encoder_results({6: 0.1, 4: 0.0, 2: 0.1, 0: 0.0}), ZERO)
    )
    assert flat.loc[100, "spearman rho"] > -1.0


def test_the_gap_figure_draws_each_seeds_gap_around_the_tables_mean():
    from pairlab.widgets import adaptivity_plots

    table = encoders.encoder_table(encoder_results({6: 0.0, 4: 0.02, 2: 0.05, 0: 0.10}), ZERO)
    fig = adaptivity_plots.encoder_gap_figure(table)
    by_x = table.reset_index().sort_values("zero-shot AP")
    line = next(t for t in fig.data if t.name == "gap, 100 labels")
    assert list(line.x) == by_x["zero-shot AP"].tolist()
    assert line.y == pytest.approx(by_x["gap"].tolist())  # the mean of the seeds' gaps
    assert line.error_y.array == pytest.approx(by_x["gap std"].tolist())  # ddof 0, as the table
    seeds = next(t for t in fig.data if t.mode == "markers" and t.xaxis == "x2")
    assert sorted(seeds.y) == pytest.approx(sorted(sum(table["gap per seed"], [])))
    assert {t.name for t in fig.data if t.showlegend} == {
        "uncertainty, 100 labels",
        "static_retrieval, 100 labels",
        "gap, 100 labels",
    }


def test_encoder_runs_keep_the_largest_budget_of_each():
    results = {**encoder_results({2: 0.0}, labels=100), **encoder_results({2: 0.1}, labels=200)}
    runs = encoders.encoder_runs(results)
    assert set(runs) == {
        ("toy", f"{s}, 2 layers", seed)
        for s in ("uncertainty", "static_retrieval")
        for seed in (0, 1)
    }
    assert runs[("toy", "static_retrieval, 2 layers", 0)]["labels"] == 200


def metrics_for_docs(folder) -> dict:
    """A notebook-09 metrics file from the synthetic curves and encoder results above (and toy
    runs in ``folder`` for candidate recall): for tests of what reads it."""
    table = encoders.encoder_table(encoder_results({6: 0.0, 2: 0.05, 0: 0.10}), ZERO)
    reference = {  # data_efficiency.factors' columns
        "static_retrieval labels": 80,
        "static_retrieval dev AP": 0.40,
        "static_retrieval labels needed": 80.0,
        "uncertainty final dev AP": 0.48,
    }
    eff = pd.DataFrame(
        [
            {"task": "toy", "seed": 0, **reference, "labels needed": 40.0},
            {"task": "toy", "seed": 1, **reference, "labels needed": float("nan")},
        ]
    ).assign(factor=[2.0, float("nan")], bound=["exact", "not reached"])
    regime = experiments.scale({"toy": (POOLS, EVAL_SETS)}, SETTINGS)
    recall = adaptivity.recall_frame(toy_results(folder))
    overlap = pd.DataFrame(
        [
            {
                "task": "toy",
                "strategy": "uncertainty",
                "seed": s,
                "round": r,
                "labels": n,
                "overlap": o,
            }
            for s, shares in ((0, (1.0, 0.5)), (1, (1.0, 0.7)))
            for r, (n, o) in enumerate(zip((10, 20), shares), start=1)
        ]
    )
    return adaptivity.adaptivity_metrics(
        CURVES,
        regime,
        eff,
        adaptivity.separation(CURVES),
        ZERO,
        table,
        encoders.gap_trend(table),
        [recall],
        [overlap],
    )


def test_metrics_are_plain_json_and_the_findings_quote_every_seed(tmp_path):
    metrics = metrics_for_docs(tmp_path)
    text = json.dumps(metrics, allow_nan=False)  # NaN became null
    assert metrics["budget"]["toy"]["uncertainty"]["dev_ap"]["per_seed"] == [
        [0.30, 0.38, 0.45, 0.60],
        [0.30, 0.32, 0.34, 0.36],
    ]
    assert metrics["encoder"]["2"]["uncertainty"]["test_ap"]["per_seed"] == [
        pytest.approx([0.55, 0.56])
    ]
    assert metrics["encoder"]["4"]["gap"]["labels"] == []  # zero-shot only: no runs from it
    assert metrics["efficiency"]["toy"]["factor_mean"] == 2.0 and "null" in text
    assert len(metrics["candidate_recall"]["toy"]["uncertainty"]) == 3
    lines = report.markdown("adaptivity", metrics)  # the template, on the file's numbers
    assert "seed 0 0.600 vs 0.300 (+0.300); seed 1 0.360 vs 0.300 (+0.060)" in lines
    assert "seed 0 2.00x (exact); seed 1 none (not reached)" in lines
    assert "mean curves from 80 labels; seed 0 from 40 labels; seed 1 never" in lines
    assert "Spearman rho (zero-shot AP, gap) = -1.00 over 3 encoders" in lines
    assert (
        "toy, uncertainty: of its 20 labels, static retrieval also collected 60% (seed 0 50%, seed 1 70%)"
        in lines
    )


def test_encoder_layers_maps_the_whole_model_to_none(tiny_model):
    assert encoders.encoder_layers(tiny_model, [2, 1, 0]) == {2: None, 1: 1, 0: 0}
    with pytest.raises(ValueError, match="has 2 transformer layers: give depths from 0 to 2"):
        encoders.encoder_layers(tiny_model, [3])


def test_zero_shot_static_precision_is_what_a_static_retrieval_run_collects(
    tiny_model, tmp_path, monkeypatch
):
    monkeypatch.setenv("PAIRLAB_CACHE_DIR", str(tmp_path / "cache"))
    settings = replace(SETTINGS, model=tiny_model, max_seq_length=32, curve=False, epochs=1)
    config = settings.config("toy", "static_retrieval", encoder_layers=1)
    result = ActiveRun(
        config, POOLS, EVAL_SETS, run_folder(tmp_path, config, POOLS, EVAL_SETS)
    ).run()
    zero = encoders.zero_shot({"toy": (POOLS, EVAL_SETS)}, {1: 1}, settings, rounds=BASE["rounds"])
    assert zero.loc[1, "static labels"] == result["labels"] == 57
    assert zero.loc[1, "static precision"] == pytest.approx(result["positives_found"] / 57)
    assert zero.loc[1, "AP lo"] <= zero.loc[1, "zero-shot AP"] <= zero.loc[1, "AP hi"]


def test_both_experiments_run_on_a_pair_file_with_the_budget_experiments_own_sizes():
    from conftest import FIXTURES

    params = {
        "dataset": str(FIXTURES / "pairs" / "faq.jsonl"),
        "data_dir": None,
        "seed": 0,
        "fractions": [0.5, 0.25, 0.25],
        "pairs_symmetric": False,
        "pairs_threshold": None,
        "pairs_columns": {
            "left": "query",
            "right": "answer",
            "label": "relevant",
            "left_id": "query_id",
            "right_id": "answer_id",
        },
        "max_items": {"qqp": 10, "wikiqa": {"train": 30, "dev": 12, "test": 12}},
        "model": None,
        "max_seq_length": 32,
        "n1": 8,
        "rounds": {"qqp": 2, "wikiqa": 2},
        "growth": 1.5,
        "candidate_m": 5,
        "cosine_epochs": 1,
        "learning_rate": 2e-5,
        "batch_size": 16,
        "curve": False,
        "near_m": 5,
        "n_random": 500,
        "n_boot": 20,
        "budget_max_items": {"train": 20, "dev": 12, "test": 12},
        "budget_n1": 4,
        "budget_rounds": 3,
    }
    budget, settings = adaptivity.load_experiment(params, "budget", show=False)
    assert list(budget) == ["faq"] and len(budget["faq"][0]["train"].left_texts) == 20
    assert (settings.n1, settings.rounds) == (4, 3)
    encoder, settings = adaptivity.load_experiment(params, "encoder", show=False)
    assert (
        len(encoder["faq"][0]["train"].left_texts) == 30
    )  # WikiQA's sizes for a question -> answer file
    assert (settings.n1, settings.rounds["faq"]) == (8, 2)
    with pytest.raises(ValueError, match="experiment must be one of"):
        adaptivity.load_experiment(params, "other")


def test_models_shared_in_memory_leave_every_selection_and_metric_as_training_gives(
    tiny_model, tmp_path, monkeypatch
):
    """The sweep with the later rounds' models shared in memory (the default) picks the same
    batches and scores the same APs as with sharing off, and a second run whose labels are the
    first's in every round (uncertainty sampling with a dev curve, a run folder of its own)
    trains nothing again."""
    import numpy as np

    from pairlab.active.learner import RECENT
    from pairlab.experiments import Variant
    from pairlab.models.cosinebert import CosineBERT

    monkeypatch.setenv("PAIRLAB_CACHE_DIR", str(tmp_path / "cache"))
    settings = replace(
        SETTINGS, model=tiny_model, max_seq_length=32, epochs=1, rounds=2, curve=False
    )
    calls = []
    real = CosineBERT.train.__func__
    monkeypatch.setattr(
        CosineBERT, "train", classmethod(lambda cls, *a, **k: calls.append(1) or real(cls, *a, **k))
    )
    prepared = {"toy": (POOLS, EVAL_SETS)}
    strategies = ["uncertainty", Variant("uncertainty_curve", "uncertainty", {"curve": True})]
    shared = sweep(prepared, strategies, [0], settings, tmp_path / "shared")
    trained_shared = len(calls)
    RECENT.clear()
    monkeypatch.setenv("PAIRLAB_SHARE_MODELS", "0")
    alone = sweep(prepared, strategies, [0], settings, tmp_path / "alone")
    assert (trained_shared, len(calls) - trained_shared) == (2, 4)
    for key, result in shared.items():
        assert result["test"] == alone[key]["test"]
        assert [r.get("dev") for r in result["records"]] == [
            r.get("dev") for r in alone[key]["records"]
        ]
        for i in (1, 2):
            name = f"{result['folder']}/rounds/round_{i:02d}.npz"
            with np.load(tmp_path / "shared" / "toy" / name) as a:
                with np.load(tmp_path / "alone" / "toy" / name) as b:
                    assert np.array_equal(a["ids"], b["ids"])
                    assert np.array_equal(a["labels"], b["labels"])
