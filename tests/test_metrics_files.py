"""The metrics files' declared layouts: every committed file has its notebook's, and a notebook
that writes another layout fails where it writes."""

import json
import re
import typing
from pathlib import Path

import pytest
import typing_extensions

from pairlab import metrics_files, notebook
from pairlab.io import json_key, json_row

ROOT = Path(__file__).resolve().parents[1]
COMMITTED = sorted((ROOT / "results").glob("*/*.metrics.json"))


def test_every_committed_metrics_file_has_its_declared_layout():
    assert COMMITTED, "no committed metrics files found"
    declared = {p.name.removesuffix(".metrics.json") for p in COMMITTED}
    assert declared <= set(metrics_files.LAYOUTS), declared - set(metrics_files.LAYOUTS)
    for path in COMMITTED:
        name = path.name.removesuffix(".metrics.json")
        metrics_files.check(name, json.loads(path.read_text()), source=str(path))


def test_every_declared_field_name_is_snake_case():
    seen, names = set(), set()

    def visit(tp):
        if id(tp) in seen:
            return
        seen.add(id(tp))
        if typing_extensions.is_typeddict(tp):
            hints = typing.get_type_hints(tp, vars(metrics_files))
            names.update(hints)
            for hint in hints.values():
                visit(hint)
        for arg in typing.get_args(tp):
            visit(arg)

    for layout in metrics_files.LAYOUTS.values():
        visit(layout)
    assert len(names) > 150
    assert [n for n in names if not re.fullmatch(r"[a-z][a-z0-9_]*", n)] == []


def test_a_notebook_writing_another_layout_fails_where_it_writes(tmp_path):
    ctx = notebook.Context("10_label_your_own_pairs", tmp_path, tmp_path)
    good = json.loads((ROOT / "results/quick/10_label_your_own_pairs.metrics.json").read_text())
    path = ctx.record_metrics(good)
    assert path.is_file()
    bad = json.loads(json.dumps(good))
    bad["comparison"][0]["matches found"] = bad["comparison"][0].pop("matches_found")
    path.unlink()
    with pytest.raises(metrics_files.MetricsLayoutError) as raised:
        ctx.record_metrics(bad)
    message = str(raised.value)
    assert "comparison / 0 / matches_found: Field required" in message
    assert "comparison / 0 / matches found: Extra inputs are not permitted" in message
    assert not path.exists()  # nothing written
    other = notebook.Context("99_my_own", tmp_path, tmp_path)  # a user's notebook: not declared
    assert other.record_metrics({"anything": [1, "two"]}).is_file()


def test_make_docs_names_a_file_with_another_layout(tmp_path):
    from pairlab import report

    folder = tmp_path / "results" / "quick"
    folder.mkdir(parents=True)
    (folder / "05_budget_curves.metrics.json").write_text(json.dumps({"qqp": {"curves": {}}}))
    (folder / "05_budget_curves.config.json").write_text("{}")
    with pytest.raises(
        metrics_files.MetricsLayoutError, match=r"(?s)quick/05_budget_curves.*qqp / efficiency"
    ):
        report.load_results(tmp_path)


def test_table_labels_become_snake_case_keys():
    assert json_key("annotation $") == "annotation_dollars"
    assert json_key("compute hours (measured)") == "compute_hours_measured"
    assert json_key("static_retrieval dev AP") == "static_retrieval_dev_ap"
    assert json_row({"mean AP": 1, "n": 2}) == {"mean_ap": 1, "n": 2}
    with pytest.raises(ValueError, match="the same key twice"):
        json_row({"mean AP": 1, "mean_ap": 2})
