"""`make data` against a local HTTP server on 127.0.0.1 serving small synthetic stand-ins for the
official files (the QQP-format fixture, and a WikiQACorpus.zip made of the WikiQA-format
fixture): downloads are checked, resumed after an interruption, unpacked where load_task finds
them, and then `make run` finds its data; a clean clone without data is told to run it."""

import hashlib
import os
import subprocess
import zipfile

import pytest
from conftest import FIXTURES, ROOT
from data_server import DataServer

from pairlab import runner
from pairlab.data import load_task
from pairlab.data.download import SOURCES, ChecksumError, DownloadError, download


@pytest.fixture
def served(tmp_path):
    """The folder the server serves: quora_duplicate_questions.tsv and WikiQACorpus.zip made of
    the synthetic fixture, and their SHA256 values (the official ones would not match them)."""
    folder = tmp_path / "served"
    folder.mkdir()
    qqp = FIXTURES / "data" / "qqp" / "quora_duplicate_questions.tsv"
    (folder / qqp.name).write_bytes(qqp.read_bytes())
    with zipfile.ZipFile(folder / "WikiQACorpus.zip", "w") as archive:
        for split in ("train", "dev", "test"):
            archive.write(
                FIXTURES / "data" / "wikiqa" / f"WikiQA-{split}.tsv",
                f"WikiQACorpus/WikiQA-{split}.tsv",
            )
        archive.writestr("WikiQACorpus/README.txt", "synthetic stand-in for the tests\n")
    sums = {p.name: hashlib.sha256(p.read_bytes()).hexdigest() for p in folder.iterdir()}
    return folder, sums


def test_the_published_checksums_are_pinned_with_their_sources():
    assert SOURCES["qqp"].url == "http://qim.fs.quoracdn.net/quora_duplicate_questions.tsv"
    assert SOURCES["wikiqa"].url.endswith("/WikiQACorpus.zip")
    for source in SOURCES.values():  # a download without a known checksum would say "UNVERIFIED"
        assert len(source.sha256) == 64 and int(source.sha256, 16)
    text = (ROOT / "pairlab" / "data" / "download.py").read_text()
    assert text.count("huggingface/datasets") >= 2, "each checksum says where it was published"


def test_download_verifies_unpacks_and_load_task_finds_the_files(tmp_path, served):
    folder, sums = served
    logs = []
    with DataServer(folder) as server:
        files = download(tmp_path / "data", base_url=server.url, checksums=sums, log=logs.append)
    assert sorted(p.relative_to(tmp_path / "data").as_posix() for p in files) == [
        "qqp/quora_duplicate_questions.tsv",
        "wikiqa/WikiQA-dev.tsv",
        "wikiqa/WikiQA-test.tsv",
        "wikiqa/WikiQA-train.tsv",
    ]
    assert sum("checksum verified" in line for line in logs) == 2
    assert not list((tmp_path / "data").rglob("*.part"))
    qqp, wikiqa = load_task("qqp", tmp_path / "data"), load_task("wikiqa", tmp_path / "data")
    assert qqp["dev"].n_positives > 0 and wikiqa["test"].n_positives > 0
    with DataServer(folder) as server:  # run again: nothing is fetched
        download(tmp_path / "data", base_url=server.url, checksums=sums, log=logs.append)
    assert server.requests == [] and sum("already there" in line for line in logs) == 2


def test_a_checksum_mismatch_is_an_error_that_deletes_the_partial_file(tmp_path, served):
    folder, sums = served
    wrong = {**sums, "quora_duplicate_questions.tsv": "0" * 64}
    with (
        DataServer(folder) as server,
        pytest.raises(
            ChecksumError, match=r"is not the published 0{64}; the partial file .* was deleted"
        ),
    ):
        download(
            tmp_path / "data",
            names=("qqp",),
            base_url=server.url,
            checksums=wrong,
            log=lambda _: None,
        )
    assert not list((tmp_path / "data").rglob("quora_duplicate_questions.tsv*"))


def test_an_interrupted_download_resumes_where_it_stopped(tmp_path, served):
    folder, sums = served
    size = (folder / "WikiQACorpus.zip").stat().st_size
    logs = []
    with DataServer(folder, cut_first={"WikiQACorpus.zip"}) as server:
        download(
            tmp_path / "data",
            names=("wikiqa",),
            base_url=server.url,
            checksums=sums,
            log=logs.append,
        )
    (first, no_range), (again, ranged) = server.requests
    assert first == again == "/WikiQACorpus.zip" and no_range is None
    assert ranged == f"bytes={size // 2}-"  # the second request asked only for the rest
    assert any("attempt 1 of 5 stopped" in line for line in logs)
    assert (tmp_path / "data" / "wikiqa" / "WikiQA-train.tsv").read_bytes() == (
        FIXTURES / "data" / "wikiqa" / "WikiQA-train.tsv"
    ).read_bytes()


def test_a_server_that_ignores_range_restarts_the_file(tmp_path, served):
    folder, sums = served
    with DataServer(
        folder, cut_first={"quora_duplicate_questions.tsv"}, ignore_range=True
    ) as server:
        (path,) = download(
            tmp_path / "data",
            names=("qqp",),
            base_url=server.url,
            checksums=sums,
            log=lambda _: None,
        )
    assert path.read_bytes() == (folder / path.name).read_bytes()


def test_an_unreachable_source_stops_after_its_attempts_and_keeps_the_part(tmp_path, served):
    folder, sums = served
    with DataServer(folder) as server:
        url = server.url
    with pytest.raises(DownloadError, match="download it by hand from https://quoradata"):
        download(
            tmp_path / "data",
            names=("qqp",),
            base_url=url,
            checksums=sums,
            attempts=2,
            log=lambda _: None,
        )


def test_make_data_then_the_runner_finds_the_data(tmp_path, served, monkeypatch, capsys):
    folder, sums = served
    (tmp_path / "sums").write_text("".join(f"{h}  {name}\n" for name, h in sums.items()))
    env = {**os.environ, "PAIRLAB_DATA_CHECKSUMS": str(tmp_path / "sums")}
    with DataServer(folder) as server:  # -o: never reinstall the venv from a test
        done = subprocess.run(
            [
                "make",
                "-o",
                ".venv/.installed",
                "data",
                f"DATA={tmp_path / 'data'}",
                f"DATA_URL={server.url}",
            ],
            cwd=ROOT,
            env=env,
            capture_output=True,
            text=True,
            timeout=300,
        )
    assert done.returncode == 0, done.stderr[-2000:]
    assert "done: 4 data files" in done.stdout
    monkeypatch.setenv("PAIRLAB_DATA_DIR", str(tmp_path / "data"))
    assert runner.data_or_fixture("quick", [{"dataset": "all"}], None) is None


def test_run_without_data_says_to_run_make_data(monkeypatch, capsys, tmp_path):
    monkeypatch.setenv("PAIRLAB_DATA_DIR", str(tmp_path / "nowhere"))
    assert runner.main(["--profile", "quick", "--notebooks", "01", "--no-timings"]) == 2
    err = capsys.readouterr().err
    assert "No data for profile 'quick'. Run `make data`" in err and "PAIRLAB_DATA_DIR" in err
    assert "make run DATASET=path/to/pairs.csv" in err


def test_the_smoke_profile_without_data_runs_on_the_fixture_and_says_so(
    monkeypatch, capsys, tmp_path
):
    import papermill

    executed = []
    monkeypatch.setattr(
        papermill, "execute_notebook", lambda src, out, **kw: executed.append(kw["parameters"])
    )
    monkeypatch.setenv("PAIRLAB_DATA_DIR", str(tmp_path / "nowhere"))
    runner.run(
        "smoke", select=["01"], overrides={"run_dir": str(tmp_path / "runs")}, record_times=False
    )
    assert executed[0]["shared"]["data_dir"] == "fixtures/data"
    out = capsys.readouterr().out
    assert "NO DATA" in out and "SYNTHETIC fixture in fixtures/data" in out
    # with the data there, nothing changes (CI): data_dir stays None
    monkeypatch.setenv("PAIRLAB_DATA_DIR", str(FIXTURES / "data"))
    runner.run(
        "smoke", select=["01"], overrides={"run_dir": str(tmp_path / "runs")}, record_times=False
    )
    assert "data_dir" not in executed[1]["shared"] and "NO DATA" not in capsys.readouterr().out


def test_a_dataset_file_needs_no_data_folder_and_is_passed_as_an_absolute_path(
    monkeypatch, tmp_path
):
    import papermill

    executed = []
    monkeypatch.setattr(
        papermill, "execute_notebook", lambda src, out, **kw: executed.append(kw["parameters"])
    )
    monkeypatch.setenv("PAIRLAB_DATA_DIR", str(tmp_path / "nowhere"))
    monkeypatch.chdir(FIXTURES)
    assert (
        runner.main(
            [
                "--profile",
                "quick",
                "--notebooks",
                "01",
                "--no-timings",
                "--dataset",
                "pairs/faq.jsonl",
                "-p",
                "pairs_symmetric",
                "false",
                "-p",
                "run_dir",
                str(tmp_path / "runs"),
            ]
        )
        == 0
    )
    shared = executed[0]["shared"]  # the shared settings the command line changed
    assert shared["dataset"] == str(FIXTURES / "pairs" / "faq.jsonl")
    assert shared["pairs_symmetric"] is False and "data_dir" not in shared
