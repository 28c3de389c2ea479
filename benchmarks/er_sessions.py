"""A whole simulated labelling session on a real matching table, and what its labels are worth.

    python benchmarks/er_sessions.py walmart_amazon --budget 1408 --batch 128 \
        --out benchmarks/results/er/walmart_amazon-uncertainty-seed0.json

Tables: ``walmart_amazon`` and ``dblp_acm`` (``<data>/er/``), ``many_to_many`` (the synthetic
catalogues of ``fixtures/records/many_*.csv``, records with 1-4 matches), and ``qqp``: the QQP subset's
training questions as one table of records, their duplicate pairs the truth. The oracle (the
table's true matches) plays the person in a :class:`LabelingSession` (the loop of
notebook 03, CosineBERT retrained each round, 10% audit pairs), timed end to end; with
``--coverage N``, each audit round's design is also redrawn N times to check how often the
recall interval covers the truth, and at the export 5N sets of audit rounds are drawn afresh
over the final model's strata to check the export's intervals (``coverage`` per matcher). Then the
matches are found two ways, each scored against the truth (precision, recall, F1 over all
pairs of the two tables):

- ``bi-encoder``: the final CosineBERT's candidates above the threshold its calibration expects
  to give ``--target-precision``, with the person's own answers applied;
- ``cross-encoder``: ConcatBERT (a cross-encoder from the same MiniLM checkpoint) trained on the
  session's training labels, re-scoring the same candidates, its threshold chosen the same way
  from its sigmoid; the person's answers applied;
- for both, the audit's estimate (what ``export(matcher="auto")`` chooses by, recorded as
  ``chosen``; ``export_f1`` is the chosen one's true F1) and the best F1 any threshold would
  give (``best_f1``): an upper bound a person could not pick without the truth.

DIAL (Jain, Sarawagi and Sen, PVLDB 2022: RoBERTa on a GPU, 1,408 labels) reports F1 0.898 on
Walmart-Amazon and 0.991 on DBLP-ACM; its copy of Walmart-Amazon lists 1,154 matches, ours 853.
Not a test: no threshold is asserted.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
COMMIT = os.popen(f"git -C {ROOT} rev-parse --short HEAD").read().strip()  # the code loaded

TABLES = {  # folder under <data>/er: (left file, right file, text fields)
    "walmart_amazon": ("walmart.csv", "amazon.csv", ["title", "brand", "modelno", "price"]),
    "dblp_acm": ("dblp.csv", "acm.csv", ["title", "authors", "venue", "year"]),
    # the synthetic many-to-many catalogues (fixtures/make_fixtures.py): records match 1-4 others
    "many_to_many": ("many_a.csv", "many_b.csv", ["title", "brand", "modelno", "price"]),
}
ONE_TABLE = {"qqp"}  # built-in tasks used as one table of records (duplicates within)
DIAL = {
    "walmart_amazon": {"dial": 0.898, "random": 0.588},
    "dblp_acm": {"dial": 0.991, "random": 0.978},
}


def best_f1(ids: np.ndarray, scores: np.ndarray, positives: np.ndarray) -> dict:
    """The best F1 over every threshold on ``scores`` (candidates ``ids``): an upper bound."""
    order = np.argsort(-scores, kind="stable")
    hit = np.cumsum(np.isin(ids[order], positives))
    n = np.arange(1, len(ids) + 1)
    f1 = 2 * hit / (n + len(positives))
    k = int(np.argmax(f1))
    return {
        "best_f1": float(f1[k]),
        "at_matches": k + 1,
        "best_threshold": float(scores[order][k]),
        "candidate_recall": float(hit[-1] / len(positives)) if len(ids) else 0.0,
    }


def session_arguments(parser: argparse.ArgumentParser) -> None:
    """The table and the session's settings (the ones that key its run folder), on ``parser``."""
    parser.add_argument("table", choices=sorted(TABLES) + sorted(ONE_TABLE))
    parser.add_argument("--strategy", default="uncertainty")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--budget", type=int, default=1408)
    parser.add_argument("--batch", type=int, default=128)
    parser.add_argument("--candidate-m", type=int, default=20)
    parser.add_argument("--audit-share", type=float, default=0.1)
    parser.add_argument("--epochs", type=int, default=2)
    parser.add_argument(
        "--precision",
        default=None,
        choices=["fp32", "bf16"],
        help="training arithmetic (default: bf16 on a CPU with native bfloat16, "
        "else fp32; recorded in the output)",
    )
    parser.add_argument(
        "--coverage",
        type=int,
        default=0,
        help="fresh audits redrawn each round to check the recall interval",
    )
    parser.add_argument(
        "--one-to-one",
        action="store_true",
        help="never ask a pair of a record already matched (each record matches at most one)",
    )
    parser.add_argument(
        "--matches-per-record",
        type=float,
        default=None,
        help="the session's stated bound on the recall estimate's prior (default: none)",
    )


def open_session(args, folder):
    """The :class:`LabelingSession` of ``args`` (from :func:`session_arguments`) in ``folder``,
    the table's true matches as the oracle: a new session, or the one ``folder`` holds."""
    from pairlab.session import LabelingSession

    left, right, oracle = records(args.table)
    return LabelingSession(
        left,
        folder,
        right=right,
        strategy=args.strategy,
        batch=args.batch,
        budget=args.budget,
        annotator="oracle",
        oracle_pairs=oracle,
        audit_share=args.audit_share,
        candidate_m=args.candidate_m,
        seed=args.seed,
        epochs=args.epochs,
        coverage=args.coverage,
        matches_per_record=args.matches_per_record,
        one_to_one=args.one_to_one,
        precision=args.precision,
        batch_order="length",
    )


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    session_arguments(parser)
    parser.add_argument("--ce-epochs", type=int, default=3)
    parser.add_argument("--target-precision", type=float, default=0.9)
    parser.add_argument(
        "--folder", default=None, help="the session folder (default: a temporary one)"
    )
    parser.add_argument(
        "--no-export",
        action="store_true",
        help="stop after the session (its labels and coverage checks): no matches, no F1",
    )
    parser.add_argument(
        "--no-cross-encoder",
        action="store_true",
        help="score the bi-encoder's export only: no cross-encoder to train (most of an "
        "export's time; the audit chose the bi-encoder in every Walmart-Amazon and DBLP-ACM "
        "session so far)",
    )
    parser.add_argument("--out", required=True)
    args = parser.parse_args(argv)

    import tempfile

    from pairlab.active.store import round_ids
    from pairlab.models.cosinebert import CosineBERT
    from pairlab.models.training import TrainConfig, native_bf16
    from pairlab.session import export as pick
    from pairlab.session.audit import SessionAudit
    from pairlab.session.export import find_matches, label_frame, pair_quality

    if args.precision is None:
        args.precision = "bf16" if native_bf16() else "fp32"
        print(
            f"precision {args.precision} (this CPU {'has' if native_bf16() else 'lacks'} native bfloat16)"
        )
    folder = Path(args.folder or tempfile.mkdtemp(prefix=f"er-{args.table}-"))
    seconds = {}
    started = time.perf_counter()
    session = open_session(args, folder)
    result = session.run()
    seconds["session"] = time.perf_counter() - started
    pool, positives = session.pool, session.pool.positives
    if args.no_export:  # what the coverage table needs: the session's own record
        labels = label_frame(pool, session.store)
        answered = labels[labels["label"].isin((0, 1))]
        out = {
            **{k: getattr(args, k) for k in ("table", "strategy", "seed", "budget", "batch")},
            **{k: getattr(args, k) for k in ("candidate_m", "audit_share", "epochs", "precision")},
            "matches_per_record": args.matches_per_record,
            "one_to_one": args.one_to_one,
            "labels": int(len(answered)),
            "positives_labelled": int(answered["label"].sum()),
            "true_matches": int(len(positives)),
            "rounds": len(result["records"]),
            "seconds": {k: round(v, 1) for k, v in seconds.items()},
            "round_seconds": [r["seconds"] for r in result["records"]],
            "estimate": session.estimate().get("sentence"),
            "coverage": session.coverage_checks(),
            "cpus": os.cpu_count(),
        }
        Path(args.out).parent.mkdir(parents=True, exist_ok=True)
        Path(args.out).write_text(json.dumps(out, indent=1) + "\n")
        print(json.dumps({k: out[k] for k in ("labels", "positives_labelled", "seconds")}))
        return 0

    t = time.perf_counter()  # the export as the session writes it, with the bi-encoder
    session.export(folder / "export", target_precision=args.target_precision, matcher="bi-encoder")
    seconds["export"] = time.perf_counter() - t
    labels = label_frame(pool, session.store)
    answered = labels[labels["label"].isin((0, 1))]
    model = CosineBERT.load(folder / "export" / "model")
    found = pick.candidates(pool, model, args.candidate_m)
    trained = np.unique(np.concatenate(round_ids(folder / "run")))
    t = time.perf_counter()  # what matcher="auto" adds: the cross-encoder and the audit's choice
    bi = pick.bi_encoder(model, found, args.target_precision)
    training = answered[np.isin(answered["pair_id"], trained)]
    options = [bi]
    if not args.no_cross_encoder and pick.untrainable(training["label"]) is None:
        options.append(
            pick.cross_encoder(
                pool,
                found,
                training,
                args.target_precision,
                config=TrainConfig(
                    epochs=args.ce_epochs,
                    seed=args.seed,
                    precision=args.precision,
                    batch_order="length",
                ),
            )
        )
    audit = SessionAudit(folder / "audit", matches_per_record=args.matches_per_record)
    estimate = audit.estimate(session.store, pool.space)
    best, choice = pick.choose(
        options,
        found,
        said_yes=np.sort(answered.loc[answered["label"] == 1, "pair_id"].to_numpy(np.int64)),
        labelled=np.sort(labels["pair_id"].to_numpy(np.int64)),
        rounds=pick.audit_rounds(audit, session.store, trained),
        total=estimate["total"] if estimate else None,
        total_ci=estimate["total_ci"] if estimate else None,
    )
    seconds["cross_encoder_and_choice"] = time.perf_counter() - t
    scored = {}
    for matcher in options:
        frame, decided = find_matches(found.ids, matcher, labels, pool)
        scored[matcher.name] = {
            **pair_quality(frame["pair_id"].to_numpy(np.int64), positives),
            "threshold": matcher.threshold,
            "audit_estimate": matcher.estimate,
            "expected_precision": decided["expected_precision"],
            **best_f1(found.ids, matcher.proba, positives),
        }
        scored[matcher.name]["covered"] = {  # does the audit's interval hold the true value?
            k: bool(ci[0] <= scored[matcher.name][k] <= ci[1])
            for k in ("precision", "recall", "f1")
            if (ci := matcher.estimate.get(f"{k}_ci")) is not None
        }
        if estimate and args.coverage:
            scored[matcher.name]["coverage"] = export_coverage(
                pool, model, found, matcher, labels, audit, estimate, repeats=args.coverage * 5
            )

    out = {
        "table": args.table,
        "strategy": args.strategy,
        "seed": args.seed,
        "budget": args.budget,
        "batch": args.batch,
        "candidate_m": args.candidate_m,
        "audit_share": args.audit_share,
        "epochs": args.epochs,
        "ce_epochs": None if args.no_cross_encoder else args.ce_epochs,
        "precision": args.precision,
        "target_precision": args.target_precision,
        "matches_per_record": args.matches_per_record,
        "one_to_one": args.one_to_one,
        "labels": int(len(answered)),
        "positives_labelled": int(answered["label"].sum()),
        "true_matches": int(len(positives)),
        "rounds": len(result["records"]),
        "label_recall": float(
            np.isin(answered.loc[answered["label"] == 1, "pair_id"], positives).sum()
            / len(positives)
        ),
        "matchers": scored,
        "chosen": choice,
        "export_f1": scored[best.name]["f1"],
        "seconds": {k: round(v, 1) for k, v in seconds.items()},
        "round_seconds": [r["seconds"] for r in result["records"]],
        "estimate": session.estimate().get("sentence"),
        "coverage": session.coverage_checks(),
        "reference": DIAL.get(args.table),
        "cpus": os.cpu_count(),
        "commit": COMMIT,
    }
    Path(args.out).parent.mkdir(parents=True, exist_ok=True)
    Path(args.out).write_text(json.dumps(out, indent=1) + "\n")
    print(
        json.dumps(
            {
                k: out[k]
                for k in (
                    "labels",
                    "positives_labelled",
                    "matchers",
                    "chosen",
                    "export_f1",
                    "seconds",
                )
            },
            indent=1,
        )
    )
    return 0


def export_coverage(pool, model, found, matcher, labels, audit, estimate, *, repeats, seed=0):
    """How often the export's intervals hold the truth over fresh audits: ``repeats`` times,
    as many rounds as the session audited, each of its size, drawn over the final model's score
    strata among the pairs unlabelled now, answered by the truth; the session's interval of the
    total kept. Returns the share covered and the mean width of ``tp`` (the true positives
    among the predictions), precision, recall and F1."""
    from pairlab.data.pairs import isin_sorted
    from pairlab.evaluation.audit import draw_audit, stratify
    from pairlab.session import export as pick

    answered = labels[labels["label"].isin((0, 1))]
    labelled = np.sort(answered["pair_id"].to_numpy(np.int64))
    yes = np.sort(answered.loc[answered["label"] == 1, "pair_id"].to_numpy(np.int64))
    positives = pool.positives
    left = model.embed(pool.left_texts, show_progress=False)
    right = left if pool.symmetric else model.embed(pool.right_texts, show_progress=False)
    strata = stratify(
        pool.space, left, right, probability=model.calibration.proba, n_strata=12, seed=seed
    )
    sizes = [len(audit.load(r)[0].ids) for r in audit.rounds()]
    prior = audit.bound(pool.space, audit.assumption(pool.space, labelled, answered["label"]))
    truth_labels = isin_sorted(labelled, positives).astype(np.int64)
    calls = matcher.predicted(found.ids)
    rng = np.random.default_rng(seed)
    tallies = {k: [] for k in ("tp", "precision", "recall", "f1")}
    for _ in range(repeats):
        designs = [  # a small audit goes where it informs most, as the session draws it
            draw_audit(
                strata,
                n,
                labelled,
                truth_labels,
                seed=rng,
                floor=int(n >= strata.n_strata),
                **prior,
            )
            for n in sizes
        ]
        drawn = np.unique(np.concatenate([d.ids for d in designs]))
        rounds = [(d, isin_sorted(d.ids, positives).astype(np.int64)) for d in designs]
        predicted = np.setdiff1d(np.setdiff1d(calls, labelled), drawn)
        said_yes = np.union1d(yes, drawn[isin_sorted(drawn, positives)])
        counts = pick.audit_counts(rounds, matcher, found, predicted)
        ci = pick.quality_intervals(
            len(said_yes), len(predicted), counts["tp_ci"], estimate["total_ci"]
        )
        tp = int(isin_sorted(predicted, positives).sum())
        exported = len(said_yes) + len(predicted)
        truth = {
            "tp": tp,
            "precision": (len(said_yes) + tp) / exported,
            "recall": (len(said_yes) + tp) / len(positives),
            "f1": 2 * (len(said_yes) + tp) / (exported + len(positives)),
        }
        ci["tp_ci"] = counts["tp_ci"]
        for k, held in tallies.items():
            lo, hi = ci[f"{k}_ci"]
            held.append((lo <= truth[k] <= hi, hi - lo))
    return {
        "repeats": repeats,
        "rounds": len(sizes),
        **{k: float(np.mean([c for c, _ in v])) for k, v in tallies.items()},
        "mean_width": {k: float(np.mean([w for _, w in v])) for k, v in tallies.items()},
    }


def records(table: str):
    """``(left, right, oracle pairs)`` of ``table``: an ER table pair with its matches file, or
    the training split of a built-in task as one table (ids are the question numbers, the
    oracle its imputed duplicate pairs); ``right`` is None for one table."""
    import pandas as pd

    from pairlab.data import load_items

    data = Path(os.environ.get("PAIRLAB_DATA_DIR", ROOT.parent / "shared" / "data"))
    if table in ONE_TABLE:
        from pairlab.data.loaders import load_task

        pool = load_task(table)["train"]
        frame = pd.DataFrame(
            {"id": np.arange(len(pool.left_texts)).astype(str), "text": pool.left_texts}
        )
        i, j = pool.space.decode(pool.positives)
        oracle = pd.DataFrame({"left": i.astype(str), "right": j.astype(str)})
        return load_items(frame, text="text", id="id", name=table), None, oracle
    left_file, right_file, fields = TABLES[table]
    folder = data / "er" / table
    matches = folder / "matches.csv"
    if table == "many_to_many":
        folder = ROOT / "fixtures" / "records"
        matches = folder / "many_matches.csv"
    return (
        load_items(folder / left_file, text=fields, id="id", name=left_file.split(".")[0]),
        load_items(folder / right_file, text=fields, id="id", name=right_file.split(".")[0]),
        matches,
    )


if __name__ == "__main__":
    sys.exit(main())
