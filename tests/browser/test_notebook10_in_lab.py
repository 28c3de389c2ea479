"""Notebook 10 itself in JupyterLab, as a person meets it (issue 60): Run All on the fixture
catalogues with ``annotator = "person"``; the first pairs show while round 1 embeds; a person
answers at human speed (the truth's answers) until the widget says the session is finished,
never meeting a dead end; Run All again exports the matches. A wrong text column is one line
naming the notebook parameter, not a traceback.

The tests share one page and run in file order.
"""

from __future__ import annotations

import time

import nbformat
import pytest

from .conftest import ROOT, menu, open_notebook
from .test_session_in_lab import Person

NOTEBOOK = ROOT / "notebooks" / "10_label_your_own_pairs.ipynb"


def notebook10(folder, **knobs) -> nbformat.NotebookNode:
    """Notebook 10 with ``knobs`` set after its parameters cell (as papermill injects them)."""
    nb = nbformat.read(NOTEBOOK, as_version=4)
    at = next(i for i, c in enumerate(nb.cells) if "parameters" in c.metadata.get("tags", []))
    values = {"shared": {"run_dir": str(folder / "runs"), "figures_dir": str(folder / "figures")}}
    values |= dict(annotator="person", budget=16, batch=8, audit_share=0.25, candidate_m=5)
    values |= dict(epochs=1, max_seq_length=32, model_layers=2, coverage_seeds=[]) | knobs
    source = "\n".join(f"{name} = {value!r}" for name, value in values.items())
    nb.cells.insert(at + 1, nbformat.v4.new_code_cell(source))
    return nb


@pytest.fixture(scope="module")
def person(chromium, lab, tmp_path_factory):
    work = tmp_path_factory.mktemp("notebook10")
    start = time.monotonic()
    page = open_notebook(
        chromium,
        lab,
        "notebook10.ipynb",
        notebook10(work),
        done="LabelingSession(",
        workspace="notebook10",
    )
    folder = next((work / "runs").glob("10_session*"))
    first = Person(page, folder).on_show(timeout=60)
    page.first_pair_seconds = time.monotonic() - start
    assert first is not None, "no pair on show after Run All"
    yield Person(page, folder)
    page.close()


def test_the_first_pair_shows_while_round_1_embeds(person):
    """The BM25 first pairs: on show within a minute of opening the notebook (kernel start and
    imports included, on a machine running the smoke notebooks beside)."""
    assert person.page.first_pair_seconds < 60, person.page.first_pair_seconds


def test_the_person_labels_to_the_finished_screen(person):
    """At human speed until the worker is finished: a worker that stops is "stuck"."""
    person.label(lambda: person.status("worker").startswith("finished"), timeout=600)
    assert len(person.answered) == len(set(person.answered)), "a pair was asked twice"
    # the budget: every answer, spares and audit included. The fixture's first pairs are all
    # matches, and a model of one answer cannot rank the pairs to audit: their share of the
    # budget goes to the final model's candidates, and the page says why there is no estimate
    assert len(person.answered) == 16
    skipped = list((person.folder / "audit").glob("skipped_*"))
    if skipped and not list((person.folder / "audit").glob("round_*")):
        assert "no estimate in this session" in person.status("estimate_pending")
    done = person.page.locator(".pairlab-label-waiting", has_text="session.export()")
    done.first.wait_for(timeout=30_000)


def test_run_all_again_exports_the_matches(person):
    menu(person.page, "Run", "Run All Cells")
    person.page.locator(".jp-OutputArea-output", has_text="'matches': ").first.wait_for(
        timeout=180_000
    )
    exported = next(person.folder.parent.glob("10_export*"))
    assert (exported / "matches.csv").is_file() and (exported / "labels.csv").is_file()


def test_a_wrong_text_column_is_one_line_naming_the_parameter(chromium, lab, tmp_path):
    page = open_notebook(
        chromium,
        lab,
        "notebook10-bad.ipynb",
        notebook10(tmp_path, text="titel"),
        done="ParameterError",
        workspace="notebook10-bad",
    )
    shown = page.locator(".jp-OutputArea-output", has_text="ParameterError").first.text_content()
    page.close()
    assert "no column 'titel'" in shown and "text = 'titel'" in shown
    assert "Traceback" not in shown and len(shown.strip().splitlines()) == 1, shown
