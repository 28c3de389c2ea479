"""The notebooks' metrics files, declared: what each ``<notebook>.metrics.json`` holds, checked
when a notebook writes it (:meth:`.notebook.Context.record_metrics`) and when ``make docs``
reads the committed ones (:func:`.report.load_results`).

Each file is a :class:`~typing.TypedDict` (:data:`LAYOUTS`). Field names are snake_case; a
``dict[str, ...]`` is a map whose keys are data (tasks, strategies, seeds, noise levels, run
labels such as ``"uncertainty, 2 layers"``), not field names. A field that may be undefined
(no seed reached the target, fewer than three encoders for a correlation) is ``... | None``:
a metrics file holds no NaN. Checking is pydantic's (``TypeAdapter``, lax: an int where a float
is declared passes), with extra keys refused, so a key renamed in the code but not here fails
at the notebook that wrote it, not in a document later.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from pydantic import ConfigDict, TypeAdapter, ValidationError, with_config
from typing_extensions import NotRequired, TypedDict

__all__ = ["LAYOUTS", "MetricsLayoutError", "check", "check_file"]

Maybe = float | None
Interval = list[float]
_STRICT = ConfigDict(extra="forbid")


def _declared(cls):
    return with_config(_STRICT)(cls)


# ---- shared pieces -------------------------------------------------------------------------


@_declared
class SeedSpread(TypedDict):
    """A measure over seeds: mean, std (ddof 0) and each seed's value."""

    mean: Maybe
    std: Maybe
    per_seed: list[Maybe]
    ci_per_seed: NotRequired[list[Interval]]
    ci: NotRequired[Interval]


@_declared
class DevPoint(TypedDict):
    labels: int
    ap: Maybe


@_declared
class RoundEntry(TypedDict):
    seed: int
    round: int
    labels: int
    positives_found: int
    candidate_recall: NotRequired[Maybe]
    dev_ap: NotRequired[Maybe]
    dev_ap_ci: NotRequired[Interval | None]


@_declared
class StrategySummary(TypedDict):
    """One strategy of a sweep over seeds (:func:`.experiments.summaries.summarise`)."""

    labels: int
    seeds: list[int]
    positives_found: SeedSpread
    ap: SeedSpread
    p_at_r20: SeedSpread
    dev_ap_per_round: list[DevPoint]
    rounds_per_seed: NotRequired[list[RoundEntry]]  # absent from files written before it was
    seconds_per_run: dict[str, float]  # stage -> mean seconds
    runs: list[str]  # the run folders' names
    # what computed the entry where not the notebook: the zero-shot rows of results/cpu, demo
    # and smoke, added on 2026-11-25 by a command since removed (issue 57)
    recorded_by: NotRequired[str]


@_declared
class Efficiency(TypedDict):
    """The data-efficiency factor of one task (:func:`.experiments.data_efficiency.record`)."""

    per_seed: list[EfficiencySeed]
    factor_mean: Maybe
    factor_std: Maybe
    seeds_defined: int
    seeds: int


@_declared
class EfficiencySeed(TypedDict):
    seed: int
    task: NotRequired[str]
    static_retrieval_labels: int
    static_retrieval_dev_ap: float
    static_retrieval_labels_needed: Maybe
    uncertainty_final_dev_ap: float
    labels_needed: Maybe
    factor: Maybe
    bound: str


# ---- 01 dataset construction ---------------------------------------------------------------


@_declared
class PretrainedCosine(TypedDict):
    ap: float
    ap_ci: Interval
    p_at_r20: float
    p_at_r20_ci: Interval
    exact_ap: NotRequired[float]
    exact_p_at_r20: NotRequired[float]


@_declared
class SplitCounts(TypedDict):
    n_left: int
    n_right: int
    n_pairs: int
    n_positives: int
    ratio: Maybe
    n_stated_negatives: NotRequired[int]
    n_nearby_negatives: NotRequired[int]
    n_random_negatives: NotRequired[int]
    neighbours: NotRequired[int]
    pretrained_cosine: NotRequired[PretrainedCosine]


@_declared
class DatasetTask(TypedDict):
    train: SplitCounts
    dev: SplitCounts
    test: SplitCounts
    notes: dict[str, Any]  # the loader's own counts (rows skipped, conflicts): its report


# ---- 02 ConcatBERT's failure ---------------------------------------------------------------


@_declared
class AllPairs(TypedDict):
    ap: float
    ap_ci: Interval
    p_at_r20: float
    p_at_r20_ci: Interval
    n_near: int
    n_rand: int
    n_positive: int
    neighbours: int


@_declared
class Heuristic(TypedDict, total=False):
    accuracy: float
    f1: float
    roc_auc: float
    a_f1: float
    c_map: float
    n_test_pairs: int


@_declared
class BaselineModel(TypedDict):
    model_id: str
    train_pairs: int
    heuristic: Heuristic
    all_pairs: AllPairs


# ---- 04 ablations --------------------------------------------------------------------------


@_declared
class SeedSetRound(TypedDict):
    round: int
    labels: int
    dev_ap: Maybe
    batch_positive_share: Maybe
    mean_p: Maybe


@_declared
class SeedSet(TypedDict):
    seeds: list[int]
    rounds: list[SeedSetRound]


@_declared
class Transfer(TypedDict):
    labels: int
    seeds: list[int]
    model_ids: list[str]
    n_scored: int
    ap: SeedSpread
    p_at_r20: SeedSpread
    positives: SeedSpread
    ap_ci_per_seed: list[Interval]
    collapsed_per_seed: list[bool]
    score_std_per_seed: list[float]
    seconds_per_model: Maybe


@_declared
class Ablations(TypedDict):
    strategies: dict[str, StrategySummary]
    seed_set: dict[str, SeedSet]  # seed-set name (notebook 04's labels) -> rounds
    transfer: NotRequired[dict[str, Transfer]]


# ---- 05 budget curves ----------------------------------------------------------------------


@_declared
class CurvePoint(TypedDict):
    labels: int
    dev_ap: Maybe
    dev_ap_ci: Interval
    positive_share: float


@_declared
class NoiseRow(TypedDict):
    runs_of: str
    n: int | None
    mean_ap: Maybe
    std: Maybe
    min: Maybe
    max: Maybe
    range: Maybe


@_declared
class CostRow(TypedDict):
    strategy: str
    labels: int
    test_ap: Maybe
    annotator_hours: float
    annotation_dollars: float
    compute_hours_measured: Maybe


@_declared
class BudgetTask(TypedDict):
    curves: dict[str, list[CurvePoint]]
    efficiency: Efficiency
    strategies: dict[str, StrategySummary]
    noise: list[NoiseRow]
    costs: list[CostRow]


# ---- 06 Augmented SBERT --------------------------------------------------------------------


@_declared
class AugRow(TypedDict, total=False):
    """One model of one gold source (the gold-only SBERT, the cross-encoder, a sampler's
    AugSBERT, ``ss``): means over seeds, their std (``<name>_std``) and ``per_seed``."""

    seeds: list[int]
    per_seed: dict[str, list[Any]]
    ap: float
    ap_std: float
    ap_ci: Interval
    p_at_r20: float
    p_at_r20_std: float
    p_at_r20_ci: Interval
    f1: float
    f1_std: float
    n_gold: float
    n_gold_std: float
    n_silver: float
    n_silver_std: float
    collapsed: float
    collapsed_std: float
    label_seconds: float
    label_seconds_std: float
    pairs_per_second: float
    pairs_per_second_std: float
    threshold: float
    threshold_std: float
    silver_logit_std: float
    silver_logit_std_std: float
    silver_positive_share: float
    silver_positive_share_std: float
    silver_precision: float
    silver_precision_std: float
    true_positive_share: float
    true_positive_share_std: float


# ---- 07 LLM annotators ---------------------------------------------------------------------


@_declared
class NoisyRun(TypedDict):
    seeds: list[int]
    per_seed: dict[str, list[Any]]
    labels: float
    positives_found: float
    annotator_accuracy: Maybe
    no_answer: float
    ap: float
    ap_ci: Interval
    p_at_r20: float
    p_at_r20_ci: Interval


@_declared
class CaseRow(TypedDict, total=False):
    seeds: list[int]
    per_seed: dict[str, list[Any]]
    n_annotated: float
    annotator_accuracy: Maybe
    no_answer: float
    high_error_share: Maybe
    auc_all: Maybe
    auc_low_error: Maybe
    auc_high_error: Maybe
    test_pairs_all: float
    test_pairs_low_error: float
    test_pairs_high_error: float
    test_positives_all: float
    test_positives_low_error: float
    test_positives_high_error: float


@_declared
class LlmAnnotators(TypedDict):
    all_pairs: dict[str, dict[str, dict[str, NoisyRun]]]  # task -> noise -> strategy -> run
    case_study: dict[str, dict[str, CaseRow]]  # annotator -> sampler -> row


# ---- 08 better than random -----------------------------------------------------------------


@_declared
class PerRound(TypedDict):
    mean: list[Maybe]
    per_seed: list[list[Maybe]]
    ci_per_seed: NotRequired[list[list[Interval]]]


@_declared
class VsRandom(TypedDict):
    difference: list[Maybe]
    p: list[Maybe]
    p_adjusted: list[Maybe]
    significant: list[bool]


@_declared
class SpreadRow(TypedDict):
    round: int
    questions: int
    best: float
    best_seed: int
    worst: float
    worst_seed: int
    range: float
    p: Maybe
    significant: bool


@_declared
class QueryStrategy(TypedDict, total=False):
    seeds: list[int]
    sizes: list[int]
    assessments: list[float]
    assessments_per_seed: list[list[int]]
    pairs: list[float]
    ap: PerRound
    ndcg10: PerRound
    mrr10: PerRound
    annotation_cost: list[float]
    compute_cost: list[float]
    total_cost: list[float]
    compute_hours: dict[str, list[float]]  # device -> hours per round
    p_value_vs_random: list[Maybe]
    vs_random: dict[str, VsRandom]  # measure -> comparison per round
    spread: list[SpreadRow]
    verdict: dict[str, dict[str, Any]]  # equal_questions / equal_cost -> the test's figures


# ---- 09 when adaptivity pays ---------------------------------------------------------------


@_declared
class BudgetCurve(TypedDict):
    labels: list[int]
    dev_ap: PerSeedCurve
    positive_share: list[Maybe]


@_declared
class PerSeedCurve(TypedDict):
    mean: list[Maybe]
    ci: list[Interval]
    seeds: list[int]
    per_seed: list[list[Maybe]]


@_declared
class Regime(TypedDict):
    positives: int
    labels: int
    rounds: int
    labels_per_positive: Maybe
    paper_labels_per_positive: Maybe


@_declared
class Separation(TypedDict):
    budgets: int
    uncertainty_above_from: Maybe
    static_retrieval_above_from: Maybe
    final_gap: float


@_declared
class EncoderCurve(TypedDict):
    labels: list[int]
    test_ap: EncoderTestAp


@_declared
class EncoderTestAp(TypedDict):
    mean: list[float]
    ci: list[Interval]
    seeds: list[list[int]]
    per_seed: list[list[float]]


@_declared
class Gap(TypedDict):
    labels: list[int]
    mean: list[float]
    std: list[float]
    seeds: list[list[int]]
    per_seed: list[list[float]]
    judged: list[str]


@_declared
class Encoder(TypedDict):
    zero_shot_ap: float
    zero_shot_ap_ci: Interval
    static_precision: float
    static_labels: int
    uncertainty: EncoderCurve
    static_retrieval: EncoderCurve
    gap: Gap


@_declared
class EncoderTrend(TypedDict):
    encoders: int
    spearman_rho: Maybe
    weakest: int
    strongest: int
    weakest_minus_strongest: float
    per_seed: list[Maybe]
    seeds: list[int]


@_declared
class Overlap(TypedDict):
    labels: list[float]
    mean: list[Maybe]
    seeds: list[int]
    per_seed: list[list[Maybe]]


@_declared
class AdaptivityPays(TypedDict):
    budget: dict[str, dict[str, BudgetCurve]]  # task -> strategy
    regime: dict[str, Regime]
    efficiency: dict[str, Efficiency]
    separation: dict[str, dict[str, Separation]]  # task -> seed or "mean"
    encoder: dict[str, Encoder]  # layers kept
    encoder_trend: dict[str, EncoderTrend]  # labels
    candidate_recall: dict[str, dict[str, list[Maybe]]]  # task -> run label -> per round
    overlap: dict[str, dict[str, Overlap]]  # task -> run label


# ---- 10 label your own pairs ---------------------------------------------------------------


@_declared
class Estimate(TypedDict):
    point: Maybe
    ci: list[Maybe] | None  # None: no estimate yet (est_sentence says why)


@_declared
class MatcherEstimate(TypedDict, total=False):
    threshold: Maybe
    predicted: int
    exported: int
    tp: Maybe
    fp: Maybe
    recall: Maybe
    f1: Maybe
    precision_unlabelled: Maybe
    audit_answers: int
    audit_rounds: int


@_declared
class Session(TypedDict, total=False):
    labels: int
    positives: int
    unsure: int
    rounds: int
    audit_labels: int
    est_positives: Estimate
    est_recall: Estimate
    est_sentence: str
    true_recall: Maybe
    true_positives: int
    threshold: Maybe
    matcher: str
    matcher_estimates: dict[str, MatcherEstimate]  # "bi-encoder", "cross-encoder"
    matches: int
    clusters: int | None
    precision: Maybe
    recall: Maybe
    f1: Maybe


@_declared
class ComparisonRow(TypedDict):
    strategy: str
    labels: int
    matches_found: int
    labels_per_match: Maybe
    share_of_all_matches: float


@_declared
class Coverage(TypedDict):
    covered: Maybe
    mean_width: Maybe
    repeats: int
    sessions: int
    round_covered: NotRequired[Maybe]
    round_width: NotRequired[Maybe]
    truth: NotRequired[list[Maybe]]


@_declared
class LabelYourOwn(TypedDict):
    session: Session
    comparison: list[ComparisonRow] | None
    coverage: dict[str, dict[str, Coverage]]  # task -> budget


LAYOUTS: dict[str, Any] = {
    "01_dataset_construction": dict[str, DatasetTask],
    "02_concatbert_failure_analysis": dict[str, dict[str, BaselineModel]],
    "03_cosinebert_active_learning": dict[str, dict[str, StrategySummary]],
    "04_ablations": dict[str, Ablations],
    "05_budget_curves": dict[str, BudgetTask],
    "06_augmented_sbert": dict[str, dict[str, dict[str, AugRow]]],  # task -> gold -> model
    "07_llm_annotators": LlmAnnotators,
    "08_better_than_random": dict[str, dict[str, QueryStrategy]],
    "09_when_adaptivity_pays": AdaptivityPays,
    "10_label_your_own_pairs": LabelYourOwn,
}
_ADAPTERS: dict[str, TypeAdapter] = {}


class MetricsLayoutError(ValueError):
    """A metrics file that does not have its notebook's declared layout."""


def check(notebook: str, metrics: Any, *, source: str | None = None) -> Any:
    """``metrics`` if it has ``notebook``'s declared layout (:data:`LAYOUTS`), else a
    :class:`MetricsLayoutError` naming each wrong place (``source``: the file, for the
    message). A notebook without a declared layout (a user's own) passes unchecked."""
    layout = LAYOUTS.get(notebook)
    if layout is None:
        return metrics
    if notebook not in _ADAPTERS:
        _ADAPTERS[notebook] = TypeAdapter(layout)
    try:
        _ADAPTERS[notebook].validate_python(metrics)
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


def check_file(path) -> Any:
    """The metrics file at ``path``, read and checked against its notebook's layout."""
    path = Path(path)
    return check(
        path.name.removesuffix(".metrics.json"), json.loads(path.read_text()), source=str(path)
    )
