"""The notebook the browser tests open: every pairlab widget built on synthetic data.

Each entry of ``CELLS`` is one code cell. Widgets added later (a cost calculator, say) get a
cell here and a test in ``test_widgets.py``.
"""

import nbformat

CELLS = [
    # 0: synthetic data, the label store and the runs' folder
    """import sys
sys.path.insert(0, TESTS_DIR)
from pathlib import Path
import numpy as np
from conftest import clustered_pool, run
from pairlab.widgets.review import FalsePositiveBrowser, RunPicker
from pairlab.widgets.dashboard import RunDashboard
from pairlab.evaluation import CosineScorer, EvalConfig, build_eval_set, evaluate
from pairlab.widgets.labels import LabelStore
pool, emb = clustered_pool(n_items=200)
eval_set = build_eval_set(pool, emb, config=EvalConfig(near_m=5, n_random=2000))
scores = evaluate(eval_set, CosineScorer(pool.space, emb), n_boot=20)["scores"]
noisy = np.random.default_rng(1).normal(0, 0.05, emb.shape).astype(np.float32)
other = evaluate(eval_set, CosineScorer(pool.space, emb + noisy), n_boot=20)["scores"]
store = LabelStore(STORE)
runs_dir = Path(RUNS)""",
    # 1: the false-positive browser
    """browser = FalsePositiveBrowser(pool, eval_set, scores, model_id="cosine", store=store,
                               annotator="browser-test", recall=0.2)
browser""",
    # 2: a live dashboard, fed by a real ActiveRun in the next cell
    """board = RunDashboard(total_rounds=3, title="live run")
board""",
    """active, _ = run(runs_dir, strategy="uncertainty", callbacks=[board])
result = active.run()
run(runs_dir, strategy="random")[0].run();""",
    # 4: the finished runs, opened from their folders
    """RunDashboard.open(runs_dir, title="opened runs")""",
    # 5: the run picker over two scored models
    """picker = RunPicker({"model a": (pool, eval_set, scores, "model-a"),
                    "model b": (pool, eval_set, other, "model-b")},
                   store=store, annotator="picker-test", recall=0.5)
picker""",
    """print("ALL CELLS DONE")""",
]


def notebook(tests_dir, store, runs) -> nbformat.NotebookNode:
    """The widget notebook on the ``pairlab`` kernel, its paths filled in."""
    paths = f"TESTS_DIR, STORE, RUNS = {str(tests_dir)!r}, {str(store)!r}, {str(runs)!r}\n"
    return kernel_notebook(paths, CELLS)


def kernel_notebook(paths: str, cells) -> nbformat.NotebookNode:
    """A notebook of ``cells`` on the ``pairlab`` kernel, ``paths`` (assignments) prepended to
    the first."""
    cells = [nbformat.v4.new_code_cell(paths + cells[0])] + [
        nbformat.v4.new_code_cell(c) for c in cells[1:]
    ]
    nb = nbformat.v4.new_notebook(cells=cells)
    nb.metadata["kernelspec"] = {
        "name": "pairlab",
        "display_name": "Python (pairlab)",
        "language": "python",
    }
    return nb
