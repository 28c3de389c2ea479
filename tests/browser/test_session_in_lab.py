"""A real labelling session in JupyterLab (issue 34): LabelingSession's worker process with the
offline MiniLM cut to its first 2 layers (the smoke profile's encoder: the same code paths at a
third of the arithmetic) on the fixture catalogues (80 x 77 products), the widget answered by a
simulated person with the truth, a budget of 48 answers in rounds of 8 pairs with audit pairs
and spares (which spend the budget too: four rounds, at a person's speed). The kernel
is restarted in the middle of round 2: running the cells again starts a new worker that resumes
the run, and the widget continues at the first unanswered pair, asking no answered pair again.
At the end the export's files load: labels.csv, matches.csv and the model folder through
``SentenceTransformer(path)``.

The tests share one page and one session and run in file order.
"""

from __future__ import annotations

import random
import sqlite3
import time
from contextlib import closing
from pathlib import Path

import numpy as np
import pytest

from .conftest import ROOT, open_notebook, restart_and_rerun
from .widgets_notebook import kernel_notebook

RECORDS = ROOT / "fixtures" / "records"
BATCH, BUDGET, SPARES, AUDIT_SHARE = 8, 48, 4, 0.2
HUMAN = (0.05, 0.2)  # seconds between a pair showing and the next key

CELLS = [
    """import os, sys
sys.path[:0] = [ROOT]
from pairlab.data import load_items
from pairlab.models.truncate import truncated_model
from pairlab.session import LabelingSession
fields = ["title", "brand", "modelno", "price"]
shop_a = load_items(RECORDS + "/shop_a.csv", text=fields, id="id", name="shop A")
shop_b = load_items(RECORDS + "/shop_b.csv", text=fields, id="id", name="shop B")
session = LabelingSession(shop_a, FOLDER, right=shop_b, batch=BATCH, budget=BUDGET,
                          spares=SPARES, audit_share=AUDIT_SHARE, candidate_m=5, epochs=1,
                          max_seq_length=32, model=truncated_model(None, 2))
session.start()
session.widget()""",
    """print("SESSION READY", os.getpid())""",
]


def truth():
    """The pair ids of the fixture's true matches, as the session numbers its pairs."""
    from pairlab.data import load_items
    from pairlab.data.recordpool import record_pairs

    fields = ["title", "brand", "modelno", "price"]
    pool = record_pairs(
        load_items(RECORDS / "shop_a.csv", text=fields, id="id"),
        load_items(RECORDS / "shop_b.csv", text=fields, id="id"),
        all_positives=RECORDS / "matches.csv",
    )
    return set(pool.positives.tolist())


class Person:
    """The page and the session folder; answers each pair on show with the truth."""

    def __init__(self, page, folder: Path):
        self.page, self.folder, self.matches = page, folder, truth()
        self.answered: list[int] = []

    def sql(self, query: str):
        with closing(sqlite3.connect(self.folder / "labels.sqlite")) as conn:
            return conn.execute(query).fetchall()

    def status(self, key: str) -> str:
        found = self.sql(f"SELECT value FROM status WHERE key = '{key}'")
        return found[0][0] if found else ""

    def on_show(self, timeout: float = 5) -> int | None:
        """The pair id on show, None while the widget waits for the worker."""
        view = self.page.locator(".pairlab-label-pair .pairlab-label-view")
        try:
            view.first.wait_for(timeout=timeout * 1000)
        except Exception:
            return None
        return int(view.first.get_attribute("data-pair"))

    def first_open(self) -> int | None:
        found = self.sql(
            "SELECT q.pair_id FROM queue q WHERE q.kind != 'given' AND COALESCE("
            "(SELECT a.label FROM answers a WHERE a.pair_id = q.pair_id ORDER BY "
            "a.id DESC LIMIT 1), -3) = -3 ORDER BY q.seq LIMIT 1"
        )
        return found[0][0] if found else None

    def label(self, until, *, timeout: float = 300) -> None:
        """Answer at human speed until ``until()``; waits through retrains."""
        self.page.locator(".pairlab-label-keys input").first.click()
        deadline = time.monotonic() + timeout
        while not until():
            assert time.monotonic() < deadline, f"stuck; worker: {self.status('worker')}"
            pair = self.on_show()
            if pair is None:
                continue
            self.page.keyboard.press("y" if pair in self.matches else "n")
            self.page.wait_for_function(
                "p => { const v = document.querySelector('.pairlab-label-pair "
                ".pairlab-label-view'); return !v || Number(v.dataset.pair) !== p; }",
                arg=pair,
                timeout=10_000,
            )
            self.answered.append(pair)
            time.sleep(random.uniform(*HUMAN))

    def rows(self) -> list[tuple[int, int]]:
        return self.sql("SELECT pair_id, label FROM answers ORDER BY id")

    def batch_answered(self, round: int) -> bool:
        asked = self.sql(f"SELECT pair_id FROM queue WHERE round = {round} AND kind = 'batch'")
        latest = dict(
            self.sql(
                "SELECT pair_id, label FROM answers WHERE id IN "
                "(SELECT MAX(id) FROM answers GROUP BY pair_id)"
            )
        )
        return bool(asked) and all(latest.get(p, -3) >= 0 for (p,) in asked)


@pytest.fixture(scope="module")
def person(chromium, lab, tmp_path_factory):
    folder = tmp_path_factory.mktemp("session") / "session"
    paths = (
        f"ROOT, RECORDS, FOLDER = {str(ROOT)!r}, {str(RECORDS)!r}, {str(folder)!r}\n"
        f"BATCH, BUDGET, SPARES, AUDIT_SHARE = {BATCH}, {BUDGET}, {SPARES}, {AUDIT_SHARE}\n"
    )
    page = open_notebook(
        chromium,
        lab,
        "session.ipynb",
        kernel_notebook(paths, CELLS),
        done="SESSION READY",
        workspace="session",
    )
    yield Person(page, folder)
    page.close()


def test_the_person_labels_round_1_and_the_spares_while_the_model_trains(person):
    person.label(lambda: person.batch_answered(1))
    rows = person.rows()
    assert len(rows) == len(person.answered) and len({p for p, _ in rows}) == len(rows)
    assert all(label == int(p in person.matches) for p, label in rows)
    person.label(lambda: person.sql("SELECT COUNT(*) FROM queue WHERE round = 2")[0][0] > 0)


def test_a_kernel_restart_mid_round_2_resumes_at_the_first_unanswered_pair(person):
    page = person.page
    person.label(
        lambda: (
            person.batch_answered(2)
            or len(
                person.sql(
                    "SELECT pair_id FROM answers a JOIN queue q USING (pair_id) WHERE q.round = 2"
                )
            )
            >= 3
        )
    )
    before = {p for p, _ in person.rows()}
    restart_and_rerun(page, "SESSION READY")
    deadline = time.monotonic() + 60
    while (pair := person.on_show()) is None:
        assert time.monotonic() < deadline, f"nothing on show; worker: {person.status('worker')}"
    assert pair == person.first_open() and pair not in before
    start = len(person.answered)
    person.label(lambda: person.status("worker").startswith("finished"), timeout=600)
    again = set(person.answered[start:]) & before
    assert not again, f"asked again after the restart: {again}"


def test_every_answer_is_one_row_and_the_run_took_them(person):
    rows = person.rows()
    assert len(rows) == len(person.answered)
    assert [p for p, _ in rows] == person.answered
    labels = np.array([label for _, label in rows])
    counts = person.page.locator(".pairlab-label-counts").first.inner_text()
    assert f"{len(rows):,} labels · {int(labels.sum()):,} positives" in counts
    import json

    result = json.loads((person.folder / "run" / "result.json").read_text())
    # the budget is every answer: the batches, the spares answered beyond them and the audit,
    # which is held out of training
    audit = person.sql("SELECT COUNT(*) FROM queue WHERE kind = 'audit'")[0][0]
    assert len(rows) == BUDGET and result["labels"] == BUDGET - audit


def test_the_export_loads(person, tmp_path):
    """session.export from a new process on the same folder; each file opens as promised."""
    import pandas as pd
    from sentence_transformers import SentenceTransformer

    from pairlab.data import load_items
    from pairlab.models.truncate import truncated_model
    from pairlab.session import LabelingSession

    fields = ["title", "brand", "modelno", "price"]
    session = LabelingSession(
        load_items(RECORDS / "shop_a.csv", text=fields, id="id"),
        person.folder,
        right=load_items(RECORDS / "shop_b.csv", text=fields, id="id"),
        batch=BATCH,
        budget=BUDGET,
        spares=SPARES,
        audit_share=AUDIT_SHARE,
        candidate_m=5,
        epochs=1,
        max_seq_length=32,
        model=truncated_model(None, 2),
    )
    written = session.export(tmp_path / "export", matcher="auto")
    labels = pd.read_csv(tmp_path / "export" / "labels.csv")
    assert len(labels) == len(set(person.answered))
    matches = pd.read_csv(tmp_path / "export" / "matches.csv")
    assert {"left_id", "right_id", "score"} <= set(matches.columns)
    model = SentenceTransformer(str(tmp_path / "export" / "model"), device="cpu")
    assert model.encode(["Lumio slim router"]).shape[1] == 384
    assert written["matches"] == len(matches)
    assert set(written["estimates"]) == {"bi-encoder", "cross-encoder"}  # matcher="auto"
    assert written["chosen"] == written["matcher"] in written["estimates"]
