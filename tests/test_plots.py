"""The one recipe behind the seed figures, :func:`~pairlab.widgets.plots.seed_curves`: a mean over
seeds as a line, each seed as a faint point, an interval as error bars or a band."""

import numpy as np
import pandas as pd
import pytest

from pairlab.widgets import plots

# Two tasks, three seeds at two budgets on qqp, one seed on wikiqa; rows out of x order.
RUNS = pd.DataFrame(
    {
        "task": ["qqp"] * 6 + ["wikiqa"] * 2,
        "strategy": "uncertainty",
        "seed": [0, 1, 2, 0, 1, 2, 0, 0],
        "labels": [200, 200, 200, 100, 100, 100, 100, 200],
        "ap": [0.5, 0.9, 0.4, 0.2, 0.6, 0.1, 0.1, 0.2],  # means 0.6 and 0.3, not the medians
    }
)
RUNS["ap_lo"], RUNS["ap_hi"] = RUNS["ap"] - 0.1, RUNS["ap"] + 0.2


def draw(frame=RUNS, **options):
    fig = plots.panels(["qqp", "wikiqa"], title="t")
    return plots.seed_curves(fig, frame, "labels", "ap", **options).data


def test_the_line_is_the_mean_over_seeds_at_each_x_and_every_seed_a_point():
    line, points = draw()[:2]  # qqp: its mean line, then its seeds
    assert list(line.x) == [100, 200]  # sorted, though the rows are not
    assert line.y == pytest.approx([0.3, 0.6])
    assert list(points.y) == RUNS["ap"][:6].tolist()
    assert list(points.hovertext) == ["seed 0", "seed 1", "seed 2"] * 2
    assert points.marker.opacity < 1 and line.error_y.array is None  # no interval asked


def test_the_band_runs_along_the_given_columns_averaged_over_seeds():
    band, line = draw(interval=("ap_lo", "ap_hi"), band=True)[:2]
    assert band.fill == "toself" and band.showlegend is False
    assert list(band.x) == [100, 200, 200, 100]
    assert band.y == pytest.approx([0.5, 0.8, 0.5, 0.2])  # the mean high along, low back
    assert band.fillcolor == plots._rgba(plots.COLOURS["uncertainty"], 0.15)
    bars = draw(interval=("ap_lo", "ap_hi"))[0].error_y
    assert bars.array == pytest.approx([0.2, 0.2]) and bars.arrayminus == pytest.approx([0.1, 0.1])


def test_std_and_range_are_the_seeds_spread_and_a_lone_seed_draws_none():
    qqp, _, wikiqa = draw(interval="std")[:3]
    std = [np.std([0.2, 0.6, 0.1], ddof=1), np.std([0.5, 0.9, 0.4], ddof=1)]
    assert qqp.error_y.array == pytest.approx(std) and qqp.error_y.arrayminus == pytest.approx(std)
    assert wikiqa.error_y.array is None  # one seed: no width, no bars
    spread = draw(interval="range", band=True)[0]
    assert spread.y == pytest.approx([0.6, 0.9, 0.4, 0.1])  # max along, min back


def test_facets_take_a_column_each_and_the_legend_names_a_group_once():
    traces = draw()
    assert [t.xaxis for t in traces] == ["x", "x", "x2", "x2"]
    assert [t.showlegend for t in traces] == [True, False, False, False]


def test_more_by_columns_split_the_entry_into_lines_and_a_lone_x_is_a_large_point():
    lines = draw(by=["strategy", "seed"], seeds=False)
    assert len(lines) == 3 + 1  # qqp's three seeds, wikiqa's one
    assert {t.name for t in lines} == {"uncertainty"} and lines[
        1
    ].hovertext == "uncertainty, seed 1"
    alone = draw(RUNS[RUNS["labels"] == 100], seeds=False)[0]
    assert alone.mode == "markers" and alone.marker.symbol == "diamond"


def test_panels_title_each_task_and_each_row():
    fig = plots.panels(["qqp", "wikiqa"], "dev AP", "share", title="t", height=500)
    assert [a.text for a in fig.layout.annotations] == [
        "QQP: dev AP",
        "WIKIQA: dev AP",
        "QQP: share",
        "WIKIQA: share",
    ]
    assert fig.layout.title.text == "t" and fig.layout.height == 500
