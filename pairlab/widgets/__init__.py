"""What a reader sees and touches: figures (:mod:`.plots`, notebook 08's :mod:`.ranker_plots`
and :mod:`.cost_calculator`, notebook 09's :mod:`.adaptivity_plots`), the run dashboard
(:mod:`.dashboard`), false-positive review (:mod:`.review`: the computations, the browser widget
and the report; the marks in :mod:`.labels`), the :mod:`.labeller` of a labelling session and
the :mod:`.keycatcher` keyboard of both widgets. Import the submodules."""

__all__ = [
    "adaptivity_plots",
    "cost_calculator",
    "dashboard",
    "keycatcher",
    "labeller",
    "labels",
    "plots",
    "ranker_plots",
    "review",
]
