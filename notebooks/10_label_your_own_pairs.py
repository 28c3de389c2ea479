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
# # 10 · Label your own pairs: you in the active-learning loop
#
# Notebooks 01-09 simulate the person who labels: an oracle reads labels the data already has.
# This notebook is for the person who has none: a table of records (support tickets, a product
# catalogue, forum questions) with duplicates among them, or two tables to match against each
# other, and an afternoon to find the matches. Among all pairs of records perhaps one in 10^4 or
# 10^5 matches, so labelling random pairs finds nothing: the paper's loop chooses the pairs, you
# answer, the model retrains between rounds, and an audit sample tells you how many matches you
# have found of how many exist.
#
# With `annotator = "person"` you label in the widget below (keys `y` match, `n` not, `u` unsure,
# `p` previous). With `annotator = "oracle"` (papermill, CI) a file of the true pairs plays you,
# and the notebook also shows what the session found against random labelling and static
# retrieval at the same budget.

# %%
from dataclasses import replace
from pathlib import Path

import numpy as np
import pandas as pd
from IPython.display import display
from scipy.special import betaln

from pairlab import report
from pairlab.data import load_items
from pairlab.evaluation.audit_estimate import combine_rounds
from pairlab.evaluation.audit_prior import rate_prior
from pairlab.models.truncate import truncated_model
from pairlab.notebook import load_settings, parameters, setup
from pairlab.paths import find_file
from pairlab.session import (
    LabelingSession,
    compare_strategies,
    comparison_record,
    coverage_sessions,
    coverage_table,
)
from pairlab.session.audit import SessionAudit

# %% tags=["parameters"]
profile = "quick"                 # where the session folder goes (runs/<profile>); the runner sets the knobs below from the profile
shared = {}                       # shared settings changed for this run, e.g. {"dataset": "qqp"} (the runner's -p)
# your records
items = "fixtures/records/shop_a.csv"  # your records: a CSV, TSV, JSON-lines or Parquet file (absolute, from the project root, or in the data folder)
text = ["title", "brand", "modelno", "price"]  # the column of each record's text, or a list of columns ("title: ... | brand: ...")
id = "id"                          # the column of the records' ids (None: row numbers)
right_items = "fixtures/records/shop_b.csv"  # a second table to match against (None: duplicates within `items`)
right_text = ["title", "brand", "modelno", "price"]  # its text column(s)
right_id = "id"                    # its id column (None: row numbers)
# the session
annotator = "person"               # "person": you label in the widget; "oracle": oracle_pairs answers (papermill, CI)
oracle_pairs = "fixtures/records/matches.csv"  # every true pair (first two columns: left id, right id); read only by the oracle
budget = 96                        # labels in all
batch = 32                         # pairs per round; the model retrains between rounds
audit_share = 0.1                  # share of the pairs shown drawn for the recall estimate (you cannot tell which)
matches_per_record = 1            # the estimate assumes at most this many matches a record (of the smaller table) are left to find; None: no bound, the scores' calibration alone
strategy = "uncertainty"           # which pairs to ask: "uncertainty", "adaptive_retrieval", "static_retrieval", "random" (the recall estimate's intervals were checked under uncertainty sampling)
one_to_one = False                 # True: each record matches at most one other (two catalogues of distinct products): never ask a pair of a record already matched
candidate_m = 20                   # candidate neighbours per record each round
target_precision = 0.9             # the exported matches' threshold is chosen for this precision
matcher = "bi-encoder"             # who decides the exported matches: "bi-encoder" (seconds), "auto" (also a cross-encoder, the audit keeps the better: tens of minutes on 25,000 records)
seed = 0
coverage_seeds = [0, 1, 2]        # oracle only: session trajectories (seeds) whose audit intervals are checked ([]: none)
coverage_repeats = 100            # oracle only: fresh audits redrawn at each round of each of those sessions
# the model
model = None                       # sentence-transformers name or path (None: offline all-MiniLM-L6-v2)
model_layers = None                # keep only the model's first n transformer layers (None: all): faster, weaker
max_seq_length = 128               # word pieces per record
epochs = 2                         # training epochs per round (a fresh model each round)
# where the results go
export_dir = None                  # where labels.csv, the model, matches.csv, clusters.csv go (None: <run_dir>/10_export)

# %%
cfg = load_settings(profile, "10_label_your_own_pairs", shared)  # the profile's run and figure folders (cfg.run_dir)
ctx = setup(cfg, globals())  # run and figure folders; every setting and knob recorded in config.json

# %% [markdown]
# ## 1. Your records
#
# Each record's fields become one text, `title: ... | brand: ...`, skipping empty fields: that
# is what the model reads and what you will see. Rows without text, repeated ids and other bad
# rows are skipped and reported by line; records with identical texts are kept and counted
# (likely duplicates).

# %%
with parameters(items=items, text=text, id=id):  # a bad file or column: one line naming them
    left = load_items(find_file(items), text=text, id=id)
with parameters(right_items=right_items, right_text=right_text, right_id=right_id):
    right = load_items(find_file(right_items), text=right_text, id=right_id) if right_items else None
for table in filter(None, (left, right)):
    print(table.summary())

# %% [markdown]
# ## 2. The session
#
# The session runs notebook 03's loop: the first round labels the pairs the pretrained encoder
# finds most similar (static retrieval), later rounds the pairs the model is least sure about
# (`strategy`), among each record's `candidate_m` nearest neighbours. Where each record has at
# most one match (`one_to_one`), a record whose match you have confirmed is not asked again (on
# Walmart-Amazon, `benchmarks/er_label_use.py` counts how many labels went to such pairs without
# it). The loop runs in a worker process; while the first round embeds your records, you label
# a batch of first pairs (a random record and its most similar by BM25: seconds, not minutes),
# and while a model trains and embeds, the next most uncertain candidates of the last model
# (spares, topped up as you answer them: you never wait for a round; they join the next round's
# labels and spend the budget, so a team answering faster than the rounds run ends in fewer
# rounds). A bar above the pair shows the worker's step, with the time
# left. Every answer is saved before the next pair shows: close the notebook, restart the kernel, run the cells again, and you continue
# where you stopped.

# %%
encoder = truncated_model(model, model_layers)  # the model itself where model_layers is None
with parameters():  # a bad setting: one line naming it
    session = LabelingSession(left, ctx.path("10_session"), right=right, model=encoder,
                              strategy=strategy, batch=batch, budget=budget, annotator=annotator,
                              oracle_pairs=find_file(oracle_pairs) if annotator == "oracle" else None,
                              audit_share=audit_share, candidate_m=candidate_m, seed=seed,
                              epochs=epochs, max_seq_length=max_seq_length,
                              coverage=coverage_repeats if coverage_seeds else 0,
                              matches_per_record=matches_per_record, one_to_one=one_to_one)
print(session)
if annotator == "person":
    session.start()
    display(session.widget())
else:
    result = session.run()
    print(f"{result['labels']:,} labels, {result['positives_found']:,} matches found")

# %% [markdown]
# ## 3. How far am I?
#
# Run these cells whenever you like. The audit sample estimates how many matching pairs the whole
# collection holds, and so the share you have found, each with a 95% interval.
#
# A few hundred audit pairs cannot see a match rate of one in ten thousand by themselves, so the
# estimate also leans on one thing you know about your records: `matches_per_record`, the most
# matches a record can still have unfound (1 by default, as when each product is listed once in
# each catalogue). Without it, in simulations on QQP, the interval missed the truth more than
# one time in ten; section 6 checks it on your run. If your records come in larger
# groups, raise it; the sentence below says when the bound, not the audit, sets the interval's
# top.
#
# Budget spent and too many matches left? Raise `budget` and run the notebook again: the session
# goes on from its last round, with every answer you gave. Other settings start a new session
# (the error says how to bring your answers along).

# %% [markdown]
# First the arithmetic, by hand. Each round from the second cut every pair into score strata and
# drew its audit from the pairs unlabelled then: stratum h held `M` of them, `n` were audited
# (answered yes or no so far), `k` of those were matches; `known` matches of the stratum are
# among your labels.

# %%
audit = SessionAudit(session.folder / "audit", matches_per_record=matches_per_record)  # the designs
found = session.counts()["positives"]  # the matches you have labelled
answered = audit.audit_answers(session.store)  # audit pairs answered yes or no, every round
ready = answered >= audit.n_strata  # the estimate needs an answer a stratum at least
print(f"{found:,} matches found, {answered} audit answers" + ("" if ready else
      f": no estimate yet, it needs {audit.n_strata}, one for each score stratum"))

# %%
rounds = []
for r in audit.rounds() if ready else []:
    d, excluded, excluded_stratum = audit.load(r)  # the design; the pairs labelled before it
    answers = session.store.answers(d.ids)  # 1, 0; unsure or not answered yet (< 0): left out
    keep, h = answers >= 0, len(d.sizes)
    n = np.bincount(d.stratum[keep], minlength=h)
    k = np.bincount(d.stratum[keep], weights=answers[keep], minlength=h).astype(int)
    known = np.bincount(excluded_stratum[session.store.answers(excluded) == 1], minlength=h)
    if keep.any():  # a round without an answer yet says nothing
        rounds.append(dict(design=d, keep=keep, y=answers[keep], M=d.unlabelled, n=n, k=k, known=known))
display(pd.DataFrame({c: rounds[-1][c] for c in ("M", "n", "k", "known")}).T if rounds else None)

# %% [markdown]
# A stratum's unaudited pairs hold `(M - n) * rate` matches, the rate a posterior mean: the
# prior (the model's calibrated scores, shifted and tilted over a grid of possible calibration
# errors) updated by `k` in `n`. `matches_per_record` drops the grid points that expect more
# unfound matches than `matches_per_record` times the records of the smaller table; once your
# answers put a record in more matches than that, the bound rises to one more than the most
# matches any record has, for every round.

# %%
space = session.pool.space
use = audit.assumption(space, *session.store.labelled())  # the matches a record it assumes now
bound = None if use["per_record"] is None else use["per_record"] * (
    space.n_left if space.symmetric else min(space.n_left, space.n_right))
for row in rounds:
    if row["design"].prior == "bounded":  # every round under the bound the answers allow now
        row["design"] = replace(row["design"], max_positives=bound)
    d, M, n, k = row["design"], row["M"], row["n"], row["k"]
    prior = rate_prior(d.rates, prior=d.prior, strength=d.strength, sizes=M, max_positives=bound)
    a, b = prior.a + k, prior.b + n - k  # (grid, H): each grid point's Betas after the audit
    log_w = prior.log_weight + (betaln(a, b) - betaln(prior.a, prior.b)).sum(axis=1)  # how likely k
    w = np.exp(log_w - log_w.max()) / np.exp(log_w - log_w.max()).sum()
    row["unfound"] = (M - n) * (w @ (a / (a + b)))  # (H,) matches expected among the unaudited
    row["total"] = max(float((row["known"] + k + row["unfound"]).sum()), found)

# %% [markdown]
# Each round estimates the same total; they are averaged with weights fixed when each was drawn
# (one over its design's expected variance). The interval comes from posterior draws of every
# stratum at once, each round's draws averaged in sorted order: the rounds' audits are
# independent, but their unaudited pairs rest on similar models' scores, whose errors repeat, so
# the combined interval is no narrower than the rounds' own. That is the estimator's own
# `combine_rounds`, given the counts above.

# %%
if rounds:
    weight = np.array([1 / row["design"].design_variance for row in rounds])
    total = max(float(weight @ [row["total"] for row in rounds] / weight.sum()), found)
    audits = [replace(row["design"], ids=row["design"].ids[row["keep"]],
                      stratum=row["design"].stratum[row["keep"]], known=row["known"]) for row in rounds]
    drawn = combine_rounds(audits, [row["y"] for row in rounds], found=found, seed=0)
    print(f"{found:,} of an estimated {total:,.1f} matches: {found / total:.1%} found "
          f"({drawn['recall_found_ci'][0]:.0%}-{drawn['recall_found_ci'][1]:.0%})")

# %% [markdown]
# The session's estimate is that arithmetic (it says so when there is no estimate yet):

# %%
estimate = session.estimate()
if rounds:
    np.testing.assert_allclose([total, found / total], [estimate["total"], estimate["recall_found"]])
    np.testing.assert_allclose(drawn["total_ci"] + drawn["recall_found_ci"],
                               estimate["total_ci"] + estimate["recall_found_ci"])
    np.testing.assert_equal(bound, estimate["bound"])
print(estimate["sentence"])
display(session.estimate_table())

# %% [markdown]
# Where your matches sit says whether `one_to_one` suits your records: if no record is in two
# matches while many of your "no" answers paired a record already matched, those answers bought
# little; if records do have several matches, the rule would hide their other pairs. The line
# below says so when the counts point one way.

# %%
use = session.record_use()
print(f"{use['matches']:,} matches labelled; {use['records_in_several']:,} records in more than one; "
      f"{use['non_matches_of_matched']:,} non-match answers paired a record already matched")
print(use["sentence"] or f"(one_to_one = {one_to_one}: nothing in these counts argues against it)")

# %% [markdown]
# ## 4. What you came for
#
# `export` writes `labels.csv` (every answer), the model (a sentence-transformers folder),
# `matches.csv` (every pair of the whole collection the matcher calls a match at the threshold
# for `target_precision`, with your answers applied) and, for one table, `clusters.csv`.
#
# Which matcher: the session's bi-encoder scores each record's nearest neighbours; a
# cross-encoder (both records in one input: slower, and usually sharper on near misses) trained
# on the same labels re-scores those candidates. The audit pairs were never trained on, so they
# can judge both: with `matcher = "auto"` the export keeps the one whose matches the audit
# estimates the higher F1. The bi-encoder alone (the default) takes seconds: the worker embeds
# the records with the final model as the rounds end. The cross-encoder's training and scoring
# take tens of minutes on 25,000 records, and on the Walmart-Amazon and DBLP-ACM sessions of
# `benchmarks/README.md` it never beat the bi-encoder; run this cell again with the same answers
# (after a kernel restart, say) and its scores are read back from the session folder.
# While the rounds still run, this cell says so: run it again when the widget says finished.

# %%
out = Path(export_dir) if export_dir else ctx.path("10_export")
exported = session.export(out, target_precision=target_precision, matcher=matcher) if session.result() else {}
if not exported:
    print(f"not yet: the rounds are still running ({session.counts()['labels']:,} of {budget:,} "
          "labels); run this cell again when the widget says the session is finished")
else:
    print("matcher:", report.markdown("matcher_choice", exported, template="session.md.j2"))
    print(pd.DataFrame(exported["estimates"]).T.round(3).to_string())
    print({k: v for k, v in exported.items() if k not in ("folder", "estimates", "why")}, "->", ctx.shown(out))
    display(session.largest_clusters(out) if right is None else session.matches_frame(out).head(10))

# %% [markdown]
# ## 5. With the oracle: against random labelling and static retrieval
#
# At the same budget, random labelling meets the true imbalance and finds almost nothing; static
# retrieval labels the pairs the pretrained encoder likes best. Positives found per label says
# what the session's choices were worth.

# %%
comparison = compare_strategies(session, ["random", "static_retrieval"]) if annotator == "oracle" else None
display(comparison)

# %% [markdown]
# ## 6. With the oracle: can the interval be trusted?
#
# The interval of "the share found" is about the audit's randomness: with the truth known, each
# round's audit is drawn again `coverage_repeats` times and we count how often the 95% interval
# the session shows (every audit round so far combined, as the guide above shows it) holds the
# true share, over `coverage_seeds` session trajectories (`covered`, `mean_width`; `round_*`: the
# round's own audit alone). A trustworthy interval covers at least 90% of the time; its width
# says how much it tells you. Early in a session it is wide: a few audit pairs a round cannot see
# match rates of one in ten thousand, and the model's calibration is least reliable in its tail.

# %%
coverage = {}
if annotator == "oracle" and coverage_seeds:
    checked = coverage_sessions(session, coverage_seeds)
    coverage = {session.pool.task: coverage_table(checked)}
    display(pd.DataFrame(coverage[session.pool.task]).T)

# %%
metrics = {"session": session.metrics(exported, oracle_pairs=annotator == "oracle"),
           "comparison": comparison_record(comparison),
           "coverage": coverage}
ctx.record_metrics(metrics)
