"""Notebooks 04 and 05's computations on synthetic runs and curves with known answers:
variants, the stratified baselines' counts, labels read back from run folders, seed-set rounds,
the data-efficiency factor, the noise and cost tables."""

import numpy as np
import pandas as pd
import pytest
from conftest import BASE, EVAL_SETS, POOLS, VECTORS, FakeLearner

from pairlab import experiments
from pairlab.active import run_labels
from pairlab.active.config import LoopSettings
from pairlab.data.pairs import isin_sorted
from pairlab.experiments import Variant

SETTINGS = LoopSettings(**{k: v for k, v in BASE.items() if k != "task"})
PREPARED = {"toy": (POOLS, EVAL_SETS)}


@pytest.fixture(scope="module")
def root(tmp_path_factory):
    return tmp_path_factory.mktemp("ablations")


@pytest.fixture(scope="module")
def base(root):
    return experiments.sweep(
        PREPARED,
        ["uncertainty", Variant("unc_small", "uncertainty", {"n1": 6})],
        [0, 1],
        SETTINGS,
        root,
        learner=lambda c: FakeLearner(VECTORS),
    )


def test_variants_run_under_their_own_label_with_their_overrides(base):
    assert set(base) == {
        ("toy", "uncertainty", 0),
        ("toy", "uncertainty", 1),
        ("toy", "unc_small", 0),
        ("toy", "unc_small", 1),
    }
    assert base[("toy", "uncertainty", 0)]["labels"] == 12 + 18 + 27
    assert base[("toy", "unc_small", 0)]["labels"] == 6 + 9 + 13
    assert base[("toy", "unc_small", 0)]["folder"] != base[("toy", "uncertainty", 0)]["folder"]
    rounds = experiments.total_rounds(
        PREPARED, ["uncertainty", Variant("one", "random", {"batches": (5,)})], [0, 1], SETTINGS
    )
    assert rounds == 2 * 3 + 2 * 1


def test_run_labels_reads_back_exactly_what_the_run_labelled(root, base):
    result = base[("toy", "uncertainty", 1)]
    ids, labels = run_labels(root / "toy" / result["folder"])
    assert len(ids) == result["labels"] and int(labels.sum()) == result["positives_found"]
    assert np.array_equal(ids, np.unique(ids))
    assert np.array_equal(labels, POOLS["train"].labels(ids))
    with pytest.raises(FileNotFoundError, match="no finished run"):
        run_labels(root / "nowhere")


def test_stratified_variants_match_the_uncertainty_runs_counts(root, base):
    variants = experiments.stratified_variants(base, PREPARED, SETTINGS)
    out = experiments.sweep(
        PREPARED, variants, [0, 1], SETTINGS, root, learner=lambda c: FakeLearner(VECTORS)
    )
    budget = 12 + 18 + 27
    positives = POOLS["train"].n_positives
    for seed in (0, 1):
        match = out[("toy", "stratified_match", seed)]
        assert match["labels"] == budget
        assert match["positives_found"] == base[("toy", "uncertainty", seed)]["positives_found"]
        every = out[("toy", "stratified_all_positives", seed)]
        assert every["labels"] == max(2 * positives, budget)
        ids, _ = run_labels(root / "toy" / every["folder"])
        assert isin_sorted(POOLS["train"].positives, ids).all()  # every positive, exactly once
        assert every["positives_found"] == positives
    summary = experiments.summarise({**base, **out})
    table = experiments.table5(summary, {"toy": {"uncertainty": {"ap": 0.325, "p_at_r20": 0.602}}})
    assert list(table.loc["toy"].index) == [
        "stratified_match",
        "stratified_all_positives",
        "uncertainty",
    ]
    assert table.loc[("toy", "uncertainty"), "AP (paper)"] == "32.5"
    with pytest.raises(KeyError, match="needs the 'uncertainty' run of toy seed 7"):
        experiments.sweep(
            PREPARED, variants[:1], [7], SETTINGS, root, learner=lambda c: FakeLearner(VECTORS)
        )


def test_seed_set_rounds_give_each_rounds_share_and_calibration(base):
    frame = experiments.seed_set_rounds(base, {"uncertainty": "retrieval", "unc_small": "small"})
    assert len(frame) == 4 * 3 and set(frame["seed set"]) == {"retrieval", "small"}
    record = base[("toy", "uncertainty", 0)]["records"][1]
    row = frame[
        (frame["seed set"] == "retrieval") & (frame["seed"] == 0) & (frame["round"] == 2)
    ].iloc[0]
    assert row["batch positive share"] == record["positives_in_batch"] / record["batch"]
    assert row["mean p"] == record["calibration"]["mean_p"]
    assert frame[frame["round"] == 1]["mean p"].isna().all()  # the seed round: no trained model


def curves_frame(unc, static, seeds=(0,), labels=(10, 25, 47)):
    rows = []
    for seed in seeds:
        for name, values in (("uncertainty", unc), ("static_retrieval", static)):
            for n, ap in zip(labels, values):
                rows.append({"task": "toy", "strategy": name, "seed": seed, "labels": n, "ap": ap})
    return pd.DataFrame(rows)


def test_efficiency_factor_on_curves_with_known_answers():
    # static ends at 0.5 with 47 labels; uncertainty passes 0.5 halfway between 10 (0.4) and 25 (0.6)
    eff = experiments.data_efficiency.factors(curves_frame([0.4, 0.6, 0.7], [0.3, 0.4, 0.5]))
    row = eff.iloc[0]
    assert row["labels needed"] == pytest.approx(17.5) and row["factor"] == pytest.approx(47 / 17.5)
    assert row["bound"] == "exact"
    first = experiments.data_efficiency.factors(
        curves_frame([0.6, 0.7, 0.8], [0.3, 0.4, 0.5])
    ).iloc[0]
    assert first["labels needed"] == 10 and first["bound"] == "lower bound"
    never = experiments.data_efficiency.factors(
        curves_frame([0.1, 0.2, 0.3], [0.3, 0.4, 0.5])
    ).iloc[0]
    assert np.isnan(never["factor"]) and never["bound"] == "not reached"
    # a reference that peaked early needs fewer labels than its budget for its own final AP:
    # static ends at 0.5 but passed 0.5 a fifth of the way from 10 (0.4) to 25 (0.9) = 13 labels
    peaked = experiments.data_efficiency.factors(
        curves_frame([0.45, 0.55, 0.6], [0.4, 0.9, 0.5])
    ).iloc[0]
    assert peaked["static_retrieval labels needed"] == pytest.approx(13.0)
    assert peaked["labels needed"] == pytest.approx(17.5) and peaked["factor"] == pytest.approx(
        13 / 17.5
    )
    both = experiments.data_efficiency.factors(curves_frame([0.7, 0.6, 0.6], [0.7, 0.6, 0.5])).iloc[
        0
    ]
    assert both["bound"] == "both at the first point" and both["factor"] == 1.0


def test_noise_and_cost_tables():
    entry = lambda aps, labels=100: {
        "labels": labels,
        "ap": {"mean": float(np.mean(aps)), "per_seed": aps},
        "seconds_per_run": {"train": 1800.0, "embed": 1800.0},
    }
    summary = {
        "toy": {
            "random": entry([0.1, 0.3]),
            "uncertainty": entry([0.5]),
            "static_retrieval": entry([0.4]),
        }
    }
    noise = experiments.noise(summary, ["random", "uncertainty"])
    assert noise.loc[("toy", "random"), "range"] == pytest.approx(0.2)
    assert noise.loc[("toy", "random"), "std"] == pytest.approx(0.1)
    assert noise.loc[
        ("toy", "gap: uncertainty - static_retrieval (means)"), "mean AP"
    ] == pytest.approx(0.1)
    eff = pd.DataFrame(
        [{"task": "toy", "labels needed": 30.0}, {"task": "toy", "labels needed": 45.0}]
    )
    cost = experiments.costs(summary, eff, per_hour=50, dollars_per_hour=40)
    assert cost.loc[("toy", "random"), "annotator hours"] == 2.0
    assert cost.loc[("toy", "random"), "annotation $"] == 80.0
    assert cost.loc[("toy", "random"), "compute hours (measured)"] == 1.0
    reach = cost.loc[("toy", "uncertainty to static's AP")]
    assert reach["labels"] == 38 and reach["annotation $"] == pytest.approx(37.5 / 50 * 40)


def test_budget_metrics_are_plain_json(base):
    import json

    results = {k: v for k, v in base.items() if k[1] == "uncertainty"}
    results.update({("toy", "static_retrieval", s): base[("toy", "unc_small", s)] for s in (0, 1)})
    curves = experiments.curves(results)
    summary = experiments.summarise(results)
    eff = experiments.data_efficiency.factors(curves)
    noise = experiments.noise(summary, ["uncertainty", "static_retrieval"])
    metrics = experiments.budget_metrics(
        curves, eff, summary, noise, experiments.costs(summary, eff)
    )
    again = json.loads(json.dumps(metrics, allow_nan=False))
    assert again["toy"]["efficiency"]["seeds"] == 2 and isinstance(
        again["toy"]["efficiency"]["seeds"], int
    )
    assert [p["labels"] for p in again["toy"]["curves"]["uncertainty"]] == [12, 30, 57]
    assert again["toy"]["noise"][-1]["n"] is None  # the gap row


def test_figures_of_notebooks_04_and_05_draw_every_group(base):
    from pairlab.widgets import plots

    rounds = experiments.seed_set_rounds(
        base, {"uncertainty": "static retrieval seed", "unc_small": "stated seed"}
    )
    fig = plots.seed_set_figure(rounds)
    assert {t.name for t in fig.data if t.showlegend is not False} == {
        "static retrieval seed",
        "stated seed",
    }
    results = {k: v for k, v in base.items() if k[1] == "uncertainty"}
    results.update({("toy", "static_retrieval", s): base[("toy", "unc_small", s)] for s in (0, 1)})
    curves = experiments.curves(results)
    fig = plots.budget_curves_figure(curves, reference={"toy": 20.0})
    bands = [t for t in fig.data if t.fill == "toself"]
    assert len(bands) == 2 and all(t.fillcolor.startswith("rgba(") for t in bands)
    summary = experiments.summarise(results)
    assert [
        t.name for t in plots.noise_figure(summary, ["static_retrieval", "uncertainty"]).data
    ] == ["static_retrieval", "uncertainty"]
    cost = plots.cost_figure(curves, dollars_per_label=2.0)
    assert max(max(t.x) for t in cost.data) == 2.0 * 57


def test_a_sweep_runs_each_strategy_with_its_own_seeds(root, base):
    strategies = ["uncertainty", Variant("unc_small", "uncertainty", {"n1": 6})]
    seeds = {"uncertainty": [1], "unc_small": [0, 1]}
    learner = FakeLearner(VECTORS)
    out = experiments.sweep(PREPARED, strategies, seeds, SETTINGS, root, learner=lambda c: learner)
    assert list(out) == [
        ("toy", "uncertainty", 1),
        ("toy", "unc_small", 0),
        ("toy", "unc_small", 1),
    ]
    assert all(out[key] == base[key] for key in out) and learner.trained == []  # read back
    assert experiments.total_rounds(PREPARED, strategies, seeds, SETTINGS) == 3 * 3


def test_efficiency_summary_and_report_count_only_defined_factors():
    eff = experiments.data_efficiency.factors(curves_frame([0.4, 0.6, 0.7], [0.3, 0.4, 0.5]))
    never = experiments.data_efficiency.factors(curves_frame([0.1, 0.2, 0.3], [0.3, 0.4, 0.5]))
    both = pd.concat([eff, never.assign(seed=1)], ignore_index=True)
    row = experiments.data_efficiency.summary(both).loc["toy"]
    assert row["factor_mean"] == pytest.approx(47 / 17.5) and row["factor_std"] == 0.0
    assert (row["seeds_defined"], row["seeds"]) == (1, 2)
    ref = {"toy": {"factor": 14, "static_labels": 232_100, "uncertainty_labels": 16_640}}
    from pairlab import report

    summary = experiments.data_efficiency.summary(both).to_dict("index")
    assert report.markdown("efficiency", summary, ref) == (
        "toy: factor 2.69 ± 0.00 over 1 of 2 seeds; paper 14x (232,100 static labels vs 16,640)"
    )
    assert experiments.data_efficiency.summary(never).loc["toy", "factor_mean"] is None


def test_seed_set_means_average_over_seeds(base):
    rounds = experiments.seed_set_rounds(base, {"uncertainty": "retrieval"})
    means = experiments.seed_set_means(rounds)
    assert list(means.index) == [("toy", "retrieval", r) for r in (1, 2, 3)]
    second = rounds[rounds["round"] == 2]
    assert means.loc[("toy", "retrieval", 2), "dev AP"] == pytest.approx(second["dev AP"].mean())


def test_train_settings_read_a_notebooks_parameters():
    from pairlab.experiments.baselines import TrainSettings

    def train_settings(params, kind):
        return TrainSettings.from_params(params, kind).config

    params = {
        "concat_epochs": {"qqp": 2, "wikiqa": 3},
        "cosine_epochs": 1,
        "learning_rate": 3e-5,
        "batch_size": 8,
        "max_seq_length": 64,
    }
    concat = train_settings(params, "concatbert")("wikiqa", 4)
    assert (concat.epochs, concat.seed, concat.learning_rate, concat.batch_size) == (3, 4, 3e-5, 8)
    assert train_settings(params, "cosinebert")("qqp", 0).epochs == 1
    with pytest.raises(ValueError, match="kind must be one of .* got 'bert'"):
        train_settings(params, "bert")
