import ast
import json
import re
from pathlib import Path

import nbformat
import pytest

from pairlab import runner
from pairlab.profiles import check_profile, load_profile, resolve
from pairlab.runner import notebooks

ROOT = Path(__file__).resolve().parents[1]
PROFILES = sorted(p.stem for p in (ROOT / "profiles").glob("*.yaml") if p.stem != "base")


def parameters_of(notebook: Path) -> set[str]:
    nb = nbformat.read(notebook, as_version=4)
    cells = [c for c in nb.cells if "parameters" in c.metadata.get("tags", [])]
    assert len(cells) == 1, f"{notebook.name} needs exactly one cell tagged 'parameters'"
    tree = ast.parse(cells[0].source)
    return {t.id for node in tree.body if isinstance(node, ast.Assign) for t in node.targets}


def test_the_four_profiles_exist():
    assert set(PROFILES) >= {"smoke", "demo", "cpu", "paper"}


def declared() -> dict[str, set]:
    """Each notebook's parameters: its cell's and the shared settings it takes from its profile."""
    from pairlab.profiles import own_and_shared

    return {nb.stem: set().union(*own_and_shared(nb, ROOT)) for nb in notebooks(ROOT)}


@pytest.mark.parametrize("profile", [*PROFILES, "base"])
def test_profile_parameters_are_declared_by_a_notebook_of_their_scope(profile):
    check_profile(load_profile(profile, ROOT), declared(), name=profile)  # raises on a typo


@pytest.mark.parametrize("profile", PROFILES)
def test_active_learning_notebooks_share_every_value(profile):
    """04, 05 and 09 read back 03's run folders: any parameter two of them declare is equal, but a
    notebook reading back may take a subset of 03's tasks."""
    found = declared()
    active = [nb for nb in found if nb[:2] in ("03", "04", "05", "09")]
    params = {nb: resolve(load_profile(profile, ROOT), nb) for nb in active}
    tasks = {"all": {"qqp", "wikiqa"}, "qqp": {"qqp"}, "wikiqa": {"wikiqa"}}
    for a in active:
        for b in active:
            for key in found[a] & found[b] & set(params[a]) - {"dataset"}:
                assert params[a][key] == params[b][key], (profile, key, a, b)
        assert tasks[params[a]["dataset"]] <= tasks[params[active[0]]["dataset"]], (profile, a)


def test_the_smoke_profile_resolves_per_notebook():
    smoke = load_profile("smoke", ROOT)
    assert resolve(smoke, "01_dataset_construction")["max_items"]["qqp"]["train"] == 300
    assert resolve(smoke, "03")["max_items"]["qqp"]["train"] == 150
    assert (
        resolve(smoke, "05_budget_curves")["n_boot"] == 50 and resolve(smoke, "02")["n_boot"] == 100
    )
    assert load_profile("smoke", ROOT, notebook="04")["candidate_m"] == 10
    assert resolve(smoke, "03")["near_m"] == 10 and resolve(smoke, "03")["run_dir"] == "runs/smoke"


def write(root, text):
    (root / "profiles").mkdir(exist_ok=True)
    (root / "profiles" / "old.yaml").write_text(text)


def test_a_malformed_profile_and_unknown_keys_are_errors(tmp_path):
    write(tmp_path, "notebooks:\n  '03 04': [n_boot, 4]\n")
    with pytest.raises(ValueError, match="must map notebook numbers"):
        load_profile("old", tmp_path)
    found = declared()
    with pytest.raises(ValueError, match=r"sets \['growth_sizes'\] for notebooks '03 04 05'"):
        check_profile({"notebooks": {"03 04 05": {"growth_sizes": [1]}}}, found)
    with pytest.raises(ValueError, match=r"sets \['n_boots'\], which no notebook declares"):
        check_profile({"n_boots": 3}, found)
    with pytest.raises(ValueError, match="section '03 99' names notebooks"):
        check_profile({"notebooks": {"03 99": {"n_boot": 3}}}, found)


def test_notebooks_use_the_pairlab_kernel_and_follow_the_habits():
    for notebook in notebooks(ROOT):
        nb = nbformat.read(notebook, as_version=4)
        assert nb.metadata["kernelspec"]["name"] == "pairlab"
        params = declared()[notebook.stem]
        data = "items" if notebook.name.startswith("10_") else "dataset"  # 10: a person's records
        assert data in params and "run_dir" in params and "profile" in parameters_of(notebook)
        assert "record_metrics" in nb.cells[-1].source, "the last cell records the metrics"
        assert not any(c.get("outputs") for c in nb.cells if c.cell_type == "code"), (
            f"{notebook.name} is committed with outputs"
        )


def test_unknown_profile_lists_the_known_ones():
    with pytest.raises(FileNotFoundError, match="known profiles"):
        load_profile("nope", ROOT)


def test_every_code_cell_is_valid_python():
    for notebook in notebooks(ROOT):
        nb = nbformat.read(notebook, as_version=4)
        for number, cell in enumerate(nb.cells):
            if cell.cell_type == "code":
                try:
                    ast.parse(cell.source)
                except SyntaxError as error:
                    pytest.fail(f"{notebook.name} cell {number}: {error}")


def test_notebooks_that_read_back_runs_declare_it():
    by_number = {nb.name[:2]: nb for nb in notebooks(ROOT)}
    assert runner.after(by_number["04"]) == ["03"] and runner.after(by_number["05"]) == ["03"]
    assert runner.after(by_number["09"]) == ["03"]
    assert runner.after(by_number["01"]) == [] and runner.after(by_number["03"]) == []


class FakeChild:
    """A child runner that finishes after a few polls; ``log`` records starts and ends."""

    def __init__(self, command, log, fail=()):
        self.number = command[command.index("--notebooks") + 1]
        self.polls, self.log, self.fail, self.returncode = 0, log, fail, None
        self.threads = None
        log.append(("start", self.number))

    def poll(self):
        self.polls += 1
        if self.polls < 3:
            return None
        if self.returncode is None:
            self.returncode = 1 if self.number in self.fail else 0
            self.log.append(("end", self.number))
        return self.returncode

    def terminate(self):
        self.log.append(("terminated", self.number))


def test_parallel_notebooks_wait_for_what_they_read_and_never_exceed_jobs(monkeypatch):
    log, envs = [], []

    def popen(command, env, cwd):
        envs.append(env["OMP_NUM_THREADS"])
        return FakeChild(command, log)

    monkeypatch.setattr(runner.subprocess, "Popen", popen)
    monkeypatch.setattr(runner.time, "sleep", lambda s: None)
    monkeypatch.delenv("OMP_NUM_THREADS", raising=False)
    seconds = runner._run_parallel("smoke", notebooks(ROOT), {"seeds": [0, 1]}, 2, ROOT)
    assert set(seconds) == {nb.stem for nb in notebooks(ROOT)}
    running, most = set(), 0
    for event, number in log:
        running.add(number) if event == "start" else running.discard(number)
        most = max(most, len(running))
        if event == "start" and number in ("04", "05"):
            assert ("end", "03") in log[: log.index((event, number))], (
                f"{number} started before 03 ended"
            )
    assert most == 2
    import os

    assert set(envs) == {str(max(1, (os.cpu_count() or 1) // 2))}


def test_a_failed_notebook_stops_the_others_and_says_which(monkeypatch):
    log = []
    monkeypatch.setattr(
        runner.subprocess, "Popen", lambda c, env, cwd: FakeChild(c, log, fail={"03"})
    )
    monkeypatch.setattr(runner.time, "sleep", lambda s: None)
    with pytest.raises(RuntimeError, match="03_cosinebert_active_learning.ipynb failed"):
        runner._run_parallel("smoke", notebooks(ROOT), {}, 2, ROOT)
    # which notebook runs beside 03 follows the committed timings; whichever it is, it is
    # stopped, and nothing starts after 03 fails
    started = [number for event, number in log if event == "start"]
    beside = [number for number in started if number != "03"]
    assert len(beside) == 1 and ("terminated", beside[0]) in log
    assert log.index(("end", "03")) > log.index(("start", beside[0]))
    assert not [e for e in log[log.index(("end", "03")) :] if e[0] == "start"]


def test_times_are_recorded_merged_and_read_back_as_the_expectation(tmp_path):
    path = tmp_path / "runs" / "toy" / "timings.json"
    path.parent.mkdir(parents=True)
    runner._record_times(path, {"01_a": 60.0, "02_b": 120.0}, jobs=1, wall=185.0)
    assert "about 3 min" in runner.expected_time("toy", ["01_a", "02_b"], tmp_path)
    runner._record_times(path, {"02_b": 240.0}, jobs=1, wall=None)  # a partial run: no wall
    record = json.loads(path.read_text())
    assert record["notebooks"] == {"01_a": 60.0, "02_b": 240.0} and "wall_seconds" not in record
    assert "about 5 min" in runner.expected_time("toy", ["01_a", "02_b"], tmp_path)
    assert "1 notebook(s) not timed yet" in runner.expected_time("toy", ["01_a", "03_c"], tmp_path)
    assert "not recorded yet" in runner.expected_time("other", ["01_a"], tmp_path)


def test_the_notebook_others_wait_for_starts_first_then_the_longest(monkeypatch):
    selected = notebooks(ROOT)
    waits = {nb: [n for n in runner.after(nb)] for nb in selected}
    order = [nb.name[:2] for nb in runner.start_order(selected, waits, {})]
    assert order[0] == "03" and order[1:] == sorted(
        order[1:]
    )  # unknown times: declared order after 03
    times = {
        "01_dataset_construction": 60,
        "02_concatbert_failure_analysis": 110,
        "03_cosinebert_active_learning": 140,
        "04_ablations": 180,
        "05_budget_curves": 100,
        "06_augmented_sbert": 150,
    }
    order = [nb.name[:2] for nb in runner.start_order(selected, waits, times)]
    assert order[:4] == ["03", "04", "06", "02"] and order.index("05") < order.index("01")
    log = []
    monkeypatch.setattr(runner.subprocess, "Popen", lambda c, env, cwd: FakeChild(c, log))
    monkeypatch.setattr(runner.time, "sleep", lambda s: None)
    monkeypatch.setattr(runner, "_timings", lambda profile, root: [(None, {"notebooks": times})])
    runner._run_parallel("smoke", selected, {}, 2, ROOT)
    # a profile's first run is ordered by another profile's times, not the declared order
    recorded = {"quick": [(None, {"notebooks": times})]}
    monkeypatch.setattr(runner, "_timings", lambda profile, root: recorded.get(profile, []))
    assert runner.order_times("never-run", ROOT) == times
    assert [n for event, n in log if event == "start"][:2] == ["03", "02"]


def test_backend_and_address_flags_reach_the_notebooks_that_sweep(monkeypatch, capsys):
    seen = {}
    monkeypatch.setattr(runner, "run", lambda profile, **kw: seen.update(kw))
    assert (
        runner.main(
            ["--profile", "smoke", "--notebooks", "03", "--backend", "ray", "--address", "auto"]
        )
        == 0
    )
    assert seen["overrides"] == {"backend": "ray", "address": "auto"}
    check_profile(seen["overrides"], declared(), name="overrides")  # a notebook declares them
    calls = ("experiments.sweep",)  # the sweeps of ActiveRun runs
    sweeping = [
        nb
        for nb in notebooks(ROOT)
        if any(call in nb.with_suffix(".py").read_text() for call in calls)
    ]
    assert [nb.name[:2] for nb in sweeping] == ["03", "04", "05", "07", "09"]
    for nb in sweeping:
        source = _code_outside_solutions(nb.with_suffix(".py").read_text())
        assert {"backend", "address"} <= parameters_of(nb), nb.name
        assert source.count("backend=backend, address=address") == sum(map(source.count, calls)), (
            nb.name
        )
    with pytest.raises(SystemExit):
        runner.main(["--profile", "smoke", "--address", "auto"])
    assert "--backend ray" in capsys.readouterr().err


def _code_outside_solutions(source: str) -> str:
    """A percent-format notebook's code cells, without markdown and exercise solutions: a
    solution runs a strategy registered in the notebook's own process, so it sweeps locally."""
    cells = source.split("\n# %%")
    return "\n".join(
        cell
        for cell in cells[1:]
        if not cell.startswith(" [markdown]") and 'tags=["solution"]' not in cell.splitlines()[0]
    )


def test_a_notebook_on_ray_shows_its_progress_on_the_runners_terminal(monkeypatch, tmp_path):
    import papermill

    calls = []
    monkeypatch.setattr(papermill, "execute_notebook", lambda *a, **kw: calls.append(kw))
    nb = notebooks(ROOT, ["03"])[0]
    for backend in ("local", "ray"):
        runner._execute("smoke", nb, {"backend": backend}, tmp_path, ROOT)
    assert [kw["stderr_file"] for kw in calls] == [None, runner.sys.stderr]


def test_a_notebook_runs_on_local_ipc_sockets_and_prints_one_line(tmp_path, capfd):
    """A real kernel through the runner's papermill call: IPC sockets in a private folder (no
    TCP port, so no unencrypted-TCP warning from ipykernel), one line when done, the output
    written."""
    import nbformat
    from jupyter_client.manager import KernelManager

    assert issubclass(runner.LocalKernelManager, KernelManager)
    nb = tmp_path / "01_probe.ipynb"
    nbformat.write(
        nbformat.v4.new_notebook(
            cells=[nbformat.v4.new_code_cell("print(6 * 7)")],
            metadata={
                "kernelspec": {"name": "pairlab", "language": "python", "display_name": "pairlab"}
            },
        ),
        nb,
    )
    out = tmp_path / "out"
    out.mkdir()
    runner._execute("probe", nb, {}, out, tmp_path)
    printed = capfd.readouterr()
    assert nbformat.read(out / nb.name, 4).cells[0].outputs[0]["text"] == "42\n"
    assert "without encryption" not in printed.err + printed.out
    assert "KeyboardInterrupt" not in printed.err + printed.out  # no SIGINT to an idle kernel
    assert re.fullmatch(
        r"\[probe\] 01_probe done in [\d.]+ s -> out/01_probe\.ipynb\n", printed.out
    ), printed.out


@pytest.mark.slow
def test_notebook_03_runs_on_strategies_without_uncertainty_sampling(tmp_path):
    """One clone per strategy list is how a long grid uses both cores (profiles/paper-cpu.yaml):
    notebook 03 on static retrieval alone must finish, its round of uncertainty sampling in the
    open computed and checked all the same (it runs before the sweep, from the shared seed
    round), not stop at a KeyError after the sweep's hours."""
    executed = runner.run(
        "smoke",
        select=["03"],
        overrides={
            "strategies": ["static_retrieval"],
            "run_dir": str(tmp_path / "runs"),
            "figures_dir": str(tmp_path / "figures"),
        },
        record_times=False,
    )
    printed = "".join(
        output.get("text", "")
        for cell in nbformat.read(executed[0], 4).cells
        for output in cell.get("outputs", [])
    )
    assert "matched: pairlab's uncertainty strategy chooses the" in printed
    metrics = json.loads(
        (tmp_path / "runs" / "03_cosinebert_active_learning.metrics.json").read_text()
    )
    assert {task: set(entry) for task, entry in metrics.items()} == {
        task: {"static_retrieval", "zero_shot"} for task in ("qqp", "wikiqa")
    }
