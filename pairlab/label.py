"""Label with a team: a :class:`~pairlab.session.LabelingSession` served as a page (Voilà).

    python -m pairlab.label serve ITEMS --text COL --folder DIR [--right FILE --right-text COL]
    python -m pairlab.label export --folder DIR

``serve`` starts (or, on the same folder, resumes) the session: this process owns its round
loop (one worker), and Voilà serves ``DIR/page.ipynb``, whose kernel (one a page) shows the
labelling widget of the person who opened it. Every answer goes to ``DIR/labels.sqlite`` with
the person's name; pages never get the same pair at once. Off 127.0.0.1 the pages need the
token. ``export`` writes ``DIR/export/matches.csv`` and ``clusters.csv``.
"""

from __future__ import annotations

import argparse
import html
import os
import secrets
import socket
import sys
import threading
from pathlib import Path
from urllib.parse import parse_qs

import nbformat

from .io import read_json, write_json

__all__ = ["open_session", "page", "main"]

TEAM_FILE = "team.json"  # the records and settings the pages reopen the session with
PAGE_FILE = "page.ipynb"
TOKEN_FILE = "token"  # a generated token, kept for the next start
LOOPBACK = ("127.0.0.1", "localhost")


def open_session(folder):
    """The :class:`~pairlab.session.LabelingSession` that ``serve`` started in ``folder``."""
    from .data.items import load_items
    from .session import LabelingSession

    spec = read_json(Path(folder) / TEAM_FILE)
    left = load_items(spec["items"], text=spec["text"], id=spec["id"])
    right = spec["right"] and load_items(
        spec["right"], text=spec["right_text"], id=spec["right_id"]
    )
    return LabelingSession(
        left, folder, right=right or None, model=spec["model"], **spec["settings"]
    )


def page(folder):
    """What a page shows: a box for the person's name (or ``?annotator=NAME`` in the address),
    then the session's labelling widget answering as that name."""
    import ipywidgets as w
    from IPython.display import display

    session = open_session(folder)
    query = os.environ.get("QUERY_STRING", "")  # the page's address: Voilà sets it
    given = parse_qs(query).get("annotator", [""])[0].strip()
    if given:
        display(labelling(session, given))
        return
    name = w.Text(placeholder="your name", description="Name", continuous_update=False)
    name.add_class("pairlab-team-name")  # its value comes on Enter or when it loses the focus
    start = w.Button(description="start labelling", button_style="primary")
    start.add_class("pairlab-team-start")
    who = w.HTML("<b>Who is labelling?</b> Your answers are saved under this name.")
    box = w.VBox([who, w.HBox([name, start])])

    once = threading.Lock()  # the click and the name may come on two threads

    def begin(_=None):  # the click or the name, whichever comes second
        with once:
            if name.value.strip() and len(box.children) > 1:
                box.children = [labelling(session, name.value.strip())]

    start.on_click(begin)
    name.observe(begin, names="value")
    display(box)


def labelling(session, name: str):
    """The page's widget: whose answers these are, then the session's labelling widget."""
    import ipywidgets as w

    head = w.HTML(
        f"<b>{html.escape(session.pool.task)}</b>: labelling as <b>{html.escape(name)}"
        "</b> (every answer is saved at once; close the page whenever you like)"
    )
    labeller = session.widget(annotator=name, lease=read_json(session.folder / TEAM_FILE)["lease"])
    labeller.keys.autofocus = True  # a page of its own: the keys go to the pairs at once
    labeller.keys.gone = (
        "The server is gone: nothing you press now is saved (every answer before is). Reload "
        "this page once the session is served again, and you go on where you stopped."
    )
    return w.VBox([head.add_class("pairlab-team-who"), labeller.widget])


def serve(args) -> int:
    """Check the input, start the session's worker, then serve the page until interrupted."""
    folder = Path(args.folder).resolve()
    with socket.socket() as probe:  # a port in use: said before anything starts
        probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)  # as the server binds
        try:
            probe.bind((args.host, args.port))
        except OSError as error:
            raise SystemExit(
                f"error: cannot listen on {args.host}:{args.port} ({error.strerror}):"
                " pick another with --port"
            ) from None
    spec = {
        "items": str(Path(args.items).resolve()),
        "text": args.text,
        "id": args.id,
        "right": args.right and str(Path(args.right).resolve()),
        "right_text": args.right_text or args.text,
        "right_id": args.right_id,
        "model": args.model,
        "lease": args.lease,
        "settings": {
            "budget": args.budget,
            "batch": args.batch,
            "one_to_one": args.one_to_one,
            "agreement_share": args.agreement,
            "seed": args.seed,
        },
    }
    folder.mkdir(parents=True, exist_ok=True)
    path, new = folder / TEAM_FILE, not (folder / TEAM_FILE).exists()
    if not new and {**read_json(path), "lease": args.lease} != spec:
        raise SystemExit(
            f"error: {folder} holds a session of other records or settings "
            f"({path}): serve it with the same arguments, or pick a new --folder"
        )
    write_json(path, spec)
    try:
        session = open_session(folder)
    except (ValueError, FileNotFoundError, KeyError) as error:
        if new:
            path.unlink()
        raise SystemExit(f"error: {error}") from None
    notebook = nbformat.v4.new_notebook(
        cells=[nbformat.v4.new_code_cell(f"from pairlab.label import page\npage({str(folder)!r})")],
        metadata={
            "kernelspec": {"name": "python3", "display_name": "Python 3", "language": "python"}
        },
    )
    nbformat.write(notebook, folder / PAGE_FILE)
    session.start()
    token = args.token or (_saved_token(folder) if args.host not in LOOPBACK else "")
    address = f"http://{args.host}:{args.port}/" + (f"?token={token}" if token else "")
    print(f"{session}\nopen {address} (each person: their own page; Ctrl-C stops)", flush=True)
    import tornado.web
    from jupyter_server.base.handlers import JupyterHandler
    from voila.app import Voila

    def refuse(_handler):  # no token form to send a page to: refused, as the API and websocket
        raise tornado.web.HTTPError(403)

    JupyterHandler.get_login_url = refuse  # this process serves the session's page alone
    try:  # in this process: killed, it takes the worker with it (the worker watches it)
        Voila.launch_instance(
            argv=[
                str(folder / PAGE_FILE),
                "--no-browser",
                f"--port={args.port}",
                f"--Voila.ip={args.host}",
                "--Voila.port_retries=0",
                f"--token={token or ''}",
                "--VoilaConfiguration.show_tracebacks=False",
            ]
        )
    finally:
        session.stop()
    return 0


def _saved_token(folder: Path) -> str:
    """The folder's token, generated once (as Jupyter's own server does) and kept, readable by
    its owner alone, so that the pages' address outlives a restart of the server."""
    path = folder / TOKEN_FILE
    if not path.is_file():
        path.touch(mode=0o600)
        path.write_text(secrets.token_urlsafe(24))
    return path.read_text().strip()


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m pairlab.label",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    commands = parser.add_subparsers(dest="command", required=True)
    up = commands.add_parser("serve", help="serve a labelling session to a team")
    up.add_argument("items", help="the records: a CSV, TSV, JSON-lines or Parquet file")
    up.add_argument("--text", required=True, action="append", help="a text column (repeatable)")
    up.add_argument("--id", help="the column of the record ids (default: row numbers)")
    up.add_argument("--right", help="a second table to match against (default: one table)")
    up.add_argument("--right-text", action="append", help="its text column(s) (default: --text)")
    up.add_argument("--right-id", help="its id column")
    up.add_argument("--one-to-one", action="store_true", help="each record matches at most one")
    up.add_argument("--budget", type=int, default=1408, help="the answers to give in all")
    up.add_argument("--batch", type=int, default=32, help="pairs a round (few: more rounds)")
    up.add_argument("--agreement", type=float, default=0.05, help="share two people answer")
    up.add_argument("--seed", type=int, default=0)
    up.add_argument("--model", help="the encoder: a name or a folder (default: all-MiniLM-L6-v2)")
    up.add_argument("--lease", type=float, default=120.0, help="seconds a page holds its pair")
    up.add_argument("--folder", required=True, help="the session's folder (resumed if it exists)")
    up.add_argument("--host", default="127.0.0.1", help="the address to listen on")
    up.add_argument("--port", type=int, default=8866)
    up.add_argument("--token", help="the pages' token (off 127.0.0.1: generated and kept)")
    out = commands.add_parser("export", help="write a session's matches and clusters")
    out.add_argument("--folder", required=True)
    args = parser.parse_args(argv)
    if args.command == "serve":
        return serve(args)
    try:
        result = open_session(args.folder).export()
    except (FileNotFoundError, ValueError) as error:  # no session there, or rounds to come
        raise SystemExit(f"error: {error}") from None
    print(f"{result.get('matches')} matches in {Path(args.folder) / 'export'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
