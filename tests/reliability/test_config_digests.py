"""Numbers are normalised before a config is hashed (``epochs=1`` and ``epochs=1.0`` are one run),
and the profiles' run folders and model ids move only on purpose: users' runs/ folders stay
valid. Moved on purpose by issue 57: a run's config is every field of it (no field left out at
its default); the committed archives were renamed to their new keys then."""

import ast
import hashlib
import json

import pytest

from pairlab.active.config import LoopSettings
from pairlab.experiments.augsbert import AugSettings
from pairlab.experiments.baselines import KINDS, TrainSettings
from pairlab.io import to_json
from pairlab.profiles import load_profile
from pairlab.runner import notebooks

PINNED = {  # every profile's notebook 03 run configs and notebook 02 and 06 training configs
    "smoke": "6dd51755c2f82fa8",  # moved on purpose: smoke cut to 4 layers and 24 word pieces
    "quick": "fdc5df7cada48f41",
    "cpu": "001daa0d619b8685",
    "demo": "3ee7e071a23f478b",
    "paper": "df35abd64b7c6d3a",
}


def parameters(profile: str, number: str) -> dict:
    """A notebook's parameters under ``profile``: its parameters cell's defaults, then the profile."""
    import papermill

    path = next(nb for nb in notebooks() if nb.name.startswith(number))
    defaults = {
        k: ast.literal_eval(v["default"]) for k, v in papermill.inspect_notebook(str(path)).items()
    }
    return {**defaults, **load_profile(profile, notebook=number)}


@pytest.mark.parametrize("profile", sorted(PINNED))
def test_the_profiles_configs_keep_their_digests(profile):
    settings = LoopSettings.from_params(parameters(profile, "03"))
    configs = []
    for task in ("qqp", "wikiqa"):
        configs.append(settings.config(task, "uncertainty", 0).to_dict())
        p02, p06 = parameters(profile, "02"), parameters(profile, "06")
        configs += [TrainSettings.from_params(p02, k).config(task, 0).to_dict() for k in KINDS]
        configs += [c.to_dict() for c in AugSettings.from_params(p06).configs(task, 0).values()]
    digest = hashlib.sha256(json.dumps(to_json(configs), sort_keys=True).encode()).hexdigest()[:16]
    assert digest == PINNED[profile], f"{profile}: run folders and model ids would move ({digest})"
