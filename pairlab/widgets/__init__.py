"""What a reader sees and touches: figures (:mod:`.plots`, :mod:`.ranker_plots`,
:mod:`.adaptivity_plots`, :mod:`.cost_calculator`), the run :mod:`.dashboard`, false-positive
:mod:`.review` (marks in :mod:`.labels`), the session's :mod:`.labeller` and their
:mod:`.keycatcher`. Import the submodules."""

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


class Shown:
    """A widget's holder, shown in a notebook as its ipywidgets ``widget``."""

    def _repr_mimebundle_(self, **kwargs):
        return self.widget._repr_mimebundle_(**kwargs)
