"""The time a person waits in JupyterLab for notebook 10's first pair on a real table: from
opening the notebook (its kernel's start, Run All, the imports and the records' loading
included) to the first pair on show, with ``annotator = "person"``; then the session is
dropped. JupyterLab and Chromium as the browser tests run them (``tests/browser``).

    python benchmarks/lab_first_pair.py walmart_amazon \\
        --out benchmarks/results/er/lab_first_pair-walmart_amazon.json
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from benchmarks.er_sessions import TABLES  # noqa: E402
from tests.browser.conftest import CHROMIUM_FLAGS, _serve, open_notebook  # noqa: E402
from tests.browser.test_notebook10_in_lab import notebook10  # noqa: E402


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("table", choices=["dblp_acm", "walmart_amazon"])
    parser.add_argument("--out", type=Path, required=True)
    args = parser.parse_args()
    from playwright.sync_api import sync_playwright

    left, right, fields = TABLES[args.table]
    er = f"er/{args.table}"
    knobs = dict(items=f"{er}/{left}", right_items=f"{er}/{right}", text=fields, right_text=fields)
    knobs |= dict(budget=300, batch=64, one_to_one=True, audit_share=0.1, candidate_m=20)
    knobs |= dict(epochs=2, max_seq_length=128, model_layers=None)
    work = Path(tempfile.mkdtemp(prefix="lab-first-pair-"))
    server = _serve(work, [str(Path(sys.executable).parent / "jupyter-lab")], "LabApp")
    lab = next(server)
    with sync_playwright() as pw:
        browser = pw.chromium.launch(
            executable_path=os.environ.get("PAIRLAB_CHROMIUM", "/usr/bin/chromium"),
            args=CHROMIUM_FLAGS,
            headless=True,
        )
        start = time.monotonic()
        page = open_notebook(
            browser, lab, "nb10.ipynb", notebook10(work, **knobs), done="LabelingSession("
        )
        session = time.monotonic() - start
        page.locator(".pairlab-label-pair .pairlab-label-view").first.wait_for(timeout=300_000)
        first = time.monotonic() - start
        browser.close()
    server.close()
    record = {
        "table": args.table,
        "settings": knobs,
        "session_printed_seconds": session,
        "first_pair_seconds": first,
        "cpus": os.cpu_count(),
        "load": os.getloadavg(),
    }
    args.out.write_text(json.dumps(record, indent=1) + "\n")
    print(json.dumps(record))


if __name__ == "__main__":
    main()
