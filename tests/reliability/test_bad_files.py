"""The bad-input catalogue, part 2 (issue 20): files pairlab wrote earlier and reads back (run
folders, saved models, the embedding cache), the output folders it writes to, and the digests
that decide what is reused. The loop runs with the fast stand-in learner of conftest.py; the
saved-model rows load the offline MiniLM's tokenizer and config, never train."""

from __future__ import annotations

import errno
import json
import os
import shutil
from pathlib import Path

import numpy as np
import pytest
from catalogue import catalogue_file, clear_error, record  # noqa: F401
from conftest import EVAL_SETS, POOLS, VECTORS, FakeLearner, run

from pairlab import notebook
from pairlab.active import ActiveConfig, ActiveRun, run_folder, run_labels
from pairlab.active.store import RunFolderError
from pairlab.io import CorruptFileError, NotWritableError, read_qqp, write_json
from pairlab.models import embed

# -- run folders ------------------------------------------------------------------------------


@pytest.fixture
def finished(tmp_path):
    active, folder = run(tmp_path)
    return active.run(), folder


@pytest.fixture
def unfinished(tmp_path):
    """A run killed while training round 3: config.json and rounds 1 and 2 are on disk."""
    active, folder = run(tmp_path, learner=FakeLearner(VECTORS, crash_at_round=3))
    with pytest.raises(KeyboardInterrupt):
        active.run()
    assert (folder / "rounds" / "round_02.json").is_file() and not (folder / "result.json").exists()
    return folder


def truncate(path: Path, keep: float = 0.5) -> None:
    data = path.read_bytes()
    path.write_bytes(data[: int(len(data) * keep)])


def resume_same_run(folder: Path):
    active, again = run(folder.parents[1])
    assert again == folder
    return active.run()


@pytest.mark.parametrize(
    "name,kind,needles",
    [
        ("config.json", RunFolderError, ["config.json", "truncated or corrupt", "delete it"]),
        (
            "rounds/round_02.json",
            RunFolderError,
            [
                "round_02.json",
                "truncated or corrupt",
                "delete rounds/round_02.json and every later round",
            ],
        ),
        (
            "rounds/round_01.npz",
            RunFolderError,
            ["round_01.npz", "missing or unreadable", "BadZipFile", "delete rounds/round_01.json"],
        ),
    ],
)
def test_a_truncated_run_folder_file(unfinished, name, kind, needles):
    truncate(unfinished / name)
    with clear_error(
        "a truncated or corrupt config.json / round file / cache entry",
        f"{name} of an unfinished run cut in half",
        kind,
        str(unfinished),
        *needles,
    ):
        resume_same_run(unfinished)


def test_a_round_file_missing_although_its_round_finished(unfinished):
    (unfinished / "rounds" / "round_01.npz").unlink()
    with clear_error(
        "a finished run whose labels.csv or a round file was deleted",
        "rounds/round_01.npz of an unfinished run deleted",
        RunFolderError,
        "round_01.npz is missing or unreadable",
        "FileNotFoundError",
        "delete rounds/round_01.json",
    ):
        resume_same_run(unfinished)


def test_a_truncated_result(finished):
    _, folder = finished
    truncate(folder / "result.json")
    with clear_error(
        "a truncated or corrupt config.json / round file / cache entry",
        "result.json of a finished run cut in half",
        RunFolderError,
        str(folder / "result.json"),
        "JSONDecodeError",
        "delete it",
    ):
        resume_same_run(folder)
    with clear_error(
        "a truncated or corrupt config.json / round file / cache entry",
        "run_labels() of that run (what notebooks 04 and 06 read)",
        RunFolderError,
        "result.json",
        "delete it",
    ):
        run_labels(folder)


def test_a_truncated_round_of_a_finished_run_read_back_for_its_labels(finished):
    _, folder = finished
    truncate(folder / "rounds" / "round_02.npz", keep=0.9)
    with clear_error(
        "a truncated or corrupt config.json / round file / cache entry",
        "run_labels() with rounds/round_02.npz cut short",
        RunFolderError,
        "round_02.npz",
        "missing or unreadable",
        "delete",
    ):
        run_labels(folder)


@pytest.mark.parametrize("name", ["labels.csv", "rounds/round_02.npz", "rounds/round_03.json"])
def test_a_finished_run_with_a_file_deleted_is_not_read_back_as_finished(finished, name):
    _, folder = finished
    (folder / name).unlink()
    with clear_error(
        "a finished run whose labels.csv or a round file was deleted",
        f"{name} deleted after the run finished",
        RunFolderError,
        str(folder),
        f"misses {name}",
        "delete the run folder",
    ):
        resume_same_run(folder)


def test_a_run_folder_holding_another_config_is_never_reused(finished):
    _, folder = finished
    other = ActiveConfig(
        strategy="uncertainty", task="toy", n1=10, rounds=3, candidate_m=6, n_boot=20
    )
    assert run_folder(folder.parents[1], other, POOLS, EVAL_SETS) != folder
    with clear_error(
        "a run folder whose config differs from the requested one",
        "another config (n1 10, not 12) run in the same folder",
        ValueError,
        str(folder),
        "another config",
        "['n1']",
        "never reused",
        "use a new folder",
    ):
        ActiveRun(other, POOLS, EVAL_SETS, folder, learner=FakeLearner(VECTORS)).run()


def test_epochs_1_and_1_0_are_the_same_run(tmp_path):
    from pairlab.experiments.baselines import model_id
    from pairlab.models.training import TrainConfig

    configs = [
        ActiveConfig(task="toy", strategy="random", epochs=e) for e in (1, 1.0, np.float64(1))
    ]
    assert len({run_folder(tmp_path, c, POOLS, EVAL_SETS) for c in configs}) == 1
    trains = [
        TrainConfig(epochs=e, learning_rate=lr)
        for e, lr in ((1, 2e-5), (1.0, 2e-5), (1, np.float32(2e-5).item()))
    ]
    assert trains[0].to_dict() == trains[1].to_dict()
    assert model_id("cosinebert", POOLS["train"], np.arange(3), trains[0]) == model_id(
        "cosinebert", POOLS["train"], np.arange(3), trains[1]
    )
    assert ActiveConfig(task="toy", strategy="random", epochs=1.5).epochs == 1.5
    record(
        "a run folder whose config differs from the requested one",
        "epochs=1 and epochs=1.0 (the same run)",
        "works",
    )


# -- the embedding cache and saved models ---------------------------------------------------------


def test_a_truncated_cache_entry_is_computed_again(tmp_path):
    computed = []

    def compute():
        computed.append(1)
        return np.arange(12, dtype=np.float32).reshape(3, 4)

    first = embed.cached_array(tmp_path, "key", compute)
    truncate(tmp_path / "key.npy", keep=0.6)
    with pytest.warns(
        RuntimeWarning, match=r"cache entry .*key\.npy is unreadable.*computing it again"
    ) as caught:
        again = embed.cached_array(tmp_path, "key", compute)
    assert np.array_equal(first, again) and len(computed) == 2
    assert np.array_equal(np.load(tmp_path / "key.npy"), first)  # the entry was written again
    record(
        "a truncated or corrupt config.json / round file / cache entry",
        "an embedding cache entry (.npy) cut short",
        "recomputed, with a warning",
        f"RuntimeWarning: {str(caught[0].message).splitlines()[0]}",
    )


@pytest.fixture
def fake_encoder(monkeypatch):
    """``encode`` without a model: each text's vector comes from its own hash; calls counted."""
    calls = []

    def fake(encoder, texts, batch_size, show_progress, backend=None):
        calls.append(list(texts))
        rng = [np.random.default_rng(abs(hash(t)) % 2**32) for t in texts]
        out = np.stack([r.normal(size=4) for r in rng]).astype(np.float32)
        return out / np.linalg.norm(out, axis=1, keepdims=True)

    monkeypatch.setattr(embed, "load_encoder", lambda *a, **k: object())
    monkeypatch.setattr(embed, "_encode", fake)
    return calls


def fake_model(folder: Path, weights: bytes) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "config.json").write_text('{"model_type": "bert"}')
    (folder / "model.safetensors").write_bytes(weights)
    return folder


def test_the_data_file_edited_after_its_embeddings_were_cached(tmp_path, monkeypatch, fake_encoder):
    monkeypatch.setenv("PAIRLAB_CACHE_DIR", str(tmp_path / "cache"))
    model = fake_model(tmp_path / "model", b"w" * 64)
    data = tmp_path / "qqp.tsv"
    data.write_text(
        "".join(f"{i}\t{2 * i}\t{2 * i + 1}\tWhat is {i}?\tWhy {i}?\t0\n" for i in range(5))
    )

    def embed_file():
        frame, _ = read_qqp(data)
        return embed.encode(frame["question1"], model, show_progress=False)

    before = embed_file()
    assert np.array_equal(embed_file(), before) and len(fake_encoder) == 1  # the cache is used
    data.write_text(data.read_text().replace("What is 3?", "What is three?"))
    after = embed_file()
    assert len(fake_encoder) == 2 and "What is three?" in fake_encoder[-1]
    assert np.array_equal(after[[0, 1, 2, 4]], before[[0, 1, 2, 4]]) and not np.array_equal(
        after[3], before[3]
    )
    record(
        "the data file edited after its embeddings were cached",
        "one question of the QQP file changed",
        "not reused",
        "the cache key covers every text: the edited file's embeddings are computed again",
    )


def test_a_model_retrained_in_place_with_the_same_sizes_gets_a_new_cache_key(
    tmp_path, monkeypatch, fake_encoder
):
    monkeypatch.setenv("PAIRLAB_CACHE_DIR", str(tmp_path / "cache"))
    model = fake_model(tmp_path / "model", b"a" * 64)
    old = embed.model_fingerprint(model)
    embed.encode(["a text"], model, show_progress=False)
    stat = (model / "model.safetensors").stat()
    fake_model(model, b"b" * 64)  # saved in place: the same file names and sizes
    os.utime(model / "model.safetensors", ns=(stat.st_atime_ns, stat.st_mtime_ns + 1_000_000_000))
    assert embed.model_fingerprint(model) != old
    embed.encode(["a text"], model, show_progress=False)
    assert len(fake_encoder) == 2  # not the old weights' embeddings
    record(
        "the data file edited after its embeddings were cached",
        "the model retrained and saved in place (same file sizes)",
        "not reused",
        "the cache key hashes the weights files' contents",
    )


def test_the_content_hash_is_taken_once_per_file_version(tmp_path, monkeypatch):
    model = fake_model(tmp_path / "model", b"x" * 64)
    embed.model_fingerprint(model)
    opened = []
    real_open = open
    monkeypatch.setattr("builtins.open", lambda *a, **k: opened.append(a[0]) or real_open(*a, **k))
    embed.model_fingerprint(model)
    assert opened == []  # memoised by (path, size, mtime_ns)


MINILM_SMALL_FILES = (
    "config.json",
    "config_sentence_transformers.json",
    "modules.json",
    "sentence_bert_config.json",
    "special_tokens_map.json",
    "tokenizer.json",
    "tokenizer_config.json",
    "vocab.txt",
    "1_Pooling/config.json",
)


def saved_model(folder: Path, info_file: str, info: dict) -> Path:
    """A saved-model folder like pairlab's: the offline MiniLM's files with its weights cut
    to 1 KB (as a save killed halfway leaves them), and pairlab's own JSON file."""
    source = Path(embed.resolve_model(None))
    for name in MINILM_SMALL_FILES:
        (folder / name).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy(source / name, folder / name)
    with open(source / "model.safetensors", "rb") as weights:
        (folder / "model.safetensors").write_bytes(weights.read(1024))
    (folder / info_file).write_text(json.dumps(info))
    return folder


@pytest.mark.parametrize("kind", ["CosineBERT", "ConcatBERT"])
def test_a_truncated_saved_model(tmp_path, kind):
    if kind == "CosineBERT":
        from pairlab.models.cosinebert import CALIBRATION_FILE as info_file, CosineBERT as cls

        info = {"calibration": None, "info": {}}
    else:
        from pairlab.models.concatbert import INFO_FILE as info_file, ConcatBERT as cls

        info = {}
    folder = saved_model(tmp_path / "model_round_02", info_file, info)
    with clear_error(
        "a truncated or corrupt config.json / round file / cache entry",
        f"a saved {kind} whose model.safetensors was cut to 1 KB",
        CorruptFileError,
        str(folder),
        "does not load",
        "delete that folder",
        "trained again",
    ):
        cls.load(folder, device="cpu")


def test_a_corrupt_calibration_file(tmp_path):
    from pairlab.models.cosinebert import CALIBRATION_FILE, CosineBERT

    folder = saved_model(tmp_path / "model", CALIBRATION_FILE, {})
    (folder / CALIBRATION_FILE).write_text('{"calibration": {"mean": 0.1')
    with clear_error(
        "a truncated or corrupt config.json / round file / cache entry",
        f"a saved CosineBERT whose {CALIBRATION_FILE} is cut short",
        CorruptFileError,
        str(folder),
        "JSONDecodeError",
        "delete that folder",
    ):
        CosineBERT.load(folder)


@pytest.mark.parametrize(
    "case", ["unknown name, hub offline", "empty folder", "corrupt config.json"]
)
def test_unknown_or_unloadable_model_name(tmp_path, monkeypatch, case):
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    if case == "unknown name, hub offline":
        model, kind, needles = (
            "no-such-org/no-such-model",
            FileNotFoundError,
            ["hub is offline", "give the path"],
        )
    else:
        model, kind = tmp_path / "model", embed.ModelLoadError
        model.mkdir()
        if case == "corrupt config.json":
            (model / "config.json").write_text("{not json")
        needles = [str(model), "does not load", "give a sentence-transformers model name"]
    with clear_error(
        "unknown or unloadable model name", f"model={case}", kind, str(model), *needles
    ):
        embed.load_encoder(model, device="cpu")


def test_unknown_model_name_for_the_cross_encoder(monkeypatch):
    from pairlab.models.concatbert import ConcatBERT

    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    with clear_error(
        "unknown or unloadable model name",
        "ConcatBERT model='no-such-model', hub offline",
        FileNotFoundError,
        "'no-such-model'",
        "hub is offline",
        "give the path",
    ):
        ConcatBERT.untrained("no-such-model", device="cpu")


# -- output folders -------------------------------------------------------------------------------


def test_a_read_only_output_directory(tmp_path, monkeypatch):
    def read_only(*args, dir=None, **kwargs):
        raise PermissionError(errno.EROFS, "Read-only file system", str(dir))

    real = notebook.tempfile.TemporaryFile
    for setting in ("run_dir", "figures_dir"):
        blocked = tmp_path / setting
        monkeypatch.setattr(
            notebook.tempfile,
            "TemporaryFile",
            lambda *a, dir=None, **k: (
                read_only(dir=dir) if Path(dir) == blocked else real(*a, dir=dir, **k)
            ),
        )
        with clear_error(
            "a read-only or full output directory",
            f"{setting} on a read-only file system",
            NotWritableError,
            str(blocked),
            "Read-only file system",
            f"make it writable or point {setting} at another folder",
        ):
            notebook.setup(
                "99_example",
                quiet=True,
                **{
                    "run_dir": tmp_path / "fine",
                    "figures_dir": tmp_path / "fine",
                    setting: blocked,
                },
            )


def test_an_output_directory_under_a_file(tmp_path):
    (tmp_path / "a file").write_text("x")
    with clear_error(
        "a read-only or full output directory",
        "run_dir inside a regular file",
        NotWritableError,
        str(tmp_path / "a file" / "run"),
        "point run_dir at another folder",
    ):
        notebook.setup(
            "99_example", run_dir=tmp_path / "a file" / "run", figures_dir=tmp_path, quiet=True
        )


def test_a_full_output_directory(tmp_path, monkeypatch):
    def full(self, text, *args, **kwargs):
        with open(self, "w") as handle:
            handle.write(text[:5])  # half a file, then the disk is full
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(Path, "write_text", full)
    target = tmp_path / "runs" / "03.metrics.json"
    with clear_error(
        "a read-only or full output directory",
        "the disk full while writing a metrics file",
        NotWritableError,
        str(target),
        "the disk is full",
        "free space there",
    ):
        write_json(target, {"ap": 0.5})
    assert list(target.parent.iterdir()) == []  # no half-written temporary left behind


def _fills_the_disk(write):
    """``write`` (numpy's or pandas' writer) that writes half its file, then finds the disk full."""

    def full(file, *args, **kwargs):
        with open(file, "wb") as handle:
            handle.write(b"PK\x03\x04half")
        raise OSError(errno.ENOSPC, "No space left on device")

    return full


@pytest.mark.parametrize("what", ["round file", "labels.csv", "cache entry"])
def test_the_disk_filling_up_during_a_run(tmp_path, monkeypatch, what):
    from pairlab.active import store
    from pairlab.models.embed import cached_array

    folder = tmp_path / "run"
    if what == "round file":
        monkeypatch.setattr(np, "savez", _fills_the_disk(np.savez))
        target = folder / "rounds" / "round_01.npz"
        action = lambda: store.save_batch(folder, 1, np.arange(3), np.zeros(3, np.int8))  # noqa: E731
    elif what == "labels.csv":
        import pandas as pd

        monkeypatch.setattr(
            pd.DataFrame, "to_csv", lambda self, file, **k: _fills_the_disk(None)(file)
        )
        target = folder / "labels.csv"
        ids = POOLS["train"].positives[:3]
        action = lambda: store.write_labels_csv(
            folder,
            POOLS["train"],
            ids,
            np.ones(3, np.int8),  # noqa: E731
            np.ones(3, np.int16),
        )
    else:
        monkeypatch.setattr(np, "save", _fills_the_disk(np.save))
        target = folder / "cache" / "k.npy"
        action = lambda: cached_array(folder / "cache", "k", lambda: np.zeros(3))  # noqa: E731
    with clear_error(
        "a read-only or full output directory",
        f"the disk full while writing a {what}",
        NotWritableError,
        str(target),
        "the disk is full",
    ):
        action()
    assert not [
        p for p in folder.rglob("*") if p.is_file()
    ]  # no half-written temporary left behind


def test_a_cache_dir_that_cannot_be_created(tmp_path, monkeypatch):
    (tmp_path / "a file").write_text("x")
    monkeypatch.setenv("PAIRLAB_CACHE_DIR", str(tmp_path / "a file" / "cache"))
    with clear_error(
        "a read-only or full output directory",
        "$PAIRLAB_CACHE_DIR inside a regular file",
        NotWritableError,
        str(tmp_path / "a file" / "cache"),
        "point $PAIRLAB_CACHE_DIR",
    ):
        embed.cache_dir()


def test_truncated_silver_scores_are_scored_again(tmp_path):
    from pairlab.augment.silver import SilverLabeller

    class Scorer:
        calls = 0

        def score_pairs(self, pool, ids):
            Scorer.calls += 1
            return ids.astype(np.float64) % 3

    path, pool = tmp_path / "silver.npz", POOLS["train"]
    first = SilverLabeller(Scorer(), pool, 1.0, path=path).score(np.arange(10))
    truncate(path)
    with pytest.warns(
        RuntimeWarning, match=r"silver scores .*silver\.npz are unreadable"
    ) as caught:
        labeller = SilverLabeller(Scorer(), pool, 1.0, path=path)
    assert np.array_equal(labeller.score(np.arange(10)), first) and Scorer.calls == 2
    assert np.array_equal(
        SilverLabeller(Scorer(), pool, 1.0, path=path).score(np.arange(10)), first
    )
    record(
        "a truncated or corrupt config.json / round file / cache entry",
        "notebook 06's silver-score cache (.npz) cut short",
        "recomputed, with a warning",
        f"RuntimeWarning: {str(caught[0].message).splitlines()[0]}",
    )


@pytest.mark.parametrize("store", ["label store", "LLM answer cache"])
@pytest.mark.parametrize("damage", ["overwritten with text", "truncated"])
def test_a_corrupt_sqlite_file_is_named_and_kept(tmp_path, store, damage):
    from pairlab.annotators.cache import AnswerCache
    from pairlab.widgets.labels import LabelStore

    path = tmp_path / "marks.sqlite"
    opener = LabelStore if store == "label store" else AnswerCache
    opener(path).close()
    if damage == "truncated":
        path.write_bytes(path.read_bytes()[:50])
    else:
        path.write_text("these are not the labels you are looking for\n" * 200)
    before = path.read_bytes()
    with clear_error(
        "a corrupt label store or answer cache",
        f"{store} {damage}",
        CorruptFileError,
        str(path),
        "not deleted",
        "move it aside",
    ):
        opener(path)
    assert path.read_bytes() == before  # people's labels are never deleted or overwritten
