"""Small HTTP servers over a folder of WARC files (Range reads, injected throttling and cut answers, counted and
held GETs) and a process-tree kill, for fetch tests and bench_fetch_resume."""
from __future__ import annotations

import contextlib
import signal
import subprocess
import threading
from collections import Counter
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import psutil


class RangeServer(BaseHTTPRequestHandler):
    """Serves files with HTTP Range; the first `throttle` requests get 429/503 with Retry-After; with
    `ignore_range` every answer is a 200 with the whole file; every `cut_every`-th answer stops halfway
    through its body without a Content-Length (the connection closes)."""

    root: Path
    throttle = 0
    ignore_range = False
    cut_every = 0
    seen: list[int]

    def do_GET(self):
        self.seen.append(1)
        if len(self.seen) <= self.throttle:
            self.send_response(429 if len(self.seen) % 2 else 503)
            self.send_header("Retry-After", "0")
            self.send_header("Content-Length", "0")
            self.end_headers()
            return
        path = self.root / self.path.lstrip("/")
        if not path.is_file():
            self.send_error(404)
            return
        data = path.read_bytes()
        start, end = (int(x) for x in self.headers["Range"].split("=")[1].split("-"))
        if start >= len(data) and not self.ignore_range:
            self.send_error(416)
            return
        body = data if self.ignore_range else data[start:end + 1]
        self.send_response(200 if self.ignore_range else 206)
        if not self.ignore_range:
            self.send_header("Content-Range", f"bytes {start}-{start + len(body) - 1}/{len(data)}")
        if self.cut_every and len(self.seen) % self.cut_every == 0:
            self.send_header("Connection", "close")
            self.end_headers()
            self.wfile.write(body[: len(body) // 2])
            self.close_connection = True
            return
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args):
        pass


class CountingServer(RangeServer):
    """Serves files with HTTP Range, counts GETs per file, and holds those of `held` files until `gate` is set."""

    held: set[str]
    gate: threading.Event
    gets: Counter

    def do_GET(self):
        name = self.path.lstrip("/")
        self.gets[name] += 1
        if name in self.held:
            self.gate.wait(120)
        super().do_GET()


def serve(folder: Path):
    """(prefix URL, handler class, server) of a CountingServer over `folder`; the caller shuts it down."""
    handler = type("Handler", (CountingServer,), {"root": folder, "seen": [], "held": set(),
                                                  "gate": threading.Event(), "gets": Counter()})
    server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return f"http://127.0.0.1:{server.server_address[1]}/", handler, server


def kill_tree(process: subprocess.Popen) -> None:
    """SIGKILL a process and all its descendants (Spark's Python workers live in a process group of their own, so
    a group kill would leave them finishing their tasks)."""
    descendants = psutil.Process(process.pid).children(recursive=True)
    process.kill()
    for child in descendants:
        with contextlib.suppress(psutil.NoSuchProcess):
            child.send_signal(signal.SIGKILL)
    process.wait()
    psutil.wait_procs(descendants, timeout=30)
