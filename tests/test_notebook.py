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
    """A notebook 03 look-alike: its parameters cell names a profile and a few of 03's own knobs;
    the shared settings (profiles/base.yaml) come from the profile."""
    cells = [
        nbformat.v4.new_code_cell(
            "profile = 'quick'\nn1 = 32\nseeds = [0, 1, 2]\nmine = 'kept'\n",
            metadata={"tags": ["parameters"]},
        )
    ]
    nb = nbformat.v4.new_notebook(cells=cells)
    nb.metadata["kernelspec"] = {"name": "pairlab", "language": "python", "display_name": "pairlab"}
    nbformat.write(nb, path)
    return path


def test_a_profile_named_in_the_parameters_cell_gives_the_shared_settings(
    tmp_path, monkeypatch, capsys
):
    """``profile = "smoke"`` in JupyterLab: the smoke profile's shared settings for notebook 03
    (its run folder included) fill the names the cell does not set; the cell's own knobs stay
    as written, and a line names those the profile would set otherwise."""
    from pairlab.profiles import load_profile, shared

    monkeypatch.setattr(notebook, "project_root", lambda: tmp_path)  # folders land in tmp_path
    path = profile_notebook(tmp_path / "03_cosinebert_active_learning.ipynb")
    namespace = {"profile": "smoke", "n1": 32, "seeds": [0, 1, 2], "mine": "kept"}
    ctx = notebook.setup("03_cosinebert_active_learning", namespace, path=path, quiet=False)
    smoke = load_profile("smoke", notebook="03")
    names = shared("03", path=path)
    assert {"max_items", "candidate_m", "run_dir"} <= set(names) and "n1" not in names
    if smoke.get("model_layers") is not None:  # setup cuts the model (smoke: 4 of 6 layers)
        from pairlab.models.truncate import truncated_model

        smoke["model"] = truncated_model(smoke["model"], smoke["model_layers"])
    assert {name: namespace[name] for name in names} == {name: smoke[name] for name in names}
    assert (
        (namespace["n1"], namespace["seeds"], namespace["mine"])
        == (32, [0, 1, 2], "kept")
        != (smoke["n1"], smoke["seeds"], "kept")
    )
    assert (
        ctx.run_dir == tmp_path / "runs" / "smoke"
        and ctx.params["candidate_m"] == smoke["candidate_m"]
    )
    out = capsys.readouterr().out
    assert "shared settings from profile 'smoke'" in out and "own values of n1, seeds differ" in out
    with pytest.raises(FileNotFoundError, match="known profiles"):
        notebook.setup(
            "03_cosinebert_active_learning", {**namespace, "profile": "nope"}, path=path, quiet=True
        )
    with pytest.raises(ValueError, match="name a profile"):
        notebook.setup(
            "03_cosinebert_active_learning", {**namespace, "profile": None}, path=path, quiet=True
        )


def test_another_profile_and_a_rerun_change_every_shared_setting(tmp_path, monkeypatch):
    """Working in JupyterLab: set-up took quick's shared settings; the participant writes
    ``profile = "smoke"`` and re-runs the cells: every shared setting is smoke's now."""
    from pairlab.profiles import load_profile

    monkeypatch.setattr(notebook, "project_root", lambda: tmp_path)
    path = profile_notebook(tmp_path / "03_cosinebert_active_learning.ipynb")
    namespace = {"profile": "quick", "n1": 32, "seeds": [0], "mine": "kept"}
    notebook.setup("03_cosinebert_active_learning", namespace, path=path, quiet=True)
    assert namespace["max_items"] == load_profile("quick", notebook="03")["max_items"]
    namespace["profile"] = "smoke"
    notebook.setup("03_cosinebert_active_learning", namespace, path=path, quiet=True)
    smoke = load_profile("smoke", notebook="03")
    assert (namespace["max_items"], namespace["n_boot"]) == (smoke["max_items"], smoke["n_boot"])


def test_a_shared_setting_papermill_injected_is_kept(tmp_path, monkeypatch):
    """The runner passes every parameter, shared ones included: set-up keeps what it was given."""
    monkeypatch.setattr(notebook, "project_root", lambda: tmp_path)
    path = profile_notebook(tmp_path / "03_cosinebert_active_learning.ipynb")
    namespace = {"profile": "smoke", "n1": 8, "seeds": [0], "mine": "kept", "candidate_m": 7}
    ctx = notebook.setup("03_cosinebert_active_learning", namespace, path=path, quiet=True)
    assert ctx.params["candidate_m"] == 7 and ctx.params["n1"] == 8


def test_a_whole_profile_from_papermill_applies_its_sections(tmp_path, monkeypatch):
    """``papermill -f profiles/<name>.yaml`` injects the top-level keys and the ``notebooks``
    section as a variable: the sections naming this notebook win over the top level, and
    profiles/base.yaml gives the shared settings the file does not."""
    from pairlab.profiles import settings

    monkeypatch.setattr(notebook, "project_root", lambda: tmp_path)
    path = profile_notebook(tmp_path / "03_cosinebert_active_learning.ipynb")
    namespace = {
        "profile": "quick",
        "n1": 8,
        "seeds": [0],
        "mine": "kept",
        "n_boot": 9,
        "notebooks": {"03 04": {"n1": 5, "candidate_m": 4}, "08": {"n1": 99}},
    }
    notebook.setup("03_cosinebert_active_learning", namespace, path=path, quiet=True)
    assert (namespace["n1"], namespace["seeds"], namespace["candidate_m"], namespace["n_boot"]) == (
        5,
        [0],
        4,
        9,
    )
    assert namespace["max_items"] == settings("03")["max_items"]


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


def test_every_notebook_records_its_own_parameters_through_setup():
    from pairlab.runner import notebooks

    for path in notebooks():
        sources = [c.source for c in nbformat.read(path, 4).cells if c.cell_type == "code"]
        assert f'setup("{path.stem}", globals())' in "\n".join(sources), path.name
        assert not any("globals()" in s and "setup(" not in s for s in sources), path.name


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
