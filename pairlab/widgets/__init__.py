"""What a reader sees and touches: figures (:mod:`.plots`; notebook 08's in :mod:`.ranker_plots`,
notebook 09's in :mod:`.adaptivity_plots`), the live run dashboard (:mod:`.dashboard`),
false-positive review (:mod:`.review` pure functions, :mod:`.browser` the widget,
:mod:`.keycatcher` its keyboard), the durable manual marks (:mod:`.labels`), notebook 08's
cost calculator (:mod:`.cost_calculator`) and the person's side of a labelling session
(:mod:`.labeller`).
Widgets load ipywidgets and plotly only where they are used: import the submodules."""

__all__ = [
    "adaptivity_plots",
    "browser",
    "cost_calculator",
    "dashboard",
    "keycatcher",
    "labeller",
    "labels",
    "plots",
    "ranker_plots",
    "review",
]
