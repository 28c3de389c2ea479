"""The stopping guide: what a labelling session's estimate says, in one plain sentence. It
advises; the person decides when to stop."""

from __future__ import annotations

__all__ = ["one_to_one_sentence", "stopping_sentence"]

# labelled matches, all on distinct records, before the guide suggests one_to_one
ONE_TO_ONE_EVIDENCE = 20


def stopping_sentence(estimate: dict) -> str:
    """E.g. "about 85% (78-91%) of the matches found: 412 of an estimated 485 (450-530); the
    last 50 pairs held 3 new ones"."""
    found, total = estimate["found"], estimate["total"]
    low, high = estimate["recall_found_ci"]
    lo_t, hi_t = estimate["total_ci"]
    recent = estimate.get("recent") or {}
    tail = ""
    if recent.get("pairs"):
        n, k = recent["pairs"], recent["positives"]
        tail = f"; the last {n} pairs held {k} match{'es' if k != 1 else ''}"
    return (
        f"about {_pct(estimate['recall_found'])} ({_pct(low, sign=False)}-{_pct(high)}) of the "
        f"matches found: {found:,} of an estimated {total:,.0f} ({lo_t:,.0f}-{hi_t:,.0f}), "
        f"95% interval{tail}{_assumed(estimate)}"
    )


def one_to_one_sentence(use: dict, one_to_one: bool) -> str:
    """Advice on ``one_to_one`` from where the labelled matches sit
    (:meth:`~pairlab.session.LabelingSession.record_use`): "" when the counts agree with the
    setting or are too few to say."""
    several, spent = use["records_in_several"], use["non_matches_of_matched"]
    if one_to_one and several:
        return (
            f"{several:,} record{'s are' if several != 1 else ' is'} in more than one labelled "
            "match, so a record here can have several; one_to_one=True never asks the other "
            "pairs of a matched record: consider one_to_one=False"
        )
    if not one_to_one and not several and spent and use["matches"] >= ONE_TO_ONE_EVIDENCE:
        return (
            f"all {use['matches']:,} matches labelled so far are on distinct records, and "
            f"{spent:,} of your non-match answers paired a record already matched: if each "
            "record has at most one match (two catalogues of distinct products), "
            "one_to_one=True spends those labels on other records"
        )
    return ""


def _assumed(estimate: dict) -> str:
    """The stated bound the estimate rests on (``matches_per_record``), and a warning where the
    interval reaches it: then the bound, not the audit, sets the estimate's top."""
    bound = estimate.get("bound")
    if bound is None:
        return ""
    _, hi_t = estimate["total_ci"]
    said = f"; assuming at most {bound:,.0f} matches are still unfound (matches_per_record)"
    if hi_t - estimate["found"] >= 0.9 * bound:
        said += (
            ": the interval reaches that bound, so it rests on it; if records can have more "
            "matches than you stated, raise matches_per_record"
        )
    return said


def _pct(x: float, *, sign: bool = True) -> str:
    return f"{100 * x:.0f}%" if sign else f"{100 * x:.0f}"
