"""The core paper's headline as tables (pairlab.experiments.headline): the per-seed interval
table, the zero-shot row and the Figure 4 analog; the summary's per-seed intervals and rounds from a real (fake-learner)
sweep."""
import pytest

from pairlab import experiments
from pairlab.experiments import headline
from conftest import run


def entry(aps, cis, positives, seeds=(0, 1, 2), labels=16_640):
    return {"seeds": list(seeds), "labels": labels,
            "ap": {"mean": sum(aps) / len(aps), "std": 0.0, "per_seed": list(aps),
                   "ci_per_seed": [list(c) for c in cis]},
            "p_at_r20": {"mean": 0.5, "std": 0.0, "per_seed": [0.5] * len(aps),
                         "ci_per_seed": [[0.4, 0.6]] * len(aps)},
            "positives_found": {"mean": sum(positives) / len(positives), "std": 0.0,
                                "per_seed": list(positives)}}


STATIC = entry([0.30, 0.31, 0.29], [(0.25, 0.35), (0.26, 0.36), (0.24, 0.34)], [700, 710, 690])


def test_interval_table_per_seed_and_mean_beside_the_paper():
    table = headline.interval_table({"static_retrieval": STATIC},
                                    {"static_retrieval": {"ap": 0.082}}, {"static_retrieval": 169})
    assert table.loc[("static_retrieval", "0"), "AP"] == "0.300 [0.250, 0.350]"
    assert table.loc[("static_retrieval", "mean"), "AP (paper)"] == "0.082"
    assert table.loc[("static_retrieval", "mean"), "positives (paper)"] == "169"
    assert len(table) == 4


def test_a_sweeps_summary_keeps_intervals_and_rounds_per_seed(tmp_path):
    results = {}
    for strategy in ("static_retrieval", "uncertainty"):
        for seed in (0, 1):
            results[("toy", strategy, seed)] = run(tmp_path, strategy=strategy, seed=seed,
                                                   curve=True)[0].run()
    summary = experiments.summarise(results)
    unc = summary["toy"]["uncertainty"]
    assert unc["ap"]["ci_per_seed"] == [results[("toy", "uncertainty", s)]["test"]["ap_ci"]
                                        for s in (0, 1)]
    assert [(r["seed"], r["round"]) for r in unc["rounds_per_seed"]] == [
        (s, r) for s in (0, 1) for r in (1, 2, 3)]
    assert all(r["dev_ap_ci"][0] <= r["dev_ap"] <= r["dev_ap_ci"][1] for r in unc["rounds_per_seed"])
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
    table = headline.interval_table(summary["toy"])
    assert table.loc[(ZERO_SHOT, "-"), "AP"].startswith(f"{direct['ap']:.3f} [")
