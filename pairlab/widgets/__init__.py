"""What a reader sees and touches: figures (:mod:`.plots`; notebook 09's in
:mod:`.adaptivity_plots`), the live run dashboard
(:mod:`.dashboard`), false-positive review (:mod:`.review` pure functions, :mod:`.browser` the
widget, :mod:`.keycatcher` its keyboard) and the durable manual marks (:mod:`.labels`).
Widgets load ipywidgets and plotly only where they are used: import the submodules."""

__all__ = ["adaptivity_plots", "browser", "dashboard", "keycatcher", "labels", "plots", "review"]
