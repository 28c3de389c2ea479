"""A stand-in for the active-learning loop's worker process, for the labelling widget's browser
test: it posts each round's pairs of a synthetic pool to a SessionStore (the batch with audit
pairs mixed in, then spare pairs), waits until the batch and audit pairs are answered, then
"retrains": both CPU cores busy for ``--burn`` seconds, with status updates, before the next
round. The intervals it burned are written to the store's status (key "burns", JSON
``[[start, end, nice], ...]``, epoch seconds) so the test can tell keys pressed under load from
idle. ``--nice`` gives each round's retrain a niceness (a worker that lowers its priority, as
``os.nice(10)`` would, against one that does not).

    python fake_worker.py STORE --rounds 3 --batch 10 --audit 2 --spares 15 --burn 8 --nice 0,10

:func:`texts` and :func:`is_match` are the synthetic pool: the notebook shows the texts, the
simulated person answers with the truth.
"""

from __future__ import annotations

import argparse
import json
import multiprocessing
import os
import sys
import time
from pathlib import Path

_BRANDS = ["Koss", "Sony", "Acme & Sons", "Bose", "Denon"]
_THINGS = ["stereo equalizer", "headphones", "turntable <b>deluxe</b>", "speaker", "amplifier"]


def is_match(pair_id: int) -> bool:
    """The synthetic truth: one pair in four is a match."""
    return int(pair_id) % 4 == 0


def texts(pair_id: int) -> tuple[str, str]:
    """Two product records of ``pair_id`` as load_items writes them (``name: value | ...``),
    with HTML-like text that must show as text, and a long description on every seventh pair."""
    pair_id = int(pair_id)
    brand, thing = _BRANDS[pair_id % 5], _THINGS[pair_id // 5 % 5]
    left = f"title: {brand} {thing} model {pair_id} | brand: {brand} | price: {pair_id % 90 + 9}.99"
    if is_match(pair_id):
        right = f"title: {thing.upper()} by {brand}, model {pair_id} | brand: {brand.lower()}"
    else:
        other = _BRANDS[(pair_id + 2) % 5]
        right = f"title: {other} {_THINGS[(pair_id + 1) % 5]} model {pair_id + 7} | brand: {other}"
    if pair_id % 7 == 0:
        right += " | description: " + " ".join(
            f"line {k} of a long description." for k in range(80)
        )
    return left, right


def round_pairs(round: int, batch: int, audit: int, spares: int) -> tuple[list[int], list[str]]:
    """The pair ids and kinds a round posts: the batch with its audit pairs spread through it,
    then the spares."""
    ids = [1000 * round + k for k in range(batch)]
    kinds = ["batch"] * batch
    for k in range(audit):
        at = (k + 1) * (batch + audit) // (audit + 1)
        ids.insert(at, 1000 * round + 500 + k)
        kinds.insert(at, "audit")
    ids += [1000 * round + 800 + k for k in range(spares)]
    kinds += ["spare"] * spares
    return ids, kinds


def _spin(until: float, nice: int) -> None:
    os.nice(nice)
    x = 0
    while time.time() < until:
        x += 1


def burn(seconds: float, cores: int, nice: int = 0) -> tuple[float, float]:
    """Keep ``cores`` processes (at niceness ``nice``) busy for ``seconds``, as a model
    retraining would."""
    start = time.time()
    workers = [
        multiprocessing.Process(target=_spin, args=(start + seconds, nice)) for _ in range(cores)
    ]
    for worker in workers:
        worker.start()
    for worker in workers:
        worker.join()
    return start, time.time()


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("store")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--batch", type=int, default=10)
    parser.add_argument("--audit", type=int, default=2)
    parser.add_argument("--spares", type=int, default=15)
    parser.add_argument("--burn", type=float, default=8.0)
    parser.add_argument("--cores", type=int, default=2)
    parser.add_argument("--nice", default="0", help="niceness of each round's retrain, e.g. 0,10")
    args = parser.parse_args(argv)
    nices = [int(n) for n in args.nice.split(",")]
    sys.path.insert(0, str(Path(__file__).resolve().parents[2]))  # the repository's pairlab
    from pairlab.annotators.person import UNANSWERED, SessionStore

    store = SessionStore(args.store)
    burns: list[list[float]] = []
    labels = 0
    for round in range(args.rounds):
        ids, kinds = round_pairs(round, args.batch, args.audit, args.spares)
        store.post(round, ids, kinds)
        asked = [p for p, k in zip(ids, kinds) if k != "spare"]
        store.set_status("worker", f"round {round}: waiting for {len(asked)} answers")
        while (store.answers(asked) == UNANSWERED).any():
            time.sleep(0.05)
        labels = store.counts()["labels"]
        store.set_status("worker", f"training round {round + 1} on {labels:,} labels")
        nice = nices[min(round, len(nices) - 1)]
        burns.append([time.time(), None, nice])
        store.set_status("burns", json.dumps(burns))
        burns[-1] = [*burn(args.burn, args.cores, nice), nice]
        store.set_status("burns", json.dumps(burns))
    store.set_status("worker", f"finished: {args.rounds} rounds, {labels:,} labels")
    store.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
