"""The paper-cpu profile (issue 35): the paper's WikiQA protocol, and run configs that keep their
digests, so the records committed under results/paper-cpu/archive/ stay the runs' own."""

import ast
import json
from pathlib import Path

import pytest

from pairlab.active import ActiveConfig
from pairlab.active.config import LoopSettings
from pairlab.io import to_json
from pairlab.profiles import load_profile
from pairlab.runner import notebooks

ROOT = Path(__file__).resolve().parents[1]


def parameters(profile: str, number: str) -> dict:
    """A notebook's parameters under ``profile``: its parameters cell's defaults, then the profile."""
    import papermill

    path = next(nb for nb in notebooks() if nb.name.startswith(number))
    cell = papermill.inspect_notebook(str(path))
    return {
        **{k: ast.literal_eval(v["default"]) for k, v in cell.items()},
        **load_profile(profile, notebook=number),
    }


@pytest.fixture(scope="module")
def params() -> dict:
    return parameters("paper-cpu", "03")


def config(params, strategy: str, seed: int, **fields) -> ActiveConfig:
    return LoopSettings.from_params(params).config("wikiqa", strategy, seed, **fields)


def test_the_profile_is_the_papers_wikiqa_protocol(params):
    assert params["dataset"] == "wikiqa" and params["max_items"] is None
    assert set(params["strategies"]) == {
        "random",
        "static_retrieval",
        "adaptive_retrieval",
        "uncertainty",
    }
    assert params["seeds"] == [0, 1, 2]
    assert params["train_precision"] == "fp32"  # the grid's arithmetic, on any CPU
    assert (params["near_m"], params["n_random"]) == (100, 1_000_000)
    one = config(params, "uncertainty", 0)
    assert one.schedule() == [2048, 3072, 4608, 6912] and sum(one.schedule()) == 16_640
    assert (one.candidate_m, one.epochs, one.max_seq_length, one.curve) == (100, 2, 128, True)


# notebook 05's own runs beside notebook 03's: random pairs among the pretrained candidates,
# trained once at the full budget (notebooks/05_budget_curves.py)
NOTEBOOK_05_VARIANTS = {"random_candidates": {"curve": False}}


@pytest.mark.parametrize(
    "profile, task", [("paper-cpu", "wikiqa"), ("paper-cpu-qqp", "qqp")], ids=["wikiqa", "qqp"]
)
def test_archived_runs_are_the_profiles_configs(profile, task):
    """Each committed record's config is the one the profile builds for its strategy and seed
    (fp32, the grid's, and bf16 for the parity runs kept beside it), and its folder carries the
    digest today's strategy code gives it: a code change that moved either would leave the
    archive unread (re-run, or renamed by `python -m pairlab.active.archive --rekey --stale`
    where the change was one of form)."""
    from pairlab.active.behaviour import run_code_digest

    params = parameters(profile, "03")
    archive = ROOT / params["run_archive"] / task
    folders = sorted(p for p in archive.glob("*") if (p / "config.json").is_file())
    if not folders:
        pytest.skip(f"no {profile} run archived yet")
    for folder in folders:
        stored = json.loads((folder / "config.json").read_text())
        built = LoopSettings.from_params(params).config(
            task,
            stored["strategy"],
            stored["seed"],
            precision=stored["precision"],
            **NOTEBOOK_05_VARIANTS.get(stored["strategy"], {}),
        )
        assert to_json(built.to_dict()) == stored, folder.name
        assert folder.name.endswith(f"-c{run_code_digest(built)[:8]}"), folder.name
        # the grid's arithmetic, or bf16 for the parity runs kept beside it
        assert stored["precision"] in (params["train_precision"], "bf16")


def test_the_qqp_profile_is_the_papers_batch_schedule_on_qqp():
    """Issue 35, point 5: QQP's whole training split at the paper's n1, growth and m, four of its
    ten rounds, uncertainty sampling against static retrieval, in fp32 as the WikiQA grid."""
    params = parameters("paper-cpu-qqp", "03")
    assert params["dataset"] == "qqp" and params["max_items"] is None
    assert params["strategies"] == ["uncertainty", "static_retrieval"] and params["seeds"] == [0]
    assert (params["near_m"], params["n_random"]) == (100, 1_000_000)
    assert params["train_precision"] == "fp32"
    assert params["run_archive"] == "results/paper-cpu-qqp/archive"
    one = LoopSettings.from_params(params).config("qqp", "uncertainty", 0)
    assert one.schedule() == [2048, 3072, 4608, 6912]
    assert (one.candidate_m, one.epochs, one.max_seq_length, one.curve) == (1000, 2, 128, True)
