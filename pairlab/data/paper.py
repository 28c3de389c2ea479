"""Numbers reported by the papers, to print beside ours: Mussmann, Jia and Liang (2020), and
Thakur et al. (2021, Augmented SBERT: ``AUGSBERT_QQP_F1``), Bansal and Sharma (2023, EAGLE) and
Althammer et al. (2023, active learning for rankers: ``ALTHAMMER_*``).

Typed in from ``shared/papers/`` (the papers' text); these are the papers' results, never ours.
"""

from __future__ import annotations

# The core paper's headline compares these two strategies: adaptive (A) against static (B).
A, B = "uncertainty", "static_retrieval"

# Table 1: positives, total pairs, 1 positive in ``ratio``, stated negatives, nearby negatives
# (None: not reported).
TABLE1_COLUMNS = ("positives", "pairs", "ratio", "stated_negatives", "nearby_negatives")
TABLE1 = {
    task: {split: dict(zip(TABLE1_COLUMNS, row)) for split, row in rows.items()}
    for task, rows in {
        "qqp": {
            "train": (124_625, 38e9, 300_000, 132_796, None),
            "dev": (60_510, 8.8e9, 150_000, 61_645, 13.1e6),
            "test": (43_413, 8.5e9, 190_000, 60_575, 12.8e6),
        },
        "wikiqa": {
            "train": (1_040, 56e6, 53_000, 19_320, None),
            "dev": (140, 7.8e6, 56_000, 2_593, 29_511),
            "test": (293, 17e6, 57_000, 5_872, 63_136),
        },
    }.items()
}

# Table 2, BERT row: ConcatBERT trained on stated data.
TABLE2_BERT = {
    "qqp": {"accuracy": 0.825, "f1": 0.773, "p_at_r20": 0.030, "ap": 0.024},
    "wikiqa": {"c_map": 0.799, "a_f1": 0.459, "p_at_r20": 0.065, "ap": 0.024},
}

# Table 3: CosineBERT trained on data collected by each strategy (all-pairs test metrics).
# "stated" is CosineBERT trained on the stated data, the same data as Table 2's ConcatBERT.
TABLE3 = {
    "qqp": {
        "random": {"p_at_r20": 0.047, "ap": 0.028},
        "stated": {"p_at_r20": 0.293, "ap": 0.154},
        "static_retrieval": {"p_at_r20": 0.492, "ap": 0.251},
        "adaptive_retrieval": {"p_at_r20": 0.591, "ap": 0.324},
        "uncertainty": {"p_at_r20": 0.602, "ap": 0.325},
    },
    "wikiqa": {
        "random": {"p_at_r20": 0.013, "ap": 0.013},
        "stated": {"p_at_r20": 0.007, "ap": 0.022},
        "static_retrieval": {"p_at_r20": 0.139, "ap": 0.082},
        "adaptive_retrieval": {"p_at_r20": 0.271, "ap": 0.151},
        "uncertainty": {"p_at_r20": 0.324, "ap": 0.201},
    },
}

# Table 4: positives among the labels each strategy collected, with the same total budget.
TABLE4 = {
    "qqp": {
        "random": 1,
        "static_retrieval": 16_422,
        "adaptive_retrieval": 103_181,
        "uncertainty": 87_594,
    },
    "wikiqa": {"random": 1, "static_retrieval": 169, "adaptive_retrieval": 757, "uncertainty": 742},
}

# Section 5: n1 = 2048, n_i = n1 (3/2)^(i-1); k = 10 rounds on QQP, 4 on WikiQA; m neighbours.
BUDGET = {
    "qqp": {"n1": 2048, "rounds": 10, "labels": 232_100, "neighbours": 1000},
    "wikiqa": {"n1": 2048, "rounds": 4, "labels": 16_640, "neighbours": 100},
}

# Table 5: stratified sampling (oracle access to the positives) against active learning, whose
# rows Table 5 repeats from Table 3.
TABLE5 = {
    task: {**stratified, **{s: TABLE3[task][s] for s in ("adaptive_retrieval", "uncertainty")}}
    for task, stratified in {
        "qqp": {
            "stratified_match": {"p_at_r20": 0.351, "ap": 0.190},
            "stratified_all_positives": {"p_at_r20": 0.416, "ap": 0.222},
        },
        "wikiqa": {
            "stratified_match": {"p_at_r20": 0.132, "ap": 0.085},
            "stratified_all_positives": {"p_at_r20": 0.137, "ap": 0.091},
        },
    }.items()
}

# Table 6 (QQP only): CosineBERT and ConcatBERT trained on the same data; "stratified_match"
# is the paper's "Stratified" row (matching uncertainty sampling's label balance).
TABLE6_COLUMNS = ("cosine_p_at_r20", "cosine_ap", "concat_p_at_r20", "concat_ap")
TABLE6 = {
    "qqp": {
        strategy: dict(zip(TABLE6_COLUMNS, row))
        for strategy, row in {
            "stated": (0.293, 0.154, 0.030, 0.024),
            "static_retrieval": (0.492, 0.251, 0.046, 0.019),
            "stratified_match": (0.351, 0.190, 0.290, 0.164),
            "uncertainty": (0.602, 0.325, 0.236, 0.089),
        }.items()
    }
}

# Section 5.6 / appendix B.1 (QQP dev AP): static retrieval's full budget against the round at
# which uncertainty sampling passes it.
DATA_EFFICIENCY = {
    "qqp": {
        "static_labels": 232_100,
        "static_dev_ap": 0.219,
        "uncertainty_labels": 16_640,
        "uncertainty_dev_ap": 0.226,
        "factor": 14,
    }
}

# Augmented SBERT (Thakur et al. 2021), Table 5: Quora-QP test F1 of the positive class (x 100,
# threshold from dev), mean +- std over 10 seeds; bert-base-uncased for both encoders. "seed_opt":
# the best of 5 seeds on dev (every AugSBERT row uses it). Silver pairs with k = 3 (Tables 9-10:
# k = 3 gave Quora-QP's best BM25 and S.S. scores).
AUGSBERT_QQP_F1 = {
    "cross_encoder": (80.40, 1.05),
    "cross_encoder_seed_opt": (81.23, 0.93),
    "sbert": (73.44, 0.65),
    "sbert_seed_opt": (74.66, 0.31),
    "rs": (73.42, 0.74),
    "kde": (79.31, 0.46),
    "bm25": (79.01, 0.45),
    "ss": (77.20, 0.41),
    "bm25_ss": (72.45, 0.77),
}

# Bansal and Sharma 2023 (EAGLE), Quora, MSMARCO-DistilBERT-v4 bi-encoder, gpt-3.5-turbo labels.
# Table 1: AUC (x100, mean, std) on the complete test set and its high- and low-base-error parts
# after annotating 10% of the data from the target (the 30% lowest- and 30% highest-error pairs).
EAGLE_TABLE1 = {
    "initial": ((86.824, 0.038), (59.335, 0.139), (99.068, 0.048)),
    "full_target": ((87.544, 0.035), (65.785, 0.121), (98.164, 0.044)),
    "random": ((87.052, 0.151), (60.551, 0.701), (98.805, 0.058)),
    "uncertainty": ((87.620, 0.029), (61.594, 0.433), (99.081, 0.024)),
    "base_consistent": ((86.763, 0.149), (59.986, 0.340), (98.833, 0.024)),
    "base_inconsistent": ((88.108, 0.062), (65.538, 0.175), (98.861, 0.046)),
}
# Table 4: test AUC (x100) after sampling 10% of the unlabelled data (another split: initial 85.780),
# annotated by the LLM or with the ground truth (GT).
EAGLE_TABLE4 = {
    "llm": {
        "initial": (85.780, 0.002),
        "random": (86.001, 0.139),
        "uncertainty": (86.058, 0.089),
        "conditional_informativeness": (86.432, 0.106),
    },
    "clean": {
        "initial": (85.780, 0.002),
        "random": (86.677, 0.068),
        "uncertainty": (87.125, 0.135),
        "conditional_informativeness": (87.445, 0.091),
    },
}

# Althammer et al. 2023, Table 1: nDCG@10 of DPR (a bi-encoder, as CosineBERT) after fine-tuning
# on 5k, 10k, 20k and 50k training samples chosen by each strategy (Random: the mean of 4 runs;
# the active strategies ran once). Scratch: from DistilBERT on MS MARCO, tested on TREC DL;
# Re-Train: from TAS-B, fine-tuned on TripClick. The paper's MonoBERT and ColBERT rows are left
# out (cross-encoder and late interaction: no analog here).
ALTHAMMER_SIZES = (5_000, 10_000, 20_000, 50_000)
ALTHAMMER_DPR = {
    "Scratch: TREC DL 2019": {
        "random": (0.3674, 0.4390, 0.4457, 0.5006),
        "qbc": (0.3465, 0.4343, 0.4628, 0.5079),
        "uncertainty": (0.3961, 0.4067, 0.4255, 0.3757),
        "diversity": (0.3713, 0.4086, 0.4593, 0.4750),
    },
    "Scratch: TREC DL 2020": {
        "random": (0.3225, 0.3789, 0.4190, 0.4757),
        "qbc": (0.3023, 0.3849, 0.4090, 0.4534),
        "uncertainty": (0.3660, 0.3733, 0.4476, 0.4254),
        "diversity": (0.3437, 0.4030, 0.4198, 0.4998),
    },
    "Re-Train: TripClick Head DCTR": {
        "random": (0.1389, 0.1459, 0.1516, 0.1621),
        "qbc": (0.0849, 0.1043, 0.1368, 0.1603),
        "uncertainty": (0.1060, 0.1165, 0.1283, 0.1336),
        "diversity": (0.1059, 0.1150, 0.1163, 0.1458),
    },
    "Re-Train: TripClick Torso raw": {
        "random": (0.1837, 0.1745, 0.1924, 0.2023),
        "qbc": (0.0895, 0.1122, 0.1312, 0.1440),
        "uncertainty": (0.0907, 0.0946, 0.1030, 0.1031),
        "diversity": (0.0907, 0.1041, 0.1217, 0.1473),
    },
}
# the zero-shot row (before fine-tuning), per test set in ALTHAMMER_DPR's order
ALTHAMMER_DPR_ZERO = dict(zip(ALTHAMMER_DPR, (0.0, 0.0, 0.139, 0.200)))
# Cells marked * (paired t-test against Random, p < 0.05 after Bonferroni with n = 3): every one
# of them lower than Random. (test set, strategy, training size)
ALTHAMMER_SIGNIFICANT = {
    ("Scratch: TREC DL 2019", "uncertainty", 50_000),
    ("Re-Train: TripClick Head DCTR", "qbc", 5_000),
}

__all__ = [name for name in dict(globals()) if name.isupper()]  # every table above
