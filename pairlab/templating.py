"""The one Jinja environment of every sentence pairlab shows: the documents' templates
(``docs/*.j2``) and the macros that put records in words (``pairlab/templates/*.j2``)."""

from __future__ import annotations

from pathlib import Path

from .paths import project_root

__all__ = ["FILTERS", "TEMPLATES", "environment", "markdown", "markdown_table", "seconds"]


def markdown_table(frame, *, digits: int = 3) -> str:
    """A pandas frame (index included) as a markdown table; floats rounded to ``digits``."""
    frame = frame.reset_index() if any(n is not None for n in frame.index.names) else frame
    whole = {
        c
        for c in frame.columns
        if frame[c].dtype.kind == "f" and frame[c].dropna().apply(float.is_integer).all()
    }  # counts that NaN made floats
    cells = [
        [_cell(int(v) if c in whole and v == v else v, digits) for c, v in zip(frame.columns, row)]
        for row in frame.itertuples(index=False)
    ]
    header = [str(c) for c in frame.columns]
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    return "\n".join(lines + ["| " + " | ".join(row) + " |" for row in cells])


def _cell(value, digits: int) -> str:
    if value is None or (isinstance(value, float) and value != value):
        return "–"
    if isinstance(value, float):
        return f"{value:,.{digits}f}"
    if isinstance(value, int) and not isinstance(value, bool):
        return f"{value:,}"
    return str(value).replace("|", "\\|")


def seconds(s: float) -> str:
    """A duration as people read it: 0.139 s, 11.9 s, 26 min, 7.0 days."""
    if s >= 86400:
        return f"{s / 86400:.1f} days"
    if s >= 3600:
        return f"{s / 3600:.1f} h"
    if s >= 600:
        return f"{s / 60:.0f} min"
    return f"{s:.3f} s" if s < 10 else f"{s:.1f} s"


FILTERS = {
    "num": lambda v: f"{v:,.0f}",
    "f": lambda v, d=3: f"{v:.{d}f}",
    "pct": lambda v, d=0: f"{100 * v:.{d}f}%",
    "signed": lambda v, d=3: f"{v:+.{d}f}",
    "ci": lambda c, d=3: f"{c[0]:.{d}f}-{c[1]:.{d}f}",
    "oneline": lambda text: " ".join(str(text).split()),
    "seconds": seconds,
    "table": markdown_table,
}
TEMPLATES = Path(__file__).resolve().parent / "templates"


def environment(root: Path | None = None):
    """The Jinja environment of the templates under ``root`` and ``pairlab/templates``."""
    import jinja2

    env = jinja2.Environment(
        loader=jinja2.FileSystemLoader([str(root or project_root()), str(TEMPLATES)]),
        undefined=jinja2.StrictUndefined,
        keep_trailing_newline=True,
        trim_blocks=True,
        lstrip_blocks=True,
    )
    env.filters.update(FILTERS, ratio=_one_in, big=_big)
    return env


def markdown(macro: str, *args, template: str = "findings.md.j2") -> str:
    """A macro of ``pairlab/templates/<template>`` called on ``args``, as markdown."""
    return str(getattr(environment().get_template(template).module, macro)(*args)).strip()


def _big(value: float) -> str:
    """A count people read at a glance: 241.5M, 38B, 7,509."""
    for limit, suffix in ((1e9, "B"), (1e6, "M")):
        if value >= limit:
            return f"{value / limit:.1f}".removesuffix(".0") + suffix
    return f"{value:,.0f}"


def _one_in(ratio: float) -> str:
    """Pairs per positive as "1:32K"."""
    for limit, suffix in ((1e9, "B"), (1e6, "M"), (1e3, "K")):
        if ratio >= limit:
            return f"1:{ratio / limit:.{0 if ratio >= 10 * limit else 1}f}{suffix}"
    return f"1:{ratio:.0f}"
