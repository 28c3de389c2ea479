"""A labelling session at one person's pace, or a team's (``--people N``: N pages at once, as
``python -m pairlab.label serve`` serves them): the worker runs the rounds as in notebook 10
(``annotator="person"``) while this process answers the queued pairs as the widget would, each
person one every ``--pace`` seconds, from the table's true matches. It measures what they meet:

- the time from this script's start (imports included) to the first pair on show;
- every wait (a person with no pair to answer while rounds remain), with the worker's status
  at the time, and the share of the session until the last answer (the budget asked) in which
  any person waited, and the seconds of it before the budget's last pair was taken (after it,
  no pair is left to show: the other pages wait for the last answers); the same read back from
  the answers' times (a page's gap between two answers beyond ``pace``: ``answer_gaps``),
  which ``--record-only`` uses alone to make the record of a finished session folder whose
  measuring process was lost;
- each round's stages (the run's records), and the end: the final model's training and the
  export's preparation, then the export itself (``session.export``) and its matches' quality;
- with ``--coverage N``, how often fresh audits' intervals hold the truth: each audit round's
  (the worker redraws it N times) and the export's (5N times, as ``er_sessions.py`` checks it).

    python benchmarks/person_pace.py walmart_amazon --budget 300 --batch 64 --one-to-one \\
        --folder /tmp/pace --out benchmarks/results/er/person_pace-walmart_amazon-b300.json

Not a test: nothing is asserted; the times depend on the machine and its load (``load``).
"""

from __future__ import annotations

import time

START = time.perf_counter()

import argparse  # noqa: E402
import json  # noqa: E402
import os  # noqa: E402
import sys  # noqa: E402
import threading  # noqa: E402
from pathlib import Path  # noqa: E402

import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from benchmarks.er_sessions import TABLES  # noqa: E402
from pairlab.data import load_items  # noqa: E402
from pairlab.models.inference import backend  # noqa: E402
from pairlab.paths import data_dir  # noqa: E402
from pairlab.session import LabelingSession  # noqa: E402

COMMIT = os.popen(f"git -C {ROOT} rev-parse --short HEAD").read().strip()  # the code measured


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("table", choices=["dblp_acm", "walmart_amazon"])
    parser.add_argument("--budget", type=int, default=300)
    parser.add_argument("--batch", type=int, default=64)
    parser.add_argument("--pace", type=float, default=3.0, help="seconds a pair")
    parser.add_argument("--people", type=int, default=1, help="pages answering at once")
    parser.add_argument("--spares", type=int, default=None, help="a round's (default: topped up)")
    parser.add_argument("--one-to-one", action="store_true")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--matcher", default="bi-encoder")
    parser.add_argument(
        "--coverage",
        type=int,
        default=0,
        help="redraw each audit round N times (and the export's audit 5N) against the truth",
    )
    parser.add_argument("--folder", type=Path, required=True)
    parser.add_argument("--out", type=Path, required=True)
    parser.add_argument("--record-only", action="store_true", help="of a finished --folder")
    args = parser.parse_args()

    left_file, right_file, fields = TABLES[args.table]
    folder = data_dir() / "er" / args.table
    left = load_items(folder / left_file, text=fields, id="id")
    right = load_items(folder / right_file, text=fields, id="id")
    session = LabelingSession(
        left,
        args.folder,
        right=right,
        annotator="person",
        oracle_pairs=folder / "matches.csv",  # read here to answer, never by the worker
        budget=args.budget,
        batch=args.batch,
        spares=args.spares,
        one_to_one=args.one_to_one,
        seed=args.seed,
        coverage=args.coverage,  # checked by the worker, which answers nothing from the truth
    )
    store, pool = session.store, session.pool
    if args.record_only:  # the pages' own measures are gone: the answers' times alone
        names = store.annotators()
        write(args, session, None, [None] * len(names), list(names.values()), None)
        return
    session.start()
    started = time.perf_counter() - START
    firsts, counts, waits = [], [], []

    def person(k: int) -> None:
        """One page: the next pair no other page holds, answered after ``pace`` seconds."""
        name = "person" if args.people == 1 else f"person{k}"
        first, answers, waiting = None, 0, None
        while True:
            item = store.next_pair(annotator=name, page=name)
            now = time.perf_counter() - START
            if item is None:
                worker = store.status().get("worker", {}).get("value", "")
                if worker.startswith(("finished", "stopped")) or not session.process.is_alive():
                    break
                if waiting is None:
                    waiting = {"page": k, "from": now, "at": time.time(), "status": worker}
                time.sleep(0.1)
                continue
            if waiting is not None:
                waits.append({**waiting, "seconds": now - waiting["from"]})
                waiting = None
            first = now if first is None else first
            time.sleep(args.pace)
            label = int(pool.labels(np.array([item.pair_id]))[0])
            store.answer(item.pair_id, label, annotator=name, seconds=args.pace)
            answers += 1
        if waiting is not None:
            waits.append({**waiting, "seconds": time.perf_counter() - START - waiting["from"]})
        firsts.append(first)
        counts.append(answers)

    timeline, done = [], threading.Event()

    def watch() -> None:
        """The worker's status as it changes: its steps' times, the stages' gaps included."""
        while not done.wait(0.5):
            worker = store.status().get("worker", {}).get("value", "")
            if not timeline or timeline[-1][1] != worker:
                timeline.append((round(time.perf_counter() - START, 1), worker))

    pages = [threading.Thread(target=person, args=(k,)) for k in range(args.people)]
    for thread in [*pages, threading.Thread(target=watch, daemon=True)]:
        thread.start()
    for page in pages:
        page.join()
    session.wait()
    done.set()
    finished = time.perf_counter() - START
    times = {"start": started, "finished": finished, "timeline": timeline}
    write(args, session, waits, firsts, counts, times)


def write(args, session, waits, firsts, counts, times) -> None:
    """The record of the finished session (``waits`` None: from the answers' times alone)."""
    store, pool = session.store, session.pool
    first = min((f for f in firsts if f is not None), default=None)
    answers = sum(counts)
    result = session.result()
    records = result["records"]
    # the rounds' end: the last answer (the budget asked; a last round may choose nothing)
    history = store.history()
    answered = history[history["annotator"] != "given"]
    stamps = pd.to_datetime(answered["created_at"]).map(pd.Timestamp.timestamp)
    end, begin = stamps.max(), stamps.min()
    gaps = answer_gaps(answered.assign(at=stamps), args.pace)
    gap_waiting = union_seconds([(a, min(b, end)) for a, b in gaps])
    out = handed_out(answered, stamps, args.budget) or end
    if waits is None:
        any_waiting, first = gap_waiting, None
        left_waiting = union_seconds([(a, min(b, out)) for a, b in gaps])
    else:
        between = [w for w in waits if w["at"] < end]
        any_waiting = union_seconds([(w["at"], min(w["at"] + w["seconds"], end)) for w in between])
        left_waiting = union_seconds([(w["at"], min(w["at"] + w["seconds"], out)) for w in waits])
    times = times or {}
    export_start = time.perf_counter()
    exported = session.export(args.folder / "export", matcher=args.matcher)
    export_seconds = time.perf_counter() - export_start
    quality = session.metrics(exported, oracle_pairs=True)
    covered = export_check(session, args.coverage * 5) if args.coverage else None
    record = {
        "table": args.table,
        "budget": args.budget,
        "batch": args.batch,
        "pace": args.pace,
        "people": args.people,
        "spares": args.spares,
        "one_to_one": args.one_to_one,
        "seed": args.seed,
        "records": int(pool.space.n_left + pool.space.n_right),
        "cpus": os.cpu_count(),
        "commit": COMMIT,
        "inference": backend(),  # the worker's encoder ($PAIRLAB_INFERENCE_BACKEND)
        "precision": session.config.precision,  # its training arithmetic
        "load": os.getloadavg(),
        "start_seconds": times.get("start"),
        "first_pair_seconds": first,
        "answers": answers,
        "labels": result["labels"],
        "rounds": len(records),
        "round_stages": [r["seconds"] for r in records],
        "waits": waits,
        "wait_between_rounds_seconds": any_waiting,
        "answer_gaps_wait_seconds": gap_waiting,  # the same from the answers' times
        "wait_with_pairs_left_seconds": left_waiting,  # before the budget's last pair was taken
        "answers_per_person": counts,
        "session_seconds": end
        - (begin - args.pace if waits is None else time.time() - (time.perf_counter() - START))
        - (first or 0),
        "end_wait_seconds": None
        if waits is None
        else sum(w["seconds"] for w in waits if w["at"] >= end),
        "finished_seconds": times.get("finished"),
        "export_seconds": export_seconds,
        "export": {
            k: exported.get(k) for k in ("matches", "by_model", "labelled_matches", "chosen")
        },
        "quality": {k: quality.get(k) for k in ("precision", "recall", "f1", "true_recall")},
        "answers_by_kind": {  # the matches among each kind of pair asked
            kind: {"answers": len(g), "matches": int((g["label"] == 1).sum())}
            for kind, g in answered.drop_duplicates("pair_id", keep="last").groupby("kind")
        },
        "timeline": times.get("timeline"),
        "estimate": quality.get("est_sentence"),
        "coverage": session.coverage_checks(),  # each audit round's, with --coverage
        "export_coverage": covered,
    }
    record["wait_share"] = record["wait_between_rounds_seconds"] / max(record["session_seconds"], 1)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(record, indent=1, default=str) + "\n")
    print(
        json.dumps(
            {k: v for k, v in record.items() if k not in ("waits", "round_stages", "timeline")},
            default=str,
        )
    )


def export_check(session, repeats: int) -> dict | None:
    """How often the bi-encoder export's intervals hold the truth over ``repeats`` fresh audits
    (:func:`benchmarks.er_sessions.export_coverage`, as the solo records check it); None
    before any audit estimate."""
    from benchmarks.er_sessions import export_coverage
    from pairlab.session import export as pick
    from pairlab.session.audit import SessionAudit

    pool, folder = session.pool, session.folder
    model = pick.final_model(folder)
    found = pick.candidates(pool, model, session.config.candidate_m)
    audit = SessionAudit(folder / "audit", matches_per_record=session.settings.matches_per_record)
    estimate = audit.estimate(session.store, pool.space)
    if estimate is None:
        return None
    labels = pick.label_frame(pool, session.store)
    matcher = pick.bi_encoder(model, found, 0.9)  # the export's default target precision
    return export_coverage(pool, model, found, matcher, labels, audit, estimate, repeats=repeats)


def answer_gaps(answered: pd.DataFrame, pace: float, slack: float = 0.5) -> list[tuple]:
    """Each page's waits read from its answers' times ``at``: the time between an answer and
    the next beyond ``pace`` (by more than ``slack``: a key press's own latency aside)."""
    out = []
    for _, rows in answered.sort_values("at").groupby("annotator"):
        at = rows["at"].to_numpy()
        wait = np.diff(at) - pace
        out += [(a, a + w) for a, w in zip(at[:-1], wait) if w > slack]
    return out


def handed_out(answered: pd.DataFrame, stamps: pd.Series, budget: int) -> float | None:
    """When the budget's last pair was taken (its answer's time less the person's seconds on
    it): after it, a page with no pair waits for nothing the session could give. None where
    the budget was not all answered."""
    if len(answered) < budget:
        return None
    return float((stamps - answered["seconds"].fillna(0)).max())


def union_seconds(intervals) -> float:
    """The seconds covered by any of ``intervals`` ``(start, end)``."""
    total, reach = 0.0, -np.inf
    for start, end in sorted(intervals):
        if end > max(start, reach):  # an interval that ends before it starts is empty
            total += end - max(start, reach)
            reach = end
    return total


if __name__ == "__main__":
    main()
