"""The one piece annotators, strategies and query strategies share: constructor arguments
recorded in a run's config (``params``) and shown in the object's ``repr``."""

from __future__ import annotations

import inspect

__all__ = ["Configurable"]


class Configurable:
    """Subclasses keep each constructor argument under its own name (scikit-learn's
    ``get_params`` convention): ``params`` returns them, ``repr`` shows them."""

    def params(self) -> dict:
        """Constructor arguments, recorded beside what the object produced (those kept)."""
        names = inspect.signature(type(self)).parameters
        return {name: getattr(self, name) for name in names if hasattr(self, name)}

    def __repr__(self) -> str:
        args = ", ".join(f"{k}={v!r}" for k, v in self.params().items())
        return f"{type(self).__name__}({args})"
