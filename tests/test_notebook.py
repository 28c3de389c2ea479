import json

import nbformat
import numpy as np
import plotly.graph_objects as go
import pytest

from pairlab import notebook


def parameters_notebook(path):
    cells = [
        nbformat.v4.new_code_cell("from pairlab.notebook import setup"),
        nbformat.v4.new_code_cell(
            "seed = 0                # a comment\nsizes = [1, 2]\n"
            "run_dir = 'runs/x'\nfigures_dir = 'figures/x'",
            metadata={"tags": ["parameters"]},
        ),
        nbformat.v4.new_code_cell("ctx = setup('99_example', globals())"),
    ]
    nb = nbformat.v4.new_notebook(cells=cells)
    nb.metadata["kernelspec"] = {"name": "pairlab", "language": "python", "display_name": "pairlab"}
    nbformat.write(nb, path)
    return path


def test_setup_records_every_parameter_of_the_parameters_cell(tmp_path):
    path = parameters_notebook(tmp_path / "99_example.ipynb")
    namespace = {
        "seed": np.int64(3),
        "sizes": np.arange(2),
        "run_dir": tmp_path / "run",
        "figures_dir": tmp_path / "fig",
        "not_a_parameter": 5,
        "setup": notebook.setup,
    }
    ctx = notebook.setup("99_example", namespace, path=path, quiet=True)
    recorded = json.loads((tmp_path / "run" / "99_example.config.json").read_text())
    assert recorded == {
        "seed": 3,
        "sizes": [0, 1],
        "run_dir": str(tmp_path / "run"),
        "figures_dir": str(tmp_path / "fig"),
    }
    assert ctx.params["seed"] == 3 and (tmp_path / "fig").is_dir()
    path = ctx.record_metrics({"qqp": {"ap": np.float32(0.5)}})
    assert path == tmp_path / "run" / "99_example.metrics.json"
    assert json.loads(path.read_text()) == {"qqp": {"ap": 0.5}}
    assert not list((tmp_path / "run").glob("*.tmp"))


def test_setup_before_the_parameters_cell_ran_names_what_is_missing(tmp_path):
    path = parameters_notebook(tmp_path / "99_example.ipynb")
    with pytest.raises(NameError, match=r"\['sizes', 'run_dir', 'figures_dir'\].*parameters cell"):
        notebook.setup("99_example", {"seed": 0}, path=path, quiet=True)


def profile_notebook(path):
    """A notebook 03 look-alike: its parameters cell names a profile, ``shared`` and a few of
    03's own knobs; the shared settings (profiles/base.yaml) come from the profile."""
    cells = [
        nbformat.v4.new_code_cell(
            "profile = 'quick'\nshared = {}\nn1 = 32\nseeds = [0, 1, 2]\nmine = 'kept'\n",
            metadata={"tags": ["parameters"]},
        )
    ]
    nb = nbformat.v4.new_notebook(cells=cells)
    nb.metadata["kernelspec"] = {"name": "pairlab", "language": "python", "display_name": "pairlab"}
    nbformat.write(nb, path)
    return path


def test_load_settings_gives_the_profiles_shared_settings_read_only(tmp_path, monkeypatch, capsys):
    """``profile = "smoke"`` in JupyterLab: ``load_settings`` returns the smoke profile's shared
    settings for notebook 03 (its run folder included), by name and read-only; the cell's own
    knobs are not among them, and set-up records both and names the knobs the profile would set
    otherwise. Nothing is written into the notebook's namespace."""
    from pairlab.profiles import load_profile, own_and_shared

    monkeypatch.setattr(notebook, "project_root", lambda: tmp_path)  # folders land in tmp_path
    path = profile_notebook(tmp_path / "03_cosinebert_active_learning.ipynb")
    cfg = notebook.load_settings("smoke", "03_cosinebert_active_learning", path=path, quiet=True)
    smoke = load_profile("smoke", notebook="03")
    names = own_and_shared(path)[1]
    assert {"max_items", "candidate_m", "run_dir"} <= set(names) and "n1" not in names
    assert sorted(cfg.as_dict()) == sorted(names) and "max_items" in dir(cfg)
    if smoke.get("model_layers") is not None:  # the model is cut (smoke: 4 of 6 layers)
        from pairlab.models.truncate import truncated_model

        smoke["model"] = truncated_model(smoke["model"], smoke["model_layers"])
    assert cfg.as_dict() == {name: smoke[name] for name in names}
    with pytest.raises(AttributeError, match="'n1' is not a shared setting.*parameters cell"):
        cfg.n1
    with pytest.raises(AttributeError, match="read-only"):
        cfg.candidate_m = 3
    namespace = {"profile": "smoke", "shared": {}, "n1": 32, "seeds": [0, 1, 2], "mine": "kept"}
    before = dict(namespace)
    ctx = notebook.setup(cfg, namespace, path=path, quiet=False)
    assert namespace == before
    assert ctx.run_dir == tmp_path / "runs" / "smoke"
    assert {k: ctx.params[k] for k in ("profile", "n1", "mine", "candidate_m")} == {
        "profile": "smoke",
        "n1": 32,
        "mine": "kept",
        "candidate_m": smoke["candidate_m"],
    }
    assert "own values of n1, seeds differ from profile 'smoke'" in capsys.readouterr().out


def test_shared_changes_a_shared_setting_and_refuses_anything_else(tmp_path):
    """The runner's ``-p candidate_m 7`` arrives in ``shared``; a knob of the notebook's own, an
    unknown profile or none at all is a clear error."""
    path = profile_notebook(tmp_path / "03_cosinebert_active_learning.ipynb")
    load = notebook.load_settings
    cfg = load("smoke", "03_cosinebert_active_learning", {"candidate_m": 7}, path=path, quiet=True)
    assert cfg.candidate_m == 7
    with pytest.raises(ValueError, match=r"\['n1'\] are not shared settings"):
        load("smoke", "03_cosinebert_active_learning", {"n1": 3}, path=path)
    with pytest.raises(FileNotFoundError, match="known profiles"):
        load("nope", "03_cosinebert_active_learning", path=path)
    with pytest.raises(ValueError, match="name a profile"):
        load(None, "03_cosinebert_active_learning", path=path)


def test_each_parameters_cell_holds_the_quick_profiles_values():
    """Opened in JupyterLab, a notebook runs what `make run` (quick) runs: its cell's own knobs
    are quick's values. Notebook 10 is the exception by design: its cell is a person's session
    (annotator "person"), which quick runs with the oracle."""
    import ast

    import papermill

    from pairlab.profiles import load_profile
    from pairlab.runner import notebooks

    for path in notebooks():
        cell = {
            k: ast.literal_eval(v["default"])
            for k, v in papermill.inspect_notebook(str(path)).items()
        }
        assert cell["profile"] == "quick", path.name
        if path.name.startswith("10_"):
            continue
        quick = load_profile("quick", notebook=path.stem)
        differ = {
            k: (v, quick[k])
            for k, v in cell.items()
            if k in quick and to_plain(v) != to_plain(quick[k])
        }
        assert not differ, (
            f"{path.name}: the cell's values differ from profiles/quick.yaml's: {differ}"
        )


def to_plain(value):
    return json.loads(json.dumps(notebook.to_json(value)))


def test_every_notebook_reads_its_settings_in_one_visible_call():
    from pairlab.runner import notebooks

    for path in notebooks():
        sources = "\n".join(c.source for c in nbformat.read(path, 4).cells if c.cell_type == "code")
        assert f'cfg = load_settings(profile, "{path.stem}", shared)' in sources, path.name
        assert "ctx = setup(cfg, globals())" in sources, path.name
        assert sources.count("globals()") == 1, path.name


def test_every_name_a_notebook_uses_is_defined_or_imported_in_it():
    """A reader finds where each name comes from: nothing arrives in a notebook's namespace
    from outside its cells (29 such names before load_settings: model, seed, run_archive...)."""
    from pairlab.runner import notebooks

    for path in notebooks():
        code = "\n".join(c.source for c in nbformat.read(path, 4).cells if c.cell_type == "code")
        assert not undefined_names(code), (
            f"{path.name} uses names it never defines: {undefined_names(code)}"
        )


def undefined_names(code: str) -> list[str]:
    """Names ``code`` loads that no statement of it binds or imports (nor Python's builtins)."""
    import ast
    import builtins

    tree = ast.parse(code)
    bound, loaded = set(dir(builtins)), set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Name):
            (loaded if isinstance(node.ctx, ast.Load) else bound).add(node.id)
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            bound.add(node.name)
        elif isinstance(node, ast.arg):
            bound.add(node.arg)
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            bound.update((a.asname or a.name).split(".")[0] for a in node.names)
        elif isinstance(node, ast.ExceptHandler) and node.name:
            bound.add(node.name)
    return sorted(loaded - bound)


def test_the_defined_names_check_finds_an_injected_name():
    assert undefined_names("import numpy as np\nx = np.ones(seed)\n[y for y in x]") == ["seed"]
    assert undefined_names("def f(a, *b, c=1, **d):\n    return a, b, c, d, f") == []


def test_nan_metric_is_refused(tmp_path):
    ctx = notebook.setup("99_example", run_dir=tmp_path, figures_dir=tmp_path, quiet=True)
    with pytest.raises(ValueError):
        ctx.record_metrics({"ap": float("nan")})


NO_BROWSER = "/nonexistent/chromium"  # kaleido's finder honours BROWSER_PATH: none is found


def line_figure():
    return go.Figure(go.Scatter(x=[0, 1], y=[1, 0]))


def test_figure_without_a_browser_writes_html_and_says_why_once(tmp_path, monkeypatch, capsys):
    def must_not_export(*args, **kwargs):
        raise AssertionError("write_image called although no browser was found")

    monkeypatch.setenv("BROWSER_PATH", NO_BROWSER)
    monkeypatch.setattr(go.Figure, "write_image", must_not_export)  # decided up front
    assert notebook.png_export() == (
        False,
        f"kaleido found no Chrome or Chromium (BROWSER_PATH={NO_BROWSER!r} is not a program)",
    )
    ctx = notebook.setup("99_example", run_dir=tmp_path, figures_dir=tmp_path, quiet=True)
    for name in ("line", "again"):
        path = ctx.save_figure(line_figure(), name)
        assert path.is_file() and not path.with_suffix(".png").exists()
    assert (tmp_path / "plotly.min.js").is_file()
    out = capsys.readouterr().out
    assert out.count("PNG figures skipped") == 1 and "apt install chromium" in out


def test_png_export_turned_off_by_the_environment_says_so(tmp_path, monkeypatch, capsys):
    fake = tmp_path / "chromium"
    fake.write_text("#!/bin/sh\n")
    fake.chmod(0o755)
    monkeypatch.setenv("BROWSER_PATH", str(fake))  # a browser is there, and still no PNG
    monkeypatch.setenv("PAIRLAB_PNG", "0")
    assert notebook.png_export() == (False, "PNG export turned off (PAIRLAB_PNG=0)")
    ctx = notebook.setup(
        "99_example", run_dir=tmp_path / "run", figures_dir=tmp_path / "fig", quiet=True
    )
    assert not ctx.save_figure(line_figure(), "line").with_suffix(".png").exists()
    assert "For PNGs, unset PAIRLAB_PNG." in capsys.readouterr().out
    monkeypatch.setenv("PAIRLAB_PNG", "1")
    assert notebook.png_export() == (True, str(fake))


def test_a_browser_at_browser_path_is_found(tmp_path, monkeypatch):
    fake = tmp_path / "chromium"
    fake.write_text("#!/bin/sh\n")
    monkeypatch.setenv("BROWSER_PATH", str(fake))
    assert notebook.png_export() == (
        False,
        f"kaleido found no Chrome or Chromium (BROWSER_PATH={str(fake)!r} is not a program)",
    )
    fake.chmod(0o755)
    assert notebook.png_export() == (True, str(fake))


def test_figure_with_a_browser_writes_the_png(tmp_path):
    available, reason = notebook.png_export()
    if not available:
        pytest.skip(f"no browser for kaleido on this machine: {reason}")
    ctx = notebook.setup("99_example", run_dir=tmp_path, figures_dir=tmp_path, quiet=True)
    png = ctx.save_figure(line_figure(), "line").with_suffix(".png")
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_a_notebook_completes_without_a_browser(tmp_path, monkeypatch):
    """The kernel papermill starts inherits BROWSER_PATH, so kaleido there finds no browser:
    the notebook must finish with its HTML figures and the message, and write no PNG."""
    import nbformat
    import papermill

    from pairlab.runner import KERNEL

    monkeypatch.setenv("BROWSER_PATH", NO_BROWSER)
    cells = [
        nbformat.v4.new_code_cell(
            "import plotly.graph_objects as go\n"
            "from pairlab.notebook import setup\n"
            f"ctx = setup('99_example', run_dir={str(tmp_path / 'run')!r}, "
            f"figures_dir={str(tmp_path / 'fig')!r})\n"
            "for name in ('one', 'two'):\n"
            "    ctx.save_figure(go.Figure(go.Bar(x=[1, 2], y=[3, 4])), name)"
        )
    ]
    source, output = tmp_path / "in.ipynb", tmp_path / "out.ipynb"
    nbformat.write(nbformat.v4.new_notebook(cells=cells), source)
    papermill.execute_notebook(
        str(source), str(output), kernel_name=KERNEL, cwd=str(tmp_path), progress_bar=False
    )
    printed = "".join(o.get("text", "") for o in nbformat.read(output, 4).cells[0].outputs)
    assert printed.count("PNG figures skipped: kaleido found no Chrome or Chromium") == 1
    assert {p.name for p in (tmp_path / "fig").iterdir()} == {
        "one.html",
        "two.html",
        "plotly.min.js",
    }


def test_a_bad_parameter_is_one_line_naming_it(capsys):
    """Issue 60: a wrong text column or a missing file sat under a 10-60 line traceback and named
    load_items(text=...), not the notebook's parameter. In IPython it is one line."""
    from IPython.core.interactiveshell import InteractiveShell

    shell = InteractiveShell.instance()
    shell.run_cell(
        "from pairlab.data import load_items\n"
        "from pairlab.notebook import parameters\n"
        "with parameters(right_items='fixtures/records/shop_b.csv', right_text='titel'):\n"
        "    load_items('fixtures/records/shop_b.csv', text='titel')\n"
    )
    shown = [line for line in capsys.readouterr().out.splitlines() if line.strip()]
    assert len(shown) == 1 and shown[0].startswith("ParameterError: "), shown
    assert "no column 'titel'" in shown[0] and "right_text = 'titel'" in shown[0]
