"""The notebooks' metrics files, declared: what each ``<notebook>.metrics.json`` holds, checked
when a notebook writes it and when ``make docs`` reads the committed ones.

:data:`RECORDS` declares each record, one per line (an indented line continues it): ``Name:``
then its fields, ``name:type``, where a bare ``name`` is a float, ``name?`` a field that may be
absent, ``type?`` a value that may be ``None``, ``[type]`` a list, ``{type}`` a map whose keys
are data (tasks, strategies, seeds), ``ci`` a ``[low, high]`` list and a capitalised name
another record. Each record becomes a :class:`~typing.TypedDict` that pydantic checks, extra
keys refused, so a key renamed in the code but not here fails at the notebook that wrote it.
"""

from __future__ import annotations

import functools
import re
from typing import Any

from pydantic import ConfigDict, TypeAdapter, ValidationError, with_config
from typing_extensions import NotRequired, TypedDict

__all__ = ["LAYOUTS", "RECORDS", "MetricsLayoutError", "check"]

RECORDS = """
SeedSpread: mean:float? std:float? per_seed:[float?] ci_per_seed?:[ci] ci?:ci
DevPoint: labels:int ap:float?
RoundEntry: seed:int round:int labels:int positives_found:int candidate_recall?:float?
    dev_ap?:float? dev_ap_ci?:ci?
StrategySummary: labels:int seeds:[int] positives_found:SeedSpread ap:SeedSpread
    p_at_r20:SeedSpread dev_ap_per_round:[DevPoint] rounds_per_seed?:[RoundEntry]
    seconds_per_run:{float} runs:[str] recorded_by?:str
Efficiency: per_seed:[EfficiencySeed] factor_mean:float? factor_std:float? seeds_defined:int
    seeds:int
EfficiencySeed: seed:int static_retrieval_labels:int static_retrieval_dev_ap
    static_retrieval_labels_needed:float? uncertainty_final_dev_ap labels_needed:float?
    factor:float? bound:str
PretrainedCosine: ap ap_ci:ci p_at_r20 p_at_r20_ci:ci exact_ap? exact_p_at_r20?
SplitCounts: n_left:int n_right:int n_pairs:int n_positives:int ratio:float?
    n_stated_negatives?:int n_nearby_negatives?:int n_random_negatives?:int neighbours?:int
    pretrained_cosine?:PretrainedCosine
DatasetTask: train:SplitCounts dev:SplitCounts test:SplitCounts notes:{any}
AllPairs: ap ap_ci:ci p_at_r20 p_at_r20_ci:ci n_near:int n_rand:int n_positive:int neighbours:int
Heuristic: accuracy? f1? roc_auc? a_f1? c_map? n_test_pairs?:int
BaselineModel: model_id:str train_pairs:int heuristic:Heuristic all_pairs:AllPairs
SeedSetRound: round:int labels:int dev_ap:float? batch_positive_share:float? mean_p:float?
SeedSet: seeds:[int] rounds:[SeedSetRound]
Transfer: labels:int seeds:[int] model_ids:[str] n_scored:int ap:SeedSpread p_at_r20:SeedSpread
    positives:SeedSpread ap_ci_per_seed:[ci] collapsed_per_seed:[bool] score_std_per_seed:[float]
    seconds_per_model:float?
Ablations: strategies:{StrategySummary} seed_set:{SeedSet} transfer?:{Transfer}
CurvePoint: labels:int dev_ap:float? dev_ap_ci:ci positive_share
NoiseRow: runs_of:str n:int? mean_ap:float? std:float? min:float? max:float? range:float?
CostRow: strategy:str labels:int test_ap:float? annotator_hours annotation_dollars
    compute_hours_measured:float?
BudgetTask: curves:{[CurvePoint]} efficiency:Efficiency strategies:{StrategySummary}
    noise:[NoiseRow] costs:[CostRow]
AugRow: seeds?:[int] per_seed?:{[any]} ap? ap_std? ap_ci?:ci p_at_r20? p_at_r20_std?
    p_at_r20_ci?:ci f1? f1_std? n_gold? n_gold_std? n_silver? n_silver_std? collapsed?
    collapsed_std? label_seconds? label_seconds_std? pairs_per_second? pairs_per_second_std?
    threshold? threshold_std? silver_logit_std? silver_logit_std_std? silver_positive_share?
    silver_positive_share_std? silver_precision? silver_precision_std? true_positive_share?
    true_positive_share_std?
NoisyRun: seeds:[int] per_seed:{[any]} labels positives_found annotator_accuracy:float? no_answer
    ap ap_ci:ci p_at_r20 p_at_r20_ci:ci
CaseRow: seeds?:[int] per_seed?:{[any]} n_annotated? annotator_accuracy?:float? no_answer?
    high_error_share?:float? auc_all?:float? auc_low_error?:float? auc_high_error?:float?
    test_pairs_all? test_pairs_low_error? test_pairs_high_error? test_positives_all?
    test_positives_low_error? test_positives_high_error?
LlmAnnotators: all_pairs:{{{NoisyRun}}} case_study:{{CaseRow}}
PerRound: mean:[float?] per_seed:[[float?]] ci_per_seed?:[[ci]]
VsRandom: difference:[float?] p:[float?] p_adjusted:[float?] significant:[bool]
SpreadRow: round:int questions:int best best_seed:int worst worst_seed:int range p:float?
    significant:bool
QueryStrategy: seeds?:[int] sizes?:[int] assessments?:[float] assessments_per_seed?:[[int]]
    pairs?:[float] ap?:PerRound ndcg10?:PerRound mrr10?:PerRound annotation_cost?:[float]
    compute_cost?:[float] total_cost?:[float] compute_hours?:{[float]}
    p_value_vs_random?:[float?] vs_random?:{VsRandom} spread?:[SpreadRow] verdict?:{{any}}
BudgetCurve: labels:[int] dev_ap:PerSeedCurve positive_share:[float?]
PerSeedCurve: mean:[float?] ci:[ci] seeds:[int] per_seed:[[float?]]
Regime: positives:int labels:int rounds:int labels_per_positive:float?
    paper_labels_per_positive:float?
Separation: budgets:int uncertainty_above_from:float? static_retrieval_above_from:float? final_gap
EncoderCurve: labels:[int] test_ap:EncoderTestAp
EncoderTestAp: mean:[float] ci:[ci] seeds:[[int]] per_seed:[[float]]
Gap: labels:[int] mean:[float] std:[float] seeds:[[int]] per_seed:[[float]] judged:[str]
Encoder: zero_shot_ap zero_shot_ap_ci:ci static_precision static_labels:int
    uncertainty:EncoderCurve static_retrieval:EncoderCurve gap:Gap
EncoderTrend: encoders:int spearman_rho:float? weakest:int strongest:int weakest_minus_strongest
    per_seed:[float?] seeds:[int]
Overlap: labels:[float] mean:[float?] seeds:[int] per_seed:[[float?]]
AdaptivityPays: budget:{{BudgetCurve}} regime:{Regime} efficiency:{Efficiency}
    separation:{{Separation}} encoder:{Encoder} encoder_trend:{EncoderTrend}
    candidate_recall:{{[float?]}} overlap:{{Overlap}}
Estimate: point:float? ci:[float?]?
MatcherEstimate: threshold?:float? predicted?:int exported?:int tp?:float? fp?:float?
    recall?:float? f1?:float? precision_unlabelled?:float? audit_answers?:int audit_rounds?:int
    precision?:float? precision_ci?:[float]? recall_ci?:[float]? f1_ci?:[float]?
    audit_predicted?:int tp_ci?:[float]? expected_tp?:float?
Session: labels?:int positives?:int unsure?:int rounds?:int audit_labels?:int
    est_positives?:Estimate est_recall?:Estimate est_sentence?:str true_recall?:float?
    true_positives?:int threshold?:float? matcher?:str matcher_estimates?:{MatcherEstimate}
    matches?:int clusters?:int? precision?:float? recall?:float? f1?:float?
ComparisonRow: strategy:str labels:int matches_found:int labels_per_match:float?
    share_of_all_matches
Coverage: covered:float? mean_width:float? repeats:int sessions:int round_covered?:float?
    round_width?:float? truth?:[float?]
LabelYourOwn: session:Session comparison:[ComparisonRow]? coverage:{{Coverage}}
"""
# the notes of notebook 01 are the loader's own counts; StrategySummary's recorded_by names what
# computed an entry where not the notebook (results/cpu, demo and smoke's zero-shot rows)
_SPECS = dict(line.split(": ", 1) for line in re.sub(r"\n\s+", " ", RECORDS).strip().splitlines())
_SCALARS = {"int": int, "float": float, "str": str, "bool": bool, "any": Any, "ci": list[float]}


def _type(spec: str):
    """The type a layout ``spec`` names (``{[float?]}``: a map of lists of optional floats)."""
    if spec.endswith("?"):
        return _type(spec[:-1]) | None
    if spec[0] in "[{":
        inner = _type(spec[1:-1])
        return list[inner] if spec[0] == "[" else dict[str, inner]
    return _SCALARS[spec] if spec in _SCALARS else _record(spec)


@functools.cache
def _record(name: str):
    fields = {}
    for field in _SPECS[name].split():
        key, _, spec = field.partition(":")
        tp = _type(spec or "float")
        fields[key.removesuffix("?")] = NotRequired[tp] if key.endswith("?") else tp
    return with_config(ConfigDict(extra="forbid"))(TypedDict(name, fields))


LAYOUTS: dict[str, Any] = {
    notebook: _type(spec)
    for notebook, spec in {
        "01_dataset_construction": "{DatasetTask}",
        "02_concatbert_failure_analysis": "{{BaselineModel}}",  # task -> kind -> model
        "03_cosinebert_active_learning": "{{StrategySummary}}",
        "04_ablations": "{Ablations}",
        "05_budget_curves": "{BudgetTask}",
        "06_augmented_sbert": "{{{AugRow}}}",  # task -> gold source -> model
        "07_llm_annotators": "LlmAnnotators",
        "08_better_than_random": "{{QueryStrategy}}",
        "09_when_adaptivity_pays": "AdaptivityPays",
        "10_label_your_own_pairs": "LabelYourOwn",
    }.items()
}


class MetricsLayoutError(ValueError):
    """A metrics file that does not have its notebook's declared layout."""


@functools.cache
def _adapter(notebook: str) -> TypeAdapter:
    return TypeAdapter(LAYOUTS[notebook])


def check(notebook: str, metrics: Any, *, source: str | None = None) -> Any:
    """``metrics`` if it has ``notebook``'s declared layout (:data:`LAYOUTS`), else a
    :class:`MetricsLayoutError` naming each wrong place (``source``: the file, for the
    message). A notebook without a declared layout (a user's own) passes unchecked."""
    if notebook not in LAYOUTS:
        return metrics
    try:
        _adapter(notebook).validate_python(metrics)
    except ValidationError as error:
        problems = [
            f"  at {' / '.join(map(str, e['loc'])) or '(top)'}: {e['msg']}"
            + (f" (got {e['input']!r:.60})" if e["type"] != "missing" else "")
            for e in error.errors()[:12]
        ]
        more = error.error_count() - len(problems)
        raise MetricsLayoutError(
            f"{source or notebook + '.metrics.json'} does not have the layout declared in "
            f"pairlab/metrics_files.py ({error.error_count()} problem(s)):\n"
            + "\n".join(problems)
            + (f"\n  ... and {more} more" if more > 0 else "")
        ) from None
    return metrics
