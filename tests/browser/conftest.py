"""JupyterLab from the project's venv and a system Chromium driven by Python playwright.

JupyterLab runs with its default settings (so ipykernel 7 handles widget messages on comm
subshell threads, as users get it), apart from its news toast being off; it listens on loopback
with a token, in a temporary root, and is stopped by its PID at the end. Chromium is the
system's (``$PAIRLAB_CHROMIUM``, else ``/usr/bin/chromium``): playwright cannot download browsers
here. Without Chromium or playwright every browser test is skipped, and the reason is written
to ``runs/browser-tests.skipped`` for ``make test`` to print in its last lines.
"""

from __future__ import annotations

import json
import os
import secrets
import shutil
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import nbformat
import pytest

from .widgets_notebook import notebook

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
TESTS = ROOT / "tests"
SKIPPED = ROOT / "runs" / "browser-tests.skipped"
SCREENSHOTS = ROOT / "runs" / "browser-screenshots"
CHROMIUM_FLAGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]


def _missing() -> str | None:
    """Why the browser tests cannot run here, or None."""
    chromium = os.environ.get("PAIRLAB_CHROMIUM", "/usr/bin/chromium")
    if not (os.path.isfile(chromium) and os.access(chromium, os.X_OK)):
        return (
            f"no Chromium at {chromium} (apt-get install chromium, as .ci/run does when it "
            "runs as root; or set PAIRLAB_CHROMIUM)"
        )
    try:
        import playwright  # noqa: F401
    except ImportError:
        return "playwright is not installed (make install installs it with the test extras)"
    jupyter = Path(sys.executable).parent / "jupyter-lab"
    if not jupyter.is_file():
        return f"JupyterLab is not installed beside {sys.executable}"
    return None


def pytest_collection_modifyitems(config, items):
    # this hook sees every collected item (`pytest tests` collects the unit tests too): only
    # the browser tests are skipped
    # browser tests are those that drive a page; JupyterLab alone (the notebook pair test) runs
    # without Chromium too
    ours = [item for item in items if HERE in item.path.parents and "chromium" in item.fixturenames]
    SKIPPED.unlink(missing_ok=True)
    reason = _missing() if ours else None
    if reason is None:
        return
    SKIPPED.parent.mkdir(parents=True, exist_ok=True)
    SKIPPED.write_text(reason + "\n")
    for item in ours:
        item.add_marker(pytest.mark.skip(reason=f"browser tests skipped: {reason}"))


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture(scope="session")
def lab(tmp_path_factory):
    """``(url, token, root)`` of a running JupyterLab; stopped by its PID afterwards."""
    yield from _serve(
        tmp_path_factory.mktemp("lab"), [str(Path(sys.executable).parent / "jupyter-lab")], "LabApp"
    )


@pytest.fixture(scope="session")
def notebook7(tmp_path_factory):
    """``(url, token, root)`` of a running Notebook 7 (``jupyter notebook``), default settings;
    skipped where the ``notebook`` package (7 or later) is not importable."""
    try:
        import notebook as package
    except ImportError:
        pytest.skip("Notebook 7 is not installed (pip install 'notebook>=7')")
    if int(package.__version__.split(".")[0]) < 7:
        pytest.skip(f"notebook {package.__version__} is installed, not Notebook 7")
    yield from _serve(
        tmp_path_factory.mktemp("notebook7"),
        [sys.executable, "-m", "notebook"],
        "JupyterNotebookApp",
    )


def _serve(base: Path, program: list[str], app: str):
    """Run a Jupyter server app (JupyterLab or Notebook 7) from its own folders, on loopback
    with a token, until the caller is done; stopped by its PID."""
    root, settings = base / "root", base / "settings"
    root.mkdir()
    toast = settings / "@jupyterlab" / "apputils-extension" / "notification.jupyterlab-settings"
    toast.parent.mkdir(parents=True)
    toast.write_text(json.dumps({"fetchNews": "false", "checkForUpdates": False}))
    port, token = _free_port(), secrets.token_hex(16)
    env = {
        **os.environ,
        "JUPYTER_RUNTIME_DIR": str(base / "runtime"),
        "JUPYTERLAB_WORKSPACES_DIR": str(base / "workspaces"),
    }
    command = [
        *program,
        "--no-browser",
        "--ServerApp.ip=127.0.0.1",
        f"--ServerApp.port={port}",
        "--ServerApp.port_retries=0",
        f"--IdentityProvider.token={token}",
        f"--ServerApp.root_dir={root}",
        f"--{app}.user_settings_dir={settings}",
        f"--{app}.workspaces_dir={base / 'workspaces'}",
    ]
    if os.geteuid() == 0:  # CI runs as root; Jupyter refuses that unless told
        command.append("--allow-root")
    log = open(base / "server.log", "w")
    process = subprocess.Popen(
        command, stdout=log, stderr=subprocess.STDOUT, env=env, start_new_session=True
    )
    url = f"http://127.0.0.1:{port}"
    try:
        _wait_for(f"{url}/api/status?token={token}", process, base / "server.log")
        yield url, token, root
    finally:
        _stop(process)
        log.close()


def _stop(process) -> None:
    """Stop JupyterLab and its kernels (one process group) by its PID."""
    if process.poll() is None:
        os.killpg(process.pid, signal.SIGTERM)
        try:
            process.wait(timeout=20)
        except subprocess.TimeoutExpired:
            os.killpg(process.pid, signal.SIGKILL)
            process.wait()


def _wait_for(url: str, process, log: Path, timeout: float = 90) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise RuntimeError(f"JupyterLab exited with {process.returncode}:\n{log.read_text()}")
        try:
            with urllib.request.urlopen(url, timeout=2):
                return
        except OSError:
            time.sleep(0.3)
    raise TimeoutError(
        f"JupyterLab did not answer {url} within {timeout:.0f} s:\n{log.read_text()}"
    )


@pytest.fixture(scope="session")
def chromium():
    """The system Chromium under playwright, one for the whole session (playwright's sync API
    cannot be started twice at once, so every page of the suite comes from this one)."""
    from playwright.sync_api import sync_playwright

    with sync_playwright() as pw:
        browser = pw.chromium.launch(
            executable_path=os.environ.get("PAIRLAB_CHROMIUM", "/usr/bin/chromium"),
            args=CHROMIUM_FLAGS,
            headless=True,
        )
        yield browser
        browser.close()


def open_notebook(
    chromium, lab, name: str, nb, *, done: str = "ALL CELLS DONE", workspace: str | None = None
):
    """Write ``nb`` as ``name`` into JupyterLab's root, open it in a new page and run every cell
    through the menu; returns the page once a cell's output shows the text ``done``.
    ``workspace``: a JupyterLab workspace of its own, so that a page opened beside another
    does not restore the other's notebook (and run its cells)."""
    url, token, root = lab
    nbformat.write(nb, root / name)
    page = chromium.new_page(viewport={"width": 1400, "height": 1000})
    page.set_default_timeout(60_000)
    where = f"workspaces/{workspace}/tree" if workspace else "tree"
    page.goto(f"{url}/lab/{where}/{name}?token={token}")
    page.locator(".jp-Notebook").wait_for()
    page.locator("#jp-main-statusbar", has_text="Idle").wait_for()  # the kernel started
    menu(page, "Run", "Run All Cells")
    page.locator(".jp-OutputArea-output", has_text=done).first.wait_for(timeout=180_000)
    return page


@pytest.fixture(scope="session")
def page(chromium, lab, tmp_path_factory):
    """The widget notebook open in Chromium with every cell run through JupyterLab's menu."""
    work = tmp_path_factory.mktemp("widgets")
    store, runs = work / "labels.sqlite", work / "runs"
    page = open_notebook(chromium, lab, "widgets.ipynb", notebook(TESTS, store, runs))
    page.store = store  # where the marks land: the tests read the SQLite file itself
    yield page
    page.close()


def menu(page, top: str, item: str) -> None:
    """Click ``top`` in JupyterLab's menu bar, then ``item`` in the menu it opens."""
    page.locator(".lm-MenuBar-itemLabel", has_text=top).first.click()
    page.locator(".lm-Menu-itemLabel", has_text=item).first.click()


def restart_and_rerun(page, ready: str, timeout_ms: int = 120_000) -> None:
    """Restart the notebook's kernel and run every cell again, as a person would after a
    crash; returns once an output reads ``ready`` followed by a new kernel's PID (the cells
    print ``ready`` and ``os.getpid()``)."""
    pid = page.locator(".jp-OutputArea-output", has_text=ready).first.inner_text().split()[-1]
    menu(page, "Kernel", "Restart Kernel…")
    page.locator(".jp-Dialog .jp-mod-accept").click()
    page.locator("#jp-main-statusbar", has_text="Idle").wait_for()
    menu(page, "Run", "Run All Cells")
    page.wait_for_function(
        "([ready, pid]) => [...document.querySelectorAll('.jp-OutputArea-output')].some(e => "
        "e.innerText.includes(ready) && !e.innerText.includes(pid))",
        arg=[ready, pid],
        timeout=timeout_ms,
    )


@pytest.fixture(autouse=True)
def screenshot_on_failure(request):
    yield
    report = getattr(request.node, "rep_call", None)
    name = next((n for n in ("page", "labeller_page") if n in request.fixturenames), None)
    if report is not None and report.failed and name is not None:
        page = request.getfixturevalue(name)
        SCREENSHOTS.mkdir(parents=True, exist_ok=True)
        path = SCREENSHOTS / f"{request.node.name}.png"
        page.screenshot(path=str(path), full_page=True)
        print(f"screenshot of the failure: {path}")


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    outcome = yield
    report = outcome.get_result()
    setattr(item, f"rep_{report.when}", report)


def pytest_sessionstart(session):
    shutil.rmtree(SCREENSHOTS, ignore_errors=True)  # only this run's failures are left there
