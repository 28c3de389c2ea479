"""A static file server for the download tests (standard library only): serves a folder on
127.0.0.1 (a free port) from a background thread, answers ``Range`` requests with 206, and can
cut the first response to chosen files after half their bytes (an interrupted download). It
records each request's path and Range header, and stops itself after ``lifetime`` seconds even if
a test forgets to (the context manager stops it at once)."""

from __future__ import annotations

import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path


class DataServer:
    def __init__(
        self, folder: Path, *, cut_first=(), ignore_range: bool = False, lifetime: float = 120.0
    ):
        self.folder, self.cut = Path(folder), set(cut_first)
        self.ignore_range, self.lifetime = ignore_range, lifetime
        self.requests: list[tuple[str, str | None]] = []  # (path, Range header)
        server = self

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self):
                server.requests.append((self.path, self.headers.get("Range")))
                path = server.folder / self.path.lstrip("/")
                if not path.is_file():
                    self.send_error(404)
                    return
                data = path.read_bytes()
                start = 0
                ranged = self.headers.get("Range")
                if ranged and not server.ignore_range:
                    start = int(ranged.split("=")[1].split("-")[0])
                    if start >= len(data):
                        self.send_error(416)
                        return
                    self.send_response(206)
                    self.send_header("Content-Range", f"bytes {start}-{len(data) - 1}/{len(data)}")
                else:
                    self.send_response(200)
                body = data[start:]
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                if path.name in server.cut:  # half the body, then the connection drops
                    server.cut.discard(path.name)
                    self.wfile.write(body[: len(body) // 2])
                    self.wfile.flush()
                    self.close_connection = True
                    return
                self.wfile.write(body)

            def log_message(self, *args):
                pass

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.httpd.daemon_threads = True
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}"
        self.thread = threading.Thread(
            target=self.httpd.serve_forever, kwargs={"poll_interval": 0.1}, daemon=True
        )
        self.timer = threading.Timer(lifetime, self.stop)

    def __enter__(self) -> DataServer:
        self.thread.start()
        self.timer.start()
        return self

    def __exit__(self, *exc) -> None:
        self.stop()

    def stop(self) -> None:
        self.timer.cancel()
        if self.thread.is_alive():
            self.httpd.shutdown()
            self.thread.join(timeout=10)
        self.httpd.server_close()
