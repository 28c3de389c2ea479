"""Checks on the metrics files of the smoke-profile run (`make test` runs the notebooks first).

A missing file fails: these tests only run after the notebooks have been executed."""

import json
from pathlib import Path

import numpy as np
import pytest

RUN = Path(__file__).resolve().parents[2] / "runs" / "smoke"


def load(notebook: str) -> dict:
    path = RUN / f"{notebook}.metrics.json"
    assert path.is_file(), f"{path} missing: run `make notebooks-smoke` first"
    return json.loads(path.read_text())


def test_01_records_every_task_and_split():
    metrics = load("01_dataset_construction")
    assert set(metrics) == {"qqp", "wikiqa"}
    for task, by_split in metrics.items():
        for split in ("train", "dev", "test"):
            m = by_split[split]
            assert {"n_left", "n_right", "n_pairs", "n_positives", "n_stated_negatives"} <= set(m)
            assert m["n_positives"] > 0
            if task == "qqp":
                assert m["n_left"] == m["n_right"]
                assert m["n_pairs"] == m["n_left"] * (m["n_left"] - 1) // 2
            else:
                assert m["n_pairs"] == m["n_left"] * m["n_right"]
        assert by_split["notes"]["malformed_rows_skipped"] == (1 if task == "qqp" else 0)


def test_01_estimate_agrees_with_exact_enumeration():
    for task, by_split in load("01_dataset_construction").items():
        dev = by_split["dev"]["pretrained_cosine"]
        low, high = dev["ap_ci"]
        assert low <= dev["ap"] <= high
        assert low <= dev["exact_ap"] <= high, f"{task}: exact AP outside the estimate's interval"


def test_02_records_heuristic_and_all_pairs_figures_for_both_models():
    metrics = load("02_concatbert_failure_analysis")
    assert set(metrics) == {"qqp", "wikiqa"}
    heuristic_keys = {"qqp": {"accuracy", "f1", "roc_auc"}, "wikiqa": {"c_map", "a_f1", "roc_auc"}}
    for task, by_model in metrics.items():
        assert set(by_model) == {"concatbert", "cosinebert"}
        for model, m in by_model.items():
            assert heuristic_keys[task] <= set(m["heuristic"])
            assert all(0.0 <= m["heuristic"][k] <= 1.0 for k in heuristic_keys[task])
            a = m["all_pairs"]
            for key in ("ap", "p_at_r20"):
                low, high = a[f"{key}_ci"]
                assert 0.0 <= low <= a[key] <= high <= 1.0, (task, model, key, a)
            assert a["n_positive"] > 0 and a["n_near"] > 0 and a["n_rand"] > 0
            assert m["model_id"].startswith(f"{task}-{model}-")


def test_03_records_every_strategy_with_its_budget_and_spread():
    metrics = load("03_cosinebert_active_learning")
    config = json.loads((RUN / "03_cosinebert_active_learning.config.json").read_text())
    assert set(metrics) == {"qqp", "wikiqa"}
    for task, by_strategy in metrics.items():
        assert "zero_shot" in by_strategy  # Table 3's first row: no labels at all
        zero = by_strategy.pop("zero_shot")
        assert zero["labels"] == 0 and zero["seeds"] == []
        for key in ("ap", "p_at_r20"):
            low, high = zero[key]["ci"]
            assert 0.0 <= low <= zero[key]["mean"] <= high <= 1.0
        assert set(by_strategy) == {
            "random",
            "static_retrieval",
            "adaptive_retrieval",
            "uncertainty",
        }
        n1, k = config["n1"], config["rounds"][task]
        budget = sum(int(n1 * 1.5**i) for i in range(k))
        for name, m in by_strategy.items():
            assert m["labels"] == budget, (task, name)
            assert 0 <= m["positives_found"]["mean"] <= budget
            for key in ("ap", "p_at_r20"):
                assert len(m[key]["per_seed"]) == len(config["seeds"])
                assert all(0.0 <= v <= 1.0 for v in m[key]["per_seed"])
                spread = m[key]["per_seed"]  # the recorded spread is the seeds' own
                assert m[key]["mean"] == pytest.approx(sum(spread) / len(spread))
                assert m[key]["std"] == pytest.approx(float(np.std(spread)))
            assert len(m["runs"]) == len(config["seeds"])
            for folder in m["runs"]:
                labels = (RUN / "active" / task / folder / "labels.csv").read_text().splitlines()
                assert len(labels) == budget + 1  # header + one row per label
        # static retrieval, and the adaptive strategies seeded by it, find positives that
        # uniform sampling of a pool with one positive in hundreds does not
        for name in ("static_retrieval", "adaptive_retrieval", "uncertainty"):
            assert (
                by_strategy[name]["positives_found"]["mean"]
                > by_strategy["random"]["positives_found"]["mean"]
            )


def test_04_records_the_ablations():
    metrics = load("04_ablations")
    config = json.loads((RUN / "04_ablations.config.json").read_text())
    assert set(metrics) == (
        {"qqp", "wikiqa"} if config["dataset"] == "all" else {config["dataset"]}
    )
    for task, m in metrics.items():
        strategies = m["strategies"]
        assert {
            "stratified_match",
            "stratified_all_positives",
            "adaptive_retrieval",
            "uncertainty",
            "static_retrieval",
            "stated",
            "uncertainty_stated_seed",
        } <= set(strategies)
        # stratified_match takes exactly the counts uncertainty sampling collected, seed by seed
        match, unc = strategies["stratified_match"], strategies["uncertainty"]
        assert match["labels"] == unc["labels"]
        assert match["positives_found"]["per_seed"] == unc["positives_found"]["per_seed"]
        assert strategies["stratified_all_positives"]["labels"] >= unc["labels"]
        assert set(m["seed_set"]) == {"static retrieval seed", "stated seed"}
        assert m["seed_set"]["stated seed"]["seeds"] == config["seed_set_seeds"]
        for rounds in (s["rounds"] for s in m["seed_set"].values()):
            assert [r["round"] for r in rounds] == list(range(1, config["rounds"][task] + 1))
            assert all(0.0 <= r["batch_positive_share"] <= 1.0 for r in rounds)
        assert set(m["transfer"]) == {
            "stated",
            "static_retrieval",
            "stratified_match",
            "uncertainty",
        }
        for source, t in m["transfer"].items():
            assert t["seeds"] == config["transfer_seeds"]
            assert t["labels"] == strategies[source]["labels"]
            for low, high in t["ap_ci_per_seed"]:
                assert 0.0 <= low <= high <= 1.0
            assert all(0.0 <= v <= 1.0 for v in t["ap"]["per_seed"])
            assert len(t["collapsed_per_seed"]) == len(t["score_std_per_seed"]) == len(t["seeds"])


def test_05_records_curves_efficiency_noise_and_cost():
    metrics = load("05_budget_curves")
    config = json.loads((RUN / "05_budget_curves.config.json").read_text())
    assert set(metrics) == {"qqp", "wikiqa"}
    for task, m in metrics.items():
        n1, k = config["n1"], config["rounds"][task]
        budgets = [sum(int(n1 * 1.5**i) for i in range(r)) for r in range(1, k + 1)]
        for name in ("uncertainty", "static_retrieval"):  # both have a point at every round
            assert [p["labels"] for p in m["curves"][name]] == budgets
            for p in m["curves"][name]:
                assert p["dev_ap_ci"][0] <= p["dev_ap"] <= p["dev_ap_ci"][1]
        eff = m["efficiency"]
        assert eff["seeds"] == len(config["seeds"]) == len(eff["per_seed"])
        for row in eff["per_seed"]:
            assert row["bound"] in {
                "exact",
                "lower bound",
                "both at the first point",
                "not reached",
            }
            assert budgets[0] <= row["static_retrieval_labels_needed"] <= budgets[-1]
            if row["bound"] != "not reached":
                assert row["factor"] == pytest.approx(
                    row["static_retrieval_labels_needed"] / row["labels_needed"]
                )
        for name in ("random", "random_candidates"):
            assert m["strategies"][name]["seeds"] == config["random_seeds"]
        costs = {row["strategy"]: row for row in m["costs"]}
        per_label = config["dollars_per_hour"] / config["labels_per_hour"]
        assert costs["uncertainty"]["annotation_dollars"] == pytest.approx(
            budgets[-1] * per_label, abs=1e-3
        )


def test_06_records_every_row_for_both_tasks_and_gold_sources():
    metrics = load("06_augmented_sbert")
    config = json.loads((RUN / "06_augmented_sbert.config.json").read_text())
    rows = {"sbert", "cross_encoder", *config["samplers"]}
    budgets = {
        task: by["uncertainty"]["labels"]
        for task, by in load("03_cosinebert_active_learning").items()
        if isinstance(by, dict) and "uncertainty" in by and "labels" in by["uncertainty"]
    }
    assert set(metrics) == (
        {"qqp", "wikiqa"} if config["dataset"] == "all" else {config["dataset"]}
    )
    for task, by_source in metrics.items():
        assert set(by_source) == set(config["gold_sources"])
        for source, by_row in by_source.items():
            assert set(by_row) == rows, (task, source)
            for row, m in by_row.items():
                for key in ("ap", "p_at_r20"):
                    low, high = m[f"{key}_ci"]
                    assert 0.0 <= low <= m[key] <= high <= 1.0, (task, source, row, key)
                assert 0.0 <= m["f1"] <= 1.0 and m["n_gold"] > 0
                assert len(m["per_seed"]["ap"]) == len(config["seeds"])
            if source == "uncertainty" and task in budgets:  # read back: all notebook 03 collected
                assert by_row["sbert"]["n_gold"] == budgets[task]
            bound = config["k"] * config["silver_items"]
            for row in ("bm25", "ss", "rs"):
                assert 0 < by_row[row]["n_silver"] <= bound, (task, source, row)
            union = by_row["bm25_ss"]["n_silver"]
            assert max(by_row["bm25"]["n_silver"], by_row["ss"]["n_silver"]) <= union
            assert union <= by_row["bm25"]["n_silver"] + by_row["ss"]["n_silver"]
            assert by_row["kde"]["n_silver"] <= config["kde_pairs"]
            ce = by_row["cross_encoder"]
            assert ce["pairs_per_second"] is None or ce["pairs_per_second"] > 0


def on_fixture(notebook: str) -> bool:
    """Whether the smoke run read the synthetic fixture: without a data folder the runner passes
    data_dir=fixtures/data to every notebook, and its config file records it."""
    config = json.loads((RUN / f"{notebook}.config.json").read_text())
    return str(config.get("data_dir") or "").rstrip("/").endswith("fixtures/data")


def test_06_random_pairs_are_the_most_negative_silver():
    """The paper's point about RS, on the smoke pools: random pairs of an all-pairs task are
    almost all negative, so fewer of them are positive (imputed labels) and the cross-encoder
    calls fewer of them positive than of the pairs BM25 or SS bring up. Ties are allowed per
    task and gold source (a tiny pool can give BM25 no positive either), not everywhere."""
    if on_fixture("06_augmented_sbert"):
        pytest.skip(
            "the smoke run read the synthetic fixture (no data folder): whether BM25 "
            "brings up more positives than random pairs is a claim about real text; the "
            "fixture's templates share words across meanings. Checked when the data is there"
        )
    strict = 0
    for task, by_source in load("06_augmented_sbert").items():
        for source, by_row in by_source.items():
            for share in ("silver_positive_share", "true_positive_share"):
                rs, bm25, ss = (by_row[row][share] for row in ("rs", "bm25", "ss"))
                assert rs <= bm25 and rs <= ss, (task, source, share, rs, bm25, ss)
                strict += rs < bm25 and rs < ss
    assert strict > 0


def test_07_case_study_rows_annotations_and_the_diagnostics_ends():
    metrics = load("07_llm_annotators")["case_study"]
    config = json.loads((RUN / "07_llm_annotators.config.json").read_text())
    strategies = [
        "random",
        "uncertainty",
        "base_consistent",
        "base_inconsistent",
        "conditional_informativeness",
    ]
    assert set(metrics) == {"clean", "llm_like"}
    for annotation, rows in metrics.items():
        assert set(rows) == {"initial", "full_target", *strategies}
        for row, m in rows.items():
            for part in ("all", "high_error", "low_error"):
                assert m[f"auc_{part}"] is None or 0.0 <= m[f"auc_{part}"] <= 1.0, (
                    annotation,
                    row,
                    part,
                )
            assert len(m["per_seed"]["auc_all"]) == len(config["seeds"])
        budget = {rows[s]["n_annotated"] for s in strategies}
        assert len(budget) == 1 and 0 < budget.pop() < rows["full_target"]["n_annotated"]
        # base-inconsistent takes the highest errors, all from the target's hard end; consistent none
        assert rows["base_inconsistent"]["high_error_share"] == 1.0
        assert rows["base_consistent"]["high_error_share"] == 0.0
    assert all(
        metrics["clean"][r]["annotator_accuracy"] == 1.0 for r in ["full_target", *strategies]
    )
    noisy = metrics["llm_like"]["full_target"]["annotator_accuracy"]
    assert min(config["error_accuracy"]) - 0.15 <= noisy < 1.0  # the assumed table, measured


def test_07_all_pairs_noise_runs_for_every_level_and_strategy():
    metrics = load("07_llm_annotators")["all_pairs"]
    config = json.loads((RUN / "07_llm_annotators.config.json").read_text())
    names = [
        "error_dependent" if n == "error_dependent" else f"{float(n):.0%}"
        for n in config["noise_levels"]
    ]
    assert set(metrics) == (
        {"qqp", "wikiqa"} if config["dataset"] == "all" else {config["dataset"]}
    )
    for task, by_noise in metrics.items():
        assert list(by_noise) == names
        for level, by_strategy in by_noise.items():
            assert set(by_strategy) == set(config["noise_strategies"])
            for strategy, m in by_strategy.items():
                low, high = m["ap_ci"]
                assert 0.0 <= low <= m["ap"] <= high <= 1.0, (task, level, strategy)
                if level == "0%":
                    assert m["annotator_accuracy"] == 1.0
        if "20%" in by_noise:  # flips both ways at 20%: some of the labels are wrong
            accuracy = [m["annotator_accuracy"] for m in by_noise["20%"].values()]
            assert 0.5 < min(accuracy) and min(accuracy) < 1.0, accuracy


def budgets_of(config: dict, n1: int, rounds: int) -> list[int]:
    """Labels after each round of ``rounds`` rounds from ``n1`` (growth from the config)."""
    return [sum(int(n1 * config["growth"] ** i) for i in range(r)) for r in range(1, rounds + 1)]


def test_09_budget_regime_curves_factor_and_separation():
    metrics = load("09_when_adaptivity_pays")
    config = json.loads((RUN / "09_when_adaptivity_pays.config.json").read_text())
    assert set(metrics) == {
        "budget",
        "regime",
        "efficiency",
        "separation",
        "encoder",
        "encoder_trend",
        "candidate_recall",
        "overlap",
    }
    task = "wikiqa" if config["dataset"] == "all" else config["dataset"]
    budgets = budgets_of(config, config["budget_n1"], config["budget_rounds"])
    curves = metrics["budget"][task]
    assert set(curves) == {
        "uncertainty",
        "static_retrieval",
        "adaptive_retrieval",
        "random_candidates",
    }
    for name, c in curves.items():
        seeds = (
            config["budget_seeds"]
            if name in ("uncertainty", "static_retrieval")
            else config["budget_other_seeds"]
        )
        assert c["labels"] == budgets, name  # every strategy retrained and measured every round
        assert c["dev_ap"]["seeds"] == seeds and len(c["dev_ap"]["per_seed"]) == len(seeds)
        assert c["dev_ap"]["mean"] == pytest.approx(
            np.mean(c["dev_ap"]["per_seed"], axis=0).tolist()
        )
        for ap, (low, high), share in zip(
            c["dev_ap"]["mean"], c["dev_ap"]["ci"], c["positive_share"]
        ):
            assert low <= ap <= high and 0.0 <= share <= 1.0
    regime = metrics["regime"][task]
    assert regime["labels"] == budgets[-1] and regime["rounds"] == config["budget_rounds"]
    assert regime["labels_per_positive"] == pytest.approx(budgets[-1] / regime["positives"])
    eff = metrics["efficiency"][task]
    assert [row["seed"] for row in eff["per_seed"]] == config["budget_seeds"]
    for row in eff["per_seed"]:
        assert (row["factor"] is None) == (row["bound"] == "not reached")
        if row["factor"] is not None:
            assert row["factor"] == pytest.approx(
                row["static_retrieval_labels_needed"] / row["labels_needed"]
            )
    sep = metrics["separation"][task]
    assert set(sep) == {*map(str, config["budget_seeds"]), "mean"}
    for row in sep.values():
        ours, theirs = row["uncertainty_above_from"], row["static_retrieval_above_from"]
        assert all(v is None or v in budgets for v in (ours, theirs))
        assert ours is None or theirs is None  # apart both ways at the last budget is impossible


def test_09_encoders_from_zero_shot_to_the_gap():
    metrics = load("09_when_adaptivity_pays")
    config = json.loads((RUN / "09_when_adaptivity_pays.config.json").read_text())
    budgets = [budgets_of(config, config["n1"], r)[-1] for r in config["encoder_rounds"]]
    encoder = metrics["encoder"]
    assert set(encoder) == {str(n) for n in config["encoder_layers"]}
    for n, e in encoder.items():
        low, high = e["zero_shot_ap_ci"]
        assert 0.0 <= low <= e["zero_shot_ap"] <= high <= 1.0, n
        assert 0.0 <= e["static_precision"] <= 1.0 and e["static_labels"] == budgets[0]
        gap = e["gap"]
        assert (
            gap["labels"]
            == sorted(budgets)
            == e["uncertainty"]["labels"]
            == e["static_retrieval"]["labels"]
        )
        for k in range(len(budgets)):
            ours, theirs = (e[s]["test_ap"] for s in ("uncertainty", "static_retrieval"))
            assert ours["seeds"][k] == config["encoder_seeds"] == gap["seeds"][k]
            assert gap["per_seed"][k] == pytest.approx(
                np.subtract(ours["per_seed"][k], theirs["per_seed"][k])
            )
            assert gap["mean"][k] == pytest.approx(ours["mean"][k] - theirs["mean"][k])
    for labels, trend in metrics["encoder_trend"].items():
        assert int(labels) in budgets and trend["encoders"] == len(config["encoder_layers"])
        assert trend["spearman_rho"] is None or -1.0 <= trend["spearman_rho"] <= 1.0


def test_09_reads_back_notebook_03_and_agrees_with_it():
    """The whole model at notebook 03's budget is notebook 03's run, read back: the same test AP
    per seed, and static retrieval's positive share is the zero-shot static precision."""
    config = json.loads((RUN / "09_when_adaptivity_pays.config.json").read_text())
    three = load("03_cosinebert_active_learning")
    task = "qqp" if config["dataset"] == "all" else config["dataset"]
    whole = load("09_when_adaptivity_pays")["encoder"][str(max(config["encoder_layers"]))]
    first = whole["gap"]["labels"].index(three[task]["uncertainty"]["labels"])
    for name in ("uncertainty", "static_retrieval"):
        theirs = dict(zip(three[task][name]["seeds"], three[task][name]["ap"]["per_seed"]))
        mine = dict(
            zip(whole[name]["test_ap"]["seeds"][first], whole[name]["test_ap"]["per_seed"][first])
        )
        shared = set(mine) & set(theirs)
        assert shared and all(mine[s] == theirs[s] for s in shared), (name, mine, theirs)
    static = three[task]["static_retrieval"]
    assert whole["static_precision"] == pytest.approx(
        static["positives_found"]["mean"] / static["labels"]
    )


def test_09_candidate_recall_for_every_candidate_strategy_and_round():
    metrics = load("09_when_adaptivity_pays")
    config = json.loads((RUN / "09_when_adaptivity_pays.config.json").read_text())
    budget_task, encoder_task = (
        ("wikiqa", "qqp") if config["dataset"] == "all" else (config["dataset"],) * 2
    )
    recall = metrics["candidate_recall"]
    budget_runs = (
        recall[budget_task]
        if budget_task != encoder_task
        else {k: v for k, v in recall[budget_task].items() if "layers" not in k}
    )
    assert set(budget_runs) == {
        "uncertainty",
        "static_retrieval",
        "adaptive_retrieval",
        "random_candidates",
    }
    assert all(len(v) == config["budget_rounds"] for v in budget_runs.values())
    expected = {
        f"{s}, {n} layers"
        for s in ("uncertainty", "static_retrieval")
        for n in config["encoder_layers"]
    }
    assert expected <= set(recall[encoder_task])
    for name in expected:
        assert len(recall[encoder_task][name]) == max(config["encoder_rounds"])
    for values in (v for by_task in recall.values() for v in by_task.values()):
        assert all(v is None or 0.0 <= v <= 1.0 for v in values)


def test_09_overlap_per_seed_and_round_starts_at_the_shared_first_batch():
    metrics = load("09_when_adaptivity_pays")
    config = json.loads((RUN / "09_when_adaptivity_pays.config.json").read_text())
    budget_task, encoder_task = (
        ("wikiqa", "qqp") if config["dataset"] == "all" else (config["dataset"],) * 2
    )
    budget = metrics["overlap"][budget_task]["uncertainty"]
    assert budget["seeds"] == config["budget_seeds"]
    assert budget["labels"] == budgets_of(config, config["budget_n1"], config["budget_rounds"])
    expected = {f"uncertainty, {n} layers" for n in config["encoder_layers"]}
    assert expected <= set(metrics["overlap"][encoder_task])
    for entry in (e for by_task in metrics["overlap"].values() for e in by_task.values()):
        assert all(
            row[0] == 1.0 for row in entry["per_seed"]
        )  # round 1 is static retrieval's batch
        assert all(0.0 <= v <= 1.0 for row in entry["per_seed"] for v in row)
        assert entry["mean"] == pytest.approx(np.mean(entry["per_seed"], axis=0).tolist())


@pytest.mark.parametrize("notebook", sorted(p.name for p in RUN.glob("[0-9][0-9]_*.ipynb")))
def test_executed_notebooks_keep_no_widget_state(notebook):
    """The runner saves no widget state: one plotly FigureWidget put its 5 MB JavaScript bundle
    into each saved notebook. The live widgets' outputs are still there (rendered while a
    kernel runs them)."""
    path = RUN / notebook
    nb = json.loads(path.read_text())
    assert "widgets" not in nb["metadata"]
    assert path.stat().st_size < 1_500_000, f"{notebook}: {path.stat().st_size:,} bytes"


def test_08_records_every_strategy_curve_test_and_cost():
    metrics = load("08_better_than_random")
    config = json.loads((RUN / "08_better_than_random.config.json").read_text())
    assert set(metrics) == (
        {"qqp", "wikiqa"} if config["dataset"] == "all" else {config["dataset"]}
    )
    budget = (config["assessments_per_hour"], config["annotator_per_hour"])
    for task, by_strategy in metrics.items():
        assert set(by_strategy) == {"pretrained", "random", *config["active_strategies"]}
        per_round = config["questions_per_round"]
        per_round = per_round[task] if isinstance(per_round, dict) else per_round
        sizes = [per_round * r for r in range(1, config["query_rounds"] + 1)]
        zero = by_strategy["pretrained"]
        assert zero["sizes"] == [0] and zero["assessments"] == [0.0]
        for strategy, m in by_strategy.items():
            if strategy == "pretrained":
                continue
            seeds = config["random_seeds"] if strategy == "random" else config["active_seeds"]
            assert m["seeds"] == sorted(seeds) and m["sizes"] == sizes, (task, strategy)
            for key in ("ndcg10", "mrr10", "ap"):
                assert len(m[key]["per_seed"]) == len(seeds)
                assert all(0.0 <= v <= 1.0 for run in m[key]["per_seed"] for v in run)
                assert m[key]["mean"] == pytest.approx(np.mean(m[key]["per_seed"], axis=0).tolist())
            for run in m["assessments_per_seed"]:  # every question costs at least one assessment
                assert all(b - a >= n for a, b, n in zip([0] + run, run, [per_round] * len(run)))
            assert m["annotation_cost"] == pytest.approx(
                [a / budget[0] * budget[1] for a in m["assessments"]]
            )
            assert m["total_cost"] == pytest.approx(
                np.add(m["annotation_cost"], m["compute_cost"]).tolist()
            )
            assert all(np.diff(m["total_cost"]) > 0) and all(c >= 0 for c in m["compute_cost"])
            assert all(
                p <= a for p, a in zip(m["pairs"], m["assessments"])
            )  # a pair is trained on once
            if strategy == "random":
                assert m.get("p_value_vs_random") is None
                assert [s["questions"] for s in m["spread"]] == sizes
                for s in m["spread"]:
                    assert s["best"] >= s["worst"] and 0.0 <= s["p"] <= 1.0
                    assert s["best_seed"] in seeds and s["worst_seed"] in seeds
                continue
            assert len(m["p_value_vs_random"]) == len(sizes)
            tests = m["vs_random"]["ndcg10"]
            assert all(0.0 <= p <= q <= 1.0 for p, q in zip(tests["p"], tests["p_adjusted"]))
            assert tests["significant"] == [q < 0.05 for q in tests["p_adjusted"]]
            random_mean = by_strategy["random"]["ndcg10"]["mean"]
            assert tests["difference"] == pytest.approx(
                np.subtract(m["ndcg10"]["mean"], random_mean).tolist()
            )
            for view in ("equal_questions", "equal_cost"):
                v = m["verdict"][view]
                assert v["verdict"] in {
                    "better than random",
                    "not different from random",
                    "worse than random",
                }
            assert (
                m["verdict"]["equal_cost"]["cost"]
                <= min(m["total_cost"][-1], by_strategy["random"]["total_cost"][-1]) + 1e-9
            )
        # round 1 is the same random questions for every strategy of seed 0, scanned under the
        # same pretrained ranker and trained into the same model: its cost and values match
        first = by_strategy["random"]["seeds"].index(0)
        for strategy in config["active_strategies"]:
            m = by_strategy[strategy]
            assert (
                m["assessments_per_seed"][0][0]
                == by_strategy["random"]["assessments_per_seed"][first][0]
            )
            assert m["ndcg10"]["per_seed"][0][0] == pytest.approx(
                by_strategy["random"]["ndcg10"]["per_seed"][first][0]
            )


def test_10_records_a_labelling_session_its_estimate_and_its_coverage():
    metrics = load("10_label_your_own_pairs")
    s = metrics["session"]
    assert s["labels"] >= 48 and 0 < s["positives"] <= s["labels"]  # the budget, plus audit pairs
    assert s["audit_labels"] > 0
    low, high = s["est_positives"]["ci"]
    assert s["positives"] <= low <= s["est_positives"]["point"] <= high + 1e-6
    assert 0 <= s["est_recall"]["ci"][0] <= s["est_recall"]["ci"][1] <= 1 + 1e-9
    assert 0 < s["true_recall"] <= 1 and 0 <= s["precision"] <= 1 and 0 <= s["f1"] <= 1
    assert s["matches"] > 0
    strategies = [row["strategy"] for row in metrics["comparison"]]
    assert strategies == ["uncertainty", "random", "static_retrieval"]
    ((task, by_budget),) = metrics["coverage"].items()
    assert by_budget and all(
        b["sessions"] == 2 and 0 <= b["covered"] <= 1 for b in by_budget.values()
    )
