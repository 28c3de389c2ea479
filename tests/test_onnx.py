"""The ONNX Runtime inference backend (pairlab.models.inference): float32 parity with torch on
real texts for the encoder and the cross-encoder, exports that follow the weights and are made
once, errors instead of a quiet return to torch, the loop's export stage, and int8's all-pairs AP
against the float32 model's interval on the smoke pools. Skipped, with the reason, only where the
onnx extra is not installed (`make install` installs it)."""

import json
import sys

import numpy as np
import pandas as pd
import pytest

pytest.importorskip(
    "onnxruntime",
    reason="the onnx extra is not installed: "
    "pip install -c constraints.txt -e '.[onnx]' (make install does)",
)

from conftest import FIXTURES, VECTORS, FakeLearner, run  # noqa: E402

from pairlab import notebook  # noqa: E402
from pairlab.models import inference  # noqa: E402
from pairlab.models.embed import encode, load_encoder  # noqa: E402
from pairlab.models.inference import ENV  # noqa: E402

QUESTIONS = pd.read_csv(FIXTURES / "data" / "qqp" / "quora_duplicate_questions.tsv", sep="\t")
# real questions of every length the fixture holds, one past any max_seq_length, and a lone mark
TEXTS = list(QUESTIONS["question1"][:40]) + ["why " * 300, "?"]


@pytest.fixture
def backend(monkeypatch):
    """Sets ``$PAIRLAB_INFERENCE_BACKEND`` for the test (restored after)."""
    return lambda name: monkeypatch.setenv(ENV, name)


@pytest.fixture(autouse=True)
def fresh_choice():
    """Each test starts from the default choice (torch) and leaves it so."""
    inference.use("torch")
    yield
    inference.use("torch")


@pytest.fixture(scope="module")
def minilm():
    return load_encoder(None, device="cpu", max_seq_length=128)


def embeddings(model, name, texts=TEXTS):
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv(ENV, name)
        return encode(texts, encoder=model, show_progress=False)


def test_float32_embeddings_equal_torch_within_1e_5_cosine(minilm):
    torch_emb, onnx_emb = embeddings(minilm, "torch"), embeddings(minilm, "onnx")
    gap = 1.0 - np.einsum("nd,nd->n", torch_emb, onnx_emb)
    assert gap.max() <= 1e-5, f"texts {np.flatnonzero(gap > 1e-5)} differ by up to {gap.max():.2e}"


def test_float32_cross_encoder_scores_equal_torch(backend):
    """ConcatBERT as pairlab builds it (the local MiniLM with a fresh one-logit head)."""
    from pairlab.models.concatbert import ConcatBERT

    model = ConcatBERT.untrained(max_seq_length=128, seed=0)
    left, right = QUESTIONS["question1"][:40], QUESTIONS["question2"][:40]
    backend("torch")
    expected = model.logits(left, right, show_progress=False)
    backend("onnx")
    got = model.logits(left, right, show_progress=False)
    cosine = expected @ got / (np.linalg.norm(expected) * np.linalg.norm(got))
    assert 1.0 - cosine <= 1e-5
    np.testing.assert_allclose(got, expected, rtol=1e-4, atol=1e-5)


def test_export_follows_the_weights_and_is_made_once(tiny_model, tmp_path, monkeypatch):
    """A model trained in place (weights changed) is exported again, and its ONNX copy gives the
    new weights' embeddings; the same weights again are read from the cache, not exported."""
    import torch

    monkeypatch.setenv("PAIRLAB_CACHE_DIR", str(tmp_path))
    model = load_encoder(tiny_model, device="cpu")
    with inference.recording_exports() as made:
        before = embeddings(model, "onnx")
        np.testing.assert_allclose(before, embeddings(model, "torch"), atol=1e-5)
        embeddings(model, "onnx")
        assert len(made) == 1  # the second call found the export
        noise = torch.Generator().manual_seed(0)
        with torch.no_grad():  # what training does: every weight changed in place
            for weight in model.parameters():
                weight.add_(0.1 * torch.randn(weight.shape, generator=noise))
        after = embeddings(model, "onnx")
    assert len(made) == 2 and {e["backend"] for e in made} == {"onnx"}
    np.testing.assert_allclose(after, embeddings(model, "torch"), atol=1e-5)
    assert np.abs(after - before).max() > 1e-3
    assert len(list((tmp_path / "models" / "onnx").glob("*/model.onnx"))) == 2


def test_the_copy_reads_the_models_settings_now(tiny_model, tmp_path, monkeypatch):
    monkeypatch.setenv("PAIRLAB_CACHE_DIR", str(tmp_path))
    model = load_encoder(tiny_model, device="cpu")
    long_text = ["word " * 60]
    model.max_seq_length = 8
    short = embeddings(model, "onnx", long_text)
    model.max_seq_length = 64
    np.testing.assert_allclose(
        embeddings(model, "onnx", long_text), embeddings(model, "torch", long_text), atol=1e-5
    )
    assert np.abs(embeddings(model, "onnx", long_text) - short).max() > 1e-3


def test_torch_is_the_model_itself_and_names_are_checked(minilm, backend):
    backend("torch")
    assert inference.for_inference(minilm) is minilm
    backend("onnnx")
    with pytest.raises(ValueError, match=r"PAIRLAB_INFERENCE_BACKEND must be one of .*'onnnx'"):
        inference.backend()
    with pytest.raises(ValueError, match=r"one of \('torch', 'onnx', 'onnx-int8'\), got 'gpu'"):
        inference.use("gpu")


def test_the_users_variable_wins_over_use(monkeypatch):
    monkeypatch.delenv(ENV, raising=False)
    assert inference.backend() == "torch"
    assert inference.use("onnx") == "onnx" and inference.backend() == "onnx"
    assert inference.use("torch") == "torch"  # a later notebook's choice replaces the earlier
    monkeypatch.setenv(ENV, "torch")
    assert inference.use("onnx") == "torch"
    monkeypatch.setenv(ENV, "onnx")
    assert inference.use("torch") == "onnx"


def test_cross_encoders_may_run_on_their_own_backend(monkeypatch):
    """use(..., cross_encoder=) moves ConcatBERT alone (its run-folder-free strata); the encoders,
    whose outputs make run folders, keep the first; the user's variable still wins over both."""
    monkeypatch.delenv(ENV, raising=False)
    assert inference.use("torch", cross_encoder="onnx-int8") == "torch"
    assert (inference.backend(), inference.backend("cross-encoder")) == ("torch", "onnx-int8")
    assert inference.cache_tag() == []
    assert inference.cache_tag(inference.backend("cross-encoder")) == ["onnx-int8"]
    monkeypatch.setenv(ENV, "torch")
    assert inference.backend("cross-encoder") == "torch"
    monkeypatch.delenv(ENV)
    inference.use("onnx")  # no cross-encoder choice: the earlier one goes
    assert inference.backend("cross-encoder") == "onnx"
    with pytest.raises(ValueError, match="one of"):
        inference.use("torch", cross_encoder="int8")
    with pytest.raises(ValueError, match="kind must be one of"):
        inference.backend("decoder")


def test_setup_records_concats_backend(tmp_path, monkeypatch):
    monkeypatch.delenv(ENV, raising=False)
    ctx = notebook.setup(
        "99_example",
        run_dir=tmp_path / "run",
        figures_dir=tmp_path / "fig",
        inference_backend="torch",
        concat_backend=None,
    )
    assert ctx.params["concat_backend"] == "torch"  # None: the notebook's inference_backend
    notebook.setup(
        "99_example",
        run_dir=tmp_path / "run",
        figures_dir=tmp_path / "fig",
        inference_backend="torch",
        concat_backend="onnx-int8",
    )
    recorded = json.loads((tmp_path / "run" / "99_example.config.json").read_text())
    assert (recorded["inference_backend"], recorded["concat_backend"]) == ("torch", "onnx-int8")
    monkeypatch.setenv(ENV, "torch")
    ctx = notebook.setup(
        "99_example",
        run_dir=tmp_path / "run",
        figures_dir=tmp_path / "fig",
        inference_backend="torch",
        concat_backend="onnx-int8",
        quiet=True,
    )
    assert ctx.params["concat_backend"] == "torch"


def test_setup_records_the_backend_that_runs(tmp_path, monkeypatch, capsys):
    monkeypatch.setenv(ENV, "torch")
    ctx = notebook.setup(
        "99_example",
        run_dir=tmp_path / "run",
        figures_dir=tmp_path / "fig",
        inference_backend="onnx",
    )
    recorded = json.loads((tmp_path / "run" / "99_example.config.json").read_text())
    assert recorded["inference_backend"] == ctx.params["inference_backend"] == "torch"
    assert "PAIRLAB_INFERENCE_BACKEND overrides the parameter's 'onnx'" in capsys.readouterr().out


def test_missing_onnx_runtime_is_an_error_naming_the_fix(minilm, backend, monkeypatch):
    backend("onnx")
    monkeypatch.setitem(sys.modules, "onnxruntime", None)  # as if it were not installed
    with pytest.raises(
        inference.InferenceBackendError,
        match=r"\.\[onnx\]'.*or set PAIRLAB_INFERENCE_BACKEND=torch",
    ):
        encode(["a text"], encoder=minilm, show_progress=False)


def test_a_failed_export_is_an_error_never_torch(tiny_model, tmp_path, backend, monkeypatch):
    import torch

    monkeypatch.setenv("PAIRLAB_CACHE_DIR", str(tmp_path))
    backend("onnx")

    def fail(*args, **kwargs):
        raise RuntimeError("cannot trace this")

    monkeypatch.setattr(torch.onnx, "export", fail)
    with pytest.raises(inference.InferenceBackendError, match=r"cannot trace this.*=torch"):
        encode(["a text"], encoder=load_encoder(tiny_model, device="cpu"), show_progress=False)
    assert not list((tmp_path / "models" / "onnx").glob("*/*.onnx"))  # nothing half-written kept


def test_int8_outputs_are_cached_apart(tiny_model, tmp_path, backend):
    """A saved model's embeddings (cached in its ``output_cache``): float32 ONNX shares torch's
    (equal within rounding); int8 never reads them, its key differs."""
    from pairlab.models.cosinebert import CosineBERT

    model, texts = (
        CosineBERT(load_encoder(tiny_model, device="cpu")),
        list(QUESTIONS["question1"][:20]),
    )
    model.output_cache = tmp_path / "embeddings"
    backend("torch")
    torch_emb = model.embed(texts, show_progress=False)
    backend("onnx")
    model.embed(texts, show_progress=False)
    assert len(list((tmp_path / "embeddings").glob("*.npy"))) == 1
    backend("onnx-int8")
    int8 = model.embed(texts, show_progress=False)
    assert len(list((tmp_path / "embeddings").glob("*.npy"))) == 2
    assert np.abs(int8 - torch_emb).max() > 1e-4


def test_pretrained_embeddings_are_torchs_whatever_the_backend(
    tiny_model, tmp_path, backend, monkeypatch
):
    """A model named by path (the pretrained encoder the strata and candidates are drawn from)
    runs on torch whatever the backend: strata and run folders never depend on the backend."""
    monkeypatch.setenv("PAIRLAB_CACHE_DIR", str(tmp_path))
    texts = list(QUESTIONS["question1"][:20])
    backend("onnx-int8")
    with inference.recording_exports() as made:
        int8_run = encode(texts, tiny_model, show_progress=False)
    assert made == [] and not (tmp_path / "models" / "onnx").exists()
    backend("torch")
    np.testing.assert_array_equal(
        encode(texts, tiny_model, cache=False, show_progress=False), int8_run
    )


def test_int8_runs_never_share_a_run_folder_with_torch(tmp_path, backend):
    """A run folder made under int8 (another model's embeddings, so other selections) is never
    read back as a torch run, nor the reverse; float32 ONNX keeps torch's folder (equal within
    rounding, as a GPU's outputs are)."""
    folders = {}
    for name in ("torch", "onnx", "onnx-int8"):
        backend(name)
        folders[name] = run(tmp_path)[1]
    assert folders["onnx"] == folders["torch"] != folders["onnx-int8"]
    assert folders["onnx-int8"].parent == folders["torch"].parent


class PreparingLearner(FakeLearner):
    def __init__(self, vectors):
        super().__init__(vectors)
        self.prepared = []

    def export_for_inference(self, model):
        self.prepared.append(model)


def test_the_loop_times_the_export_as_its_own_stage(tmp_path, backend):
    backend("onnx")
    learner = PreparingLearner(VECTORS)
    active, _ = run(tmp_path, learner=learner)
    records = active.run()["records"]
    assert list(records[1]["seconds"]) == [
        "embed",
        "search",
        "select",
        "train",
        "export",
        "evaluate",
    ]
    assert all(r["inference"] == "onnx" for r in records)
    assert len(learner.prepared) == len(learner.trained) == len(records)


class CalibratingLearner(PreparingLearner):
    """Exports while training, as CosineBERT does (it calibrates on its own embeddings): claims
    0.25 s of each training's wall time (kept in ``walls``) as an export."""

    def __init__(self, vectors):
        super().__init__(vectors)
        self.walls = []

    def train(self, *args, **kwargs):
        import time

        start = time.perf_counter()
        model = super().train(*args, **kwargs)
        time.sleep(0.3)
        for made in inference._RECORDERS:  # what an export records in each open recording
            made.append({"kind": "fake", "backend": "onnx", "digest": "-", "seconds": 0.25})
        self.walls.append(time.perf_counter() - start)
        return model


def test_an_export_made_inside_training_counts_as_export_not_train(tmp_path, backend):
    backend("onnx")
    learner = CalibratingLearner(VECTORS)
    records = run(tmp_path, learner=learner)[0].run()["records"]
    for record, wall in zip(records, learner.walls, strict=True):
        assert record["seconds"]["export"] >= 0.25
        assert record["seconds"]["train"] == pytest.approx(
            wall - 0.25, abs=0.1
        )  # not the whole wall
    assert list(records[1]["seconds"]) == [
        "embed",
        "search",
        "select",
        "train",
        "export",
        "evaluate",
    ]


@pytest.mark.slow
def test_int8_ap_inside_the_float32_models_interval_on_the_smoke_pools(data_dir, backend):
    """The zero-shot MiniLM (CosineBERT's pretrained encoder) on each task's smoke dev pool, on
    notebook 02's smoke strata: int8's all-pairs AP inside the float32 model's 95% interval."""
    from pairlab.data import load_task
    from pairlab.evaluation import EvalConfig, build_eval_set, evaluate
    from pairlab.models.scoring import CosineScorer
    from pairlab.profiles import load_profile

    params = load_profile("smoke", notebook="02")
    config = EvalConfig(params["near_m"], params["n_random"], params["seed"])
    model = load_encoder(None, device="cpu", max_seq_length=params["max_seq_length"])
    for task in ("qqp", "wikiqa"):
        pool = load_task(task, data_dir, seed=params["seed"], max_items=params["max_items"][task])[
            "dev"
        ]
        result = {}
        for name in ("onnx", "onnx-int8"):
            left, right = (
                embeddings(model, name, pool.left_texts),
                embeddings(model, name, pool.right_texts),
            )
            eval_set = result.get("eval_set") or build_eval_set(pool, left, right, config)
            result["eval_set"] = eval_set
            result[name] = evaluate(
                eval_set, CosineScorer(pool.space, left, right), n_boot=1000, seed=params["seed"]
            )
        low, high = result["onnx"]["ap_ci"]
        assert low <= result["onnx-int8"]["ap"] <= high, (
            f"{task}: int8 AP {result['onnx-int8']['ap']:.4f} outside float32's [{low:.4f}, {high:.4f}]"
        )


@pytest.mark.slow
def test_int8_concatbert_ap_inside_the_float32_models_interval_on_the_smoke_pool(
    data_dir, tmp_path, monkeypatch
):
    """ConcatBERT trained on the smoke QQP pool's stated pairs (3 epochs: notebook 02's smoke
    model, one epoch, ranks next to nothing), scored on notebook 02's smoke ConcatBERT strata of
    the dev split: int8's all-pairs AP inside the float32 model's 95% interval (the cpu
    profile's concat_backend relies on it), its logits another model's."""
    from pairlab.data import load_task
    from pairlab.evaluation import EvalConfig, build_eval_set, evaluate
    from pairlab.experiments.baselines import (
        TrainSettings,
        sample_pairs,
        stated_pairs,
        train_or_load,
    )
    from pairlab.profiles import load_profile

    monkeypatch.setenv("PAIRLAB_CACHE_DIR", str(tmp_path))
    params = load_profile("smoke", notebook="02")
    pool = load_task("qqp", data_dir, seed=params["seed"], max_items=params["max_items"]["qqp"])
    ids = sample_pairs(
        stated_pairs(pool["train"])[0], params["train_max_pairs"], seed=params["seed"]
    )
    settings = TrainSettings.from_params(
        {"learning_rate": 2e-5, "batch_size": 16, **params, "concat_epochs": 3}, "concatbert"
    ).config
    model, _ = train_or_load(
        "concatbert",
        pool["train"],
        ids,
        settings("qqp", params["seed"]),
        folder=tmp_path / "models",
    )
    dev = pool["dev"]
    encoder = load_encoder(None, device="cpu", max_seq_length=params["max_seq_length"])
    left, right = (
        embeddings(encoder, "torch", dev.left_texts),
        embeddings(encoder, "torch", dev.right_texts),
    )
    eval_set = build_eval_set(
        dev,
        left,
        right,
        EvalConfig(params["concat_near_m"], params["concat_n_random"], params["seed"]),
    )
    result, logits = {}, {}
    for name in ("onnx", "onnx-int8"):
        monkeypatch.setenv(ENV, name)
        result[name] = evaluate(eval_set, model.scorer(dev), n_boot=1000, seed=params["seed"])
        logits[name] = model.logits(dev.left_texts[:20], dev.right_texts[:20], show_progress=False)
    assert np.abs(logits["onnx"] - logits["onnx-int8"]).max() > 1e-4  # int8 ran: another model
    low, high = result["onnx"]["ap_ci"]
    assert low <= result["onnx-int8"]["ap"] <= high, (
        f"int8 AP {result['onnx-int8']['ap']:.4f} outside float32's [{low:.4f}, {high:.4f}]"
    )


def test_a_notebooks_choice_writes_no_environment_variable(tmp_path, monkeypatch):
    """Importing pairlab and a notebook's set-up choose backends for the process only: the
    environment a later notebook or subprocess inherits is the one before."""
    import os
    import subprocess
    import sys

    monkeypatch.delenv(ENV, raising=False)
    before = dict(os.environ)
    notebook.setup(
        "99_example",
        run_dir=tmp_path / "run",
        figures_dir=tmp_path / "fig",
        inference_backend="onnx",
        concat_backend="onnx-int8",
        quiet=True,
    )
    assert inference.chosen() == ("onnx", "onnx-int8")
    assert dict(os.environ) == before
    env = {k: v for k, v in os.environ.items() if k != ENV}

    def variables(imports: str) -> str:
        probe = f"import os{imports}; print(sorted(os.environ.items()))"
        return subprocess.run(
            [sys.executable, "-c", probe], env=env, capture_output=True, text=True, check=True
        ).stdout

    assert variables(", pairlab, pairlab.models.inference, pairlab.notebook") == variables("")
