import numpy as np
import pytest
from conftest import clustered_pool

from pairlab.evaluation import CosineScorer, EvalConfig, build_eval_set, evaluate
from pairlab.widgets.labels import LabelStore
from pairlab.widgets.review import (
    FalsePositiveBrowser,
    RunPicker,
    corrected_summary,
    marked,
    putative_false_positives,
    report,
    threshold_at_recall,
    words,
)


@pytest.fixture(scope="module")
def setting():
    pool, emb = clustered_pool(n_items=200)
    es = build_eval_set(pool, emb, config=EvalConfig(near_m=5, n_random=2000))
    scores = evaluate(es, CosineScorer(pool.space, emb), n_boot=20)["scores"]
    return pool, es, scores


@pytest.fixture
def store(tmp_path):
    with LabelStore(tmp_path / "labels.sqlite") as store:
        yield store


@pytest.fixture
def browser(setting, store):
    pool, es, scores = setting
    return FalsePositiveBrowser(
        pool, es, scores, model_id="cosine", store=store, annotator="tester", recall=0.2
    )


# -- pure functions ---------------------------------------------------------------------------


def test_threshold_at_recall_hand_example():
    pos = [0.9, 0.1, 0.5, 0.7, 0.3]  # descending: 0.9 0.7 0.5 0.3 0.1
    assert threshold_at_recall(pos, 0.2) == 0.9  # k = 1
    assert threshold_at_recall(pos, 0.21) == 0.7  # k = ceil(1.05) = 2
    assert threshold_at_recall(pos, 0.6) == 0.5  # k = 3
    assert threshold_at_recall(pos, 1.0) == 0.1
    assert threshold_at_recall(np.linspace(0, 1, 10), 0.7) == pytest.approx(1 / 3)  # k = 7, not 8


@pytest.mark.parametrize(
    "pos, recall",
    [([0.5], 0.0), ([0.5], 1.5), ([0.5], float("nan")), ([], 0.2), ([0.5, np.nan], 0.2)],
)
def test_threshold_at_recall_rejects_bad_input(pos, recall):
    with pytest.raises(ValueError, match="recall|pos_scores"):
        threshold_at_recall(pos, recall)


def test_putative_false_positives_are_the_negatives_above_threshold(setting):
    pool, es, scores = setting
    t = threshold_at_recall(scores["positive"], 0.5)
    fps = putative_false_positives(es, scores, t)
    near = set(es.near[scores["near"] >= t])
    rand = set(es.rand[scores["rand"] >= t])
    assert len(near) > 0  # the setting must make the check meaningful
    assert set(fps.loc[fps["stratum"] == "near", "pair_id"]) == near
    assert set(fps.loc[fps["stratum"] == "rand", "pair_id"]) == rand
    assert len(fps) == len(near) + len(rand)
    assert np.all(np.diff(fps["score"].to_numpy()) <= 0)
    assert not pool.labels(fps["pair_id"].to_numpy()).any()


def test_putative_false_positives_rejects_misaligned_scores(setting):
    _, es, scores = setting
    with pytest.raises(ValueError, match="near"):
        putative_false_positives(es, {**scores, "near": scores["near"][:-1]}, 0.5)
    with pytest.raises(ValueError, match="must map"):
        putative_false_positives(es, {"positive": scores["positive"]}, 0.5)


def test_corrected_summary_without_marks_is_the_imputed_precision(setting):
    _, es, scores = setting
    s = corrected_summary(es, scores, 0.2, {"near": (0, 0), "rand": (0, 0)})
    assert s["precision"] == pytest.approx(s["imputed_precision"])
    expected = s["tp"] / (s["tp"] + s["fp_near"] + s["fp_rand"])
    assert s["imputed_precision"] == pytest.approx(expected)
    assert s["tp"] >= np.ceil(0.2 * len(es.positives))


def test_highlight_marks_words_missing_from_the_other_text():
    a, b = "How do I <learn> Python?", "how to learn python"
    left, right = marked(a, words(b), missing=True), marked(b, words(a), missing=True)
    assert left == "How <mark>do</mark> <mark>I</mark> &lt;learn&gt; Python?"
    assert right == "how <mark>to</mark> learn python"


# -- the widget, driven headless --------------------------------------------------------------


def test_higher_recall_gives_at_least_as_many_putative_false_positives(browser):
    before = len(browser.table())
    browser.slider.value = 0.8
    assert len(browser.table()) >= before
    assert browser.summary_dict()["threshold"] <= threshold_at_recall(
        browser._scores["positive"], 0.2
    )
    assert browser.position.value.endswith(f"of {len(browser.table())}")


def test_marking_writes_the_pair_and_advances(browser, store):
    first = browser.current()
    browser.buttons["real_error"].click()
    rows = store.marks()
    assert len(rows) == 1
    row = rows.iloc[0]
    assert (row["pair_id"], row["stratum"], row["mark"]) == (
        first["pair_id"],
        first["stratum"],
        "real_error",
    )
    assert (row["task"], row["split"], row["model_id"], row["annotator"]) == (
        "synthetic",
        "dev",
        "cosine",
        "tester",
    )
    assert row["left_text"] == first["left"] and row["right_text"] == first["right"]
    assert browser.current()["pair_id"] != first["pair_id"]
    assert browser.position.value.startswith("2 of")
    browser.prev_button.click()
    assert browser.current()["pair_id"] == first["pair_id"]
    assert browser.current()["mark"] == "real_error"
    assert browser.table()["mark"].iloc[0] == "real_error"


def test_actually_positive_marks_raise_the_corrected_precision(browser):
    browser.slider.value = 0.6
    browser.stratum.value = "near"
    for _ in range(3):
        browser.buttons["actually_positive"].click()
    s = browser.summary_dict()
    assert s["marked"]["near"] == 3
    assert s["precision"] > s["imputed_precision"]
    assert "corrected precision" in browser.summary.value


def keydown(browser, keys: str) -> None:
    """Each key as the browser's key box sends it: one widget message per key press."""
    for key in keys:
        sent = browser.keys.sent = getattr(browser.keys, "sent", -1) + 1
        message = {"key": key, "view": "page", "seq": sent}
        browser.keys._handle_custom_msg(message, [])  # ipywidgets' own dispatch


def test_each_key_press_is_one_action(browser, store):
    first = browser.current()
    keydown(browser, "u")
    marks = store.marks()
    assert marks["mark"].tolist() == ["unsure"] and marks["pair_id"].iloc[0] == first["pair_id"]
    keydown(browser, "b")
    assert browser.current()["pair_id"] == first["pair_id"]
    keydown(browser, "nn")
    assert browser.position.value.startswith("3 of")
    third = browser.current()["pair_id"]
    keydown(browser, "ep")  # typed fast: exactly two marks, on the two pairs shown in turn
    marks = store.marks()
    assert marks["mark"].tolist() == ["unsure", "real_error", "actually_positive"]
    assert marks["pair_id"].iloc[1] == third and marks["pair_id"].iloc[2] != third
    assert browser.position.value.startswith("5 of")
    keydown(browser, "xZ!")  # other keys do nothing
    assert len(store.marks()) == 3 and browser.position.value.startswith("5 of")


def test_an_empty_stratum_and_back_keeps_the_place(browser):
    counts = browser.table()["stratum"].value_counts()
    empty = next((s for s in ("near", "rand") if s not in counts), None)
    assert empty is not None, "the setting must leave one stratum empty at recall 0.2"
    browser.step(2)
    shown = browser.current()["pair_id"]
    browser.stratum.value = empty
    assert browser.current() is None and browser.position.value == "0 of 0"
    browser.stratum.value = "all"
    assert browser.current()["pair_id"] == shown and browser.position.value.startswith("3 of")


def test_marks_from_another_thread_are_written(browser, store):
    """JupyterLab runs widget callbacks on a comm subshell thread, not the cell's thread."""
    import threading

    errors = []

    def click_twice():
        try:
            browser.buttons["real_error"].click()
            browser.buttons["unsure"].click()
        except Exception as caught:  # noqa: BLE001 - reported below
            errors.append(caught)

    thread = threading.Thread(target=click_twice)
    thread.start()
    thread.join(timeout=30)
    assert errors == [] and store.marks()["mark"].tolist() == ["real_error", "unsure"]


def test_stratum_filter_shows_only_rand_pairs(browser):
    browser.slider.value = 1.0  # low threshold: random negatives get above it
    browser.stratum.value = "rand"
    table = browser.table()
    assert len(table) > 0 and set(table["stratum"]) == {"rand"}
    seen = set()
    for _ in range(min(len(table), 5)):
        seen.add(browser.current()["stratum"])
        browser.next_button.click()
    assert seen == {"rand"}


def test_the_order_is_a_fixed_shuffle_of_the_putative_false_positives(setting, browser):
    pool, es, scores = setting
    by_score = putative_false_positives(es, scores, threshold_at_recall(scores["positive"], 0.2))
    assert set(browser.table()["pair_id"]) == set(by_score["pair_id"])
    assert browser.table()["pair_id"].tolist() != by_score["pair_id"].tolist()


def test_widget_is_displayable(browser):
    bundle = browser._repr_mimebundle_()
    assert "application/vnd.jupyter.widget-view+json" in bundle
    assert browser.widget.children


# -- the static report ------------------------------------------------------------------------


def test_report_returns_table_and_prints_corrected_line(setting, store, capsys):
    pool, es, scores = setting
    first = putative_false_positives(es, scores, threshold_at_recall(scores["positive"], 0.5))
    assert set(first["stratum"]) == {"near", "rand"}  # both strata, or the check below is empty
    store.add(
        int(first["pair_id"].iloc[0]),
        task="synthetic",
        split="dev",
        model_id="cosine",
        stratum=first["stratum"].iloc[0],
        mark="actually_positive",
        annotator="a",
    )
    table = report(pool, es, scores, model_id="cosine", store=store, recall=0.5, n=4)
    assert list(table.columns) == ["pair_id", "stratum", "score", "left", "right", "mark"]
    # the top 4 of each stratum, each stratum by score descending
    for stratum in ("near", "rand"):
        expected = first[first["stratum"] == stratum].head(4)["pair_id"].tolist()
        assert table.loc[table["stratum"] == stratum, "pair_id"].tolist() == expected
    marked = table.set_index("pair_id")["mark"]
    assert marked[int(first["pair_id"].iloc[0])] == "actually_positive"
    assert marked.drop(int(first["pair_id"].iloc[0])).isna().all()
    assert "corrected" in capsys.readouterr().out


def test_correction_counts_only_marks_above_the_current_threshold(setting, store):
    """Eq. 14 corrects the putative false positives at one threshold: a judgement of a pair
    that only a lower threshold lets in must not move the precision at a higher one."""
    pool, es, scores = setting
    fpb = FalsePositiveBrowser(
        pool, es, scores, model_id="cosine", store=store, annotator="tester", recall=0.2
    )
    high = set(
        putative_false_positives(es, scores, threshold_at_recall(scores["positive"], 0.2))[
            "pair_id"
        ]
    )
    low = putative_false_positives(es, scores, threshold_at_recall(scores["positive"], 0.9))
    only_low = low[~low["pair_id"].isin(high)].iloc[0]
    store.add(
        int(only_low["pair_id"]),
        task=pool.task,
        split=pool.split,
        model_id="cosine",
        stratum=only_low["stratum"],
        mark="actually_positive",
        annotator="tester",
    )
    fpb.slider.value = 0.2
    assert fpb.summary_dict()["precision"] == fpb.summary_dict()["imputed_precision"]
    fpb.slider.value = 0.9
    assert fpb.summary_dict()["precision"] > fpb.summary_dict()["imputed_precision"]


def test_run_picker_switches_runs_and_keeps_each_place(setting, store):
    pool, es, scores = setting
    doubled = {k: 2 * v for k, v in scores.items()}  # another "model": same ranking, other scores
    picker = RunPicker(
        {"cosine": (pool, es, scores, "cosine"), "doubled": (pool, es, doubled, "doubled")},
        store=store,
        annotator="t",
    )

    def shown():
        return picker.browsers[picker.dropdown.value]

    first = shown()
    first.step(2)
    picker.dropdown.value = "doubled"
    assert shown() is not first and shown().model_id == "doubled"
    assert picker.widget.children[1] is shown().widget
    shown().buttons["unsure"].click()
    assert store.marks(model_id="doubled")["mark"].tolist() == ["unsure"]
    picker.dropdown.value = "cosine"
    assert shown() is first and first._pos == 2
    with pytest.raises(ValueError, match="empty"):
        RunPicker({}, store=store)
