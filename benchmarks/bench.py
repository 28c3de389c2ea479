"""pairlab against the tools a user would otherwise reach for, on the same inputs in one process.

    python benchmarks/bench.py [--profile demo] [--sizes 1e6 1e7 1e8] [--skip-round]
    python benchmarks/bench.py --markdown benchmarks/results/demo-vm.json   # one results table

Prints a table and writes ``benchmarks/results/<profile>-<host>.json``; ``make docs`` renders
benchmarks/README.md from those files. Rows:
candidate generation (faiss top-m pairs vs sentence-transformers' ``paraphrase_mining_embeddings``
and ``semantic_search``), encoding (pairlab's cached encoder path vs ``SentenceTransformer.encode``,
and as a share of this machine's measured matmul rate), the inference backends (encoding and
cross-encoder scoring on ONNX Runtime, float32 and int8, against torch, with their parity and
export cost), the all-pairs estimate vs exact enumeration at growing pools, and one
active-learning round per stage with peak memory, on torch and on ONNX Runtime.
Benchmarks are not tests: nothing here has a timing threshold.

    python benchmarks/bench.py --profile cpu --inference-only   # only the inference rows and rounds
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import platform
import resource
import socket
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from pairlab import data, profiles  # noqa: E402
from pairlab.data import Pool  # noqa: E402
from pairlab.data.pairs import PairSpace, as_id_set  # noqa: E402
from pairlab.evaluation import EvalConfig, build_eval_set, evaluate, exact_all_pairs  # noqa: E402
from pairlab.evaluation.candidates import neighbour_pairs  # noqa: E402
from pairlab.models import inference  # noqa: E402
from pairlab.models.embed import encode, load_encoder  # noqa: E402
from pairlab.report import bench_table  # noqa: E402


def timed(fn, *args, repeat: int = 1, **kwargs):
    """(best seconds over ``repeat`` calls, the last result)."""
    best, out = float("inf"), None
    for _ in range(repeat):
        start = time.perf_counter()
        out = fn(*args, **kwargs)
        best = min(best, time.perf_counter() - start)
    return best, out


def alternating(f, g, *, repeat: int = 3) -> tuple[float, float]:
    """Best seconds of ``f`` and of ``g`` over ``repeat`` alternating calls each, after one
    warm-up call of each: neither gets the cold start or a quieter moment of the machine."""
    f(), g()
    fs, gs = [], []
    for _ in range(repeat):
        fs.append(timed(f)[0])
        gs.append(timed(g)[0])
    return min(fs), min(gs)


def candidates_symmetric(emb: np.ndarray, m: int) -> dict:
    """pairlab's top-m neighbour pairs vs ``paraphrase_mining_embeddings`` (top_k = m)."""
    import torch
    from sentence_transformers.util import paraphrase_mining_embeddings

    space = PairSpace(len(emb), len(emb), True)
    ours_fn = lambda: neighbour_pairs(space, emb, m=m)  # noqa: E731
    theirs_fn = lambda: paraphrase_mining_embeddings(
        torch.from_numpy(emb),
        top_k=m,  # noqa: E731
        max_pairs=len(emb) * m,
    )
    ours_s, theirs_s = alternating(ours_fn, theirs_fn, repeat=5)
    (ours, _), mined = ours_fn(), theirs_fn()
    i = np.array([p[1] for p in mined]), np.array([p[2] for p in mined])
    theirs = as_id_set(space.encode(np.minimum(*i), np.maximum(*i)))
    return _compare(
        "candidates, symmetric (QQP questions)",
        "paraphrase_mining_embeddings",
        ours_s,
        theirs_s,
        ours,
        theirs,
        items=len(emb),
        m=m,
    )


def candidates_asymmetric(left: np.ndarray, right: np.ndarray, m: int) -> dict:
    """pairlab's top-m neighbour pairs vs ``semantic_search`` (top_k = m)."""
    import torch
    from sentence_transformers.util import semantic_search

    space = PairSpace(len(left), len(right), False)
    ours_fn = lambda: neighbour_pairs(space, left, right, m=m)  # noqa: E731
    theirs_fn = lambda: semantic_search(
        torch.from_numpy(left),
        torch.from_numpy(right),  # noqa: E731
        top_k=m,
    )
    ours_s, theirs_s = alternating(ours_fn, theirs_fn, repeat=5)
    (ours, _), hits = ours_fn(), theirs_fn()
    rows = np.repeat(np.arange(len(hits)), [len(h) for h in hits])
    cols = np.array([h["corpus_id"] for hs in hits for h in hs])
    theirs = as_id_set(space.encode(rows, cols))
    return _compare(
        "candidates, asymmetric (WikiQA questions x sentences)",
        "semantic_search",
        ours_s,
        theirs_s,
        ours,
        theirs,
        items=f"{len(left)} x {len(right)}",
        m=m,
    )


def _compare(row, tool, ours_s, theirs_s, ours, theirs, **extra) -> dict:
    same = len(np.intersect1d(ours, theirs)) / max(len(np.union1d(ours, theirs)), 1)
    return {
        "row": row,
        "tool": tool,
        "pairlab_s": ours_s,
        "tool_s": theirs_s,
        "speed_ratio": theirs_s / ours_s,
        "identical_share": same,
        "pairs": int(len(ours)),
        **extra,
    }


def encoding(texts, max_seq_length: int = 128) -> dict:
    """pairlab's encode path (the loaded encoder, as the loop calls it) vs
    ``SentenceTransformer.encode``; texts/s, tokens/s, and the share of the measured matmul rate
    that 2 x (non-embedding) parameters FLOPs per token would use."""
    model = load_encoder(None, max_seq_length=max_seq_length)
    texts = list(texts)
    ours = lambda: encode(texts, encoder=model, show_progress=False)  # noqa: E731
    theirs = lambda: model.encode(
        texts,
        batch_size=64,
        normalize_embeddings=True,  # noqa: E731
        show_progress_bar=False,
    )
    with environment(**{inference.ENV: "torch"}):
        ours_s, theirs_s = alternating(ours, theirs, repeat=5)
    tokens, flops_per_token = encoder_cost(model, texts, max_seq_length)
    peak = matmul_rate()
    return {
        "row": "encoding (all-MiniLM-L6-v2)",
        "tool": "SentenceTransformer.encode",
        "pairlab_s": ours_s,
        "tool_s": theirs_s,
        "speed_ratio": theirs_s / ours_s,
        "texts": len(texts),
        "texts_per_s": len(texts) / ours_s,
        "tokens_per_s": tokens / ours_s,
        "matmul_gflops": peak / 1e9,
        "hardware_share": tokens / ours_s * flops_per_token / peak,
        "flops_per_token": flops_per_token,
    }


def encoder_cost(model, texts, max_seq_length: int) -> tuple[int, float]:
    """The tokens ``model`` reads for ``texts`` and 2 x (non-embedding) parameters FLOPs/token."""
    tokens = sum(min(len(ids), max_seq_length) for ids in model.tokenizer(texts)["input_ids"])
    params = sum(p.numel() for name, p in model.named_parameters() if "embeddings" not in name)
    return tokens, 2 * params


BACKEND_NAMES = {"onnx": "ONNX Runtime float32", "onnx-int8": "ONNX Runtime dynamic int8"}


@contextlib.contextmanager
def environment(**values):
    """Environment variables set inside the block (None: unset), restored after."""
    saved = {k: os.environ.get(k) for k in values}
    try:
        for k, v in values.items():
            os.environ.pop(k, None) if v is None else os.environ.__setitem__(k, v)
        yield
    finally:
        for k, v in saved.items():
            os.environ.pop(k, None) if v is None else os.environ.__setitem__(k, v)


def exported(model, name: str) -> float:
    """Seconds to export ``model`` for backend ``name`` and load it, measured in a fresh cache
    folder (what a just-trained model costs each round)."""
    import tempfile

    with tempfile.TemporaryDirectory() as cache, environment(PAIRLAB_CACHE_DIR=cache):
        start = time.perf_counter()
        inference.for_inference(model, name=name)
        return time.perf_counter() - start


def encoding_backends(texts, max_seq_length: int = 128) -> list[dict]:
    """pairlab's encode path on torch vs on each ONNX backend, alternating, on the same texts:
    texts/s, share of the matmul rate, parity (1 - cosine of each text's two embeddings) and the
    export's cost."""
    model = load_encoder(None, max_seq_length=max_seq_length)
    texts = list(texts)
    tokens, flops_per_token = encoder_cost(model, texts, max_seq_length)
    peak = matmul_rate()

    def run(name):
        with environment(**{inference.ENV: name}):
            return encode(texts, encoder=model, show_progress=False)

    reference, rows = run("torch"), []
    for name, label in BACKEND_NAMES.items():
        export_s = exported(model, name)
        torch_s, other_s = alternating(lambda: run("torch"), lambda: run(name), repeat=5)
        gap = 1.0 - np.einsum("nd,nd->n", reference, run(name)).min()
        rows.append(
            {
                "row": f"encoding, {label} (all-MiniLM-L6-v2)",
                "backend": name,
                "tool": "torch (SentenceTransformer.encode)",
                "pairlab_s": other_s,
                "tool_s": torch_s,
                "speed_ratio": torch_s / other_s,
                "texts": len(texts),
                "texts_per_s": len(texts) / other_s,
                "torch_texts_per_s": len(texts) / torch_s,
                "tokens_per_s": tokens / other_s,
                "matmul_gflops": peak / 1e9,
                "hardware_share": tokens / other_s * flops_per_token / peak,
                "torch_hardware_share": tokens / torch_s * flops_per_token / peak,
                "flops_per_token": flops_per_token,
                "cosine_gap": float(gap),
                "export_s": export_s,
            }
        )
    return rows


def cross_encoder_backends(pool, n: int = 512, max_seq_length: int = 128) -> list[dict]:
    """A ConcatBERT (the default MiniLM with a fresh one-logit head) scoring ``n`` random pairs
    of ``pool`` on torch vs on each ONNX backend, alternating: pairs/s, parity (the largest
    logit difference, and 1 - cosine of the two logit vectors) and the export's cost."""
    from pairlab.models.concatbert import ConcatBERT

    model = ConcatBERT.untrained(max_seq_length=max_seq_length)
    left, right = pool.texts(pool.space.sample(n, np.random.default_rng(0)))

    def run(name):
        with environment(**{inference.ENV: name}):
            return model.logits(left, right, show_progress=False)

    reference, rows = run("torch"), []
    for name, label in BACKEND_NAMES.items():
        export_s = exported(model.model, name)
        torch_s, other_s = alternating(lambda: run("torch"), lambda: run(name), repeat=3)
        other = run(name)
        cosine = reference @ other / (np.linalg.norm(reference) * np.linalg.norm(other))
        rows.append(
            {
                "row": f"cross-encoder scoring, {label}",
                "backend": name,
                "tool": "torch (CrossEncoder.predict)",
                "pairlab_s": other_s,
                "tool_s": torch_s,
                "speed_ratio": torch_s / other_s,
                "pairs": n,
                "pairs_per_s": n / other_s,
                "torch_pairs_per_s": n / torch_s,
                "max_logit_diff": float(np.abs(reference - other).max()),
                "cosine_gap": float(1.0 - cosine),
                "export_s": export_s,
            }
        )
    return rows


def matmul_rate(n: int = 2048, repeat: int = 5) -> float:
    """FLOP/s of float32 matrix multiplication on this machine (torch, all threads)."""
    import torch

    a, b = torch.randn(n, n), torch.randn(n, n)
    seconds, _ = timed(torch.matmul, a, b, repeat=repeat)
    return 2 * n**3 / seconds


def estimate_vs_exact(
    n_pairs: float,
    *,
    dim: int = 384,
    m: int = 20,
    n_random: int = 100_000,
    index: str = "Flat",
    seed: int = 0,
) -> dict:
    """The stratified all-pairs estimate vs exact enumeration on a synthetic clustered pool of
    about ``n_pairs`` unordered pairs; ``index`` is the faiss index that draws D_near (an IVF
    index makes the strata approximate neighbours: the estimate stays unbiased)."""
    n = int((1 + np.sqrt(1 + 8 * n_pairs)) / 2)
    rng = np.random.default_rng(seed)
    cluster = rng.integers(0, n // 3, size=n)
    centres = rng.normal(size=(n // 3, dim)).astype(np.float32)
    emb = centres[cluster] + 1.2 * rng.normal(size=(n, dim)).astype(np.float32)
    emb /= np.linalg.norm(emb, axis=1, keepdims=True)
    space = PairSpace(n, n, True)
    order = np.argsort(cluster, kind="stable")
    same = cluster[order][1:] == cluster[order][:-1]  # consecutive members: a chain of positives
    a, b = order[1:][same], order[:-1][same]
    positives = as_id_set(space.encode(np.minimum(a, b), np.maximum(a, b)))
    texts = np.array([str(k) for k in range(n)], dtype=object)
    pool = Pool("synthetic", "dev", texts, texts, True, positives, np.empty(0, np.int64))
    config = EvalConfig(m, n_random, seed, index)
    # the strata are drawn once per split (from pretrained embeddings) and shared by every model
    # evaluated on it (all rounds, strategies and seeds); exact enumeration scores every pair
    # again for each model. Both parts are timed, and their sum is the headline ratio.
    strata_s, eval_set = timed(build_eval_set, pool, emb, emb, config)
    scorer = _cosine(space, emb)
    model_s, result = timed(evaluate, eval_set, scorer, n_boot=200, seed=seed, repeat=3)
    score_s, _ = timed(lambda: [scorer(ids) for ids in eval_set.strata().values()], repeat=3)
    est_s = strata_s + model_s
    exact_s, exact = timed(exact_all_pairs, pool, emb, emb)
    inside = result["ap_ci"][0] <= exact["ap"] <= result["ap_ci"][1]
    scored = int(sum(len(v) for v in eval_set.strata().values()))
    return {
        "row": f"all-pairs AP, {space.n_pairs:.1e} pairs, {index} D_near",
        "tool": "exact enumeration",
        "pairlab_s": est_s,
        "tool_s": exact_s,
        "speed_ratio": exact_s / est_s,
        "strata_s": strata_s,
        "per_model_s": model_s,
        "per_model_ratio": exact_s / model_s,
        "score_s": score_s,
        "metrics_s": model_s - score_s,
        "n_pairs": int(space.n_pairs),
        "scored_pairs": scored,
        "scored_ratio": space.n_pairs / scored,
        "estimate": result["ap"],
        "ci": result["ap_ci"],
        "exact": exact["ap"],
        "error": abs(result["ap"] - exact["ap"]),
        "inside_interval": bool(inside),
        "positives": int(len(positives)),
    }


def cross_encoder_rate(pool, n: int = 512, max_seq_length: int = 128) -> float:
    """Pairs per second that a ConcatBERT (cross-encoder on the default MiniLM) scores, measured
    on ``n`` pairs of ``pool``'s questions."""
    from pairlab.models.concatbert import ConcatBERT

    model = ConcatBERT.untrained(max_seq_length=max_seq_length)
    rng = np.random.default_rng(0)
    ids = pool.space.sample(n, rng)
    model.score_pairs(pool, ids[:64])  # warm-up
    seconds, _ = timed(model.score_pairs, pool, ids)
    return n / seconds


def cross_encoder_projection(row: dict, rate: float) -> dict:
    """The all-pairs row's costs when every scored pair is a cross-encoder forward pass: the
    estimate scores the strata (plus its strata search and metrics, measured), exact scores
    every pair. Projected from the measured rate, not run: exact at 10^8 pairs would take days."""
    est_s = row["strata_s"] + row["scored_pairs"] / rate + row["metrics_s"]
    exact_s = row["n_pairs"] / rate
    return {
        "row": f"all-pairs AP, {row['n_pairs']:.1e} pairs, cross-encoder scorer (projected)",
        "tool": "exact enumeration (projected)",
        "pairlab_s": est_s,
        "tool_s": exact_s,
        "speed_ratio": exact_s / est_s,
        "pairs_per_s": rate,
        "scored_pairs": row["scored_pairs"],
        "scored_ratio": row["scored_ratio"],
        "projected": True,
    }


def _cosine(space, emb):
    from pairlab.evaluation import CosineScorer

    return CosineScorer(space, emb, emb)


def active_rounds(
    profile: dict, data_dir, *, backends=("torch", "onnx"), second: bool = True
) -> list[dict]:
    """On the profile's QQP pools: seconds per stage of the second (adaptive) round of two rounds
    of uncertainty sampling on each inference backend (before and after), with this process's
    peak resident memory (seed-round sharing off and a fresh cache folder each, so the round pays
    for everything, exports included); then, with ``second``, the cost of a second strategy
    (adaptive retrieval, same seed) after the first, with and without the shared seed-round
    model, each pair of runs in a fresh cache folder."""
    import tempfile

    from pairlab.active import ActiveConfig, ActiveRun
    from pairlab.experiments.sweeps import pools_and_strata

    task = data.load_task("qqp", data_dir, seed=0, max_items=profile["max_items"]["qqp"])
    pools, eval_sets = pools_and_strata(task, EvalConfig(profile["near_m"], profile["n_random"], 0))

    def run(strategy):
        config = ActiveConfig(
            task="qqp",
            strategy=strategy,
            n1=profile["n1"],
            rounds=2,
            candidate_m=profile["candidate_m"],
            n_boot=profile["n_boot"],
        )
        with tempfile.TemporaryDirectory() as folder:
            start = time.perf_counter()
            result = ActiveRun(config, pools, eval_sets, folder).run()
        return result, time.perf_counter() - start

    rows = []
    for name in backends:
        with (
            tempfile.TemporaryDirectory() as cache,
            environment(PAIRLAB_SHARE_MODELS="0", PAIRLAB_CACHE_DIR=cache, **{inference.ENV: name}),
        ):
            result, _ = run("uncertainty")
        record = result["records"][1]
        rows.append(
            {
                "row": "one active-learning round (QQP, uncertainty, round 2)",
                "tool": "-",
                "backend": name,
                "items": len(pools["train"].left_texts),
                "labels": record["labels"],
                "seconds": record["seconds"],
                "test_ap": result["test"]["ap"],
                "peak_rss_mb": peak_rss_mb(),
            }
        )
    if not second:
        return rows
    seconds, tests = {}, {}
    for share in ("0", "1"):
        with (
            tempfile.TemporaryDirectory() as cache,
            environment(
                PAIRLAB_SHARE_MODELS=share, PAIRLAB_CACHE_DIR=cache, **{inference.ENV: "torch"}
            ),
        ):
            run("uncertainty")
            result, seconds[share] = run("adaptive_retrieval")
            tests[share] = result["test"]["ap"]
    rows.append(
        {
            "row": "a second strategy after the first (QQP, adaptive retrieval, 2 rounds)",
            "tool": "the same without the shared seed-round model",
            "pairlab_s": seconds["1"],
            "tool_s": seconds["0"],
            "speed_ratio": seconds["0"] / seconds["1"],
            "test_ap": tests["1"],
            "test_ap_unshared": tests["0"],
            "identical": tests["0"] == tests["1"],
        }
    )
    return rows


def peak_rss_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024  # kilobytes on Linux


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--profile", default="demo")
    parser.add_argument("--sizes", nargs="*", type=float, default=[1e6, 1e7, 1e8])
    parser.add_argument(
        "--ivf-from",
        type=float,
        default=1e8,
        help="also time the estimate with an IVF D_near at pools this large",
    )
    parser.add_argument("--skip-round", action="store_true", help="skip the active-learning round")
    parser.add_argument(
        "--inference-only",
        action="store_true",
        help="only the inference-backend rows and the round before and after",
    )
    parser.add_argument(
        "--encode-texts", type=int, default=1000, help="texts the encoding rows encode"
    )
    parser.add_argument(
        "--cross-pairs", type=int, default=512, help="pairs the cross-encoder rows score"
    )
    parser.add_argument(
        "--out", help="write the results here (default: benchmarks/results/<profile>-<host>.json)"
    )
    parser.add_argument(
        "--markdown", metavar="JSON", help="print a results file as a markdown table"
    )
    args = parser.parse_args(argv)
    if args.markdown:
        print(bench_table(json.loads(Path(args.markdown).read_text())))
        return 0
    profile = profiles.load_profile(args.profile, notebook="01")  # the dataset notebook's sizes
    # the round first, so that the peak memory reported with it is the round's (model, pools,
    # training), not the synthetic 10^8-pair rows'
    first = (
        []
        if args.skip_round
        else active_rounds(
            profiles.load_profile(args.profile, notebook="03"), None, second=not args.inference_only
        )
    )
    tasks = data.load_tasks("all", None, seed=0, max_items=profile["max_items"])
    qqp, wikiqa = tasks["qqp"]["train"], tasks["wikiqa"]["train"]
    texts = qqp.left_texts[: args.encode_texts]
    rows = encoding_backends(texts) + cross_encoder_backends(qqp, args.cross_pairs)
    if not args.inference_only:
        rows = all_rows(args, qqp, wikiqa, texts, rows)
    report(rows + first, args.profile, args.out)
    return 0


def all_rows(args, qqp, wikiqa, texts, inference_rows: list[dict]) -> list[dict]:
    """The candidate, encoding and all-pairs rows, the inference rows after the encoding row."""
    q_emb = encode(qqp.left_texts, show_progress=False)
    rows = [
        candidates_symmetric(q_emb, 50),
        candidates_asymmetric(
            encode(wikiqa.left_texts, show_progress=False),
            encode(wikiqa.right_texts, show_progress=False),
            50,
        ),
        encoding(texts),
        *inference_rows,
    ]
    with environment(**{inference.ENV: "torch"}):
        rate = cross_encoder_rate(qqp, min(512, args.cross_pairs))
    for size in args.sizes:
        rows.append(estimate_vs_exact(size))
        if size == max(args.sizes):
            rows.append(cross_encoder_projection(rows[-1], rate))
        if size >= args.ivf_from:
            rows.append(
                estimate_vs_exact(size, index=f"IVF{int(np.sqrt(np.sqrt(2 * size)) * 4)},Flat")
            )
    return rows


def report(rows: list[dict], profile: str, out: str | None = None) -> None:
    import torch

    machine = {
        "host": socket.gethostname(),
        "python": platform.python_version(),
        "torch": torch.__version__,
        "threads": torch.get_num_threads(),
        "cpu": platform.processor() or platform.machine(),
        "gpu": torch.cuda.get_device_name(0) if torch.cuda.is_available() else None,
        "onnxruntime": _version("onnxruntime"),
        "optimum_onnx": _version("optimum-onnx"),
    }
    print(f"machine: {machine}")
    print(f"{'row':58s} {'vs':30s} {'pairlab s':>10s} {'tool s':>10s} {'ratio':>8s}  notes")
    for r in rows:
        if "speed_ratio" not in r:
            stages = ", ".join(f"{k} {v:.1f}s" for k, v in r["seconds"].items())
            print(
                f"{r['row']:58s} {r.get('backend', ''):30s} {'':>10s} {'':>10s} {'':>8s}  {stages}; "
                f"peak RSS {r['peak_rss_mb']:.0f} MB"
            )
            continue
        notes = {
            k: r[k]
            for k in (
                "identical_share",
                "texts_per_s",
                "tokens_per_s",
                "hardware_share",
                "cosine_gap",
                "max_logit_diff",
                "export_s",
                "error",
                "inside_interval",
                "strata_s",
                "per_model_s",
                "per_model_ratio",
                "score_s",
                "metrics_s",
                "scored_ratio",
                "pairs_per_s",
                "identical",
            )
            if k in r
        }
        notes = ", ".join(
            f"{k} {v:.3g}" if isinstance(v, float) else f"{k} {v}" for k, v in notes.items()
        )
        print(
            f"{r['row']:58s} {r['tool']:30s} {r['pairlab_s']:10.3f} {r['tool_s']:10.3f} "
            f"{r['speed_ratio']:7.1f}x  {notes}"
        )
    out = (
        Path(out) if out else ROOT / "benchmarks" / "results" / f"{profile}-{machine['host']}.json"
    )
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(
        json.dumps({"machine": machine, "profile": profile, "rows": rows}, indent=2, default=float)
        + "\n"
    )
    print(f"written: {out}")


def _version(package: str) -> str | None:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version(package)
    except PackageNotFoundError:
        return None


if __name__ == "__main__":
    sys.exit(main())
