"""Notebook 08's experiment layer on the synthetic task with the fast stand-in learner: the sweep,
its curves and per-question values, the budget model, the paired tests against random (at equal
questions and at equal cost), the metrics file, its tables, the cost calculator, and
RESULTS.md's section rendered from such a metrics file."""

import json
import shutil

import numpy as np
import pandas as pd
import pytest
from conftest import EVAL_SETS, POOLS, VECTORS, FakeLearner

from pairlab.active.queries import QuerySettings
from pairlab.evaluation.significance import paired_test
from pairlab.evaluation.strata import EvalConfig
from pairlab.experiments import ranker_tables, rankers
from pairlab.experiments.budget import Budget, round_hours
from pairlab.paths import project_root

PREPARED = {"toy": ({"train": POOLS["train"], "test": POOLS["test"]}, EVAL_SETS["test"])}
SETTINGS = QuerySettings(batches=(4, 4), top_k=5, n_boot=20)
GROUPS = [("random", [0, 1, 2]), ("uncertainty", [0]), ("qbc", [0]), ("diversity", [0])]


@pytest.fixture(scope="module")
def sweep(tmp_path_factory):
    root = tmp_path_factory.mktemp("rankers")
    results = rankers.query_sweep(
        PREPARED, GROUPS, SETTINGS, root, learner=lambda config: FakeLearner(VECTORS)
    )
    learner = FakeLearner(VECTORS)
    settings = rankers.RankerSettings(EvalConfig(seed=0), SETTINGS, tuple(GROUPS))
    with pytest.MonkeyPatch.context() as patch:  # the toy vectors stand in for the encoder
        patch.setattr(
            rankers, "embed_pool", lambda pool, *_, **__: learner.pretrained_embeddings(pool)
        )
        baseline = rankers.pretrained_baseline(PREPARED, settings)
    budget = Budget()
    frame = rankers.curves(results, budget)
    queries = rankers.per_query(results)
    return results, frame, queries, rankers.ranker_metrics(frame, queries, baseline)


def test_the_sweep_runs_every_strategy_and_seed_with_a_shared_first_round(sweep):
    results, frame, queries, _ = sweep
    assert set(results) == {("toy", s, seed) for s, seeds in GROUPS for seed in seeds}
    assert len(frame) == 2 * 6  # a row per round of every run
    first = {s: results[("toy", s, 0)]["records"][0]["questions"] for s, _ in GROUPS}
    assert len({tuple(q) for q in first.values()}) == 1
    for (task, strategy, seed), result in results.items():
        rows = frame[(frame["strategy"] == strategy) & (frame["seed"] == seed)]
        assessments = np.cumsum([sum(r["assessments"]) for r in result["records"]])
        assert rows["assessments"].tolist() == assessments.tolist()
        assert rows["annotation_cost"].tolist() == pytest.approx((assessments / 75 * 50).tolist())
        assert queries[(task, strategy, seed)]["ndcg"].shape == (
            2,
            len(queries[(task, strategy, seed)]["questions"]),
        )


def test_round_hours_count_training_on_the_gpu_only_where_it_ran_there():
    seconds = {
        "train": 3600.0,
        "embed": 1800.0,
        "select": 360.0,
        "annotate": 0.0,
        "evaluate": 7200.0,
    }
    stages = ("embed", "select", "annotate", "train")
    assert round_hours(seconds, "cuda", stages) == pytest.approx((1.5, 0.1))
    assert round_hours(seconds, "cpu", stages) == pytest.approx((0.0, 1.6))
    budget = Budget(
        assessments_per_hour=60, annotator_per_hour=30, gpu_per_hour=2, cpu_per_hour=0.5
    )
    assert budget.annotation(120) == pytest.approx(60.0)
    assert budget.compute(1.5, 0.1) == pytest.approx(3.05)
    with pytest.raises(ValueError, match="assessments_per_hour must be positive"):
        Budget(assessments_per_hour=0)


def test_the_metrics_file_holds_the_curves_tests_and_verdicts(sweep):
    results, frame, queries, metrics = sweep
    entry = metrics["toy"]
    assert list(entry) == ["pretrained", "random", "uncertainty", "qbc", "diversity"]
    assert entry["pretrained"]["sizes"] == [0] and entry["random"]["sizes"] == [4, 8]
    random = entry["random"]
    assert random["seeds"] == [0, 1, 2] and len(random["ndcg10"]["per_seed"]) == 3
    assert random["ndcg10"]["mean"] == pytest.approx(
        np.mean(random["ndcg10"]["per_seed"], axis=0).tolist()
    )
    assert [s["questions"] for s in random["spread"]] == [4, 8]
    for strategy in ("uncertainty", "qbc", "diversity"):
        m = entry[strategy]
        ours = queries[("toy", strategy, 0)]["ndcg"]
        theirs = np.mean([queries[("toy", "random", s)]["ndcg"] for s in (0, 1, 2)], axis=0)
        expected = [paired_test(a, b)["p"] for a, b in zip(ours, theirs)]
        assert m["p_value_vs_random"] == pytest.approx(expected)
        assert m["vs_random"]["ndcg10"]["p_adjusted"] == pytest.approx(
            np.minimum(np.array(expected) * 3, 1).tolist()
        )
        v = m["verdict"]
        assert v["equal_questions"]["questions"] == 8
        assert v["equal_cost"]["cost"] == pytest.approx(
            min(m["total_cost"][-1], random["total_cost"][-1])
        )
    json.dumps(metrics)  # the file is plain JSON


def test_the_tables_read_the_metrics_file(sweep):
    metrics = sweep[3]
    table = ranker_tables.table1(metrics, "toy")
    assert list(table.index) == ["pretrained", "random", "uncertainty", "qbc", "diversity"]
    assert list(table.columns) == ["0 questions", "4 questions", "8 questions"]
    assert table.loc["random", "8 questions"].count("-") == 1  # the min-max of its subsets
    effort = ranker_tables.effort_table(metrics, "toy")
    assert effort.loc["random", "x random"] == 1.0
    assert (effort["total $"] >= effort["annotation $"]).all()
    assert len(ranker_tables.verdict_table(metrics)) == 3
    from pairlab import report
    from pairlab.experiments import findings

    effort = report.markdown("effort", {"toy": effort.to_dict("index")})
    assert len(effort.splitlines()) == 3  # one line per active strategy against random
    assert effort.startswith("toy: uncertainty needed ") and "against random's" in effort
    assert len(report.markdown("rankers", metrics, findings.rankers(metrics)).splitlines()) == 2

    [claim] = findings.rankers(metrics)  # one record a task: every strategy's two verdicts
    assert claim.claim == "no_better_than_random" and set(claim.values["strategies"]) == {
        "uncertainty",
        "qbc",
        "diversity",
    }
    assert claim.status in findings.STATUSES
    assert (
        ranker_tables.paper_table().loc[("Re-Train: TripClick Head DCTR", "qbc"), "5k"] == "0.0849*"
    )
    assert list(ranker_tables.comparison_table(metrics).columns)[-1] == "ours, toy"


def synthetic(gain: float, n: int = 40, seed: int = 0):
    """Per-question values of random (4 seeds) and one strategy that adds ``gain`` plus noise,
    over two rounds of 10 questions; the strategy pays twice random's assessments."""
    rng = np.random.default_rng(seed)
    base = rng.uniform(0.3, 0.7, size=(2, n))
    queries, rows = {}, []
    for strategy, seeds, cost in (("random", range(4), 10.0), ("qbc", [0], 20.0)):
        for s in seeds:
            noise = rng.normal(0, 0.02, size=(2, n))
            values = base + noise + (gain if strategy == "qbc" else 0.0)
            queries[("t", strategy, s)] = {"questions": np.arange(n), "ndcg": values, "mrr": values}
            for r in (1, 2):
                rows.append(
                    {
                        "task": "t",
                        "strategy": strategy,
                        "seed": s,
                        "round": r,
                        "questions": 10 * r,
                        "total_cost": cost * r,
                        "ndcg": values[r - 1].mean(),
                    }
                )
    return pd.DataFrame(rows), queries


def test_the_paired_test_finds_a_real_gain_and_bonferroni_guards_the_rest():
    frame, queries = synthetic(0.05)
    tests = rankers.versus_random(queries, "t", "qbc")
    assert all(tests["significant"]) and all(
        d == pytest.approx(0.05, abs=0.01) for d in tests["difference"]
    )
    frame, queries = synthetic(0.0)
    assert not any(rankers.versus_random(queries, "t", "qbc")["significant"])


def test_at_equal_cost_compares_where_both_spent_the_same(sweep):
    frame, queries = synthetic(0.05)
    cost = rankers.at_equal_cost(frame, queries, "t", "qbc")
    assert cost["cost"] == 20.0  # random's final spend; qbc spent that after its first round
    qbc_first = queries[("t", "qbc", 0)]["ndcg"][0]
    random_last = np.mean([queries[("t", "random", s)]["ndcg"][1] for s in range(4)], axis=0)
    assert cost["value"] == pytest.approx(qbc_first.mean()) and cost["random"] == pytest.approx(
        random_last.mean()
    )
    assert rankers.verdict(cost["difference"], cost["significant"]) in {
        "better than random",
        "not different from random",
        "worse than random",
    }
    assert (
        rankers.verdict(0.1, True) == "better than random"
        and rankers.verdict(-0.1, True) == "worse than random"
    )
    assert rankers.verdict(0.1, False) == "not different from random"


def test_the_cost_calculator_redraws_at_the_sliders_prices(sweep):
    from pairlab.widgets.cost_calculator import CostCalculator

    frame = sweep[1]
    calculator = CostCalculator(frame, Budget())
    bars = [t for t in calculator.figure.data if t.type == "bar" and t.name.endswith("annotation")]
    before = np.concatenate([t.y for t in bars])
    summary = calculator.summary.value
    calculator.sliders[
        "assessments_per_hour"
    ].value = 150.0  # twice as fast: half the annotation cost
    after = np.concatenate([t.y for t in bars])
    assert len(after) == 8 and after == pytest.approx(before / 2)
    assert calculator.summary.value != summary and "150" in calculator.summary.value
    assert calculator.budget.assessments_per_hour == 150.0


def test_results_md_renders_notebook_08_from_its_metrics_file(sweep, tmp_path):
    from pairlab import report

    root = project_root()
    for part in ("docs", "results", "profiles", "benchmarks/results"):
        shutil.copytree(root / part, tmp_path / part)
    shutil.copy(root / "Makefile", tmp_path / "Makefile")
    for recorded in (tmp_path / "results").glob("*/08_better_than_random.*.json"):
        recorded.unlink()  # the committed reference run's, if any: this test records its own
    before = report.render("RESULTS.md", tmp_path)
    assert "--notebooks 08" in before  # not recorded: it says how to record it
    (tmp_path / "results" / "cpu" / "08_better_than_random.metrics.json").write_text(
        json.dumps(sweep[3])
    )
    config = {
        "random_seeds": [0, 1, 2],
        "active_seeds": [0],
        "active_strategies": ["uncertainty", "qbc", "diversity"],
        "query_rounds": 2,
        "committee_members": 2,
        "committee_share": 0.8,
        "top_k": 5,
        "assessments_per_hour": 75,
        "annotator_per_hour": 50,
        "gpu_per_hour": 3.06,
        "cpu_per_hour": 0.408,
    }
    (tmp_path / "results" / "cpu" / "08_better_than_random.config.json").write_text(
        json.dumps(config)
    )
    text = report.render("RESULTS.md", tmp_path)
    section = text[text.index("## Is active learning better than random") :]
    assert (
        "Profile `cpu`" in section
        and "| toy: nDCG@10 | 0 questions | 4 questions | 8 questions |" in section
    )
    assert "no active-learning strategy is significantly better than random selection" in section
    assert "qbc " in section and "--notebooks 08" not in section


def test_ranker_groups_put_random_first_and_refuse_bad_names():
    params = {
        "questions_per_round": 4,
        "query_rounds": 2,
        "top_k": 5,
        "committee_members": 2,
        "committee_share": 0.8,
        "cosine_epochs": 1,
        "learning_rate": 2e-5,
        "batch_size": 16,
        "max_seq_length": 64,
        "n_boot": 20,
        "model": None,
        "near_m": 10,
        "n_random": 100,
        "seed": 0,
        "random_seeds": [0, 1, 2, 3],
        "active_seeds": [0],
        "active_strategies": ["qbc", "diversity"],
    }
    assert rankers.RankerSettings.from_params(params).groups == (
        ("random", [0, 1, 2, 3]),
        ("qbc", [0]),
        ("diversity", [0]),
    )
    for bad in (["random"], ["qbc", "qbc"], ["committee"]):
        with pytest.raises(ValueError, match="active_strategies must name distinct"):
            rankers.RankerSettings.from_params({**params, "active_strategies": bad})
    with pytest.raises(ValueError, match="at least one seed"):
        rankers.RankerSettings.from_params({**params, "random_seeds": []})
