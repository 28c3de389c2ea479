"""How deep the choice of one batch sits: from a notebook's ``experiments.sweep`` call to
``Uncertainty.select``, the pairlab files on the call stack when the criterion is entered, and
every pairlab file a call entered on the way there (a traced run). A loop that grows wrappers
and callbacks again fails here."""

import sys
from pathlib import Path

from conftest import BASE, EVAL_SETS, POOLS, VECTORS, FakeLearner

import pairlab
from pairlab import experiments
from pairlab.active.config import LoopSettings
from pairlab.active.strategies import Uncertainty

ROOT = Path(pairlab.__file__).parent


def _traced_sweep(tmp_path):
    """(pairlab files on the stack at the first Uncertainty.select, pairlab files entered
    before it, pairlab files entered in its round before it)."""
    target, entered, in_round, stack = Uncertainty.select.__code__, set(), set(), []

    def profile(frame, event, arg):
        if event != "call" or stack:
            return
        path = Path(frame.f_code.co_filename)
        if frame.f_code.co_name == "_round":  # a round of the loop starts
            in_round.clear()
        if path.is_relative_to(ROOT):
            entered.add(str(path.relative_to(ROOT.parent)))
            in_round.add(str(path.relative_to(ROOT.parent)))
        if frame.f_code is target:
            f = frame
            while f is not None:
                p = Path(f.f_code.co_filename)
                if p.is_relative_to(ROOT):
                    stack.append(str(p.relative_to(ROOT.parent)))
                f = f.f_back

    settings = LoopSettings(**{k: v for k, v in BASE.items() if k != "task"})
    sys.setprofile(profile)
    try:
        experiments.sweep(
            {"toy": (POOLS, EVAL_SETS)},
            ["uncertainty"],
            [0],
            settings,
            tmp_path,
            learner=lambda config: FakeLearner(VECTORS),
        )
    finally:
        sys.setprofile(None)
    return sorted(set(stack)), sorted(entered), sorted(in_round)


def test_a_batch_is_chosen_few_files_below_the_sweep(tmp_path):
    stack, entered, in_round = _traced_sweep(tmp_path)
    print(f"on the stack ({len(stack)}): {stack}")
    print(f"entered from the sweep ({len(entered)}): {entered}")
    print(f"entered in the selecting round ({len(in_round)}): {in_round}")
    assert len(stack) <= 6, stack
