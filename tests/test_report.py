"""README.md and RESULTS.md are renderings of committed files (docs/*.j2 with results/): a
number typed into either, or a metrics file changed without `make docs`, fails here."""

import json
import shutil

import pytest

from pairlab import report
from pairlab.paths import project_root

ROOT = project_root()


def test_there_are_committed_results_with_their_configs():
    results = report.load_results()
    assert results, (
        "results/ holds no metrics: run a profile and `python -m pairlab.report --collect`"
    )
    for profile, notebooks in results.items():
        for notebook, record in notebooks.items():
            assert record["config"], (profile, notebook)


@pytest.mark.parametrize("document", ["README.md", "RESULTS.md", "ARCHITECTURE.md"])
def test_document_is_the_rendering_of_the_committed_files(document):
    assert (ROOT / document).read_text() == report.render(document), (
        f"{document} differs from its rendering: edit docs/, then run `make docs`"
    )


def test_architecture_shows_the_enforced_layers_on_one_page():
    """ARCHITECTURE.md draws its layer table from the list tests/test_layers.py enforces (one
    statement of the order), and stays a ten-minute read (about 2,000 words at most)."""
    from test_layers import LAYERS

    rows = report.layer_rows()
    assert [name for _, name, _ in rows] == [name for layer in LAYERS for name in layer]
    assert [r for r, _, _ in rows if r != ""] == list(range(1, len(LAYERS) + 1))
    text = (ROOT / "ARCHITECTURE.md").read_text()
    for _, name, purpose in rows:
        assert f"| `{name}` | {purpose} |" in text
    assert len(text.split()) <= 2_000


def test_readme_stays_a_front_door():
    text = (ROOT / "README.md").read_text()
    assert len(text) <= 12_000, len(text)
    for command in ("make run", "make test", "make sync", "make docs"):
        assert command in text


def copy_tree(tmp_path):
    for part in ("docs", "results", "profiles", "benchmarks/results"):
        shutil.copytree(ROOT / part, tmp_path / part)
    shutil.copy(ROOT / "Makefile", tmp_path / "Makefile")
    return tmp_path


def test_a_changed_metric_makes_results_stale(tmp_path):
    root = copy_tree(tmp_path)
    (root / "RESULTS.md").write_text(report.render("RESULTS.md", root))
    assert report.stale(root, ["RESULTS.md"]) == []
    # the profile RESULTS.md takes notebook 01 from: the first in PROFILE_ORDER that recorded it
    path = next(
        root / "results" / p / "01_dataset_construction.metrics.json"
        for p in report.PROFILE_ORDER
        if (root / "results" / p / "01_dataset_construction.metrics.json").is_file()
    )
    metrics = json.loads(path.read_text())
    metrics["qqp"]["dev"]["n_positives"] += 1
    path.write_text(json.dumps(metrics))
    assert report.stale(root, ["RESULTS.md"]) == ["RESULTS.md"]


def test_a_metrics_file_without_its_config_is_refused(tmp_path):
    root = copy_tree(tmp_path)
    next((root / "results").glob("*/*.config.json")).unlink()
    with pytest.raises(FileNotFoundError, match="cannot be audited"):
        report.load_results(root)


def test_collect_copies_a_runs_metrics_configs_and_timings(tmp_path):
    run = tmp_path / "runs" / "toy"
    run.mkdir(parents=True)
    (run / "01_x.metrics.json").write_text("{}")
    (run / "01_x.config.json").write_text("{}")
    (run / "timings.json").write_text("{}")
    (run / "01_x.ipynb").write_text("{}")  # executed notebooks stay in runs/
    copied = report.collect("toy", tmp_path)
    assert sorted(p.name for p in copied) == [
        "01_x.config.json",
        "01_x.metrics.json",
        "timings.json",
    ]
    with pytest.raises(FileNotFoundError, match="make run PROFILE=nothing"):
        report.collect("nothing", tmp_path)


def test_a_profile_read_back_from_its_archive_says_what_its_runs_computed():
    """A profile whose runs were read back (paper-cpu's archive) records a wall clock of
    minutes: its table cell adds the runs' own compute, each run once however many notebooks
    read it, and only where that exceeds twice the record."""

    def summary(runs, train):
        return {"runs": runs, "seconds_per_run": {"train": train, "evaluate": 100.0}}

    results = {
        "03_x": {"metrics": {"wikiqa": {"u": summary(["u0", "u1"], 3500.0)}}},
        "05_x": {  # reads u0 and u1 back, and runs r0 of its own
            "metrics": {
                "wikiqa": {
                    "strategies": {"u": summary(["u0", "u1"], 3500.0)},
                    "extra": [summary(["r0"], 1700.0)],
                }
            }
        },
    }
    assert report.run_compute(results) == (2 * 3600.0 + 1800.0, 3)
    assert report.run_compute(None) == (0.0, 0)
    timings = {
        "p": {
            "notebooks": {"03_x": 50.0, "05_x": 10.0},
            "jobs": 1,
            "cpus": 2,
            "recorded": "2026-11-27",
            "wall_seconds": 60.0,
        }
    }

    def timing_cell(compute):
        return report.markdown("timing_cell", timings["p"], *compute, template="report.md.j2")

    cell = timing_cell(report.run_compute(results))
    assert cell == (
        "1 min (2 notebooks; 2 CPU cores, 2026-11-27), reading back 3 runs that computed for "
        "2.5 hours (their round records' stage seconds, summed)"
    )
    timings["p"]["wall_seconds"] = 6000.0  # computed here, within the record: nothing added
    assert timing_cell(report.run_compute(results)) == (
        "100 min (2 notebooks; 2 CPU cores, 2026-11-27)"
    )
    timings["p"].update(notebooks={"03_x": 50.0}, wall_seconds=60.0)  # one of each: no plural
    assert timing_cell((9000.0, 1)).startswith(
        "1 min (1 notebook; 2 CPU cores, 2026-11-27), reading back 1 run that computed"
    )


def test_the_qqp_subset_size_in_the_docs_is_the_count_read_or_says_about(data_dir):
    """Notebook 01 said "a 23,497-pair subset" while 23,496 rows load (the first row is
    malformed and reported): a size typed into prose is the count read, or says "about"."""
    import re

    from pairlab.io import read_qqp

    read = f"{read_qqp(data_dir / 'qqp' / 'qqp_subset.tsv')[0].shape[0]:,}"
    texts = {
        p.relative_to(ROOT): p.read_text()
        for p in [
            ROOT / "README.md",
            ROOT / "RESULTS.md",
            *(ROOT / "docs").glob("*.j2"),
            *(ROOT / "notebooks").glob("[0-9][0-9]_*.py"),
        ]
    }
    typed = [
        (str(path), m.group(0))
        for path, text in texts.items()
        for m in re.finditer(r"(about |~)?\b23,\d{3}\b", text)
        if not m.group(1)
    ]
    assert all(number.endswith(read) for _, number in typed), (read, typed)


def test_notebook_09_renders_from_the_cpu_metrics_only(tmp_path):
    """The section on notebook 09 prints the findings computed from a cpu metrics file (its
    numbers are the file's), and renders nothing but 'not recorded yet' from a smoke one."""
    from test_adaptivity import metrics_for_docs

    root = copy_tree(tmp_path)
    for recorded in (root / "results").glob("*/09_when_adaptivity_pays.*.json"):
        recorded.unlink()  # the committed reference run's, if any: this test records its own
    metrics = metrics_for_docs(tmp_path / "runs")
    for profile in ("smoke", "cpu"):
        (root / "results" / profile).mkdir(exist_ok=True)
        (root / "results" / profile / "09_when_adaptivity_pays.metrics.json").write_text(
            json.dumps(metrics)
        )
        (root / "results" / profile / "09_when_adaptivity_pays.config.json").write_text("{}")
        text = report.render("RESULTS.md", root)
        section = text[text.index("## When adaptivity pays") :]
        if profile == "smoke":
            assert "Not recorded yet" in section and "seed 0" not in section
    from pairlab.experiments import findings

    assert "Profile `cpu`" in section
    said = report.markdown("adaptivity", metrics).splitlines()
    said += report.markdown("bullets", findings.adaptivity(metrics)).splitlines()
    assert len(said) > 10
    for line in said:
        assert line.removeprefix("- ") in section
    assert (
        "| toy | uncertainty | 2 | 80 | 0.480 | 0.430-0.530 | 0.600, 0.360 |" in section
    )  # from the file


def test_the_paper_scale_section_renders_the_verdict_from_paper_cpu_metrics(tmp_path):
    """RESULTS.md's paper-scale subsection of notebook 03 appears once results/paper-cpu holds
    notebook 03's metrics: the per-seed interval table, the verdict sentence (with notebook
    05's efficiency factors where recorded) and the candidate recall per round."""
    from test_headline import STATIC, entry

    from pairlab.experiments import findings

    root = copy_tree(tmp_path)
    folder = root / "results" / "paper-cpu"
    for profile in ("paper-cpu", "paper-cpu-qqp"):
        for recorded in (root / "results" / profile).glob("*.json"):
            recorded.unlink()
    text = report.render("RESULTS.md", root)
    assert "At the paper's scale" not in text
    unc = entry([0.45, 0.46, 0.44], [(0.40, 0.50), (0.41, 0.51), (0.39, 0.49)], [760, 750, 770])
    unc["rounds_per_seed"] = [
        {
            "seed": s,
            "round": 2,
            "labels": 5120,
            "positives_found": 600,
            "candidate_recall": 0.9 - 0.1 * s,
            "dev_ap": 0.4,
            "dev_ap_ci": [0.3, 0.5],
        }
        for s in (0, 1, 2)
    ]
    metrics = {"wikiqa": {"uncertainty": unc, "static_retrieval": STATIC}}
    config = {
        "n1": 2048,
        "growth": 1.5,
        "rounds": {"wikiqa": 4},
        "candidate_m": 100,
        "cosine_epochs": 2,
        "seeds": [0, 1, 2],
    }
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "03_cosinebert_active_learning.metrics.json").write_text(json.dumps(metrics))
    (folder / "03_cosinebert_active_learning.config.json").write_text(json.dumps(config))
    row = {
        "seed": 0,
        "static_retrieval_labels": 16_640,
        "static_retrieval_dev_ap": 0.3,
        "static_retrieval_labels_needed": 16_640.0,
        "uncertainty_final_dev_ap": 0.35,
        "labels_needed": 8_320.0,
        "factor": 2.0,
        "bound": "exact",
    }
    efficiency = {
        "per_seed": [row],
        "factor_mean": 2.0,
        "factor_std": 0.0,
        "seeds_defined": 1,
        "seeds": 1,
    }
    point = {"labels": 2048, "dev_ap": 0.41, "dev_ap_ci": [0.31, 0.51], "positive_share": 0.25}
    budget = {
        "curves": {"uncertainty": [point, {**point, "labels": 16_640, "dev_ap": 0.35}]},
        "strategies": {},
        "noise": [],
        "costs": [],
        "efficiency": efficiency,
    }
    (folder / "05_budget_curves.metrics.json").write_text(json.dumps({"wikiqa": budget}))
    (folder / "05_budget_curves.config.json").write_text("{}")
    text = report.render("RESULTS.md", root)
    section = text[text.index("At the paper's scale") :]
    verdict = findings.adaptive_vs_static("wikiqa", metrics["wikiqa"], efficiency)
    assert report.markdown("bullets", [verdict]).removeprefix("- ") in section
    readme = report.render("README.md", root)
    headline = report.headline_findings(report.load_results(root))
    assert [(r["task"], r["profile"]) for r in headline] == [
        ("wikiqa", "paper-cpu"),
        ("qqp", "cpu"),
    ]
    assert headline[0]["status"] == "held" and "wikiqa: `paper-cpu` profile" in readme
    assert report.FILTERS["oneline"](report.markdown("headline", headline)) in readme
    assert "2.00x" in section and "0.450 [0.400, 0.500]" in section
    assert "| 2 | 5,120 | 0.800 |" in section  # candidate recall: the mean over seeds
    assert "| uncertainty | 1 | 0.400 [0.300, 0.500] · 11.7% |" in section  # per seed, per round
    budget_section = text[text.index("## Budget curves") : text.index("## Augmented SBERT")]
    assert "| 16,640 | 0.350 [0.310, 0.510] · 25.0% |" in budget_section  # notebook 05's mean
    assert "uncertainty's mean dev AP is highest at 2,048 labels." in budget_section
    assert "| 0 | 0.300 | 16,640 | 8,320 | 2.00 | exact |" in budget_section
    # QQP's paper-scale run (profile paper-cpu-qqp): its own subsection, and the headline's qqp
    qqp = root / "results" / "paper-cpu-qqp"
    qqp.mkdir(parents=True, exist_ok=True)
    (qqp / "03_cosinebert_active_learning.metrics.json").write_text(
        json.dumps({"qqp": metrics["wikiqa"]})
    )
    (qqp / "03_cosinebert_active_learning.config.json").write_text(
        json.dumps({**config, "rounds": {"qqp": 4}, "candidate_m": 1000, "seeds": [0]})
    )
    text = report.render("RESULTS.md", root)
    section = text[text.index("At the paper's scale: QQP") :]
    assert "question against every other" in section and "m = 1000 candidate" in section
    assert "figures/paper-cpu-qqp/03_collection.html" in section
    headline = report.headline_findings(report.load_results(root))
    assert [(r["task"], r["profile"]) for r in headline] == [
        ("wikiqa", "paper-cpu"),
        ("qqp", "paper-cpu-qqp"),
    ]
