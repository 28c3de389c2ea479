"""Notebook 07's all-pairs noise sweep: annotator specs per noise level and the metrics file."""

import pytest

from pairlab.experiments.label_noise import noise_metrics, noise_name, noise_spec, noise_variants


def test_noise_levels_become_annotator_specs_in_each_runs_config():
    assert noise_spec(0, 3) is None  # the oracle: notebook 03's own runs
    assert noise_spec(0.1, 3) == {
        "kind": "noisy",
        "flip_positive": 0.1,
        "flip_negative": 0.1,
        "seed": 3,
    }
    assert noise_spec("error_dependent", 2, accuracy=[0.9, 0.8])["accuracy"] == [0.9, 0.8]
    with pytest.raises(ValueError, match="needs an accuracy"):
        noise_spec("error_dependent", 2)
    for bad in (-0.1, 0.6, "loud"):
        with pytest.raises(ValueError):
            noise_spec(bad, 0)
    variants = noise_variants(["uncertainty", "random_candidates"], [0, 0.2])
    assert [v.label for v in variants] == [
        "uncertainty|0%",
        "random_candidates|0%",
        "uncertainty|20%",
        "random_candidates|20%",
    ]
    assert variants[2].fields("qqp", 5) == {
        "annotator": {"kind": "noisy", "flip_positive": 0.2, "flip_negative": 0.2, "seed": 5}
    }
    assert noise_name(0.2) == "20%" and noise_name("error_dependent") == "error_dependent"


def _result(ap, accuracy=None):
    out = {
        "test": {
            "ap": ap,
            "ap_ci": [ap - 0.1, ap + 0.1],
            "p_at_r20": ap / 2,
            "p_at_r20_ci": [0, 1],
        },
        "positives_found": 4,
        "labels": 20,
    }
    if accuracy is not None:
        out["annotation"] = {"accuracy": accuracy, "no_answer": 1}
    return out


def test_noise_metrics_group_by_task_noise_and_strategy():
    results = {
        ("qqp", "uncertainty|0%", 0): _result(0.5),
        ("qqp", "uncertainty|0%", 1): _result(0.7),
        ("qqp", "uncertainty|20%", 0): _result(0.2, 0.8),
    }
    m = noise_metrics(results)["qqp"]
    assert (
        m["0%"]["uncertainty"]["ap"] == pytest.approx(0.6)
        and m["0%"]["uncertainty"]["annotator_accuracy"] == 1.0
    )
    assert m["0%"]["uncertainty"]["ap_ci"] == pytest.approx([0.5, 0.7])
    assert (
        m["20%"]["uncertainty"]["annotator_accuracy"] == 0.8
        and m["20%"]["uncertainty"]["no_answer"] == 1
    )
    assert m["0%"]["uncertainty"]["per_seed"]["ap"] == [0.5, 0.7]
