"""All-pairs tasks from QQP and WikiQA: splits, imputed labels, and pools that are never materialised.

A :class:`Pool` is one split of a task: the left and right texts, the positive pair ids and the
stated (heuristic) negative pair ids, both as sorted int64 arrays of codes of its
:class:`~pairlab.data.pairs.PairSpace`. Every other pair is an imputed negative.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pandas as pd
from scipy.sparse import coo_matrix
from scipy.sparse.csgraph import connected_components

from ..io import ReadReport, read_qqp, read_wikiqa
from .pairs import PairSpace, as_id_set, isin_sorted, setdiff_sorted
from ..paths import DATA_LAYOUT, DataNotFoundError, data_dir as resolve_data_dir

__all__ = ["Pool", "Task", "SPLITS", "TASKS", "load_task", "load_tasks", "read_raw",
           "build_qqp", "build_wikiqa"]

SPLITS = ("train", "dev", "test")
TASKS = ("qqp", "wikiqa")
QQP_FILES = ("quora_duplicate_questions.tsv", "qqp_subset.tsv")


@dataclass(frozen=True, eq=False)
class Pool:
    """One split of a task: every pair of its left and right items, labelled by imputation."""

    task: str
    split: str
    left_texts: np.ndarray  # (n_left,) object: str
    right_texts: np.ndarray  # (n_right,) object: str; the same array as left_texts if symmetric
    symmetric: bool
    positives: np.ndarray  # (n_pos,) int64 sorted pair ids
    stated_negatives: np.ndarray  # (n_stated_neg,) int64 sorted pair ids

    @property
    def space(self) -> PairSpace:
        return PairSpace(len(self.left_texts), len(self.right_texts), self.symmetric)

    @property
    def n_pairs(self) -> int:
        return self.space.n_pairs

    @property
    def n_positives(self) -> int:
        return len(self.positives)

    @property
    def n_negatives(self) -> int:
        return self.n_pairs - self.n_positives

    def labels(self, pair_ids) -> np.ndarray:
        """Imputed labels (int8, 1 = positive) of ``pair_ids``; the oracle of active learning."""
        ids = np.asarray(pair_ids, dtype=np.int64)
        self.space.check(ids)
        return isin_sorted(ids, self.positives).astype(np.int8)

    def texts(self, pair_ids) -> tuple[np.ndarray, np.ndarray]:
        """Left and right texts of ``pair_ids``."""
        left, right = self.space.decode(pair_ids)
        return self.left_texts[left], self.right_texts[right]

    def frame(self, pair_ids) -> pd.DataFrame:
        """A readable table of pairs: id, left, right, imputed label, stated (heuristic) label."""
        ids = np.asarray(pair_ids, dtype=np.int64)
        left, right = self.texts(ids)
        stated = np.where(isin_sorted(ids, self.positives), "positive",
                          np.where(isin_sorted(ids, self.stated_negatives), "negative", "-"))
        return pd.DataFrame({"pair_id": ids, "left": left, "right": right,
                             "label": self.labels(ids), "stated": stated})

    def __repr__(self) -> str:
        return (f"Pool({self.task}/{self.split}: {len(self.left_texts):,} x "
                f"{len(self.right_texts):,} items, {self.n_pairs:,} pairs, "
                f"{self.n_positives:,} positives, symmetric={self.symmetric})")


@dataclass(frozen=True, eq=False)
class Task:
    """A task's three split pools and what building them counted."""

    name: str
    splits: dict[str, Pool]
    notes: dict = field(default_factory=dict)  # counts and choices made while building
    report: ReadReport = field(default_factory=ReadReport)

    def __getitem__(self, split: str) -> Pool:
        if split not in self.splits:
            raise KeyError(f"task {self.name!r} has no split {split!r}; it has {list(self.splits)}")
        return self.splits[split]

    def __repr__(self) -> str:
        return f"Task({self.name}: " + ", ".join(repr(p) for p in self.splits.values()) + ")"


# ---------------------------------------------------------------------------------------------
# Reading


def read_raw(name: str, data_dir=None, *, strict: bool = False) -> dict:
    """The raw rows of a task: ``{"frame": DataFrame}`` (QQP) or ``{split: DataFrame}`` (WikiQA),
    plus ``"report"``."""
    root = resolve_data_dir(data_dir)
    if name == "qqp":
        path = _first_existing(root / "qqp", QQP_FILES)
        frame, report = read_qqp(path, strict=strict)
        return {"frame": frame, "report": report}
    if name == "wikiqa":
        out, report = {}, ReadReport()
        for split in SPLITS:
            path = _wikiqa_file(root / "wikiqa", split)
            out[split], part = read_wikiqa(path, strict=strict)
            report = report.merge(part)
        out["report"] = report
        return out
    raise ValueError(f"unknown task {name!r}; expected one of {TASKS}" + _file_hint(name))


def _first_existing(folder: Path, names) -> Path:
    for name in names:
        if (folder / name).is_file():
            return folder / name
    raise DataNotFoundError(f"none of {list(names)} found in {folder}.\n{DATA_LAYOUT}")


def _wikiqa_file(folder: Path, split: str) -> Path:
    exact = folder / f"WikiQA-{split}.tsv"
    if exact.is_file():
        return exact
    found = sorted(folder.glob(f"WikiQA-{split}.*tsv")) if folder.is_dir() else []
    if not found:
        raise DataNotFoundError(f"no WikiQA-{split}*.tsv in {folder}.\n{DATA_LAYOUT}")
    return found[0]


# ---------------------------------------------------------------------------------------------
# Building


def load_task(name: str, data_dir=None, *, seed: int = 0, fractions=(0.5, 0.25, 0.25),
              max_items=None, strict: bool = False) -> Task:
    """Read and build the all-pairs task ``name`` (``"qqp"`` or ``"wikiqa"``).

    ``fractions`` are QQP's train/dev/test shares of questions (WikiQA keeps its own split);
    ``max_items`` caps the left items per split (an int, or a dict by split) for small profiles.
    """
    raw = read_raw(name, data_dir, strict=strict)
    if name == "qqp":
        task = build_qqp(raw["frame"], seed=seed, fractions=fractions, max_items=max_items)
    else:
        task = build_wikiqa(raw, seed=seed, max_items=max_items)
    return Task(task.name, task.splits, task.notes, raw["report"])


def load_tasks(dataset: str = "all", data_dir=None, **kwargs) -> dict[str, Task]:
    """Tasks named by a notebook's ``dataset`` parameter: ``"qqp"``, ``"wikiqa"`` or ``"all"``.

    ``max_items`` may also be keyed by task name (``{"qqp": 4000, "wikiqa": {...}}``).
    """
    names = TASKS if dataset == "all" else (dataset,)
    for name in names:
        if name not in TASKS:
            raise ValueError(f"dataset must be 'qqp', 'wikiqa' or 'all', got {dataset!r}"
                             + _file_hint(dataset))
    max_items = kwargs.pop("max_items", None)
    per_task = isinstance(max_items, dict) and bool(max_items) and set(max_items) <= set(TASKS)
    return {name: load_task(name, data_dir, **kwargs,
                            max_items=max_items.get(name) if per_task else max_items)
            for name in names}


def _file_hint(dataset) -> str:
    """What to do when ``dataset`` names a file or folder instead of a task."""
    if not any(mark in str(dataset) for mark in ("/", "\\", ".tsv")) and not Path(str(dataset)).exists():
        return ""
    return ("; a file is not a dataset name: put it in the data folder's layout and set "
            f"data_dir (or $PAIRLAB_DATA_DIR) to that folder.\n{DATA_LAYOUT}")


def build_qqp(frame: pd.DataFrame, *, seed: int = 0, fractions=(0.5, 0.25, 0.25),
              max_items=None) -> Task:
    """Question-deduplication task: positives are the transitive closure of stated duplicates;
    questions split by connected components of all stated pairs so no pair crosses splits."""
    fractions = _check_fractions(fractions)
    if frame.empty:
        raise ValueError("QQP frame has no rows: nothing to build a task from")
    texts, a, b, label, notes = _qqp_items(frame)
    n = len(texts)
    clusters = _components(n, a[label == 1], b[label == 1])
    groups = _components(n, a, b)
    rng = np.random.default_rng(seed)
    split_of, group_order = _assign_splits(groups, fractions, rng)
    splits = {}
    for s, split in enumerate(SPLITS):
        members = np.flatnonzero(split_of == s)
        members = _cap_by_group(members, groups, group_order, _cap(max_items, split))
        splits[split] = _qqp_pool(split, members, texts, clusters, a, b, label, notes)
    notes["fractions"] = list(fractions)
    notes["subsampled"] = max_items is not None
    return Task("qqp", splits, notes)


def _qqp_items(frame: pd.DataFrame):
    """Unique questions (by qid) and the stated pairs as item indices."""
    qids = np.concatenate([frame["qid1"].to_numpy(), frame["qid2"].to_numpy()])
    qtexts = np.concatenate([frame["question1"].to_numpy(object),
                             frame["question2"].to_numpy(object)])
    unique_qids, first, inverse = np.unique(qids, return_index=True, return_inverse=True)
    texts = qtexts[first]
    n_rows = len(frame)
    a, b = inverse[:n_rows].astype(np.int64), inverse[n_rows:].astype(np.int64)
    label = frame["is_duplicate"].to_numpy(np.int8)
    text_conflicts = int((qtexts != texts[inverse]).sum())
    self_pairs = a == b
    same_text = pd.Series(texts).duplicated(keep=False).to_numpy()
    notes = {
        "n_rows": n_rows,
        "n_questions": len(texts),
        "qid_text_conflicts": text_conflicts,  # a qid seen with another text: first text kept
        "self_pairs_dropped": int(self_pairs.sum()),
        "questions_sharing_text_with_another_qid": int(same_text.sum()),
    }
    keep = ~self_pairs
    return texts, a[keep], b[keep], label[keep], notes


def _qqp_pool(split, members, texts, clusters, a, b, label, notes) -> Pool:
    local = np.full(len(texts), -1, dtype=np.int64)
    local[members] = np.arange(len(members))
    space = PairSpace(len(members), len(members), True)
    # Positives: every pair inside a duplicate cluster, among this split's members.
    left, right = _pairs_within_groups(clusters[members])
    positives = as_id_set(space.encode(left, right))
    inside = (local[a] >= 0) & (local[b] >= 0)
    stated = as_id_set(space.encode(local[a[inside & (label == 0)]], local[b[inside & (label == 0)]]))
    flipped = isin_sorted(stated, positives)
    notes.setdefault("stated_negatives_made_positive_by_closure", {})[split] = int(flipped.sum())
    stated_pos = as_id_set(space.encode(local[a[inside & (label == 1)]],
                                        local[b[inside & (label == 1)]]))
    notes.setdefault("stated_duplicates", {})[split] = len(stated_pos)
    return Pool("qqp", split, texts[members], texts[members], True, positives, stated[~flipped])


def build_wikiqa(raw: dict, *, seed: int = 0, max_items=None) -> Task:
    """Answer-sentence selection task: each split's questions x every unique sentence."""
    frames = {split: raw[split] for split in SPLITS}
    for split, frame in frames.items():
        if frame.empty:
            raise ValueError(f"WikiQA {split} split has no rows")
    rng = np.random.default_rng(seed)
    kept = {split: _sample_questions(frames[split], _cap(max_items, split), rng) for split in SPLITS}
    frames = {split: frames[split][frames[split]["question"].isin(kept[split])] for split in SPLITS}
    everything = pd.concat(list(frames.values()), ignore_index=True)
    with_titles = bool(everything["title"].notna().all())
    right_texts = _wikiqa_right_texts(everything, with_titles)
    right_index = pd.Index(right_texts)
    notes = {"right_side": "Title . Sentence" if with_titles else "sentence only (titles missing)",
             "rows_with_title": int(everything["title"].notna().sum()),
             "rows": len(everything), "n_right": len(right_texts),
             "subsampled": max_items is not None}
    splits = {}
    for split in SPLITS:
        splits[split] = _wikiqa_pool(split, frames[split], right_texts, right_index,
                                     with_titles, notes)
    notes["questions_in_several_splits"] = _shared_questions(splits)
    return Task("wikiqa", splits, notes)


def _wikiqa_right_texts(frame: pd.DataFrame, with_titles: bool) -> np.ndarray:
    return pd.unique(_wikiqa_right_column(frame, with_titles)).astype(object)


def _wikiqa_right_column(frame: pd.DataFrame, with_titles: bool) -> pd.Series:
    if with_titles:
        return frame["title"] + " . " + frame["sentence"]
    return frame["sentence"]


def _wikiqa_pool(split, frame, right_texts, right_index, with_titles, notes) -> Pool:
    questions = pd.unique(frame["question"]).astype(object)
    q = pd.Index(questions).get_indexer(frame["question"])
    s = right_index.get_indexer(_wikiqa_right_column(frame, with_titles))
    space = PairSpace(len(questions), len(right_texts), False)
    codes = space.encode(q, s)
    label = frame["label"].to_numpy()
    positives = as_id_set(codes[label == 1])
    stated = as_id_set(codes[label == 0])
    notes.setdefault("stated_negative_conflicts", {})[split] = int(isin_sorted(stated, positives).sum())
    return Pool("wikiqa", split, questions, right_texts, False, positives,
                setdiff_sorted(stated, positives))


def _shared_questions(splits: dict[str, Pool]) -> int:
    seen = [set(pool.left_texts) for pool in splits.values()]
    return len((seen[0] & seen[1]) | (seen[0] & seen[2]) | (seen[1] & seen[2]))


def _sample_questions(frame: pd.DataFrame, cap, rng) -> np.ndarray:
    questions = pd.unique(frame["question"])
    if cap is None or cap >= len(questions):
        return questions
    return questions[np.sort(rng.choice(len(questions), size=cap, replace=False))]


# ---------------------------------------------------------------------------------------------
# Graph helpers (vectorised: no Python loop over pairs)


def _components(n: int, a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Connected-component label of each of ``n`` items under the edges ``(a, b)``."""
    graph = coo_matrix((np.ones(len(a), dtype=np.int8), (a, b)), shape=(n, n))
    return connected_components(graph, directed=False)[1].astype(np.int64)


def _assign_splits(groups: np.ndarray, fractions, rng) -> tuple[np.ndarray, np.ndarray]:
    """Split index per item: components in random order, cut at the cumulative fractions."""
    sizes = np.bincount(groups)
    order = rng.permutation(len(sizes))
    ends = np.cumsum(sizes[order])
    middle = (ends - sizes[order] / 2.0) / ends[-1]
    cuts = np.cumsum(fractions)[:-1]
    split_of_group = np.empty(len(sizes), dtype=np.int64)
    split_of_group[order] = np.searchsorted(cuts, middle, side="right")
    rank = np.empty(len(sizes), dtype=np.int64)
    rank[order] = np.arange(len(sizes))
    return split_of_group[groups], rank


def _cap_by_group(members: np.ndarray, groups: np.ndarray, rank: np.ndarray, cap) -> np.ndarray:
    """Keep whole components, in their random order, until ``cap`` items are reached."""
    if cap is None or cap >= len(members):
        return members
    order = members[np.argsort(rank[groups[members]], kind="stable")]
    g = groups[order]
    starts = np.r_[True, g[1:] != g[:-1]]
    group_end = np.cumsum(np.bincount(np.cumsum(starts) - 1))  # items up to each group's end
    n_groups = max(1, int(np.searchsorted(group_end, cap, side="right")))
    return np.sort(order[: group_end[n_groups - 1]])


def _pairs_within_groups(labels: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """All index pairs (i < j by position) of items sharing a label."""
    order = np.argsort(labels, kind="stable")
    sorted_labels = labels[order]
    starts = np.r_[0, np.flatnonzero(sorted_labels[1:] != sorted_labels[:-1]) + 1]
    sizes = np.diff(np.r_[starts, len(labels)])
    group_end = np.repeat(starts + sizes, sizes)
    position = np.arange(len(labels))
    counts = group_end - position - 1  # partners after each item in its group
    left = np.repeat(position, counts)
    offset = np.arange(counts.sum()) - np.repeat(np.cumsum(counts) - counts, counts)
    right = np.repeat(position + 1, counts) + offset
    return order[left], order[right]


def _check_fractions(fractions) -> tuple[float, float, float]:
    values = tuple(float(f) for f in fractions)
    if len(values) != 3 or min(values) <= 0 or abs(sum(values) - 1.0) > 1e-6:
        raise ValueError(f"fractions must be three positive numbers summing to 1, got {fractions!r}")
    return values


def _cap(max_items, split):
    cap = max_items.get(split) if isinstance(max_items, dict) else max_items
    if cap is not None and (not isinstance(cap, (int, np.integer)) or cap < 2):
        raise ValueError(f"max_items for {split} must be an integer >= 2 or None, got {cap!r}")
    return cap
