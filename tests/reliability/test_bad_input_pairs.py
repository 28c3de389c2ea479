"""The bad-input catalogue, part 3 (issue 18): a user's own pair file (load_pairs, a notebook's
dataset set to a path) and the downloads of `make data`. Tiny files under tmp_path and a local
HTTP server on 127.0.0.1; no model is loaded."""

from __future__ import annotations

import hashlib
import json

import pytest
from catalogue import catalogue_file, clear_error, record, skip_summary  # noqa: F401
from conftest import FIXTURES
from data_server import DataServer

from pairlab import runner
from pairlab.data import load_pairs, load_tasks
from pairlab.data.download import ChecksumError, DownloadError, download
from pairlab.io import NoRowsError

GOOD = [
    f"g{g} {x},g{g} {y},{label}"
    for g in range(12)
    for x, y, label in (("a", "b", 1), ("b", "c", 0))
]


def pair_file(tmp_path, lines, name="pairs.csv"):
    path = tmp_path / name
    path.write_text("\n".join(lines) + ("\n" if lines else ""))
    return path


@pytest.mark.parametrize(
    "case,lines,kind,needles",
    [
        (
            "a missing column",
            ["question,answer,label", *GOOD],
            ValueError,
            [
                ":1 (the header) has no column 'text1', 'text2'",
                "its columns are ['question', 'answer', 'label']",
                "pairs_columns",
            ],
        ),
        ("an empty file", [], NoRowsError, ["is empty", "header line naming the columns"]),
        ("a header only", ["text1,text2,label"], NoRowsError, ["has a header and no rows"]),
        (
            "no positive",
            ["text1,text2,label", "a,b,0", "c,d,0"],
            ValueError,
            ["no positive pair in column 'label': every label is 0", "check the label column"],
        ),
        (
            "graded labels, no threshold",
            ["text1,text2,label", "a,b,4.5", "c,d,1.0"],
            ValueError,
            [":2: column 'label' holds '4.5', not 0 or 1", "positive_threshold", "pairs_threshold"],
        ),
        (
            "labels neither binary nor numeric",
            ["text1,text2,label", "a,b,duplicate", "c,d,different"],
            ValueError,
            [":2: column 'label' is neither binary nor numeric", "0/1", "positive_threshold"],
        ),
    ],
)
def test_a_pair_file_that_cannot_become_a_task(tmp_path, case, lines, kind, needles):
    path = pair_file(tmp_path, lines)
    with clear_error("a pair file that cannot become a task", case, kind, str(path), *needles):
        load_pairs(path, symmetric=True)


def test_a_pair_file_whose_split_would_be_empty(tmp_path):
    path = pair_file(
        tmp_path, ["text1,text2,label", *[f"t{i},t{i + 1},{i % 2}" for i in range(20)]]
    )
    with clear_error(
        "a pair file that cannot become a task",
        "every pair in one connected component",
        ValueError,
        str(path),
        "the train split has 0 item(s)",
        "connected components",
        "split its 21 items",
    ):
        load_pairs(path, symmetric=True)


def test_bad_rows_of_a_pair_file_are_counted_and_reported(tmp_path):
    path = tmp_path / "pairs.csv"
    path.write_bytes(
        (
            "\n".join(
                ["text1,text2,label", *GOOD, ",no left text,1", "three,fields,1,four", "no,label,"]
            )
            + "\n"
        ).encode()
        + b"caf\xe9,au lait,1\n"
    )
    task = load_pairs(path, symmetric=True)
    assert [r.line for r in task.report.skipped] == [26, 27, 28, 29] and task.report.rows_read == 24
    record(
        "rows of a pair file: empty text or label, wrong field count, bytes not UTF-8",
        "a CSV with one of each among 24 good rows",
        "reported skip",
        skip_summary(task.report),
    )
    jsonl = tmp_path / "pairs.jsonl"
    jsonl.write_text(
        "\n".join(
            [
                json.dumps(
                    {
                        "text1": r.split(",")[0],
                        "text2": r.split(",")[1],
                        "label": int(r.split(",")[2]),
                    }
                )
                for r in GOOD
            ]
            + ["{not json", "[1]"]
        )
        + "\n"
    )
    task = load_pairs(jsonl, symmetric=True)
    assert [r.line for r in task.report.skipped] == [25, 26]
    record(
        "rows of a pair file: empty text or label, wrong field count, bytes not UTF-8",
        "a JSON-lines file with a broken line and an array line",
        "reported skip",
        skip_summary(task.report),
    )


@pytest.mark.parametrize(
    "case,kwargs,kind,needles",
    [
        (
            "pairs_symmetric unset",
            {},
            ValueError,
            ["is a pair file: set pairs_symmetric to True", "or False"],
        ),
        (
            "an unknown role in pairs_columns",
            {"pairs_symmetric": True, "pairs_columns": {"question": "q"}},
            ValueError,
            ["pairs_columns has ['question']", "maps the roles"],
        ),
        (
            "a path that is not a file",
            {"pairs_symmetric": True, "dataset": "no/such/pairs.csv"},
            FileNotFoundError,
            ["'no/such/pairs.csv' is not a file", "give the path of a pair file"],
        ),
    ],
)
def test_a_dataset_parameter_naming_a_pair_file(case, kwargs, kind, needles):
    dataset = kwargs.pop("dataset", str(FIXTURES / "pairs" / "faq.jsonl"))
    with clear_error(
        "a notebook's dataset set to a pair file, its options wrong", case, kind, *needles
    ):
        load_tasks(dataset, **kwargs)


@pytest.fixture
def served(tmp_path):
    folder = tmp_path / "served"
    folder.mkdir()
    qqp = FIXTURES / "data" / "qqp" / "quora_duplicate_questions.tsv"
    (folder / qqp.name).write_bytes(qqp.read_bytes())
    return folder, {qqp.name: hashlib.sha256(qqp.read_bytes()).hexdigest()}


def test_make_data_with_a_checksum_that_does_not_match(tmp_path, served):
    folder, sums = served
    with (
        DataServer(folder) as server,
        clear_error(
            "make data: a download that is corrupt, cut or unreachable",
            "a file whose SHA256 is not the published one",
            ChecksumError,
            "is not the published",
            "the partial file",
            "was deleted",
            "run `make data` again",
        ),
    ):
        download(
            tmp_path / "data",
            names=("qqp",),
            base_url=server.url,
            checksums={k: "f" * 64 for k in sums},
            log=lambda _: None,
        )
    assert not list((tmp_path / "data").rglob("*.part"))


def test_make_data_cut_off_mid_file_resumes(tmp_path, served):
    folder, sums = served
    with DataServer(folder, cut_first=set(sums)) as server:
        download(
            tmp_path / "data",
            names=("qqp",),
            base_url=server.url,
            checksums=sums,
            log=lambda _: None,
        )
    assert server.requests[1][1].startswith("bytes=")
    record(
        "make data: a download that is corrupt, cut or unreachable",
        "the connection drops half-way",
        "works",
        f"resumed with Range: {server.requests[1][1]}; checksum verified",
    )


def test_make_data_without_a_connection(tmp_path, served):
    folder, sums = served
    with DataServer(folder) as server:
        url = server.url  # stopped: nothing listens there any more
    with clear_error(
        "make data: a download that is corrupt, cut or unreachable",
        "nothing listening at the URL",
        DownloadError,
        "could not download",
        "not complete after 2 attempt(s)",
        "download it by hand from https://quoradata.quora.com",
        "PAIRLAB_DATA_DIR",
    ):
        download(
            tmp_path / "data",
            names=("qqp",),
            base_url=url,
            checksums=sums,
            attempts=2,
            log=lambda _: None,
        )


def test_make_run_on_a_clone_without_data(monkeypatch, tmp_path):
    monkeypatch.setenv("PAIRLAB_DATA_DIR", str(tmp_path / "nowhere"))
    with clear_error(
        "make run on a clone without data",
        "profile quick, no data folder",
        FileNotFoundError,
        "No data for profile 'quick'",
        "Run `make data`",
        "PAIRLAB_DATA_DIR",
        "DATASET=",
    ):
        runner.data_or_fixture("quick", [{"dataset": "all"}], None)
