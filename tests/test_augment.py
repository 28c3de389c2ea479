"""Augmented SBERT's pair samplers and silver labeller on tiny pools whose neighbours are known."""

import numpy as np
import pytest

from pairlab.augment import samplers as smp
from pairlab.augment.silver import SilverLabeller
from pairlab.data.loaders import Pool
from pairlab.data.pairs import as_id_set

WORDS = [
    "apple",
    "bridge",
    "candle",
    "dolphin",
    "engine",
    "forest",
    "guitar",
    "harbor",
    "island",
    "jacket",
    "kettle",
    "lantern",
]


def text_pool(symmetric=True):
    """Item 2i and 2i+1 share two rare words (lexical twins); nothing else shares a word."""
    texts = []
    for i in range(6):
        a, b = WORDS[2 * i], WORDS[2 * i + 1]
        texts += [f"{a} {b} one{i}", f"{b} {a} two{i}"]
    texts = np.array(texts, dtype=object)
    if symmetric:
        space_pos = np.array([(2 * i + 1) * (2 * i) // 2 + 2 * i for i in range(6)], np.int64)
        return Pool("toy", "train", texts, texts, True, space_pos, np.empty(0, np.int64))
    questions = np.array([f"what about {WORDS[i]}" for i in range(6)], dtype=object)
    answers = np.array([f"the {WORDS[i]} is here" for i in range(6)][::-1], dtype=object)
    positives = np.array([i * 6 + (5 - i) for i in range(6)], np.int64)  # answer j = 5 - i
    return Pool(
        "toyqa", "train", questions, answers, False, np.sort(positives), np.empty(0, np.int64)
    )


def test_bm25_finds_the_lexical_twin():
    pool = text_pool()
    ids = smp.lexical_pairs(pool, 1)
    assert np.array_equal(ids, pool.positives)  # each item's top hit is its twin, found once
    qa = text_pool(symmetric=False)
    assert np.array_equal(smp.lexical_pairs(qa, 1), qa.positives)


def test_bm25_drops_items_without_a_shared_term_and_respects_k_items_and_exclude():
    pool = text_pool()
    assert len(smp.lexical_pairs(pool, 5)) == 6  # only the twin shares a term: k is a maximum
    ids = smp.lexical_pairs(pool, 1, items=[0, 2])
    assert np.array_equal(ids, pool.positives[:2])
    assert np.array_equal(
        smp.lexical_pairs(pool, 1, exclude=pool.positives[:3]), pool.positives[3:]
    )


def test_ss_finds_the_embedding_twin():
    pool = text_pool()
    rng = np.random.default_rng(0)
    centres = rng.normal(size=(6, 16))
    emb = np.repeat(centres, 2, axis=0) + 0.01 * rng.normal(size=(12, 16))
    emb = (emb / np.linalg.norm(emb, axis=1, keepdims=True)).astype(np.float32)
    assert np.array_equal(smp.semantic_pairs(pool, 1, emb), pool.positives)
    # twins listed once though both ends query; queried items only
    assert np.array_equal(smp.semantic_pairs(pool, 1, emb, items=[1, 4]), pool.positives[[0, 2]])


def test_random_pairs_are_uniform_distinct_and_avoid_gold():
    pool = text_pool()
    ids = smp.random_pairs(pool, 60, seed=1, exclude=pool.positives)
    assert len(ids) == 60 and len(np.unique(ids)) == 60
    assert not np.isin(ids, pool.positives).any()
    assert np.array_equal(ids, smp.random_pairs(pool, 60, seed=1, exclude=pool.positives))
    with pytest.raises(ValueError, match="only 60 are available"):
        smp.random_pairs(pool, 61, exclude=pool.positives)


def test_balanced_keeps_every_positive_and_matches_the_ratio_exactly():
    ids = np.arange(100, dtype=np.int64)
    silver = (ids % 10 == 0).astype(np.int8)  # 10 positives, 90 negatives
    kept = smp.balanced_pairs(ids, silver, smp.gold_ratio([1, 0, 0, 0, 0]), seed=0)  # 1 : 4
    assert set(ids[silver == 1]) <= set(kept)
    assert len(kept) == 50 and (kept % 10 == 0).sum() == 10
    assert np.array_equal(kept, np.unique(kept))
    few = smp.balanced_pairs(ids[:20], silver[:20], 0.01)  # not enough negatives: all of them
    assert len(few) == 20
    with pytest.raises(ValueError, match="positives and negatives"):
        smp.gold_ratio([0, 0, 0])


def test_query_items_come_from_the_gold_pairs_and_are_capped():
    pool = text_pool()
    gold = pool.positives[:3]  # items 0-5
    assert np.array_equal(smp.query_items(pool, gold), np.arange(6))
    capped = smp.query_items(pool, gold, 2, seed=0)
    assert len(capped) == 2 and set(capped) <= set(range(6))
    qa = text_pool(symmetric=False)
    assert np.array_equal(smp.query_items(qa, qa.positives[:2]), [0, 1])  # left items only


class CountingModel:
    """Scores a pair by its id; counts what it was asked."""

    def __init__(self):
        self.asked = []

    def score_pairs(self, pool, ids):
        self.asked.append(np.asarray(ids).copy())
        return np.asarray(ids, dtype=np.float64)


def test_silver_labeller_scores_each_pair_once_and_never_labels_gold(tmp_path):
    pool, model = text_pool(), CountingModel()
    path = tmp_path / "ce.silver.npz"
    labeller = SilverLabeller(model, pool, threshold=30, gold=[5, 40], path=path)
    ids, y = labeller.label([40, 10, 31, 5, 2])
    assert np.array_equal(ids, [2, 10, 31]) and np.array_equal(y, [0, 0, 1])
    labeller.label([2, 31, 50])
    asked = np.concatenate(model.asked)
    assert np.array_equal(np.sort(asked), [2, 10, 31, 50])  # 2 and 31 not asked again
    again = SilverLabeller(CountingModel(), pool, threshold=30, path=path)  # a re-run
    assert np.array_equal(again.score([2, 10, 31, 50]), [2, 10, 31, 50])
    assert again.model.asked == []
    assert labeller.n_scored == again.n_scored == 4 and labeller.pairs_per_second > 0
    assert again.pairs_per_second == pytest.approx(
        labeller.pairs_per_second
    )  # kept with the scores


def test_silver_labeller_rejects_bad_scores():
    class NaNModel:
        def score_pairs(self, pool, ids):
            return np.full(len(ids), np.nan)

    with pytest.raises(ValueError, match="non-finite"):
        SilverLabeller(NaNModel(), text_pool(), 0.0).label([1, 2])
    with pytest.raises(ValueError, match="threshold"):
        SilverLabeller(NaNModel(), text_pool(), float("nan"))


def test_samplers_return_sorted_unique_ids_in_the_pool():
    pool = text_pool()
    for ids in (smp.lexical_pairs(pool, 3), smp.random_pairs(pool, 10)):
        assert np.array_equal(ids, as_id_set(ids))
        assert ids.dtype == np.int64 and (ids < pool.n_pairs).all()


def fake_rows(ap_shift=0.0, seed=0):
    rows = {}
    for i, row in enumerate(("sbert", "cross_encoder", "rs", "kde", "bm25", "ss", "bm25_ss")):
        ap = 0.1 * i + ap_shift
        rows[row] = {
            "ap": ap,
            "ap_ci": [ap - 0.05, ap + 0.05],
            "p_at_r20": ap,
            "p_at_r20_ci": [ap - 0.1, ap + 0.1],
            "f1": 0.5,
            "n_gold": 40,
            "n_silver": 0 if i < 2 else 30 + i,
            "silver_positive_share": None if i < 2 else 0.1 * i,
            "seconds": {"train": 1.0},
        }
    rows["cross_encoder"]["pairs_per_second"] = 90.0 + seed
    rows["_silver"] = {
        "rs": {
            "ids": np.arange(3),
            "labels": np.array([0, 0, 1], np.int8),
            "margin": np.array([-2.0, -1.0, 0.5]),
        }
    }
    return rows


def test_augsbert_metrics_average_seeds_and_keep_each_seed():
    from pairlab.experiments import augsbert

    runs = {("qqp", "stated", 0): fake_rows(0.0, 0), ("qqp", "stated", 1): fake_rows(0.02, 1)}
    m = augsbert.augsbert_metrics(runs)
    bm25 = m["qqp"]["stated"]["bm25"]
    assert bm25["ap"] == pytest.approx(0.41) and bm25["per_seed"]["ap"] == pytest.approx(
        [0.4, 0.42]
    )
    assert bm25["ap_std"] == pytest.approx(np.std([0.4, 0.42], ddof=1))
    assert bm25["ap_ci"] == pytest.approx([0.36, 0.46])  # the mean of the seeds' bounds
    assert (
        "_silver" not in m["qqp"]["stated"]
        and "silver_positive_share" not in m["qqp"]["stated"]["sbert"]
    )
    assert m["qqp"]["stated"]["cross_encoder"]["pairs_per_second"] == pytest.approx(90.5)
    assert augsbert.best_sampler(m, "qqp") == "bm25_ss"
    table = augsbert.augsbert_table(m, "qqp")
    assert list(table.index.get_level_values("model")) == list(augsbert.ROWS)
    assert table.loc[("stated", "kde"), "paper F1 (Quora-QP)"] == "0.793 ± 0.005"
    from pairlab.experiments import findings

    found = {f.claim: f for f in findings.augsbert(m)}
    assert (found["silver_helps"].status, found["silver_helps"].values["best"]) == (
        "held",
        "bm25_ss",
    )
    assert found["bm25_above_rs"].status == "held"  # 0.41 against 0.21, intervals apart
    assert found["sampler_ranking"].status == "in part"  # RS last, but bm25_ss and ss lead
    assert (
        found["sampler_ranking"].values["rs_last"]
        and not found["sampler_ranking"].values["top_two"]
    )
    assert augsbert.silver_gains(m) == {}  # one gold source: nothing to compare its gain with
    frame = augsbert.silver_frame(runs)
    assert len(frame) == 6 and set(frame["sampler"]) == {"rs"}


def test_findings_compare_silver_over_stated_and_adaptive_gold():
    from pairlab.experiments import augsbert

    runs = {("qqp", "stated", s): fake_rows(0.01 * s, s) for s in (0, 1)}
    for s in (0, 1):
        rows = fake_rows(0.0, s)
        rows["sbert"]["ap"] = 0.55 + 0.02 * s  # best sampler (bm25_ss, 0.6) gains 0.05 and 0.03
        runs[("qqp", "uncertainty", s)] = rows
    m = augsbert.augsbert_metrics(runs)
    stated, adaptive = (augsbert.silver_gains(m)["qqp"][s] for s in ("stated", "uncertainty"))
    assert stated[0] == pytest.approx(0.6) and stated[1] == pytest.approx([0.6, 0.6])
    assert adaptive[0] == pytest.approx(0.04) and adaptive[1] == pytest.approx([0.05, 0.03])
    from pairlab import report

    line = report.markdown("silver_gains", augsbert.silver_gains(m))
    assert line.startswith("qqp: silver's gain over gold only") and "stated +0.600" in line
    assert "uncertainty +0.040 (+0.050, +0.030)" in line


def test_augsbert_epochs_change_only_the_bi_encoders_trained_in_notebook_06():
    from pairlab.experiments.augsbert import AugSettings

    params = {
        "concat_epochs": {"qqp": 2, "wikiqa": 3},
        "cosine_epochs": 2,
        "learning_rate": 2e-5,
        "batch_size": 16,
        "max_seq_length": 64,
        **dict.fromkeys(("samplers", "gold_sources", "seeds", "size_fractions"), ()),
        **dict.fromkeys(("k", "silver_items", "kde_pairs", "train_max_pairs", "n_boot"), 1),
        **dict.fromkeys(("concat_near_m", "concat_n_random", "seed", "model"), None),
    }
    same = AugSettings.from_params({**params, "augsbert_epochs": None}).configs("wikiqa", 1)
    assert (
        same["cosinebert"].epochs == 2
        and same["concatbert"].epochs == 3
        and same["cosinebert"].seed == 1
    )
    fewer = AugSettings.from_params({**params, "augsbert_epochs": 1}).configs("wikiqa", 1)
    assert fewer["cosinebert"].epochs == 1 and fewer["concatbert"] == same["concatbert"]
    assert fewer["cosinebert"].max_seq_length == 64
