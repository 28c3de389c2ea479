"""QQP, WikiQA and your own pair files as all-pairs tasks (what a notebook's ``dataset`` names),
each built by :func:`~pairlab.data.pairfile.load_pairs`."""

from __future__ import annotations

from functools import partial, reduce
from pathlib import Path

import pandas as pd

from ..io import ReadReport, read_qqp, read_wikiqa
from ..paths import DATA_LAYOUT, data_dir as resolve_data_dir, first_file, project_root
from .pairfile import SUFFIXES, load_pairs, pair_task_name
from .tasks import BUILT_IN, SPLITS, Pool, Task, like

__all__ = [
    "Pool",
    "Task",
    "SPLITS",
    "load_task",
    "load_tasks",
    "tasks_for",
    "build_qqp",
    "build_wikiqa",
    "data_files",
    "load_pairs",
    "like",
    "pair_file",
]

QQP_FILES = ("quora_duplicate_questions.tsv", "qqp_subset.tsv")
QQP_COLUMNS = dict(
    left="question1", right="question2", label="is_duplicate", left_id="qid1", right_id="qid2"
)
# the generic builder's notes under the names QQP's metrics files have always used
QQP_NOTES = {
    "n_items": "n_questions",
    "id_text_conflicts": "qid_text_conflicts",
    "items_sharing_text_with_another_id": "questions_sharing_text_with_another_qid",
    "stated_positives": "stated_duplicates",
}
PAIR_OPTIONS = ("pairs_symmetric", "pairs_columns", "pairs_threshold")


def data_files(name: str, data_dir=None) -> list[Path]:
    """The files task ``name`` reads, found without reading them (a ``DataNotFoundError`` naming
    what is missing and the expected layout otherwise)."""
    root = resolve_data_dir(data_dir)
    if name == "qqp":
        missing = f"none of {list(QQP_FILES)} found in {root / 'qqp'}.\n{DATA_LAYOUT}"
        return [first_file([root / "qqp" / name for name in QQP_FILES], missing)]
    if name == "wikiqa":
        return [_wikiqa_file(root / "wikiqa", split) for split in SPLITS]
    raise ValueError(f"unknown task {name!r}; expected one of {BUILT_IN}")


def _wikiqa_file(folder: Path, split: str) -> Path:
    """``WikiQA-<split>.tsv`` in ``folder`` or its ``WikiQACorpus`` (Microsoft's zip), else a
    variant such as ``WikiQA-train.reformatted.tsv``."""
    name = f"WikiQA-{split}.tsv"
    places = [folder / name, folder / "WikiQACorpus" / name]
    places += sorted(folder.glob(f"WikiQA-{split}.*tsv"))
    return first_file(places, f"no WikiQA-{split}*.tsv in {folder}.\n{DATA_LAYOUT}")


def load_task(
    name: str, data_dir=None, *, seed: int = 0, fractions=(0.5, 0.25, 0.25), max_items=None
) -> Task:
    """Read and build the all-pairs task ``name`` (``"qqp"`` or ``"wikiqa"``). ``fractions``:
    QQP's split shares (WikiQA keeps its own); ``max_items``: the cap on left items per split."""
    files = data_files(name, data_dir)
    if name == "qqp":
        frame, report = read_qqp(files[0])
        build = partial(build_qqp, frame, seed=seed, fractions=fractions)
    else:
        frames, reports = zip(*map(read_wikiqa, files))
        report = reduce(ReadReport.merge, reports)
        build = partial(build_wikiqa, dict(zip(SPLITS, frames)), seed=seed)
    task = build(max_items=max_items)
    return Task(task.name, task.splits, task.notes, report, rebuild=build)


def load_tasks(
    dataset: str = "all",
    data_dir=None,
    *,
    pairs_symmetric=None,
    pairs_columns=None,
    pairs_threshold=None,
    max_items=None,
    **kwargs,
) -> dict[str, Task]:
    """Tasks named by a notebook's ``dataset`` parameter: ``"qqp"``, ``"wikiqa"``, ``"all"``, or
    the path of a pair file, read by :func:`load_pairs` with ``pairs_symmetric`` (required),
    ``pairs_columns`` (role -> the file's column) and ``pairs_threshold``. ``max_items`` may be
    keyed by task name; a file's task takes the entry of the built-in task of its kind."""
    if dataset in BUILT_IN + ("all",):
        names = BUILT_IN if dataset == "all" else (dataset,)
        caps = {n: max_items.get(n) if per_task(max_items) else max_items for n in names}
        return {n: load_task(n, data_dir, **kwargs, max_items=caps[n]) for n in names}
    path, name = pair_file(dataset), pair_task_name(dataset)
    options = _pair_options(path, pairs_symmetric, pairs_columns, pairs_threshold)
    kind = like(name, options["symmetric"])
    cap = max_items.get(name, max_items.get(kind)) if per_task(max_items) else max_items
    task = load_pairs(path, **options, **kwargs, max_items=cap, name=name)
    return {task.name: task}


def tasks_for(params: dict) -> dict[str, Task]:
    """The tasks a notebook's parameters name (:func:`load_tasks`). Every value of ``params``
    given per task gains, in place, an entry for a file's task: the built-in task's of its kind."""
    tasks = load_tasks(
        params["dataset"],
        params.get("data_dir"),
        seed=params["seed"],
        fractions=params["fractions"],
        max_items=params["max_items"],
        **{k: params.get(k) for k in PAIR_OPTIONS},
    )
    for name, task in tasks.items():
        kind = like(name, task.symmetric)
        for key, value in list(params.items()):
            if per_task(value) and name not in value and kind in value:
                params[key] = {**value, name: value[kind]}
    return tasks


def per_task(value) -> bool:
    """Whether a setting is given per task (``{"qqp": ..., "wikiqa": ...}``), not per split."""
    keys = set(value) if isinstance(value, dict) else set()
    return bool(keys & set(BUILT_IN)) and not keys & set(SPLITS)


def pair_file(dataset) -> Path:
    """The pair file a ``dataset`` parameter names: as given, else relative to the project root."""
    text = str(dataset)
    named = Path(text).suffix.lower() in SUFFIXES or "/" in text or "\\" in text
    if not isinstance(dataset, (str, Path)) or not (named or Path(text).is_file()):
        raise ValueError(
            f"dataset must be 'qqp', 'wikiqa', 'all' or the path of a pair file "
            f"({', '.join(sorted(SUFFIXES))}), got {dataset!r}"
        )
    path = Path(dataset).expanduser()
    return first_file(
        [path, project_root() / path],
        f"dataset {str(dataset)!r} is not a file (looked in {Path.cwd()} and {project_root()}); "
        f"give the path of a pair file, or 'qqp', 'wikiqa' or 'all' with the data folder."
        f"\n{DATA_LAYOUT}",
    )


def _pair_options(path: Path, symmetric, columns, threshold) -> dict:
    """:func:`load_pairs`' options from a notebook's ``pairs_*`` parameters."""
    if not isinstance(symmetric, bool):
        raise ValueError(
            f"dataset {str(path)!r} is a pair file: set pairs_symmetric to True "
            "(duplicates, paraphrases: both columns hold the same kind of item) or "
            f"False (question -> answer, query -> document), got {symmetric!r}"
        )
    columns = dict(columns or {})
    known = {"left", "right", "label", "left_id", "right_id", "split"}
    if not known.issuperset(columns):
        raise ValueError(
            f"pairs_columns has {sorted(set(columns) - known)}; it maps the roles "
            f"{sorted(known)} to your file's column names"
        )
    if "split" in columns:
        columns["split_column"] = columns.pop("split")
    return dict(symmetric=symmetric, positive_threshold=threshold, **columns)


def build_qqp(
    frame: pd.DataFrame, *, seed: int = 0, fractions=(0.5, 0.25, 0.25), max_items=None
) -> Task:
    """Question-deduplication task: :func:`load_pairs` with QQP's columns, items by qid."""
    if frame.empty:
        raise ValueError("QQP frame has no rows: nothing to build a task from")
    options = dict(seed=seed, fractions=fractions, max_items=max_items, check_splits=False)
    task = load_pairs(frame, symmetric=True, **QQP_COLUMNS, name="qqp", **options)
    notes = {QQP_NOTES.get(k, k): v for k, v in task.notes.items()}
    return Task("qqp", task.splits, notes)


def build_wikiqa(raw: dict, *, seed: int = 0, max_items=None) -> Task:
    """Answer-sentence selection task: :func:`load_pairs` on the three splits' rows, the right
    text ``Title . Sentence`` where every row has its document title, else the sentence."""
    rows = pd.concat([raw[s].assign(split=s) for s in SPLITS], ignore_index=True)
    with_titles = bool(rows["title"].notna().all())
    rows["right"] = rows["title"] + " . " + rows["sentence"] if with_titles else rows["sentence"]
    columns = dict(left="question", right="right", label="label", split_column="split")
    options = dict(seed=seed, max_items=max_items, name="wikiqa", check_splits=False)
    task = load_pairs(rows, symmetric=False, **columns, **options)
    notes = {
        ("questions_in_several_splits" if k == "left_items_in_several_splits" else k): v
        for k, v in task.notes.items()
    }
    kept = pd.concat(
        [rows[(rows["split"] == s) & rows["question"].isin(task[s].left_texts)] for s in SPLITS]
    )
    notes.update(
        right_side="Title . Sentence" if with_titles else "sentence only (titles missing)",
        rows_with_title=int(kept["title"].notna().sum()),
    )
    return Task("wikiqa", task.splits, notes)
