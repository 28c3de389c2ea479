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
#   pairlab:
#     after:
#     - '03'
# ---

# %% [markdown]
# # 09 · When does adaptivity pay? The label-to-positive regime and the starting encoder
#
# The paper's headline is that **adaptive** collection (uncertainty sampling: ask for the pairs
# the model trained so far is least sure about) beats **static** collection (static retrieval:
# label the pairs the pretrained encoder finds most similar), by 14x in labels on QQP (appendix
# B.1). That 14x is a **data-efficiency factor**: static retrieval's full budget divided by the
# labels uncertainty sampling needed to reach static retrieval's final dev AP (AP, average
# precision over all pairs, measured on the dev split after each round). Notebooks 03 and 05
# measured the same comparison at budgets far below the paper's; their tables, and notebook
# 05's factor per seed, show how far apart the two strategies came there. This notebook tests
# two explanations for a factor far from the paper's, each as a prediction that could fail:
#
# 1. **The budget regime.** Static retrieval labels the easy positives first and then runs out
#    of them; adaptivity pays once the budget is large against the positives there are to find.
#    We measure that as **labels per positive**: the labels a run spends divided by the positive
#    pairs its training pool holds (a pool's positives are fixed, so at 16 labels per positive
#    at most 1 label in 16 can be positive). The paper spent about 16 labels per WikiQA positive
#    (16,640 for 1,040); notebook 03's budgets are far fewer per positive. *Prediction*: on a
#    pool where the last round reaches many labels per positive (12 at this notebook's default
#    settings; Part 1's table prints this run's beside the paper's), static retrieval's share of
#    positives falls round by round while uncertainty sampling's holds, and uncertainty
#    sampling's dev AP pulls ahead: a data-efficiency factor above 1 and curves whose intervals
#    separate.
# 2. **The starting encoder.** all-MiniLM-L6-v2 was trained on a billion pairs, Quora duplicates
#    among them, so its top pairs on QQP are largely positive already and the pretrained cosine
#    leaves little for adaptivity to fix. *Prediction*: starting from weaker encoders, the same
#    model with its upper layers removed, the gap between uncertainty sampling and static
#    retrieval grows as the encoder's **zero-shot AP** (the AP of its cosine before any label)
#    falls.
#
# Each part states its question, runs, shows the result and says what it means for someone
# choosing how to collect labels. Every number printed below is computed from the runs; runs that
# notebook 03 finished with the same settings are read back, not recomputed.

# %%
from IPython.display import Markdown, display

from pairlab import experiments, report
from pairlab.active import PrintLog
from pairlab.experiments import adaptivity, encoders, findings
from pairlab.notebook import load_settings, setup
from pairlab.widgets import adaptivity_plots, plots
from pairlab.widgets.dashboard import RunDashboard

# %% tags=["parameters"]
profile = "quick"                 # shared settings (data, pools, model, strata: profiles/base.yaml) from profiles/<profile>.yaml
shared = {}                       # shared settings changed for this run, e.g. {"dataset": "qqp"} (the runner's -p)
# this notebook's knobs (the quick profile's values; the runner sets them from its profile)
budget_max_items = {"train": 50, "dev": 25, "test": 25}  # the budget experiment's pool (None: max_items)
budget_n1 = 12                    # its seed-set size
budget_rounds = 5                 # its rounds (with n1 32: 665 labels, 12 per positive of 54)
budget_seeds = [0]                # seeds of uncertainty sampling and static retrieval
budget_other_seeds = [0]          # seeds of adaptive retrieval and random among the candidates
encoder_layers = [6, 0]           # depths of the starting encoder (its own: notebook 03's runs; 0: token embeddings)
encoder_rounds = [3, 4]           # the budgets compared, in rounds of n1 * growth^i (the first: notebook 03's)
encoder_seeds = [0]               # seeds of both strategies from every encoder
# where it runs
backend = "local"                 # where the runs execute: "local" (here, one after another) or "ray" (one Ray task each)
address = None                    # with "ray": the cluster ("auto": the one this machine joined; "host:port"), None: a local Ray instance


# %%
cfg = load_settings(profile, "09_when_adaptivity_pays", shared)  # the shared settings, read-only: cfg.model, cfg.seed, ...
ctx = setup(cfg, globals())  # run and figure folders; every setting and knob recorded in config.json

# %% [markdown]
# ## Part 1 · The budget regime
#
# **Question**: with many labels per positive, does uncertainty sampling beat static retrieval,
# and by what factor in labels?
#
# The pool is WikiQA's (whose encoder saw no WikiQA pairs), sized so that the last round reaches
# the labels per positive the table says. Four strategies spend the same budget, each retrained
# from the pretrained checkpoint after every round, so that all four have a curve:
#
# | strategy | picks | adaptive | seeds |
# |---|---|---|---|
# | `uncertainty` | candidates of the current model with p closest to 1/2 | yes | `budget_seeds` |
# | `static_retrieval` | pairs of highest pretrained cosine | no | `budget_seeds` |
# | `adaptive_retrieval` | candidates of highest p under the current model | yes | `budget_other_seeds` |
# | `random_candidates` | uniform among the pretrained candidates | no | `budget_other_seeds` |
#
# Here p is the model's calibrated probability that a pair is positive (CosineBERT's cosine
# through the logistic curve it learns with it), and the **candidates** are each item's m
# nearest neighbours under the selecting model (`candidate_m`), the only pairs a strategy that
# searches can pick from.

# %%
prepared, settings = adaptivity.load_experiment(ctx.params, "budget", show=False)
budget_regime = experiments.scale(prepared, settings)  # its sizes, labels per positive among them
budget_regime

# %% [markdown]
# ### 1.1 The runs
#
# The dashboard follows them live (dev AP per round, candidate recall per round, seconds per
# stage); the printed log is what a papermill run keeps.

# %%
strategies, run_seeds = adaptivity.budget_runs(budget_seeds, budget_other_seeds)
dashboard = RunDashboard(experiments.total_rounds(prepared, strategies, run_seeds, settings), title="notebook 09: budget")
display(dashboard)
results = experiments.sweep(prepared, strategies, run_seeds, settings, ctx.path("active"),
                            callbacks=[dashboard, PrintLog()], backend=backend, address=address)

# %% [markdown]
# ### 1.2 Dev AP and positive share against labels (Figure 4 analog)
#
# Top: dev AP after each round, the mean over seeds with the mean of the seeds' 95% bootstrap
# intervals as a band (a **bootstrap interval** is the range of AP over resampled evaluation
# pairs: how much the AP could move from evaluation noise alone; faint points: single seeds).
# Bottom: the share of all pairs collected so far that are positive. The prediction is a falling green line at the bottom (static retrieval
# running out of easy positives) under a red one that holds, and a red curve that rises above
# the green at the top.

# %%
curves = experiments.curves(results)
fig = plots.budget_curves_figure(curves, strategies=adaptivity.BUDGET_STRATEGIES)
ctx.save_figure(fig, "09_budget_curves")
fig

# %%
# NBVAL_CHECK_OUTPUT
print(curves.groupby(["task", "labels", "strategy"])[["ap", "positives_found"]].mean().unstack("strategy").round(3).to_string())

# %% [markdown]
# ### 1.3 The data-efficiency factor, per seed
#
# Notebook 05's definition: static retrieval's dev AP at its full budget is the target; the
# factor is the labels static retrieval needed to reach it over the labels uncertainty sampling
# needed (read off its curve, linear between rounds). Above 1: uncertainty sampling is that many
# times cheaper in labels. *lower bound*: uncertainty sampling was already there at its first
# point; *not reached*: it never got there within the budget.

# %%
# NBVAL_CHECK_OUTPUT
efficiency = experiments.data_efficiency.factors(curves)
print(efficiency.round(3).to_string())

# %% [markdown]
# ### 1.4 When do the curves separate?
#
# A gap between two curves is a finding only where it exceeds what evaluation noise allows. The
# curves **separate** at the smallest budget from which uncertainty sampling's 95% interval lies
# wholly above static retrieval's, at that budget and every larger one measured (a gap that
# closes again does not count); NaN: never. Per seed (each seed's own intervals) and for the mean
# curves; the reverse direction too.

# %%
# NBVAL_CHECK_OUTPUT
separation = adaptivity.separation(curves)
print(separation.round(3).to_string())

# %% [markdown]
# ### 1.5 Candidate recall
#
# The strategies that search candidates can only pick among each item's m nearest neighbours.
# **Candidate recall** is the share of the pool's positives not yet labelled that a round's
# candidates hold (known to the oracle only: an analysis, never used to select). It bounds what
# any of them can still find: when it falls, m is too small for the positives that are left, and
# a strategy's failure to find them says nothing about its criterion.

# %%
recall = adaptivity.recall_frame(results)
fig = adaptivity_plots.recall_figure(recall)
ctx.save_figure(fig, "09_budget_candidate_recall")
fig

# %% [markdown]
# ### 1.6 Do the two strategies even ask for different pairs?
#
# Uncertainty sampling can only beat static retrieval by labelling other pairs. For each seed,
# after each round: the share of the pairs uncertainty sampling has labelled so far that static
# retrieval also labelled by then (round 1 is the same static-retrieval batch for both, so it
# starts at 100%). Near 100% to the end, the two collect nearly the same data, and a tie is
# what to expect whatever the budget: the trained model's most uncertain pairs are still the
# pretrained model's top pairs.

# %%
# NBVAL_CHECK_OUTPUT
overlap = adaptivity.overlap_frame(results, ctx.path("active"))
print(overlap.pivot_table(index=["task", "seed"], columns="labels", values="overlap").round(3).to_string())

# %% [markdown]
# ## Part 2 · The starting encoder
#
# **Question**: does the adaptive-static gap grow as the starting encoder weakens?
#
# Weaker encoders come from the one model we have: all-MiniLM-L6-v2 with only its first n
# transformer layers (0: its token embeddings, averaged over the words of a sentence, with no
# layer to let the words see each other). No new weights are trained; each is a fresh
# starting point for CosineBERT, and the evaluation strata stay those of the whole model,
# so every encoder is measured on the same pairs. On QQP, where the whole model is strongest.
#
# ### 2.1 Each encoder before any labels
#
# Zero-shot all-pairs test AP of its cosine, and the share of positives among the pairs static
# retrieval would label with it at the first budget (its top pairs among every item's m nearest
# neighbours: the pairs a static-retrieval run collects).

# %%
enc_prepared, enc_settings = adaptivity.load_experiment(ctx.params, "encoder")
layers = encoders.encoder_layers(cfg.model, encoder_layers)
zero = encoders.zero_shot(enc_prepared, layers, enc_settings, rounds=encoder_rounds[0], seed=cfg.seed)
zero.round(3)

# %% [markdown] tags=["exercise"]
# ### Exercise 9.1: An encoder depth we did not run
#
# The table above has one row per depth in `encoder_layers`. Take a depth that is not there
# (1 layer, say; any from 0 to 6 not in the table).
#
# 1. **Predict** its zero-shot AP and its static precision (the share of positives among the
#    pairs static retrieval would label with it) from the rows around it. Do both fall as
#    layers are removed, or does one of them stay high longer?
# 2. Compute its row with `encoders.zero_shot` (no training: one embedding of the pools and
#    one evaluation) and compare it with your prediction.
# 3. From Part 2's prediction, would you expect uncertainty sampling to gain more over static
#    retrieval from this encoder than from the whole model? Which column of the table tells you
#    more: zero-shot AP or static precision?

# %% tags=["solution"]
new_depth = next(n for n in (1, 5, 3, 2, 4, 0, 6) if n not in zero.index)  # one not in the table
new_row = encoders.zero_shot(enc_prepared, encoders.encoder_layers(cfg.model, [new_depth]), enc_settings,
                             rounds=encoder_rounds[0], seed=cfg.seed)
print(new_row.round(3).to_string())
assert list(new_row.index) == [new_depth] and 0 <= new_row.loc[new_depth, "zero-shot AP"] <= 1
for column in ("zero-shot AP", "static precision"):
    value, others = new_row.loc[new_depth, column], zero[column]
    print(f"{column} at {new_depth} layer(s): {value:.3f}; the table's depths "
          + ", ".join(f"{n}: {v:.3f}" for n, v in others.sort_index().items()))

# %% [markdown]
# ### 2.2 The runs
#
# Uncertainty sampling and static retrieval from every encoder, at each budget of
# `encoder_rounds`. The whole model at notebook 03's budget is notebook 03's run, read back.

# %%
variants = encoders.encoder_variants(layers, encoder_rounds, encoders.GAP)
dashboard = RunDashboard(experiments.total_rounds(enc_prepared, variants, encoder_seeds, enc_settings),
                         title="notebook 09: encoders")
display(dashboard)
enc_results = encoders.by_depth(experiments.sweep(enc_prepared, variants, encoder_seeds, enc_settings,
                                                  ctx.path("active"), callbacks=[dashboard, PrintLog()],
                                                  backend=backend, address=address))

# %% [markdown]
# ### 2.3 The gap against the encoder's zero-shot AP
#
# Left: each strategy's test AP (mean over seeds; bars: the seeds' mean 95% interval). Right: the
# gap, uncertainty sampling minus static retrieval (bars: ± its std over seeds; faint points:
# each seed). The prediction is a gap that rises towards the left, where the encoder is weak.
#
# Under the figure, the table per depth and budget, then the trend per budget: **Spearman's
# rho** is the correlation of the ranks of the encoders' zero-shot AP and their gap (from -1:
# the weaker the encoder, the larger the gap, always; to +1: the reverse; near 0: no order);
# the prediction is a negative rho, with the gap at the weakest encoder above the gap at the
# strongest (`weakest minus strongest` above 0).

# %%
table = encoders.encoder_table(enc_results, zero)
fig = adaptivity_plots.encoder_gap_figure(table)
ctx.save_figure(fig, "09_encoder_gap")
fig

# %%
# NBVAL_CHECK_OUTPUT
trend = encoders.gap_trend(table)
print(table.drop(columns=["judged"]).round(3).to_string())
print(trend.round(3).to_string())

# %% [markdown]
# ### 2.4 Candidate recall by encoder
#
# The same bound as in 1.5, for each encoder (its largest budget): a weak encoder's neighbours
# may hold few of the positives at first, and a trained model's many more.

# %%
enc_recall = adaptivity.recall_frame(encoders.encoder_runs(enc_results))
fig = adaptivity_plots.recall_figure(enc_recall)
ctx.save_figure(fig, "09_encoder_candidate_recall")
fig

# %% [markdown]
# And, as in 1.6, the share of uncertainty sampling's labels that static retrieval from the same
# encoder also collected, at each encoder's largest budget: if adaptivity pays more from weak
# encoders, it does so by asking for other pairs.

# %%
# NBVAL_CHECK_OUTPUT
enc_overlap = adaptivity.overlap_frame(encoders.encoder_runs(enc_results), ctx.path("active"))
print(enc_overlap.pivot_table(index=["strategy", "seed"], columns="round", values="overlap").round(3).to_string())

# %% [markdown]
# ## 3. What was found, and what it means
#
# The lines below are computed from the metrics file this notebook records (RESULTS.md prints
# the same lines for the reference run), per seed where there are seeds. How to read them when
# choosing how to collect labels:
#
# - **Budget regime.** If uncertainty sampling's final dev AP is above static retrieval's on
#   every seed, the factor is above 1 and the curves separate, adaptivity pays in this regime:
#   at many labels per positive, label adaptively. If they tie, the regime alone does not
#   explain the missing gap.
# - **Starting encoder.** A negative Spearman rho with a clearly larger gap at the weakest
#   encoder than at the strongest (beyond the seeds' spread) supports the paper's mechanism:
#   the weaker your pretrained encoder on your task (check its zero-shot AP and the precision of
#   its top pairs, as in 2.1, before labelling anything), the more adaptive collection is worth.
#   A strong encoder makes static retrieval a cheap, hard-to-beat baseline.
# - **Candidate recall** falling towards zero means the candidate search, not the criterion,
#   limits every strategy over candidates: raise m before judging them.

# %%
# NBVAL_CHECK_OUTPUT
metrics = adaptivity.adaptivity_metrics(curves, budget_regime, efficiency, separation, zero, table, trend,
                                        [recall, enc_recall], [overlap, enc_overlap])
display(Markdown(report.markdown("bullets", findings.adaptivity(metrics))))
print(report.markdown("adaptivity", metrics))

# %% [markdown]
# ## 4. Record the metrics
#
# `09_when_adaptivity_pays.metrics.json`: `budget` (per task and strategy: labels, dev AP mean,
# interval and per seed, positive share), `regime`, `efficiency` (per seed), `separation`,
# `encoder` (per depth: zero-shot AP, static precision, each strategy's test AP per budget and
# seed, the gap), `encoder_trend`, `candidate_recall` (per task and run, per round) and `overlap`
# (per task and uncertainty run: the share of its labels static retrieval also collected, per round).

# %%
ctx.record_metrics(metrics)
