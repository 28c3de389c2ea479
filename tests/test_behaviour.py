"""A run's key includes its code (pairlab.active.behaviour): an edited strategy, in pairlab or in
a notebook cell, gets a new run folder; an unchanged one is read back; docstrings, comments and
layout do not count."""

import numpy as np
from conftest import run

from pairlab.active import archive, strategies as st
from pairlab.active.behaviour import code_digest, run_code_digest
from pairlab.active.config import ActiveConfig


def notebook_cell(source: str) -> dict:
    """Run ``source`` as a notebook cell does: in a ``__main__`` namespace, with no file behind
    it (so the digest falls back to the compiled code, as on Python 3.11 in a kernel)."""
    namespace = {"__name__": "__main__", "np": np, "st": st}
    exec(compile(source, "<cell>", "exec"), namespace)
    return namespace


MINE = '''
class Mine(st.Strategy):
    """Most confident candidates first."""
    name = "mine"

    def select(self, state, n):
        return st._top(state, n, {key})
'''


def register(monkeypatch, key: str):
    cls = notebook_cell(MINE.format(key=key))["Mine"]
    monkeypatch.setitem(st.STRATEGIES, "mine", (cls, "trained"))
    return cls


def test_docstrings_comments_and_layout_do_not_count_code_does():
    same = [
        notebook_cell(f"def f(x):\n{doc}    return x + 1  {comment}\n")["f"]
        for doc, comment in (("", ""), ('    """Add one."""\n', "# one more"))
    ]
    other = notebook_cell("def f(x):\n    return x + 2\n")["f"]
    assert code_digest(same[0]) == code_digest(same[1]) != code_digest(other)


def test_a_helper_a_strategy_calls_counts(monkeypatch):
    """Uncertainty calls the module's ``_top``: editing it changes uncertainty's digest."""
    config = ActiveConfig(task="toy", strategy="uncertainty")
    before = run_code_digest(config)
    original = st._top
    monkeypatch.setattr(st, "_top", lambda state, n, key: original(state, n, -key))
    assert run_code_digest(config) != before
    monkeypatch.setattr(st, "_top", original)
    assert run_code_digest(config) == before


def test_the_annotator_counts():
    oracle = run_code_digest(ActiveConfig(task="toy", strategy="uncertainty"))
    noisy = run_code_digest(
        ActiveConfig(task="toy", strategy="uncertainty", annotator={"kind": "noisy", "flip": 0.1})
    )
    assert oracle != noisy


def test_an_edited_notebook_strategy_never_reads_an_old_run_back(tmp_path, monkeypatch):
    register(monkeypatch, "-np.abs(state.logits)")
    first, folder = run(tmp_path, strategy="mine")
    result = first.run()
    register(monkeypatch, "-np.abs(state.logits)")  # the cell run again, unchanged
    again, same = run(tmp_path, strategy="mine")
    assert same == folder and again.run() == result  # read back
    register(monkeypatch, "np.abs(state.logits)")  # the cell edited
    edited, new = run(tmp_path, strategy="mine")
    assert new != folder and new.parent == folder.parent and not (new / "result.json").exists()
    assert new.name.split("-c")[0] == folder.name.split("-c")[0]  # same config and data
    edited.run()
    assert (new / "result.json").is_file() and (folder / "result.json").is_file()


def test_rekey_names_old_folders_by_the_current_code(tmp_path):
    """A run folder named before keys carried the code digest gets the current code's name,
    and is read back under it."""
    active, folder = run(tmp_path, strategy="uncertainty")
    result = active.run()
    legacy = folder.with_name(folder.name.rsplit("-c", 1)[0])
    folder.rename(legacy)
    assert archive.rekey(tmp_path, dry_run=True) == [(legacy, folder)] and legacy.is_dir()
    assert archive.rekey(tmp_path) == [(legacy, folder)] and not legacy.exists()
    assert archive.rekey(tmp_path) == []  # named by its code already
    assert run(tmp_path, strategy="uncertainty")[0].run() == result


def test_rekey_stale_renames_folders_of_an_older_codes_digest(tmp_path):
    """A run folder named by an older code's digest keeps its name unless ``stale`` is asked
    for (a change of form only); then it gets today's name and is read back under it."""
    active, folder = run(tmp_path, strategy="uncertainty")
    result = active.run()
    old = folder.with_name(folder.name.rsplit("-c", 1)[0] + "-c0badc0de")
    folder.rename(old)
    assert archive.rekey(tmp_path) == []
    assert archive.rekey(tmp_path, stale=True) == [(old, folder)] and not old.exists()
    assert archive.rekey(tmp_path, stale=True) == []
    assert run(tmp_path, strategy="uncertainty")[0].run() == result


def test_query_runs_are_keyed_by_their_question_strategys_code(monkeypatch):
    """Notebook 08's question-level runs (QueryConfig, no annotator field) get a code digest from
    the question strategies' registry."""
    from pairlab.active import queries

    config = queries.QueryConfig(task="toy", strategy="uncertainty", batches=(2, 2))
    before = run_code_digest(config)
    assert before != run_code_digest(
        queries.QueryConfig(task="toy", strategy="random", batches=(2, 2))
    )
    edited = type(
        "UncertainQuestions", (queries.UncertainQuestions,), {"select": lambda self, *a: None}
    )
    monkeypatch.setitem(queries.QUERY_STRATEGIES, "uncertainty", edited)
    assert run_code_digest(config) != before


def test_a_strategy_in_a_module_of_ones_own_is_read(tmp_path, monkeypatch):
    """A strategy kept in the user's own module (a file outside the installed libraries) is
    read like pairlab's: editing the file changes the digest; numpy is only named."""
    import importlib
    import sys

    monkeypatch.syspath_prepend(str(tmp_path))
    digests = []
    for key in ("-np.abs(state.logits)", "np.abs(state.logits)"):
        (tmp_path / "my_strategies.py").write_text(
            "import numpy as np\nfrom pairlab.active import strategies as st\n"
            + MINE.format(key=key)
        )
        sys.modules.pop("my_strategies", None)
        importlib.invalidate_caches()
        digests.append(code_digest(importlib.import_module("my_strategies").Mine))
    sys.modules.pop("my_strategies", None)
    assert digests[0] != digests[1]
    assert code_digest(np.ndarray) == code_digest(np.ndarray)


def test_code_digest_text_is_the_same_on_every_python_version():
    """Python 3.12 gave every function and class an empty ``type_params`` field, so the run key's
    code digest, built on ``ast.dump``, differed between a 3.11 and a 3.12 machine for the same
    code (a GPU machine's archive was never found on CI's). Empty fields are left out now."""
    import ast

    from pairlab.active.behaviour import _canonical

    tree = ast.parse("def f(x, y=None):\n    return x + 1\n")
    on_311 = _canonical(tree)
    old = tree.body[0]
    as_312 = type("FunctionDef", (ast.FunctionDef,), {"_fields": (*old._fields, "type_params")})
    new = as_312(**{name: getattr(old, name) for name in old._fields}, type_params=[])
    tree.body[0] = new
    assert "type_params" not in on_311
    assert _canonical(tree) == on_311
    assert ast.dump(tree, annotate_fields=False) != ast.dump(
        ast.parse("def f(x, y=None):\n    return x + 1\n"), annotate_fields=False
    )
    assert _canonical(ast.parse("def f(x, y=None):\n    return x + 2\n")) != on_311


def test_a_result_written_before_a_rekey_names_the_folder_it_is_read_from(tmp_path):
    """The paper-cpu archive's first runs finished before run keys carried the code digest:
    their ``result.json`` names the old folder. Read back from the renamed folder, the result
    names that folder, where notebook 03 then finds the rounds' batches."""
    from pairlab.active import store
    from pairlab.io import read_json, write_json

    active, folder = run(tmp_path, strategy="uncertainty")
    active.run()
    legacy = folder.name.rsplit("-c", 1)[0]
    write_json(folder / "result.json", {**read_json(folder / "result.json"), "folder": legacy})
    result = run(tmp_path, strategy="uncertainty")[0].run()
    assert result["folder"] == folder.name != legacy
    ids, _ = store.run_labels(folder.parent / result["folder"])
    assert len(ids) == result["labels"]
