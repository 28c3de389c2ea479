"""The one piece annotators, strategies and query strategies share: constructor arguments
recorded in a run's config (``params``) and shown in the object's ``repr``."""

from __future__ import annotations

__all__ = ["Configurable"]


class Configurable:
    """Subclasses return their constructor arguments from ``params``; ``repr`` shows them."""

    def params(self) -> dict:
        """Constructor arguments, recorded beside what the object produced."""
        return {}

    def __repr__(self) -> str:
        args = ", ".join(f"{k}={v!r}" for k, v in self.params().items())
        return f"{type(self).__name__}({args})"
