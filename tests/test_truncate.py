"""Weaker encoders cut from a stronger one: the first n transformer layers, saved once; 0 layers
is the mean of the layer-normalised token embeddings. Mechanics on the tiny 2-layer model, one
check that the real model still encodes after the cut."""

import json
import types
from pathlib import Path

import numpy as np
import pytest
import torch
from conftest import EVAL_SETS, POOLS

from pairlab.active import ActiveConfig, run_folder
from pairlab.active.learner import CosineBERTLearner
from pairlab.models.embed import encode, load_encoder
from pairlab.models.truncate import (
    transformer_layers,
    truncate_layers,
    truncated_model,
)

TEXTS = ["how do I learn python", "what is the best way to learn python", "why is the sky blue"]


def test_the_cut_model_has_n_layers_the_originals_weights_and_encodes(tiny_model, tmp_path):
    path = truncated_model(tiny_model, 1, folder=tmp_path)
    assert Path(path).parent == tmp_path and "1layers" in Path(path).name
    assert json.loads((Path(path) / "config.json").read_text())["num_hidden_layers"] == 1
    cut, full = load_encoder(path), load_encoder(tiny_model)
    assert len(transformer_layers(cut)) == 1 and len(transformer_layers(full)) == 2
    kept, original = cut[0].auto_model.state_dict(), full[0].auto_model.state_dict()
    assert not any(".layer.1." in k for k in kept)
    for name, tensor in kept.items():  # the first layer and the embeddings, unchanged
        assert torch.equal(tensor, original[name]), name
    emb = encode(TEXTS, path, cache=False, show_progress=False)
    assert emb.shape == (3, 32) and np.allclose(np.linalg.norm(emb, axis=1), 1.0, atol=1e-5)
    assert not np.allclose(emb, encode(TEXTS, tiny_model, cache=False, show_progress=False))


def test_zero_layers_is_the_mean_of_the_token_embeddings(tiny_model, tmp_path):
    encoder = load_encoder(truncated_model(tiny_model, 0, folder=tmp_path))
    assert len(transformer_layers(encoder)) == 0
    bert = encoder[0].auto_model
    features = encoder.tokenize(TEXTS)
    with torch.no_grad():
        tokens = bert.embeddings(
            input_ids=features["input_ids"], token_type_ids=features["token_type_ids"]
        )  # (3, length, 32)
    mask = features["attention_mask"][..., None].float()
    mean = (tokens * mask).sum(1) / mask.sum(1)
    expected = torch.nn.functional.normalize(mean, dim=1).numpy()
    assert np.allclose(encode(TEXTS, encoder=encoder, show_progress=False), expected, atol=1e-5)


def test_the_copy_is_saved_once_and_the_whole_model_is_itself(tiny_model, tmp_path):
    first = truncated_model(tiny_model, 1, folder=tmp_path)
    stamp = (Path(first) / "config.json").stat().st_mtime_ns
    assert truncated_model(tiny_model, 1, folder=tmp_path) == first
    assert (Path(first) / "config.json").stat().st_mtime_ns == stamp
    assert truncated_model(tiny_model, 2, folder=tmp_path) == tiny_model  # its own depth
    assert truncated_model(tiny_model, None, folder=tmp_path) == tiny_model
    assert truncated_model(tiny_model, 0, folder=tmp_path) != first


@pytest.mark.parametrize("n", [3, -1, True, 1.0])
def test_a_depth_the_model_does_not_have_is_a_clear_error(tiny_model, n):
    with pytest.raises(ValueError, match="n_layers must be an integer from 0 to the model's 2"):
        truncate_layers(load_encoder(tiny_model), n)


def test_a_model_without_transformer_layers_is_a_clear_error():
    not_bert = [types.SimpleNamespace(auto_model=torch.nn.Linear(2, 2))]
    with pytest.raises(ValueError, match="only BERT-like sentence-transformers models"):
        transformer_layers(not_bert)


def test_the_layer_count_names_its_own_run_folder():
    whole = ActiveConfig(task="toy", strategy="uncertainty")
    assert whole.to_dict()["encoder_layers"] is None  # the whole model
    assert (
        ActiveConfig(task="toy", strategy="uncertainty", encoder_layers=2).to_dict()[
            "encoder_layers"
        ]
        == 2
    )
    folders = {
        run_folder(
            "r",
            ActiveConfig(task="toy", strategy="uncertainty", encoder_layers=n),
            POOLS,
            EVAL_SETS,
        )
        for n in (None, 0, 2, 4)
    }
    assert len(folders) == 4
    assert sorted(f.name.split("-seed")[0] for f in folders) == [
        "uncertainty",
        "uncertainty-0layers",
        "uncertainty-2layers",
        "uncertainty-4layers",
    ]
    for bad in (-1, 1.5, "2", True):
        with pytest.raises(ValueError, match="encoder_layers must be a non-negative integer"):
            ActiveConfig(task="toy", strategy="uncertainty", encoder_layers=bad)


def test_the_learner_starts_from_the_cut_model(tiny_model, tmp_path, monkeypatch):
    monkeypatch.setenv("PAIRLAB_CACHE_DIR", str(tmp_path))
    learner = CosineBERTLearner(
        ActiveConfig(
            task="toy",
            strategy="uncertainty",
            model=tiny_model,
            encoder_layers=1,
            max_seq_length=32,
        )
    )
    assert len(transformer_layers(load_encoder(learner.model))) == 1
    left, right = learner.pretrained_embeddings(POOLS["train"])
    assert left.shape == (len(POOLS["train"].left_texts), 32) and right is left


def test_the_real_model_cut_to_two_layers_still_ranks_a_paraphrase_first(tmp_path):
    path = truncated_model(None, 2, folder=tmp_path)
    assert len(transformer_layers(load_encoder(path))) == 2
    emb = encode(TEXTS, path, cache=False, show_progress=False)
    assert emb[0] @ emb[1] > emb[0] @ emb[2] + 0.1


def test_model_layers_gives_the_notebook_the_cut_model(tiny_model, tmp_path, monkeypatch, capsys):
    """A notebook's ``model_layers`` (the smoke profile's 2): its settings hold the cut copy as
    ``model``; again on a re-run, the same copy."""
    from pairlab import notebook
    from pairlab.paths import project_root

    monkeypatch.setenv("PAIRLAB_CACHE_DIR", str(tmp_path / "cache"))
    path = project_root() / "notebooks" / "03_cosinebert_active_learning.ipynb"

    def load(**shared):
        return notebook.load_settings("smoke", path.stem, shared, path=path)

    cut = load(model=tiny_model, model_layers=1).model
    assert cut == truncated_model(tiny_model, 1) and len(transformer_layers(load_encoder(cut))) == 1
    assert "first 1 transformer layers" in capsys.readouterr().out
    assert load(model=cut, model_layers=1).model == cut  # already cut: itself
    assert load(model=tiny_model, model_layers=None).model == tiny_model
