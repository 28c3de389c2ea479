"""A keyboard box for widgets: each key press is exactly one message and no text is kept (a
synced text box cleared after each read read "ep" typed fast as e, e, p); auto-repeat ignored."""

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

    def on_key(self, handler) -> None:
        """Call ``handler(key)`` for each key press (one character: the box sends no other)."""
        self.on_msg(lambda _widget, content, _buffers: handler(content["key"]))
