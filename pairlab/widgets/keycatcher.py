"""A keyboard box for widgets: each key press in the browser is exactly one message.

A synced text box cannot do this: the kernel clears it after reading, but a key typed before the
clear arrives lands in the same box and the kernel reads the earlier key again ("ep" typed fast
became real error, real error, actually positive). Here the browser sends each ``keydown`` as its
own message and never keeps text, so there is nothing to read twice. Auto-repeat of a held key is
ignored: one press, one action.
"""

from __future__ import annotations

import anywidget
import traitlets

__all__ = ["KeyCatcher"]


class KeyCatcher(anywidget.AnyWidget):
    """An input box that sends each printable key press to ``on_key`` callbacks, in order."""

    _esm = """
    function render({ model, el }) {
      const input = document.createElement("input");
      input.className = "pairlab-keys";
      input.placeholder = model.get("placeholder");
      input.setAttribute("aria-label", model.get("placeholder"));
      input.style.width = "100%";
      input.addEventListener("keydown", (event) => {
        if (event.ctrlKey || event.metaKey || event.altKey || event.key.length !== 1) return;
        event.preventDefault();  // no text accumulates, so nothing can be read twice
        event.stopPropagation();  // and JupyterLab's own shortcuts do not see the key
        if (!event.repeat) model.send({ key: event.key });
      });
      model.on("change:placeholder", () => { input.placeholder = model.get("placeholder"); });
      el.appendChild(input);
    }
    export default { render };
    """
    placeholder = traitlets.Unicode("").tag(sync=True)

    def __init__(self, placeholder: str = "", **kwargs):
        super().__init__(placeholder=placeholder, **kwargs)
        self._handlers = []
        self.on_msg(self._dispatch)

    def on_key(self, handler) -> None:
        """Call ``handler(key)`` for each key press (one character)."""
        self._handlers.append(handler)

    def _dispatch(self, _widget, content, _buffers) -> None:
        key = content.get("key") if isinstance(content, dict) else None
        if isinstance(key, str) and len(key) == 1:
            for handler in self._handlers:
                handler(key)
