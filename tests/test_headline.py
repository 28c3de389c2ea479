"""The core paper's headline as tables (pairlab.experiments.tables): the per-seed interval
table, the zero-shot row and the Figure 4 analog; the summary's per-seed intervals and rounds from a real (fake-learner)
sweep."""

import pytest
from conftest import run

from pairlab import experiments


def entry(aps, cis, positives, seeds=(0, 1, 2), labels=16_640):
    return {
        "seeds": list(seeds),
        "labels": labels,
        "ap": {
            "mean": sum(aps) / len(aps),
            "std": 0.0,
            "per_seed": list(aps),
            "ci_per_seed": [list(c) for c in cis],
        },
        "p_at_r20": {
            "mean": 0.5,
            "std": 0.0,
            "per_seed": [0.5] * len(aps),
            "ci_per_seed": [[0.4, 0.6]] * len(aps),
        },
        "positives_found": {
            "mean": sum(positives) / len(positives),
            "std": 0.0,
            "per_seed": list(positives),
        },
        "dev_ap_per_round": [],
        "seconds_per_run": {},
        "runs": [],
    }


STATIC = entry([0.30, 0.31, 0.29], [(0.25, 0.35), (0.26, 0.36), (0.24, 0.34)], [700, 710, 690])


def test_interval_table_per_seed_and_mean_beside_the_paper():
    table = experiments.interval_table(
        {"static_retrieval": STATIC}, {"static_retrieval": {"ap": 0.082}}, {"static_retrieval": 169}
    )
    assert table.loc[("static_retrieval", "0"), "AP"] == "0.300 [0.250, 0.350]"
    assert table.loc[("static_retrieval", "mean"), "AP (paper)"] == "0.082"
    assert table.loc[("static_retrieval", "mean"), "positives (paper)"] == "169"
    assert len(table) == 4


def test_one_seed_shows_its_interval_not_a_std_of_zero():
    """A std over one seed is 0 and would read as no spread: the Table 3 analog gives that
    seed's interval, the interval table's mean row says it is one seed."""
    from pairlab.experiments import tables

    one = entry([0.30], [(0.25, 0.35)], [700], seeds=(0,))
    table = experiments.interval_table({"static_retrieval": one})
    assert table.loc[("static_retrieval", "mean"), "AP"] == "0.300 (one seed)"
    assert tables._pm(one["ap"]) == "30.0 [25.0, 35.0]"
    assert tables._pm(STATIC["ap"]) == "30.0 ± 0.0"  # three seeds: their std (0 in the fixture)
    assert (
        "±"
        in experiments.interval_table({"static_retrieval": STATIC}).loc[
            ("static_retrieval", "mean"), "AP"
        ]
    )


def test_curve_table_per_seed_in_round_order_with_interval_and_positive_share():
    """The Figure 4 analog's numbers: one row per strategy and seed, the rounds' labels as
    columns in numeric order (10,000 after 2,048, not before it as strings sort), each cell dev
    AP [interval] · the positive share of the labels so far."""

    def r(seed, labels, ap, positives):
        return {
            "seed": seed,
            "round": 1,
            "labels": labels,
            "positives_found": positives,
            "dev_ap": ap,
            "dev_ap_ci": [ap - 0.1, ap + 0.1],
        }

    s = {
        **STATIC,
        "rounds_per_seed": [
            r(0, 10_000, 0.4, 500),
            r(0, 2048, 0.5, 512),
            r(1, 2048, 0.45, 256),
            r(1, 10_000, 0.35, 1000),
        ],
    }
    table = experiments.curve_table({"static_retrieval": s, "random": STATIC})
    assert list(table.columns) == ["2,048", "10,000"]
    assert table.loc[("static_retrieval", "0"), "2,048"] == "0.500 [0.400, 0.600] · 25.0%"
    assert table.loc[("static_retrieval", "1"), "10,000"] == "0.350 [0.250, 0.450] · 10.0%"
    assert len(table) == 2  # random recorded no rounds: no rows
    assert experiments.curve_table({"random": STATIC}).empty


def test_a_sweeps_summary_keeps_intervals_and_rounds_per_seed(tmp_path):
    results = {}
    for strategy in ("static_retrieval", "uncertainty"):
        for seed in (0, 1):
            results[("toy", strategy, seed)] = run(
                tmp_path, strategy=strategy, seed=seed, curve=True
            )[0].run()
    summary = experiments.summarise(results)
    unc = summary["toy"]["uncertainty"]
    assert unc["ap"]["ci_per_seed"] == [
        results[("toy", "uncertainty", s)]["test"]["ap_ci"] for s in (0, 1)
    ]
    assert [(r["seed"], r["round"]) for r in unc["rounds_per_seed"]] == [
        (s, r) for s in (0, 1) for r in (1, 2, 3)
    ]
    assert all(
        r["dev_ap_ci"][0] <= r["dev_ap"] <= r["dev_ap_ci"][1] for r in unc["rounds_per_seed"]
    )
    verdict = experiments.findings.adaptive_vs_static("toy", summary["toy"])
    assert verdict.status in experiments.findings.STATUSES and verdict.values["seeds"] == [0, 1]
    curves = experiments.curves(results)
    assert (curves["positive_share"] == curves["positives_found"] / curves["labels"]).all()
    assert curves.loc[curves["strategy"] == "uncertainty", "candidate_recall"].notna().any()
    from pairlab.widgets import plots

    fig = plots.collection_figure(curves)
    assert {t.name for t in fig.data if t.name} == {"static_retrieval", "uncertainty"}
    assert len(fig.data) == 2 * 2 * 2  # strategies x seeds x (AP, share)


def test_the_zero_shot_row_is_the_pretrained_cosine_on_the_runs_strata(tiny_model):
    from conftest import EVAL_SETS, POOLS

    from pairlab.evaluation import CosineScorer, evaluate
    from pairlab.experiments import ZERO_SHOT, with_zero_shot, zero_shot
    from pairlab.models.embed import embed_pool

    prepared = {"toy": (POOLS, EVAL_SETS)}
    zero = zero_shot(prepared, model=tiny_model, max_seq_length=32, n_boot=50)
    left, right = embed_pool(POOLS["test"], tiny_model, max_seq_length=32, show_progress=False)
    direct = evaluate(EVAL_SETS["test"], CosineScorer(POOLS["test"].space, left, right), n_boot=50)
    assert zero["toy"]["ap"]["mean"] == pytest.approx(direct["ap"])
    assert zero["toy"]["ap"]["ci"] == pytest.approx(list(direct["ap_ci"]))
    summary = with_zero_shot({"toy": {"uncertainty": STATIC}}, zero)
    assert list(summary["toy"]) == [ZERO_SHOT, "uncertainty"]
    t3 = experiments.table3(summary, {})
    assert t3.loc[("toy", ZERO_SHOT), "AP"].count("[") == 1
    assert experiments.table4(summary, {}, {}).loc[("toy", ZERO_SHOT), "share"] == "-"
    table = experiments.interval_table(summary["toy"])
    assert table.loc[(ZERO_SHOT, "-"), "AP"].startswith(f"{direct['ap']:.3f} [")
