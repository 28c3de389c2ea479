import json

import numpy as np
import plotly.graph_objects as go
import pytest

from pairlab import notebook


def test_setup_writes_config_and_metrics_atomically(tmp_path):
    ctx = notebook.setup("99_example", run_dir=tmp_path / "run", figures_dir=tmp_path / "fig",
                         params={"seed": np.int64(3), "sizes": np.arange(2)}, quiet=True)
    assert json.loads((tmp_path / "run" / "99_example.config.json").read_text()) == {
        "seed": 3, "sizes": [0, 1]}
    path = ctx.record_metrics({"qqp": {"ap": np.float32(0.5)}})
    assert path == tmp_path / "run" / "99_example.metrics.json"
    assert json.loads(path.read_text()) == {"qqp": {"ap": 0.5}}
    assert not list((tmp_path / "run").glob("*.tmp"))


def test_nan_metric_is_refused(tmp_path):
    ctx = notebook.setup("99_example", run_dir=tmp_path, figures_dir=tmp_path, quiet=True)
    with pytest.raises(ValueError):
        ctx.record_metrics({"ap": float("nan")})


def test_figure_without_a_browser_writes_html_and_says_why(tmp_path, monkeypatch, capsys):
    from kaleido.errors import ChromeNotFoundError

    def no_chrome(*args, **kwargs):
        raise ChromeNotFoundError("no chrome here")

    monkeypatch.setattr(go.Figure, "write_image", no_chrome)
    monkeypatch.setattr(notebook, "_PNG_SKIP_REPORTED", [])
    ctx = notebook.setup("99_example", run_dir=tmp_path, figures_dir=tmp_path, quiet=True)
    path = ctx.save_figure(go.Figure(go.Scatter(x=[0, 1], y=[1, 0])), "line")
    assert path.is_file() and (tmp_path / "plotly.min.js").is_file()
    assert not (tmp_path / "line.png").exists()
    assert "PNG figures skipped" in capsys.readouterr().out
