"""load_pairs: any labelled pair file (CSV, TSV, JSON lines, Parquet) or DataFrame as an all-pairs
task. Runs on any clone: the files are written here or are the synthetic fixture."""

import json

import numpy as np
import pandas as pd
import pytest
from conftest import FIXTURES

from pairlab.data import SPLITS, build_qqp, like, load_pairs, load_task, load_tasks, tasks_for
from pairlab.data.loaders import QQP_COLUMNS
from pairlab.evaluation import stats
from pairlab.io import NoRowsError


def write(path, lines):
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def chain_rows(n_groups=12):
    """Groups of three texts a-b-c stated as a~b, b~c (a~c only by closure) and c!~ the next
    group's a; 36 texts in 12 components."""
    rows = []
    for g in range(n_groups):
        rows += [(f"g{g} a", f"g{g} b", 1), (f"g{g} b", f"g{g} c", 1), (f"g{g} a", f"g{g} c x", 0)]
    return rows


def positive_texts(pool):
    return {tuple(sorted(p)) for p in zip(*pool.texts(pool.positives))}


def test_symmetric_file_takes_the_closure_and_splits_by_components(tmp_path):
    path = write(
        tmp_path / "dups.csv", ["text1,text2,label", *[f"{a},{b},{y}" for a, b, y in chain_rows()]]
    )
    task = load_pairs(path, symmetric=True)
    assert task.name == "dups" and task.symmetric and like(task.name, task.symmetric) == "qqp"
    members = [set(task[s].left_texts) for s in SPLITS]
    assert sum(map(len, members)) == 48 and not (members[0] & members[1] or members[1] & members[2])
    for pool in task.splits.values():
        for a, b in positive_texts(pool):  # the closure: a~c is positive though never stated
            assert a.split()[0] == b.split()[0]
        groups = {t.split()[0] for t in pool.left_texts}
        assert pool.n_positives == 3 * len(groups)  # a~b, b~c, a~c in every group
        assert len(pool.stated_negatives) == len(groups)
    assert task.notes["source"] == str(path) and task.report.rows_read == 36


def test_graded_labels_need_a_threshold_and_use_it(tmp_path):
    rows = [(a, b, 4.6 if y else 0.8) for a, b, y in chain_rows()]
    path = write(tmp_path / "sts.tsv", ["s1\ts2\tscore", *[f"{a}\t{b}\t{y}" for a, b, y in rows]])
    with pytest.raises(
        ValueError,
        match=r"sts\.tsv:2: column 'score' holds '4\.6', not 0 or 1: graded labels need positive_threshold",
    ):
        load_pairs(path, symmetric=True, left="s1", right="s2", label="score")
    task = load_pairs(
        path, symmetric=True, left="s1", right="s2", label="score", positive_threshold=4
    )
    assert sum(task[s].n_positives for s in SPLITS) == 36 and task.notes["positive_threshold"] == 4
    higher = load_pairs(
        path,
        symmetric=True,
        left="s1",
        right="s2",
        label="score",
        positive_threshold=0.5,
        check_splits=False,
    )  # every stated pair positive
    assert sum(len(higher[s].stated_negatives) for s in SPLITS) == 0


def test_ids_make_items_and_tsv_quotes_are_text(tmp_path):
    lines = ["id_a\tid_b\ta\tb\tdup"]
    for g in range(12):
        lines += [
            f'{g}1\t{g}2\t"same" text {g}\tother {g}\t1',
            f'{g}3\t{g}4\t"same" text {g}\tthird {g}\t1',
        ]
    task = load_pairs(
        write(tmp_path / "p.tsv", lines),
        symmetric=True,
        left="a",
        right="b",
        label="dup",
        left_id="id_a",
        right_id="id_b",
    )
    texts = np.concatenate([task[s].left_texts for s in SPLITS])
    assert (
        len(texts) == 48 and (texts == '"same" text 0').sum() == 2
    )  # one text, two ids: two items
    assert task.notes["items_sharing_text_with_another_id"] == 24


def faq_rows(n_queries=40, n_answers=6, split=None):
    rows = []
    for q in range(n_queries):
        for a in range(n_answers):
            row = {
                "qid": f"q{q}",
                "query": f"query {q}",
                "aid": f"a{a}",
                "answer": f"answer {a}",
                "relevant": a == q % n_answers,
            }
            if split:
                row["part"] = split(q)
            rows.append(row)
    return rows


def test_asymmetric_jsonl_pairs_each_splits_left_items_with_every_right_item(tmp_path):
    path = write(tmp_path / "faq.jsonl", [json.dumps(r) for r in faq_rows()])
    task = load_pairs(
        path,
        symmetric=False,
        left="query",
        right="answer",
        label="relevant",
        left_id="qid",
        right_id="aid",
        seed=3,
    )
    assert like(task.name, task.symmetric) == "wikiqa" and not task.symmetric
    lefts = [set(task[s].left_texts) for s in SPLITS]
    assert [len(x) for x in lefts] == [20, 10, 10] and not (
        lefts[0] & lefts[1] or lefts[0] & lefts[2]
    )
    right = task["train"].right_texts
    assert len(right) == 6 and all(task[s].right_texts is right for s in SPLITS)
    for s in SPLITS:
        pool = task[s]
        assert pool.n_pairs == len(pool.left_texts) * 6 and pool.n_positives == len(pool.left_texts)
        left, right_ = pool.texts(pool.positives)
        assert all(int(q.split()[1]) % 6 == int(a.split()[1]) for q, a in zip(left, right_))
    again = load_pairs(
        path, symmetric=False, left="query", right="answer", label="relevant", seed=4
    )
    assert set(again["dev"].left_texts) != set(task["dev"].left_texts)  # the seed moves the split


def test_a_split_column_is_used_as_given_with_validation_as_dev(tmp_path):
    names = {0: "train", 1: "validation", 2: "test"}
    frame = pd.DataFrame(faq_rows(split=lambda q: names[q % 3]))
    task = load_pairs(
        frame, symmetric=False, left="query", right="answer", label="relevant", split_column="part"
    )
    assert task.name == "pairs" and "source" not in task.notes
    assert {int(t.split()[1]) % 3 for t in task["dev"].left_texts} == {1}
    with pytest.raises(ValueError, match="split_column='part' is for asymmetric tasks"):
        load_pairs(
            frame,
            symmetric=True,
            left="query",
            right="answer",
            label="relevant",
            split_column="part",
        )
    frame.loc[5, "part"] = "holdout"
    with pytest.raises(
        ValueError,
        match=r"<DataFrame> row 6: split column 'part' holds 'holdout'; expected train, dev",
    ):
        load_pairs(
            frame,
            symmetric=False,
            left="query",
            right="answer",
            label="relevant",
            split_column="part",
        )


def test_parquet_reads_like_csv(tmp_path):
    frame = pd.DataFrame(chain_rows(), columns=["text1", "text2", "label"])
    frame.to_parquet(tmp_path / "p.parquet")
    frame.to_csv(tmp_path / "p.csv", index=False)
    a, b = (
        load_pairs(tmp_path / "p.parquet", symmetric=True),
        load_pairs(tmp_path / "p.csv", symmetric=True),
    )
    for s in SPLITS:
        assert np.array_equal(a[s].left_texts, b[s].left_texts)
        assert np.array_equal(a[s].positives, b[s].positives)


def test_bad_rows_are_skipped_and_reported_with_their_lines(tmp_path):
    lines = [
        "text1,text2,label",
        *[f"{a},{b},{y}" for a, b, y in chain_rows()],
        ",empty left,1",
        "too,many,fields,here",
        "no label,here,",
        "label,not a number,maybe",
    ]
    path = tmp_path / "p.csv"
    path.write_bytes(("\n".join(lines) + "\n").encode() + b"caf\xe9,bytes,1\n")
    task = load_pairs(path, symmetric=True)
    skipped = {row.line: row.reason for row in task.report.skipped}
    assert skipped == {
        38: "empty text in column 'text1'",
        39: "expected 3 fields, found 4",
        40: "empty label in column 'label'",
        41: "label in column 'label' is not a number",
        42: "not UTF-8 text",
    }
    assert task.report.rows_read == 36 and "skipped 5 malformed row(s)" in task.report.summary()


def test_bad_json_lines_cost_their_line_only(tmp_path):
    good = [json.dumps({"text1": a, "text2": b, "label": y}) for a, b, y in chain_rows()]
    path = write(
        tmp_path / "p.jsonl",
        [*good[:3], "{not json", "[1, 2]", *good[3:], json.dumps({"text1": "x", "label": 1})],
    )
    task = load_pairs(path, symmetric=True)
    reasons = {row.line: row.reason for row in task.report.skipped}
    assert reasons[4].startswith("not valid JSON") and reasons[5] == "not a JSON object"
    assert reasons[len(good) + 3] == "empty text in column 'text2'"


@pytest.mark.parametrize(
    "lines,kind,message",
    [
        ([], NoRowsError, r"empty\.csv is empty"),
        (["text1,text2,label"], NoRowsError, r"empty\.csv has a header and no rows"),
        (
            ["a,b,label", "x,y,1"],
            ValueError,
            r"empty\.csv:1 \(the header\) has no column 'text1', 'text2' "
            r"\(asked for as left, right\); its columns are \['a', 'b', 'label'\]",
        ),
        (
            ["text1,text2,label", "x,y,0", "y,z,0"],
            ValueError,
            r"no positive pair in column 'label': every label is 0",
        ),
        (
            ["text1,text2,label", "x,y,dup", "y,z,dup"],
            ValueError,
            r"empty\.csv:2: column 'label' is neither binary nor numeric \(first value 'dup'\)",
        ),
        (
            ["text1,text2,label", ",y,1"],
            NoRowsError,
            r"no usable row: all 1 were skipped \(empty text in column 'text1' at .*empty\.csv:2\)",
        ),
    ],
)
def test_whole_file_problems_are_clear_errors(tmp_path, lines, kind, message):
    path = tmp_path / "empty.csv"
    path.write_text("\n".join(lines) + ("\n" if lines else ""))
    with pytest.raises(kind, match=message):
        load_pairs(path, symmetric=True)


def test_arguments_and_formats_that_cannot_work_are_clear_errors(tmp_path):
    with pytest.raises(TypeError, match="symmetric must be True"):
        load_pairs(FIXTURES / "pairs" / "faq.jsonl", symmetric=None)
    with pytest.raises(ValueError, match=r"suffix '\.xlsx'.*\.csv"):
        load_pairs(tmp_path / "p.xlsx", symmetric=True)
    with pytest.raises(FileNotFoundError, match="pair file not found"):
        load_pairs(tmp_path / "absent.csv", symmetric=True)
    with pytest.raises(ValueError, match="a JSON array, not JSON lines"):
        load_pairs(write(tmp_path / "a.jsonl", ['[{"text1": "a"}]']), symmetric=True)
    (tmp_path / "p.parquet").write_text("not parquet")
    with pytest.raises(ValueError, match="p.parquet is not a readable Parquet file"):
        load_pairs(tmp_path / "p.parquet", symmetric=True)
    with pytest.raises(ValueError, match="give both left_id and right_id"):
        load_pairs(tmp_path / "p.csv", symmetric=True, left_id="a")


def test_a_split_without_items_or_positives_says_why(tmp_path):
    rows = [(f"t{i}", f"t{i + 1}", int(i % 2 == 0)) for i in range(30)]  # one chain: one component
    path = write(
        tmp_path / "chain.csv", ["text1,text2,label", *[f"{a},{b},{y}" for a, b, y in rows]]
    )
    with pytest.raises(
        ValueError, match=r"chain\.csv: the train split has 0 item\(s\).*split its 31 items 0/31/0"
    ):
        load_pairs(path, symmetric=True)


def test_qqp_is_load_pairs_with_qqps_columns():
    frame = pd.DataFrame(
        {
            "qid1": [1, 2, 4, 6, 8, 10, 12, 14],
            "qid2": [2, 3, 5, 7, 9, 11, 13, 15],
            "question1": list("ABDFHJLN"),
            "question2": list("BCEGIKMO"),
            "is_duplicate": [1, 1, 0, 1, 1, 0, 1, 1],
        }
    )
    qqp, generic = (
        build_qqp(frame, seed=2),
        load_pairs(frame, symmetric=True, **QQP_COLUMNS, seed=2, check_splits=False),
    )
    for s in SPLITS:
        assert np.array_equal(qqp[s].left_texts, generic[s].left_texts)
        assert np.array_equal(qqp[s].positives, generic[s].positives)
        assert np.array_equal(qqp[s].stated_negatives, generic[s].stated_negatives)
    assert qqp.notes["n_questions"] == generic.notes["n_items"] == 15
    assert qqp.notes["stated_duplicates"] == generic.notes["stated_positives"]


def test_the_fixture_data_folder_loads_as_qqp_and_wikiqa():
    qqp, wikiqa = load_task("qqp", FIXTURES / "data"), load_task("wikiqa", FIXTURES / "data")
    assert [r.line for r in qqp.report.skipped] == [
        2
    ]  # the one malformed row, as in the real subset
    assert all(qqp[s].n_positives > 0 and len(qqp[s].left_texts) >= 150 for s in SPLITS)
    assert wikiqa.notes["right_side"] == "Title . Sentence"
    assert all(wikiqa[s].n_positives > 0 for s in SPLITS)


def test_a_dataset_path_with_its_options_and_per_task_settings(tmp_path, monkeypatch):
    params = {
        "dataset": str(FIXTURES / "pairs" / "faq.jsonl"),
        "data_dir": None,
        "seed": 0,
        "fractions": [0.5, 0.25, 0.25],
        "pairs_symmetric": False,
        "pairs_columns": {
            "left": "query",
            "right": "answer",
            "label": "relevant",
            "left_id": "query_id",
            "right_id": "answer_id",
        },
        "max_items": {"qqp": 10, "wikiqa": {"train": 30, "dev": 12, "test": 12}},
        "rounds": {"qqp": 5, "wikiqa": 2},
        "n1": 8,
    }
    tasks = tasks_for(params)
    assert list(tasks) == ["faq"]
    assert [len(tasks["faq"][s].left_texts) for s in SPLITS] == [30, 12, 12]  # WikiQA's sizes
    assert params["rounds"] == {"qqp": 5, "wikiqa": 2, "faq": 2}  # per-task settings: WikiQA's
    assert params["max_items"]["faq"] == params["max_items"]["wikiqa"]
    monkeypatch.chdir(tmp_path)  # a relative path is found from the project root too
    assert "faq" in load_tasks(
        "fixtures/pairs/faq.jsonl", pairs_symmetric=False, pairs_columns=params["pairs_columns"]
    )
    with pytest.raises(ValueError, match="set pairs_symmetric to True .* or False"):
        load_tasks(params["dataset"])
    with pytest.raises(ValueError, match=r"pairs_columns has \['question'\]"):
        load_tasks(params["dataset"], pairs_symmetric=False, pairs_columns={"question": "q"})


def test_growth_rebuilds_the_task_from_its_rows():
    task = load_pairs(
        FIXTURES / "pairs" / "paraphrases.csv",
        symmetric=True,
        left="sentence1",
        right="sentence2",
        label="score",
        positive_threshold=4,
    )
    table = stats.growth(task, [10, 30, 1000])
    items = table["items"].to_numpy()
    assert 0 < items[0] <= 10 < items[1] <= 30 and items[-1] == len(task["train"].left_texts)
    assert (table["pairs"].to_numpy() == items * (items - 1) // 2).all()


def test_every_notebook_takes_a_pair_file_as_its_dataset():
    from pairlab import profiles
    from pairlab.runner import notebooks

    for notebook in notebooks():
        if notebook.name.startswith("10_"):
            continue  # a person's own records (items=), not a labelled pair file: load_items
        declared = set().union(
            *profiles.own_and_shared(notebook)
        )  # a comment papermill cannot parse drops its name
        assert {
            "dataset",
            "data_dir",
            "pairs_symmetric",
            "pairs_columns",
            "pairs_threshold",
        } <= set(declared), notebook.name
        text = notebook.with_suffix(".py").read_text()
        loaders = (
            "data.tasks_for(ctx.params)",
            "experiments.prepare_active(ctx.params)",
            "adaptivity.load_experiment(ctx.params",
        )  # notebook 09: prepare_active for each experiment
        assert any(call in text for call in loaders), notebook.name
