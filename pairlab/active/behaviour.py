"""The code of a run's strategy and annotator as a digest in its run folder's key: an edited
strategy, in pairlab or a notebook cell, gets a new folder. It covers a function's syntax tree
without docstrings and positions (compiled code where no source can be read), its defaults,
closure and the functions and classes it calls by name, and a class's whole MRO; installed
libraries and the standard library are named, not read.
"""

from __future__ import annotations

import ast
import hashlib
import inspect
import sys
import sysconfig
import textwrap
import types
from pathlib import Path

__all__ = ["code_digest", "run_code_digest"]

_OWN = ("pairlab", "__main__")  # modules whose code is always read
_LIBRARIES = tuple(
    {
        Path(p).resolve()
        for key in ("stdlib", "platstdlib", "purelib", "platlib")
        if (p := sysconfig.get_paths().get(key))
    }
)  # installed code: named, not read
_SIMPLE = (bool, int, float, str, bytes, type(None))


def code_digest(*objects) -> str:
    """Hex sha256 digest of what ``objects`` (classes, functions, simple values) do."""
    h = hashlib.sha256()
    seen: set[int] = set()
    for obj in objects:
        _feed(h, obj, seen)
    return h.hexdigest()


def run_code_digest(config) -> str:
    """12 hex digits: the digest of a run config's strategy as its registry builds it and of its
    annotator (``config.annotator``; None: the oracle)."""
    from ..annotators.factory import annotator_class
    from .queries import QUERY_STRATEGIES, QueryConfig
    from .strategies import STRATEGIES, make_strategy

    parts = [annotator_class(getattr(config, "annotator", None))]
    if isinstance(config, QueryConfig):
        parts.append(QUERY_STRATEGIES.get(config.strategy))
    else:  # the criterion, its selection model and how make_strategy composes them
        parts += [STRATEGIES.get(config.strategy), make_strategy]
        if config.strategy_params.get("one_to_one"):
            parts.append("one_to_one")
    return code_digest(*parts)[:12]


def _own(obj) -> bool:
    """Code whose source is read: pairlab's, a notebook's (``__main__``) and any module of the
    user's own (a file outside the installed libraries and the standard library)."""
    name = getattr(obj, "__module__", None) or ""
    if name.split(".")[0] in _OWN:
        return True
    module = sys.modules.get(name)
    path = getattr(module, "__file__", None)
    if module is None or path is None:
        return False  # built in, or gone
    return not any(Path(path).resolve().is_relative_to(root) for root in _LIBRARIES)


def _feed(h, obj, seen: set) -> None:
    if isinstance(obj, _SIMPLE):
        h.update(repr(obj).encode())
        return
    if isinstance(obj, (tuple, list, frozenset, set)):
        items = sorted(obj, key=repr) if isinstance(obj, (set, frozenset)) else obj
        h.update(f"{type(obj).__name__}[".encode())
        for item in items:
            _feed(h, item, seen)
        h.update(b"]")
        return
    if isinstance(obj, dict):
        for key in sorted(obj, key=repr):
            _feed(h, key, seen)
            _feed(h, obj[key], seen)
        return
    if isinstance(obj, (staticmethod, classmethod)):
        obj = obj.__func__
    if isinstance(obj, property):
        for part in (obj.fget, obj.fset, obj.fdel):
            if part is not None:
                _feed(h, part, seen)
        return
    if id(obj) in seen:
        h.update(f"<seen {getattr(obj, '__qualname__', type(obj).__name__)}>".encode())
        return
    if isinstance(obj, type):
        seen.add(id(obj))
        if not _own(obj):
            h.update(f"<class {obj.__module__}.{obj.__qualname__}>".encode())
            return
        for cls in obj.__mro__:
            if cls is object or not _own(cls):
                h.update(f"<base {cls.__module__}.{cls.__qualname__}>".encode())
                continue
            h.update(f"class {cls.__qualname__}".encode())
            for name in sorted(vars(cls)):
                if name.startswith("__") and name not in ("__init__", "__call__", "__post_init__"):
                    continue
                h.update(name.encode())
                _feed(h, vars(cls)[name], seen)
        return
    if isinstance(obj, types.FunctionType):
        seen.add(id(obj))
        if not _own(obj):
            h.update(f"<function {obj.__module__}.{obj.__qualname__}>".encode())
            return
        _feed_function(h, obj, seen)
        return
    # anything else (a module, an ndarray, a library object): its type's name only
    h.update(f"<{type(obj).__module__}.{type(obj).__qualname__}>".encode())


def _feed_function(h, fn: types.FunctionType, seen: set) -> None:
    h.update(_body(fn))
    _feed(h, fn.__defaults__ or (), seen)
    _feed(h, fn.__kwdefaults__ or {}, seen)
    for cell in fn.__closure__ or ():
        try:
            _feed(h, cell.cell_contents, seen)
        except ValueError:  # an empty cell
            h.update(b"<empty cell>")
    for name in sorted(set(_names(fn.__code__))):
        value = fn.__globals__.get(name)
        if isinstance(value, (type, types.FunctionType)) and _own(value):
            h.update(name.encode())
            _feed(h, value, seen)


def _names(code: types.CodeType):
    yield from code.co_names
    for const in code.co_consts:
        if isinstance(const, types.CodeType):
            yield from _names(const)


def _body(fn: types.FunctionType) -> bytes:
    """The function's syntax tree without docstrings or positions, else its compiled code."""
    try:
        tree = ast.parse(textwrap.dedent(inspect.getsource(fn)))
    except (OSError, TypeError, SyntaxError, IndentationError):
        return _compiled(fn.__code__)
    for node in ast.walk(tree):
        if isinstance(node, ast.AsyncFunctionDef | ast.FunctionDef | ast.ClassDef) and (
            ast.get_docstring(node, clean=False) is not None
        ):
            node.body = node.body[1:] or [ast.Pass()]
    return _canonical(tree).encode()


def _canonical(node) -> str:
    """A syntax tree as text without positions or empty fields (``ast.dump`` writes 3.12's empty
    ``type_params``), the same on every Python version."""
    if isinstance(node, ast.AST):
        fields = ((name, getattr(node, name, None)) for name in node._fields)
        inner = ",".join(
            f"{name}={_canonical(value)}"
            for name, value in fields
            if value is not None and value != []
        )
        return f"{type(node).__name__}({inner})"
    if isinstance(node, list):
        return "[" + ",".join(map(_canonical, node)) + "]"
    return repr(node)


def _compiled(code: types.CodeType) -> bytes:
    parts = [code.co_code, repr(code.co_names).encode(), repr(code.co_varnames).encode()]
    for i, const in enumerate(code.co_consts):
        if isinstance(const, types.CodeType):
            parts.append(_compiled(const))
        elif not (i == 0 and (const is None or isinstance(const, str))):  # the docstring's slot
            parts.append(repr(const).encode())
    return b"|".join(parts)
