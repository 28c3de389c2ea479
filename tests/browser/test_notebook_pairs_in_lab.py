"""Editing a notebook in JupyterLab keeps its jupytext pair in step: the server saves both files
(the contents API below is what JupyterLab's save calls), and an edit made to the .py in an
editor is what JupyterLab opens next."""

import json
import shutil
import urllib.request

from .conftest import ROOT

NAME = "01_dataset_construction"


def contents(url: str, token: str, path: str, body: dict | None = None) -> dict:
    request = urllib.request.Request(
        f"{url}/api/contents/{path}?token={token}",
        method="PUT" if body else "GET",
        data=json.dumps(body).encode() if body else None,
        headers={"Content-Type": "application/json"},
    )
    with urllib.request.urlopen(request, timeout=30) as response:
        return json.loads(response.read())


def test_saving_in_jupyterlab_writes_both_files_and_an_editor_edit_is_what_it_opens(lab):
    url, token, root = lab
    folder = root / "pair"
    folder.mkdir()
    for suffix in (".ipynb", ".py"):
        shutil.copy(ROOT / "notebooks" / f"{NAME}{suffix}", folder / f"{NAME}{suffix}")
    model = contents(url, token, f"pair/{NAME}.ipynb")
    cell = next(c for c in model["content"]["cells"] if c["cell_type"] == "code")
    cell["source"] = "import math  # edited in JupyterLab\n" + "".join(cell["source"])
    contents(
        url,
        token,
        f"pair/{NAME}.ipynb",
        {"type": "notebook", "format": "json", "content": model["content"]},
    )
    assert "import math  # edited in JupyterLab" in (folder / f"{NAME}.py").read_text()
    assert "edited in JupyterLab" in (folder / f"{NAME}.ipynb").read_text()

    script = folder / f"{NAME}.py"
    script.write_text(script.read_text().replace("# edited in JupyterLab", "# edited in an editor"))
    opened = contents(url, token, f"pair/{NAME}.ipynb")["content"]
    sources = ["".join(c["source"]) for c in opened["cells"]]
    assert any("# edited in an editor" in s for s in sources)
