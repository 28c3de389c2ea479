import numpy as np
import pandas as pd
import pytest
from conftest import FIXTURES

from pairlab.data import build_qqp, data_files, load_task, load_tasks
from pairlab.io import read_qqp
from pairlab.paths import DataNotFoundError


def qqp_frame(rows):
    frame = pd.DataFrame(rows, columns=["qid1", "qid2", "question1", "question2", "is_duplicate"])
    return frame.astype({"qid1": "int64", "qid2": "int64", "is_duplicate": "int8"})


def test_transitive_closure_adds_unstated_positives():
    # A=B and B=C are stated; A=C is implied. D-E is a stated negative.
    frame = qqp_frame([(1, 2, "A", "B", 1), (2, 3, "B", "C", 1), (4, 5, "D", "E", 0)])
    task = build_qqp(frame, fractions=(0.98, 0.01, 0.01))
    pool = task["train"]
    assert sorted(pool.left_texts) == ["A", "B", "C", "D", "E"]
    pos = {tuple(sorted(p)) for p in zip(*pool.texts(pool.positives))}
    assert pos == {("A", "B"), ("B", "C"), ("A", "C")}
    assert pool.n_pairs == 10 and len(pool.stated_negatives) == 1


def test_stated_negative_contradicted_by_closure_is_counted():
    frame = qqp_frame([(1, 2, "A", "B", 1), (2, 3, "B", "C", 1), (1, 3, "A", "C", 0)])
    task = build_qqp(frame, fractions=(0.98, 0.01, 0.01))
    assert len(task["train"].stated_negatives) == 0
    assert task.notes["stated_negatives_made_positive_by_closure"]["train"] == 1


@pytest.fixture(scope="module")
def qqp(data_dir):
    return load_task("qqp", data_dir, seed=0)


def test_real_qqp_counts_match_the_data_readme(qqp):
    assert qqp.notes["n_questions"] == 43_954
    assert sum(qqp[s].n_positives for s in ("train", "dev", "test")) == 19_863
    assert sum(len(qqp[s].left_texts) for s in ("train", "dev", "test")) == 43_954


def test_real_qqp_split_is_closed_under_stated_pairs(qqp, data_dir):
    frame = read_qqp(data_files("qqp", data_dir)[0])[0]
    split_of = {}
    for name in ("train", "dev", "test"):
        for text in qqp[name].left_texts:
            split_of.setdefault(text, set()).add(name)
    # questions are unique by qid; texts shared by two qids are rare (16) and may straddle
    text_split = pd.Series({t: min(s) for t, s in split_of.items() if len(s) == 1})
    s1 = frame["question1"].map(text_split)
    s2 = frame["question2"].map(text_split)
    both = s1.notna() & s2.notna()
    assert both.sum() > 23_000
    assert (s1[both] == s2[both]).all(), "a stated pair crosses splits"


def test_real_qqp_split_fractions_are_near_targets(qqp):
    sizes = np.array([len(qqp[s].left_texts) for s in ("train", "dev", "test")])
    assert np.allclose(sizes / sizes.sum(), [0.5, 0.25, 0.25], atol=0.01)


def test_split_is_reproducible_and_seeded(data_dir, qqp):
    again = load_task("qqp", data_dir, seed=0)
    other = load_task("qqp", data_dir, seed=1)
    assert np.array_equal(again["dev"].positives, qqp["dev"].positives)
    assert set(other["dev"].left_texts) != set(qqp["dev"].left_texts)


def test_labels_oracle(qqp):
    pool = qqp["dev"]
    ids = np.r_[pool.positives[:5], pool.stated_negatives[:5]]
    assert pool.labels(ids).tolist() == [1] * 5 + [0] * 5
    with pytest.raises(ValueError, match="outside"):
        pool.labels([pool.n_pairs])


def test_real_wikiqa_matches_paper_positives(data_dir):
    task = load_task("wikiqa", data_dir)
    assert [task[s].n_positives for s in ("train", "dev", "test")] == [1040, 140, 293]
    assert [len(task[s].left_texts) for s in ("train", "dev", "test")] == [2118, 126, 633]
    assert task.notes["right_side"].startswith("sentence only")
    right = task["train"].right_texts
    assert right is task["dev"].right_texts and len(set(right)) == len(right)
    assert task.notes["questions_in_several_splits"] == 0


def test_subsampling_keeps_whole_components(data_dir):
    task = load_task("qqp", data_dir, max_items={"train": 500, "dev": 200, "test": 200})
    full = load_task("qqp", data_dir)
    for split, cap in (("train", 500), ("dev", 200), ("test", 200)):
        small = task[split]
        assert 0 < len(small.left_texts) <= cap
        # every positive partner of a kept question is kept too
        full_pool = full[split]
        kept = set(small.left_texts)
        left, right = full_pool.texts(full_pool.positives)
        touching = np.array([(a in kept) or (b in kept) for a, b in zip(left, right)])
        inside = np.array([(a in kept) and (b in kept) for a, b in zip(left, right)])
        assert np.array_equal(touching, inside)
        assert small.n_positives == inside.sum()


def test_per_task_max_items(data_dir):
    tasks = load_tasks(
        "all", data_dir, max_items={"qqp": 100, "wikiqa": {"train": 20, "dev": 10, "test": 10}}
    )
    assert len(tasks["qqp"]["train"].left_texts) <= 100
    assert [len(tasks["wikiqa"][s].left_texts) for s in ("train", "dev", "test")] == [20, 10, 10]


def test_missing_data_folder_names_layout_and_sources(tmp_path, monkeypatch):
    monkeypatch.setenv("PAIRLAB_DATA_DIR", str(tmp_path / "absent"))
    with pytest.raises(DataNotFoundError, match="PAIRLAB_DATA_DIR") as err:
        load_task("qqp")
    assert "quora_duplicate_questions.tsv" in str(err.value)
    assert "WikiQA" in str(err.value)


def test_missing_file_in_data_folder(tmp_path):
    (tmp_path / "qqp").mkdir()
    with pytest.raises(DataNotFoundError, match="qqp_subset.tsv"):
        load_task("qqp", tmp_path)


def test_bad_arguments_are_clear():
    data_dir = FIXTURES / "data"
    with pytest.raises(ValueError, match="dataset must be"):
        load_tasks("quora", data_dir)
    with pytest.raises(ValueError, match="fractions"):
        load_task("qqp", data_dir, fractions=(0.5, 0.5, 0.5))
    with pytest.raises(ValueError, match="empty|no rows"):
        build_qqp(qqp_frame([]))
