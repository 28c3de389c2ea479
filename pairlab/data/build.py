"""All-pairs tasks from labelled pairs: the two builders behind :func:`pairlab.data.load_pairs`,
taking rows with the columns ``left, right, label`` (int8), ``left_key, right_key`` (what makes
two rows the same item) and, for an asymmetric task with its own split, ``split``."""

from __future__ import annotations

import numpy as np
import pandas as pd
from scipy.sparse import coo_matrix, csr_matrix, triu
from scipy.sparse.csgraph import connected_components

from .pairs import PairSpace, as_id_set, isin_sorted, setdiff_sorted
from .tasks import SPLITS, Pool, Task

__all__ = ["build_symmetric", "build_asymmetric", "components", "pairs_within_groups"]


def build_symmetric(name: str, rows: pd.DataFrame, *, seed, fractions, max_items, keyed) -> Task:
    """Symmetric task (duplicates, paraphrases): the items are the distinct keys of both columns,
    sorted; positives the transitive closure of the stated ones; items split by connected
    components of all stated pairs, so none crosses splits. ``keyed``: the keys are ids."""
    fractions = check_fractions(fractions)
    texts, a, b, label, notes = _items(rows, keyed)
    n = len(texts)
    clusters = components(n, a[label == 1], b[label == 1])
    groups = components(n, a, b)
    rng = np.random.default_rng(seed)
    split_of, group_order = _assign_splits(groups, fractions, rng)
    splits = {}
    for s, split in enumerate(SPLITS):
        members = np.flatnonzero(split_of == s)
        members = _cap_by_group(members, groups, group_order, cap_of(max_items, split))
        splits[split] = _symmetric_pool(name, split, members, texts, clusters, a, b, label, notes)
    notes |= {"fractions": list(fractions), "subsampled": max_items is not None}
    return Task(name, splits, notes)


def _items(rows: pd.DataFrame, keyed: bool):
    """The distinct items (sorted by key, with its first text) and the stated pairs as item
    indices, without self pairs."""
    keys = np.concatenate([rows["left_key"].to_numpy(), rows["right_key"].to_numpy()])
    all_texts = np.concatenate([rows["left"].to_numpy(object), rows["right"].to_numpy(object)])
    _, first, inverse = np.unique(keys, return_index=True, return_inverse=True)
    texts = all_texts[first]
    n_rows = len(rows)
    a, b = inverse[:n_rows].astype(np.int64), inverse[n_rows:].astype(np.int64)
    label = rows["label"].to_numpy(np.int8)
    self_pairs = a == b
    notes = {"n_rows": n_rows, "n_items": len(texts), "self_pairs_dropped": int(self_pairs.sum())}
    if keyed:
        # an id seen with another text keeps its first; texts shared by ids stay separate items
        notes["id_text_conflicts"] = int((all_texts != texts[inverse]).sum())
        notes["items_sharing_text_with_another_id"] = int(
            pd.Series(texts).duplicated(keep=False).sum()
        )
    keep = ~self_pairs
    return texts, a[keep], b[keep], label[keep], notes


def _symmetric_pool(name, split, members, texts, clusters, a, b, label, notes) -> Pool:
    local = np.full(len(texts), -1, dtype=np.int64)
    local[members] = np.arange(len(members))
    space = PairSpace(len(members), len(members), True)
    # Positives: every pair inside a positive cluster, among this split's members.
    left, right = pairs_within_groups(clusters[members])
    positives = as_id_set(space.encode(left, right))
    inside = (local[a] >= 0) & (local[b] >= 0)
    stated, stated_pos = (
        as_id_set(space.encode(local[a[inside & (label == y)]], local[b[inside & (label == y)]]))
        for y in (0, 1)
    )
    flipped = isin_sorted(stated, positives)
    notes.setdefault("stated_negatives_made_positive_by_closure", {})[split] = int(flipped.sum())
    notes.setdefault("stated_positives", {})[split] = len(stated_pos)
    return Pool(name, split, texts[members], texts[members], True, positives, stated[~flipped])


def build_asymmetric(name: str, rows: pd.DataFrame, *, seed, fractions, max_items) -> Task:
    """Asymmetric task (question -> answer): each split's left items (the ``split`` column's,
    else a random split by ``fractions``) x every distinct right item kept."""
    rng = np.random.default_rng(seed)
    notes = {}
    if "split" in rows:
        frames = {split: rows[rows["split"].to_numpy() == split] for split in SPLITS}
        for split, frame in frames.items():
            if frame.empty:
                raise ValueError(f"{name}: the {split} split has no rows")
        kept = {
            split: _sample(pd.unique(frames[split]["left_key"]), cap_of(max_items, split), rng)
            for split in SPLITS
        }
    else:
        fractions = check_fractions(fractions)
        frames, kept = _random_split(rows, fractions, max_items, rng)
        notes["fractions"] = list(fractions)
    frames = {split: frames[split][frames[split]["left_key"].isin(kept[split])] for split in SPLITS}
    everything = pd.concat(list(frames.values()), ignore_index=True)
    right_index, right_texts = _distinct(everything, "right")
    notes |= {"rows": len(everything), "n_right": len(right_texts)}
    notes["subsampled"] = max_items is not None
    splits = {
        split: _asymmetric_pool(name, split, frames[split], right_texts, right_index, notes)
        for split in SPLITS
    }
    seen = [set(pool.left_texts) for pool in splits.values()]
    shared = (seen[0] & seen[1]) | (seen[0] & seen[2]) | (seen[1] & seen[2])
    notes["left_items_in_several_splits"] = len(shared)
    return Task(name, splits, notes)


def _random_split(rows: pd.DataFrame, fractions, max_items, rng):
    """Left items split at random by ``fractions``, capped per split in that random order."""
    keys = pd.unique(rows["left_key"])
    items = np.arange(len(keys))
    split_of, rank = _assign_splits(items, fractions, rng)
    item_of_row = pd.Index(keys).get_indexer(rows["left_key"])
    frames, kept = {}, {}
    for s, split in enumerate(SPLITS):
        members = _cap_by_group(
            np.flatnonzero(split_of == s), items, rank, cap_of(max_items, split)
        )
        frames[split] = rows[split_of[item_of_row] == s]
        kept[split] = keys[members]
        if len(members) == 0:
            raise ValueError(
                f"{len(keys)} left items are too few to split in the proportions "
                f"{list(fractions)}: the {split} split is empty"
            )
    return frames, kept


def _asymmetric_pool(name, split, frame, right_texts, right_index, notes) -> Pool:
    left_index, left_texts = _distinct(frame, "left")
    q = left_index.get_indexer(frame["left_key"])
    s = right_index.get_indexer(frame["right_key"])
    space = PairSpace(len(left_texts), len(right_texts), False)
    codes = space.encode(q, s)
    label = frame["label"].to_numpy()
    positives = as_id_set(codes[label == 1])
    stated = as_id_set(codes[label == 0])
    notes.setdefault("stated_negative_conflicts", {})[split] = int(
        isin_sorted(stated, positives).sum()
    )
    return Pool(
        name, split, left_texts, right_texts, False, positives, setdiff_sorted(stated, positives)
    )


def _distinct(frame: pd.DataFrame, side: str) -> tuple[pd.Index, np.ndarray]:
    """The distinct keys of ``side`` in the order they appear, and each one's first text."""
    first = ~frame[f"{side}_key"].duplicated().to_numpy()
    return pd.Index(frame[f"{side}_key"].to_numpy()[first]), frame[side].to_numpy(object)[first]


def _sample(items: np.ndarray, cap, rng) -> np.ndarray:
    if cap is None or cap >= len(items):
        return items
    return items[np.sort(rng.choice(len(items), size=cap, replace=False))]


def components(n: int, a: np.ndarray, b: np.ndarray) -> np.ndarray:
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
    rank = np.argsort(order)  # each component's place in the random order
    split_of_group = np.searchsorted(cuts, middle, side="right")[rank]
    return split_of_group[groups], rank


def _cap_by_group(members: np.ndarray, groups: np.ndarray, rank: np.ndarray, cap) -> np.ndarray:
    """Keep whole components, in their random order, until ``cap`` items are reached."""
    if cap is None or cap >= len(members):
        return members
    order = members[np.argsort(rank[groups[members]], kind="stable")]
    g = groups[order]
    group_end = np.flatnonzero(np.r_[g[1:] != g[:-1], True]) + 1  # items up to each group's end
    n_groups = max(1, int(np.searchsorted(group_end, cap, side="right")))
    return np.sort(order[: group_end[n_groups - 1]])


def pairs_within_groups(labels: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """All index pairs ``(i, j)``, ``i < j``, of items sharing a label (int64 arrays)."""
    n = len(labels)
    member = csr_matrix((np.ones(n), (np.arange(n), labels)), shape=(n, labels.max(initial=-1) + 1))
    same = triu(member @ member.T, k=1, format="coo")  # item x item: 1 where labels agree
    return same.row.astype(np.int64), same.col.astype(np.int64)


def check_fractions(fractions) -> tuple[float, float, float]:
    values = tuple(float(f) for f in fractions)
    if len(values) != 3 or min(values) <= 0 or abs(sum(values) - 1.0) > 1e-6:
        raise ValueError(
            f"fractions must be three positive numbers summing to 1, got {fractions!r}"
        )
    return values


def cap_of(max_items, split):
    """The cap on ``split``'s left items: ``max_items`` itself, or its entry for ``split``."""
    cap = max_items.get(split) if isinstance(max_items, dict) else max_items
    if cap is not None and (not isinstance(cap, (int, np.integer)) or cap < 2):
        raise ValueError(f"max_items for {split} must be an integer >= 2 or None, got {cap!r}")
    return cap
