# ---
# jupyter:
#   jupytext:
#     cell_metadata_filter: tags,-all
#     formats: ipynb,py:percent
#     notebook_metadata_filter: kernelspec,jupytext,pairlab
#     text_representation:
#       extension: .py
#       format_name: percent
#       format_version: '1.3'
#       jupytext_version: 1.19.6
#   kernelspec:
#     display_name: Python (pairlab)
#     language: python
#     name: pairlab
# ---

# %% [markdown]
# # 02 · Trained on the balanced benchmark, tested on all pairs: ConcatBERT and CosineBERT
#
# **The paper's first finding** (section 3, Table 2): a cross-encoder (**ConcatBERT**: both texts
# read together by one BERT, one logit on top) trained on the heuristically collected data of QQP
# or WikiQA scores well on held-out data collected the same way, yet collapses on the realistic
# all-pairs test set, where positives are one in tens of thousands: 2.4% AP on both tasks. Its
# confident false positives are often absurd: pairs that share a word or an answer type but
# nothing else, because such easy negatives were never in its training data. The paper's
# bi-encoder (**CosineBERT**: each text embedded once, the pair scored by the cosine of the two
# embeddings) trained on the same data did little better: 15.4% AP on QQP, 2.2% on WikiQA
# (its Table 3, "stated data").
#
# **What this notebook measures.** It trains both models on the stated training data, measures
# them on the balanced benchmark metrics and on all pairs (AP and P@R20, defined in notebook 01
# section 3), shows the most confident false positives, and opens a browser to judge them by hand
# (paper section 3.3). The paper's claim for ConcatBERT is the one to check in the table of
# section 4. Its claim for CosineBERT is not expected to hold here, and on our reference runs
# (RESULTS.md, `results/quick/`) it does not: our CosineBERT starts from an encoder that was
# already trained on Quora duplicates, so it never has to learn QQP from the stated pairs. The end
# of section 4 explains this and prints the starting encoder's score beside the trained one's.

# %%
import numpy as np
from IPython.display import display

from pairlab import data, evaluation as ev
from pairlab.experiments import baselines
from pairlab.notebook import load_settings, setup
from pairlab.widgets import labels, plots, review

# %% tags=["parameters"]
profile = "quick"                 # shared settings (data, pools, model, strata: profiles/base.yaml) from profiles/<profile>.yaml
shared = {}                       # shared settings changed for this run, e.g. {"dataset": "qqp"} (the runner's -p)
# this notebook's knobs (the quick profile's values; the runner sets them from its profile)
train_max_pairs = 80              # stated training pairs used (None: all of them)
cosine_epochs = 2
concat_epochs = {"qqp": 2, "wikiqa": 3}  # the paper's epochs
concat_near_m = 1                 # ConcatBERT's D_near (it scores ~90 pairs/s on 2 CPU cores)
concat_n_random = 200             # ConcatBERT's |D_rand|
labels_db = "runs/labels.sqlite"  # where the false-positive browser keeps hand-made marks
annotator = "anonymous"           # your name on the marks


# %%
cfg = load_settings(profile, "02_concatbert_failure_analysis", shared)  # the shared settings, read-only: cfg.model, cfg.seed, ...
ctx = setup(cfg, globals())  # run and figure folders; every setting and knob recorded in config.json

# %% [markdown]
# ## 1. The stated training data
#
# `D_heur^train` is every positive and every stated negative of the training split: the
# benchmark as published, balanced by the heuristics that collected it. On 2 CPU cores we train
# on a uniform subsample of it (`train_max_pairs`), which keeps its balance.

# %%
tasks = data.tasks_for(ctx.params)
train_ids = {name: baselines.sample_pairs(baselines.stated_pairs(t["train"])[0], train_max_pairs, seed=cfg.seed)
             for name, t in tasks.items()}
for name, ids in train_ids.items():
    print(f"{name}: {len(ids):,} stated training pairs, {tasks[name]['train'].labels(ids).mean():.0%} positive")

# %% [markdown]
# ## 2. Training
#
# Both models start from the same pretrained encoder. ConcatBERT is a sentence-transformers
# `CrossEncoder` with one logit; CosineBERT is a `SentenceTransformer` with the cosine head of
# the paper (batch-normalised cosine, non-negative slope, head learning 10⁴ times faster),
# recalibrated after training. Trained models are saved in the run folder and reused when the
# notebook runs again with the same data and settings.

# %%
trained = baselines.train_all(tasks, train_ids, ctx.params, folder=ctx.path("models"))
models = {key: m for key, (m, _) in trained.items()}

# %% [markdown]
# ## 3. Heuristically balanced test metrics
#
# On the stated test pairs, collected the same way as the training data: QQP's accuracy and F1
# (thresholds tuned on stated dev pairs), WikiQA's clean MAP (questions with both a right and a
# wrong sentence) and a-F1 (F1 over all stated pairs).

# %%
heuristics = {(name, kind): baselines.heuristic_metrics(name, m.score_pairs, tasks[name]["dev"], tasks[name]["test"])
              for (name, kind), m in models.items()}

# %% [markdown]
# ## 4. All-pairs test metrics
#
# The same models on the realistic distribution: every positive of the test split, the
# negatives among each test item's pretrained neighbours (`D_near`), and uniform random negatives
# (`D_rand`) standing for the rest (notebook 01). ConcatBERT must run the full model on every
# pair it scores, so its strata are smaller and its intervals wider; CosineBERT embeds each item
# once and scores any number of pairs from the embeddings.

# %%
strata = {"concatbert": ev.EvalConfig(concat_near_m, concat_n_random, cfg.seed),
          "cosinebert": ev.EvalConfig(cfg.near_m, cfg.n_random, cfg.seed)}
evals = {key: ev.pretrained_eval_set(tasks[key[0]]["test"], strata[key[1]], model=cfg.model,
                                     max_seq_length=cfg.max_seq_length)[0] for key in models}
results = {key: ev.evaluate(evals[key], m.scorer(tasks[key[0]]["test"]), n_boot=cfg.n_boot, seed=cfg.seed)
           for key, m in models.items()}

# %%
# NBVAL_CHECK_OUTPUT
extra = {key: {"model_id": mid, "train_pairs": int(len(train_ids[key[0]]))} for key, (_, mid) in trained.items()}
metrics = baselines.failure_metrics(heuristics, results, evals, extra)
table = baselines.table2(metrics)
for name in table.index.unique("task"):
    print(table.loc[name].dropna(axis=1, how="all").round(3).to_string(), end="\n\n")

# %% [markdown]
# The balanced columns (accuracy and F1, or c_map and a_f1) are the benchmark's; the all-pairs
# columns (P@R20, AP) are what a deployed system would see; `paper ...` columns hold the paper's
# values. The paper's ConcatBERT (BERT-base, all 257k stated QQP pairs) reached 2.4% AP on QQP
# and 2.4% on WikiQA; its CosineBERT trained on the same stated data reached 15.4% and 2.2%.
# Compare the *gap* between each row's balanced and all-pairs columns, and each all-pairs value
# with the paper's, in the table above. Where ours differ from the paper's, three things we
# changed are the reason:
#
# - **The starting encoder.** The paper fine-tuned BERT-base, a language model never trained to
#   compare sentences. We start both models from all-MiniLM-L6-v2, a sentence-transformers
#   encoder trained contrastively on about a billion sentence pairs, the Quora duplicate
#   questions among them, and many question-answer pairs (though not WikiQA). CosineBERT keeps
#   that encoder and its cosine, so on QQP it starts with a ranking the paper's models never had:
#   the next cell prints the encoder's all-pairs AP with no training at all beside the trained
#   CosineBERT's, so you see how much of the trained model's score was there before training.
#   ConcatBERT reads the two texts together, a use the encoder's contrastive training never made
#   of it, through a new, randomly initialised output layer: it has to learn pair scoring from
#   the stated pairs alone, as the paper's models did, and so faces the paper's problem.
# - **The training data.** `train_max_pairs` stated pairs (printed in section 1), not the
#   paper's 257k (QQP) or 20k (WikiQA): one to three orders of magnitude fewer, by profile.
# - **The pools.** Our QQP is a subset with a far milder imbalance than the paper's (notebook
#   01, Table 1 analog): fewer negatives per positive, which by itself raises every AP.

# %%
for name in tasks:  # CosineBERT's strata, scored by the pretrained cosine: where CosineBERT started
    pool = tasks[name]["test"]
    zero_shot = ev.CosineScorer(pool.space, *ev.embed_pool(pool, cfg.model, max_seq_length=cfg.max_seq_length))
    start = ev.evaluate(evals[(name, "cosinebert")], zero_shot, n_boot=cfg.n_boot, seed=cfg.seed)
    print(f"{name}: all-pairs AP with no training {start['ap']:.3f} [{start['ap_ci'][0]:.3f}, {start['ap_ci'][1]:.3f}]; "
          f"CosineBERT on {len(train_ids[name])} stated pairs {results[(name, 'cosinebert')]['ap']:.3f}; "
          f"ConcatBERT {results[(name, 'concatbert')]['ap']:.3f}")

# %%
fig = plots.pr_figure({f"{name} {kind}": r["curve"] for (name, kind), r in results.items()},
                      title="Trained on stated data: all-pairs precision-recall (test)")
ctx.save_figure(fig, "02_stated_pr")
fig

# %% [markdown]
# ## 5. The most confident false positives (Figure 2 analog)
#
# At the threshold where ConcatBERT reaches 20% recall, these negatives score above it: the
# highest-scoring ones of each stratum. `near` pairs are at least topically close; `rand`
# pairs are drawn uniformly from the pool, and each one stands for thousands like it. Look for
# pairs that share a word, a named entity or an answer type ("what is X made of" against any
# sentence listing ingredients) and nothing else.

# %%
store = labels.LabelStore(ctx.project_path(labels_db))
for name in tasks:
    key = (name, "concatbert")
    print(f"== {name}")
    display(review.report(tasks[name]["test"], evals[key], results[key]["scores"], model_id=trained[key][1],
                           store=store, recall=0.2, n=5))

# %% [markdown]
# ## 6. Judge them yourself
#
# The imputed labels are not gold: some "false positives" are real duplicates nobody stated.
# Pick a scored run (task and model); the browser shows its putative false positives at a
# recall you choose (slider), filtered by stratum, with the words that differ highlighted. Mark each pair **real error**, **actually
# positive** or **unsure** (buttons, or type `e` / `p` / `u` in the keys box; `n` / `b` move).
# Marks are written to an SQLite file at once (they survive a crash or a kernel restart), and the
# corrected precision of paper eq. 14 updates with its interval. In a non-interactive run the
# widget has no state; the table above and the line printed with it carry the same figures.

# %%
runs = {f"{name} {kind}": (tasks[name]["test"], evals[(name, kind)], results[(name, kind)]["scores"],
                             trained[(name, kind)][1]) for name, kind in results}
review.RunPicker(runs, store=store, annotator=annotator)

# %% [markdown] tags=["exercise"]
# ### Exercise 2.1: where do the false positives come from?
#
# At the threshold where a model reaches 20% recall, its estimated false positives are the
# `D_near` negatives scoring above it plus w_rand / |D_rand| times the `D_rand` negatives above it
# (notebook 01, section 3). Predict for each task: which stratum holds most of ConcatBERT's false
# positives, and most of CosineBERT's? Then compute both parts from `results[key]["scores"]` (the
# scores of each stratum) and `evals[key]` (the strata; `.w_rand` is w_rand / |D_rand|), print
# the share that comes from D_rand, and check that the two parts add up to the `fp` of the
# model's precision-recall curve (`results[key]["curve"]`) at that threshold.

# %% tags=["solution"]
for key, r in results.items():
    curve = r["curve"]
    k = int(np.argmax(curve["recall"] >= 0.2))       # the highest threshold reaching 20% recall
    g = curve["threshold"][k]
    near_fp = float(np.sum(r["scores"]["near"] >= g))
    rand_fp = evals[key].w_rand * float(np.sum(r["scores"]["rand"] >= g))
    share = f"{rand_fp / (near_fp + rand_fp):.0%} from D_rand" if near_fp + rand_fp else "no false positive"
    print(f"{key[0]:>7} {key[1]:<11} threshold {g:8.3f}: {near_fp:7.0f} from D_near + {rand_fp:11.0f} from D_rand"
          f" ({share})")
    np.testing.assert_allclose(near_fp + rand_fp, curve["fp"][k])

# %% [markdown]
# ## 7. Record the metrics

# %%
ctx.record_metrics(metrics)
