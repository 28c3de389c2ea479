"""The labelling widget in Notebook 7 (``jupyter notebook``) at its default settings: two keys at
0 ms and the rest of a round at human speed, every answer one row on the pair on show. Skipped
where Notebook 7 is not installed."""

from __future__ import annotations

import json
import sys
import time
import urllib.request

from .conftest import ROOT, SCREENSHOTS, menu
from .test_labeller import Session, check_rows, labeller_notebook, round_pairs

ROUND = round_pairs(0, 6, 1, 0)  # seven asked pairs, no spares


def test_labelling_in_notebook7(chromium, notebook7, tmp_path):
    url, token, root = notebook7
    store = tmp_path / "session.sqlite"
    sys.path.insert(0, str(ROOT))
    from pairlab.annotators.person import SessionStore

    posted = SessionStore(store)
    posted.post(0, *ROUND)
    posted.close()
    import nbformat

    nbformat.write(labeller_notebook(store), root / "labeller7.ipynb")
    page = chromium.new_page(viewport={"width": 1400, "height": 1000})
    page.set_default_timeout(60_000)
    try:
        return _label(page, url, token, store)
    except Exception:
        SCREENSHOTS.mkdir(parents=True, exist_ok=True)
        page.screenshot(path=str(SCREENSHOTS / "labeller-notebook7.png"), full_page=True)
        raise
    finally:
        page.close()


def _label(page, url: str, token: str, store) -> None:
    if True:
        page.goto(f"{url}/notebooks/labeller7.ipynb?token={token}")
        page.locator(".jp-Notebook").wait_for()
        _wait_for_kernel(url, token)
        menu(page, "Run", "Run All Cells")
        page.locator(".jp-OutputArea-output", has_text="LABELLER READY").first.wait_for(
            timeout=60_000
        )
        session = Session(page, store, None)
        session.observe()
        assert session.view()[1] == ROUND[0][0]
        session.burst("yn")
        session.label_until(lambda: session.answered(ROUND[0]), click_at=1)
        check_rows(session)
        assert session.first_open() is None


def _wait_for_kernel(url: str, token: str, timeout: float = 60) -> None:
    """Until the page's kernel is connected and idle (Notebook 7 has no status bar to read; a
    Run All sent before the kernel is connected runs nothing)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        with urllib.request.urlopen(f"{url}/api/sessions?token={token}", timeout=5) as response:
            kernels = [s["kernel"] for s in json.loads(response.read())]
        if any(k["execution_state"] == "idle" and k["connections"] > 0 for k in kernels):
            return
        time.sleep(0.2)
    raise TimeoutError(f"no connected idle kernel after {timeout:.0f} s: {kernels}")
