from pathlib import Path

import numpy as np
import pytest

from pairlab.models import embed


def test_default_model_is_the_offline_package():
    path = Path(embed.resolve_model())
    assert (path / "modules.json").is_file() and (path / "model.safetensors").is_file()
    assert embed.resolve_model("some/other-model") == "some/other-model"


def test_encode_is_unit_norm_and_cached(tmp_path, monkeypatch):
    monkeypatch.setenv("PAIRLAB_CACHE_DIR", str(tmp_path))
    texts = ["How do I learn Python?", "What is the best way to learn Python?", "Limestone"]
    emb = embed.encode(texts, max_seq_length=32, show_progress=False)
    assert emb.shape == (3, 384) and emb.dtype == np.float32
    assert np.allclose(np.linalg.norm(emb, axis=1), 1.0, atol=1e-5)
    assert emb[0] @ emb[1] > emb[0] @ emb[2]  # paraphrases are closer than unrelated text
    cached = list((tmp_path / "embeddings").glob("*.npy"))
    assert len(cached) == 1
    np.save(cached[0], np.zeros_like(emb))  # a cache hit must return what is on disk
    assert not embed.encode(texts, max_seq_length=32, show_progress=False).any()
    # another max length or other texts are another key
    assert embed.encode(texts, max_seq_length=16, show_progress=False).any()


def test_encode_rejects_nothing_to_encode():
    with pytest.raises(ValueError, match="no texts"):
        embed.encode([])


def test_missing_local_model_offline_is_clear(monkeypatch):
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    with pytest.raises(FileNotFoundError, match="hub is offline"):
        embed.load_encoder("no-such-org/no-such-model")


def test_each_distinct_text_is_encoded_once_and_put_back_in_place(tiny_model):
    from pairlab.models.embed import encode, load_encoder

    encoder = load_encoder(tiny_model)
    asked, real = [], encoder.encode
    encoder.encode = lambda texts, **kw: asked.append(list(texts)) or real(texts, **kw)
    texts = [
        "how do I cook rice?",
        "why is the sky blue?",
        "how do I cook rice?",
        "what is love?",
        "why is the sky blue?",
    ]
    emb = encode(texts, encoder=encoder, show_progress=False)
    assert len(asked) == 1 and sorted(asked[0]) == sorted(set(texts))
    assert (
        emb.shape == (5, 32) and np.array_equal(emb[0], emb[2]) and np.array_equal(emb[1], emb[4])
    )
    assert not np.allclose(emb[0], emb[1])  # in place: not one vector copied everywhere
    for i, text in enumerate(texts):
        assert np.allclose(
            emb[i], encode([text], encoder=encoder, show_progress=False)[0], atol=1e-5
        )


def test_encoding_counts_its_records_in_whole_batches_equal_to_one_call(tiny_model):
    """Issue 60: a wait shows the records embedded and the time left. The texts go in chunks of
    16 batches in sentence-transformers' own order, so each batch holds the texts it would in
    one call: the embeddings are bitwise those of one call."""
    import torch

    from pairlab.models.embed import load_encoder
    from pairlab.progress import listening

    encoder = load_encoder(tiny_model)
    texts = [f"record {i} " + "word " * (i % 7) for i in range(700)]
    seen = []
    with listening(lambda p: seen.append((p.done, p.total, p.unit, p.seconds_left))):
        emb = embed.encode(texts, encoder=encoder, batch_size=8, show_progress=False)
    assert [s[0] for s in seen] == [128, 256, 384, 512, 640, 700]
    assert {s[1:3] for s in seen} == {(700, "records embedded")} and seen[-1][3] == 0
    with torch.inference_mode():
        one = encoder.encode(texts, batch_size=8, convert_to_numpy=True, normalize_embeddings=True)
    assert np.array_equal(emb, one)
