"""A keyboard box for widgets: each key press is one message and no text is kept (a synced text
box cleared after each read read "ep" typed fast as e, e, p); auto-repeat ignored. A message
carries its page view and its number there: ipykernel 7 may run a comm's messages on the main
and a subshell thread out of turn, so a key that comes early waits for those before it. The
kernel sends a heartbeat (:meth:`KeyCatcher.beat`); after ``quiet`` seconds without one the box
is disabled and says the kernel is gone (a dead kernel's page keeps its widgets)."""

from __future__ import annotations

import threading

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
      const view = Date.now().toString(36) + Math.random().toString(36).slice(2);
      let seq = 0;
      input.addEventListener("keydown", (event) => {
        if (event.ctrlKey || event.metaKey || event.altKey || event.key.length !== 1) return;
        event.preventDefault();  // no text accumulates, so nothing can be read twice
        event.stopPropagation();  // and JupyterLab's own shortcuts do not see the key
        if (!event.repeat) model.send({ key: event.key, view, seq: seq++ });
      });
      const gone = document.createElement("div");
      gone.className = "pairlab-keys-gone";
      gone.style.cssText = "display:none;color:#b00;font-weight:bold;margin-top:0.3em";
      gone.textContent = model.get("gone");
      let last = Date.now();
      model.on("msg:custom", (msg) => {
        if (!msg.beat) return;
        last = Date.now();
        gone.style.display = "none";
        input.disabled = false;
      });
      const timer = setInterval(() => {
        const quiet = model.get("quiet");
        if (quiet > 0 && Date.now() - last > quiet * 1000) {
          gone.style.display = "block";
          input.disabled = true;
        }
      }, 1000);
      el.appendChild(input);
      el.appendChild(gone);
      if (model.get("autofocus")) setTimeout(() => input.focus(), 0);  // once it is on the page
      return () => clearInterval(timer);
    }
    export default { render };
    """
    placeholder = traitlets.Unicode("").tag(sync=True)
    quiet = traitlets.Float(0.0).tag(sync=True)  # seconds without a beat: gone (0: never said)
    autofocus = traitlets.Bool(False).tag(sync=True)  # the keys go here as soon as it shows
    gone = traitlets.Unicode(
        "The kernel is gone: nothing you press now is saved (every answer before is). "
        "Restart the kernel and run the notebook again to go on."
    ).tag(sync=True)

    def __init__(self, **kwargs):
        super().__init__(**kwargs)
        self._handlers: list = []
        self._turn = threading.Lock()
        self._held: dict[str, dict[int, str]] = {}  # a page view's keys that came early
        self._next: dict[str, int] = {}  # a page view's number of the key whose turn it is
        self.on_msg(self._received)

    def beat(self) -> None:
        """Tell the page the kernel is alive."""
        self.send({"beat": True})

    def on_key(self, handler) -> None:
        """Call ``handler(key)`` for each key press (one character: the box sends no other), in
        the order the page's view sent them."""
        self._handlers.append(handler)

    def _received(self, _widget, content: dict, _buffers) -> None:
        view = str(content["view"])
        with self._turn:  # whichever thread holds the next key runs every key in turn
            held, turn = self._held.setdefault(view, {}), self._next.get(view, 0)
            if int(content["seq"]) >= turn:  # a number run already: sent twice, run once
                held[int(content["seq"])] = content["key"]
            while turn in held:
                key, turn = held.pop(turn), turn + 1
                self._next[view] = turn
                for handler in self._handlers:
                    handler(key)
