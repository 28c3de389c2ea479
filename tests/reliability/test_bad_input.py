"""The bad-input catalogue, part 1 (issue 20): data files and folders, parameters, the
estimators, paths and the command line. Each row of the catalogue is a clear error naming the
thing and what to do, or a counted, reported skip; every test records its row (catalogue.py).
Tiny synthetic files under tmp_path only: no model is trained or loaded here."""

from __future__ import annotations

import math
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from catalogue import catalogue_file, clear_error, first_line, record, skip_summary  # noqa: F401
from conftest import EVAL_SETS, POOLS, run

from pairlab.active import ActiveConfig
from pairlab.data import loaders
from pairlab.evaluation import evaluate, heuristic, metrics
from pairlab.io import MalformedRowError, NoRowsError, read_qqp, read_wikiqa
from pairlab.paths import DataNotFoundError

ROOT = Path(__file__).resolve().parents[2]
QQP_HEADER = "id\tqid1\tqid2\tquestion1\tquestion2\tis_duplicate\n"
WIKIQA_HEADER = "QuestionID\tQuestion\tSentenceID\tSentence\tLabel\n"


def qqp_rows(n: int = 4) -> str:
    return "".join(
        f"{i}\t{2 * i + 1}\t{2 * i + 2}\tWhat is {i}?\tWhat's {i}?\t{i % 2}\n" for i in range(n)
    )


def wikiqa_rows(split: str) -> str:
    return "".join(
        f"Q{i}\t{split} question {i}?\tS{i}-{j}\t{split} sentence {i}.{j}\t{int(j == 0)}\n"
        for i in range(3)
        for j in range(2)
    )


def data_folder(root: Path, *, qqp: str | bytes | None = None, wikiqa_splits=()) -> Path:
    """A data folder in the expected layout with the given QQP text and WikiQA splits."""
    if qqp is not None:
        (root / "qqp").mkdir(parents=True)
        path = root / "qqp" / "qqp_subset.tsv"
        path.write_bytes(qqp if isinstance(qqp, bytes) else qqp.encode())
    for split in wikiqa_splits:
        (root / "wikiqa").mkdir(parents=True, exist_ok=True)
        (root / "wikiqa" / f"WikiQA-{split}.tsv").write_text(WIKIQA_HEADER + wikiqa_rows(split))
    root.mkdir(parents=True, exist_ok=True)
    return root


# -- data folders and files -------------------------------------------------------------------


@pytest.mark.parametrize("source", ["argument", "environment"])
def test_missing_data_dir(tmp_path, monkeypatch, source):
    missing = tmp_path / "no data here"
    if source == "environment":
        monkeypatch.setenv("PAIRLAB_DATA_DIR", str(missing))
    with clear_error(
        "missing data dir",
        f"data_dir from the {source}",
        DataNotFoundError,
        str(missing),
        "PAIRLAB_DATA_DIR",
        "expected layout",
        "public sources",
    ):
        loaders.load_task("qqp", missing if source == "argument" else None)


@pytest.mark.parametrize(
    "reader,content,found",
    [
        (read_qqp, "", "it is empty"),
        (read_qqp, QQP_HEADER, "a header only"),
        (read_wikiqa, "", "it is empty"),
        (read_wikiqa, WIKIQA_HEADER, "a header only"),
    ],
    ids=["qqp-empty", "qqp-header-only", "wikiqa-empty", "wikiqa-header-only"],
)
def test_empty_or_header_only_data_file(tmp_path, reader, content, found):
    path = tmp_path / "file.tsv"
    path.write_text(content)
    name = reader.__name__.removeprefix("read_").upper()
    with clear_error(
        "empty or header-only data file",
        f"{name}: {found}",
        NoRowsError,
        str(path),
        found,
        "expected",
        "replace the file",
    ):
        reader(path)


def test_empty_data_file_through_load_task(tmp_path):
    root = data_folder(tmp_path / "data", qqp="")
    with clear_error(
        "empty or header-only data file",
        "QQP file empty, via load_task",
        NoRowsError,
        str(root / "qqp" / "qqp_subset.tsv"),
        "it is empty",
    ):
        loaders.load_task("qqp", root)


def test_wrong_column_count_rows_are_counted_and_reported(tmp_path):
    path = tmp_path / "qqp.tsv"
    path.write_text(
        qqp_rows(3) + "9\t1\t2\tonly five fields\t1\n" + qqp_rows(2).replace("\t0\n", "\t0\tx\n")
    )
    frame, report = read_qqp(path)
    assert len(frame) == 4 and report.rows_read == 4
    assert [(r.line, r.reason) for r in report.skipped] == [
        (4, "expected 6 tab-separated fields, found 5"),
        (5, "expected 6 tab-separated fields, found 7"),
    ]
    assert f"{path}:4: expected 6" in report.summary() and "skipped 2 malformed" in report.summary()
    record(
        "wrong column count",
        "QQP rows with 5 and 7 fields among good ones",
        "reported skip",
        skip_summary(report),
    )
    with clear_error(
        "wrong column count",
        "the same file with strict=True",
        MalformedRowError,
        f"{path}:4",
        "expected 6 tab-separated fields",
    ):
        read_qqp(path, strict=True)


def test_wrong_column_count_in_wikiqa(tmp_path):
    path = tmp_path / "WikiQA-dev.tsv"
    path.write_text(WIKIQA_HEADER + wikiqa_rows("dev") + "Q9\tquestion?\tS9\n")
    frame, report = read_wikiqa(path)
    assert len(frame) == 6 and [r.line for r in report.skipped] == [8]
    assert "expected 7 (or 5) tab-separated fields, found 3" in report.summary()
    record(
        "wrong column count", "a WikiQA row with 3 fields", "reported skip", skip_summary(report)
    )


def test_an_all_malformed_file_says_how_many_rows_it_skipped(tmp_path):
    path = tmp_path / "qqp.tsv"
    path.write_text("a\tb\tc\n" * 5)
    with clear_error(
        "wrong column count",
        "every row with 3 fields",
        NoRowsError,
        str(path),
        "all 5 of its rows are malformed",
        "line 1: expected 6 tab-separated fields",
    ):
        read_qqp(path)


def test_one_non_utf8_byte_costs_its_row_only(tmp_path):
    path = tmp_path / "qqp.tsv"
    path.write_bytes(
        qqp_rows(2).encode()
        + b"7\t20\t21\tcaf\xe9 au lait?\tcoffee?\t0\n"
        + qqp_rows(5).encode()[len(qqp_rows(2).encode()) :]
    )
    frame, report = read_qqp(path)
    assert len(frame) == 5 and [(r.line, r.reason) for r in report.skipped] == [
        (3, "not UTF-8 text (byte 0xe9 at column 12)")
    ]
    assert report.skipped[0].text == "7\t20\t21\tcaf\ufffd au lait?\tcoffee?\t0"
    record("binary junk", "one non-UTF-8 byte in a QQP row", "reported skip", skip_summary(report))
    with clear_error(
        "binary junk",
        "the same file with strict=True",
        MalformedRowError,
        f"{path}:3",
        "not UTF-8 text",
    ):
        read_qqp(path, strict=True)


@pytest.mark.parametrize("reader", [read_qqp, read_wikiqa], ids=["qqp", "wikiqa"])
def test_binary_junk(tmp_path, reader):
    path = tmp_path / "junk.tsv"
    path.write_bytes(np.random.default_rng(0).integers(0, 256, 4000, dtype=np.uint8).tobytes())
    with clear_error(
        "binary junk",
        f"4,000 random bytes as a {reader.__name__[5:]} file",
        NoRowsError,
        str(path),
        "of its rows are malformed",
        "expected",
    ):
        reader(path)


def test_a_wikiqa_split_missing(tmp_path):
    root = data_folder(tmp_path / "data", wikiqa_splits=("train", "test"))
    with clear_error(
        "a WikiQA split missing",
        "no WikiQA-dev*.tsv",
        DataNotFoundError,
        "WikiQA-dev",
        str(root / "wikiqa"),
        "expected layout",
    ):
        loaders.load_task("wikiqa", root)


@pytest.mark.parametrize("dataset", ["quora", "QQP", "file"])
def test_dataset_not_a_known_name_or_file(tmp_path, dataset):
    if dataset == "file":
        dataset = str(data_folder(tmp_path / "data", qqp=qqp_rows()) / "qqp" / "qqp_subset.tsv")
    needles = [repr(dataset), "'qqp', 'wikiqa', 'all' or the path of a pair file"]
    if "/" in dataset:  # a file is read by load_pairs, which needs to know the task's kind
        needles = [repr(dataset), "is a pair file: set pairs_symmetric to True", "or False"]
    with clear_error(
        "dataset not a known name or file", f"dataset={Path(dataset).name!r}", ValueError, *needles
    ):
        loaders.load_tasks(dataset, tmp_path)


# -- parameters -------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "fields,needles",
    [
        ({"strategy": "uncertanty"}, ["unknown strategy 'uncertanty'", "known:", "'uncertainty'"]),
        (
            {"strategy": "random", "strategy_params": {"n_positive": 3}},
            ["strategy 'random'", "strategy_params {'n_positive': 3}"],
        ),
        ({"strategy": "stratified_match"}, ["strategy 'stratified_match'", "n_positive"]),
    ],
    ids=["unknown", "parameter-it-does-not-take", "parameter-it-needs"],
)
def test_unknown_strategy(fields, needles):
    kind = ValueError if fields["strategy"] == "uncertanty" else TypeError
    shown = ", ".join(f"{k}={v!r}" for k, v in fields.items())
    with clear_error("unknown strategy", shown, kind, *needles):
        ActiveConfig(task="toy", **fields)


@pytest.mark.parametrize(
    "field,value,needle",
    [
        ("n1", 0, "n1 must be a positive integer, got 0"),
        ("n1", -5, "n1 must be a positive integer, got -5"),
        ("n1", 2.5, "n1 must be a positive integer, got 2.5"),
        ("rounds", 0, "rounds must be a positive integer, got 0"),
        ("rounds", -1, "rounds must be a positive integer, got -1"),
        ("epochs", 0, "epochs must be positive, got 0"),
        ("learning_rate", "1e-5", "YAML reads 1e-5 as text: write 1.0e-5"),
    ],
)
def test_n1_rounds_and_training_numbers_out_of_range(field, value, needle):
    kind = TypeError if isinstance(value, str) else ValueError
    with clear_error(
        "n1 <= 0, rounds <= 0, budget larger than the pool", f"{field}={value!r}", kind, needle
    ):
        ActiveConfig(task="toy", strategy="random", **{field: value})


def test_budget_larger_than_the_pool(tmp_path):
    with clear_error(
        "n1 <= 0, rounds <= 0, budget larger than the pool",
        f"n1=20000, rounds=1 on a pool of {POOLS['train'].n_pairs:,} pairs",
        ValueError,
        "a budget of 20,000 labels exceeds the 12,720 pairs of toy/train",
        "lower n1, rounds or growth",
    ):
        run(tmp_path, n1=20_000, rounds=1)


# -- the estimators ---------------------------------------------------------------------------

GOOD = {"pos": [0.9, 0.7, 0.4], "near": [0.8, 0.3], "rand": [0.5, 0.1, 0.2], "n_neg_total": 50}
ESTIMATORS = {
    "estimate_ap": metrics.estimate_ap,
    "estimate_precision_at_recall": metrics.estimate_precision_at_recall,
    "pr_curve": metrics.pr_curve,
    "bootstrap": lambda *a: metrics.bootstrap(*a, n_boot=10),
}
BAD_SCORES = {
    "NaN positive": (
        "pos",
        [0.9, math.nan, 0.4],
        ["pos_scores", "1 NaN or infinite", "index 1", "finite"],
    ),
    "inf near negative": (
        "near",
        [math.inf, 0.3],
        ["near_neg_scores", "NaN or infinite", "index 0"],
    ),
    "-inf random negative": ("rand", [0.5, -math.inf, 0.2], ["rand_neg_scores", "index 1"]),
    "empty positives": ("pos", [], ["pos_scores is empty", "at least one positive"]),
}


@pytest.mark.parametrize("case", sorted(BAD_SCORES))
@pytest.mark.parametrize("estimator", sorted(ESTIMATORS))
def test_nan_or_infinite_scores_and_empty_positives(estimator, case):
    stratum, values, needles = BAD_SCORES[case]
    scores = {**GOOD, stratum: values}
    with clear_error(
        "NaN or infinite scores, empty positives into the estimators",
        f"{estimator}: {case}",
        ValueError,
        *needles,
    ):
        ESTIMATORS[estimator](scores["pos"], scores["near"], scores["rand"], scores["n_neg_total"])


def test_a_scorer_returning_nan_is_stopped_before_any_metric():
    eval_set = EVAL_SETS["dev"]

    def scorer(ids):
        return np.where(ids % 7 == 0, np.nan, 0.5)

    with clear_error(
        "NaN or infinite scores, empty positives into the estimators",
        "evaluate() with a scorer returning NaN",
        ValueError,
        "NaN or infinite",
        "finite number",
    ):
        evaluate(eval_set, scorer, n_boot=10)
    with clear_error(
        "NaN or infinite scores, empty positives into the estimators",
        "heuristic ROC-AUC with a NaN score",
        ValueError,
        "NaN or infinite",
    ):
        heuristic.roc_auc([0, 1, 1], [0.1, np.nan, 0.3])


# -- paths --------------------------------------------------------------------------------------


def run_dir_cases(tmp_path):
    inside = f"runs/reliability test {os.getpid()}"
    return {
        "absolute, outside the repository": str(tmp_path / "abs runs"),
        "relative, inside the repository, with spaces": inside,
        "relative, pointing outside the repository": os.path.relpath(tmp_path / "rel", ROOT),
        "absolute, inside the repository": str(ROOT / inside / "abs"),
    }


@pytest.mark.parametrize("case", list(run_dir_cases(Path("/x"))))
def test_run_dir_and_figures_dir_anywhere(tmp_path, case):
    from pairlab.notebook import setup

    chosen = run_dir_cases(tmp_path)[case]
    try:
        ctx = setup("99_example", run_dir=chosen, figures_dir=f"{chosen}/figures x", quiet=True)
        expected = (ROOT / chosen).resolve()
        assert ctx.run_dir == expected and (expected / "99_example.config.json").is_file()
        assert ctx.figures_dir == expected / "figures x" and ctx.figures_dir.is_dir()
        shown = ctx.shown(
            ctx.path("active") / "qqp" / "random-seed0-abc"
        )  # notebook 03's audit cell
        inside = expected.is_relative_to(ROOT)
        assert Path(shown).is_absolute() != inside and shown.endswith("random-seed0-abc")
        record(
            "run_dir and figures_dir absolute, relative, outside the repository, or with spaces",
            case,
            "works",
        )
    finally:
        shutil.rmtree(ROOT / f"runs/reliability test {os.getpid()}", ignore_errors=True)


def test_no_notebook_prints_a_path_relative_to_the_repository():
    """Notebook 03's audit cell printed ``folder.relative_to(project root)``, which fails for a
    run_dir outside the repository (papermill -p run_dir /data/runs/x): ``ctx.shown`` instead."""
    calls = {
        nb.name: re.findall(r"\.relative_to\(", nb.read_text())
        for nb in sorted((ROOT / "notebooks").glob("[0-9][0-9]_*.py"))
    }
    assert not any(calls.values()), calls
    assert (
        "ctx.shown(folder)" in (ROOT / "notebooks" / "03_cosinebert_active_learning.py").read_text()
    )


def test_the_runner_takes_a_run_dir_outside_the_repository(tmp_path, monkeypatch, capsys):
    import papermill

    from pairlab import runner

    executed = []
    monkeypatch.setattr(
        papermill,
        "execute_notebook",
        lambda src, out, **kw: executed.append((out, kw["parameters"]["shared"]["run_dir"])),
    )
    monkeypatch.setenv("PAIRLAB_DATA_DIR", os.environ.get("PAIRLAB_DATA_DIR", "data"))
    out = tmp_path / "runs with spaces"
    done = runner.run("smoke", select=["01"], overrides={"run_dir": str(out)}, record_times=False)
    assert done == [out / "01_dataset_construction.ipynb"] and out.is_dir()
    assert executed == [(str(out / "01_dataset_construction.ipynb"), str(out))]
    assert f"-> {out / '01_dataset_construction.ipynb'}" in capsys.readouterr().out
    record(
        "run_dir and figures_dir absolute, relative, outside the repository, or with spaces",
        "python -m pairlab.runner -p run_dir '/abs/runs with spaces'",
        "works",
    )


# -- profiles, notebooks and the command line ---------------------------------------------------


CLI = {
    "an unknown profile": (
        ["--profile", "nope"],
        ["no profile 'nope'", "known profiles", "'smoke'"],
    ),
    "an unknown notebook number": (
        ["--profile", "smoke", "--notebooks", "99"],
        ["no notebooks matching ['99']", "known numbers", "'01'"],
    ),
    "an unknown parameter": (
        ["--profile", "smoke", "-p", "n_boots", "5"],
        ["sets ['n_boots'], which no notebook declares", "a typo?"],
    ),
    "a parameter that is not YAML": (
        ["--profile", "smoke", "-p", "n1", "[1, 2"],
        ["parameter 'n1'", "is not a YAML value"],
    ),
}


@pytest.mark.parametrize("case", sorted(CLI))
def test_command_line_says_what_is_wrong_without_a_traceback(case):
    args, needles = CLI[case]
    done = subprocess.run(
        [sys.executable, "-m", "pairlab.runner", *args],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 2, done.stderr
    assert "Traceback" not in done.stderr and done.stderr.startswith("pairlab.runner: error: ")
    for needle in needles:
        assert needle in done.stderr, done.stderr
    record(
        "a profile or notebook number that does not exist",
        "python -m pairlab.runner " + " ".join(args),
        "clear error",
        done.stderr.strip().splitlines()[0].replace("pairlab.runner: error: ", "exit 2: "),
    )


def test_a_profile_or_notebook_that_does_not_exist_in_python():
    from pairlab.profiles import load_profile
    from pairlab.runner import notebooks

    with clear_error(
        "a profile or notebook number that does not exist",
        "load_profile('nope')",
        FileNotFoundError,
        "no profile 'nope'",
        "known profiles",
    ):
        load_profile("nope")
    with clear_error(
        "a profile or notebook number that does not exist",
        "notebooks(['99'])",
        FileNotFoundError,
        "['99']",
        "known numbers",
    ):
        notebooks(select=["99"])
    with clear_error(
        "a profile or notebook number that does not exist",
        "load_profile('smoke', notebook='3')",
        ValueError,
        "'3'",
        "NN_name",
    ):
        load_profile("smoke", notebook="3")
