"""A fault-injecting proxy in front of a real S3 server (moto's, on 127.0.0.1), shared by the S3 fault tests.

Two kinds of faults, drawn deterministically in arrival order:
- on range GETs (archive reads), by share: 503 SlowDown, a stall past the client's read timeout, a body cut short
  (with or without a Content-Length), Range ignored (a 200 with the whole object), or both at once (`drop_whole`);
- on any S3 operation (`OperationFault`: PUT, GET, LIST, HEAD, COPY, DELETE, CREATE_MULTIPART, UPLOAD_PART,
  COMPLETE_MULTIPART, ABORT_MULTIPART), by share, for keys holding a text, at most so many times (per rule, and
  per request: `max_faults_per_request`): 503 SlowDown or
  500 InternalError before the store sees the request, the connection dropped before (`drop`) or after the store
  applied it (`drop_after`: done, but the client never hears so).
"""
from __future__ import annotations

import http.client
import random
import threading
import time
from collections import Counter
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Self
from urllib.parse import parse_qs, unquote, urlsplit

import boto3

SLOWDOWN_XML = (b'<?xml version="1.0" encoding="UTF-8"?><Error><Code>SlowDown</Code>'
                b"<Message>Please reduce your request rate.</Message><RequestId>fault-proxy</RequestId></Error>")
INTERNAL_ERROR_XML = (b'<?xml version="1.0" encoding="UTF-8"?><Error><Code>InternalError</Code>'
                      b"<Message>We encountered an internal error. Please try again.</Message>"
                      b"<RequestId>fault-proxy</RequestId></Error>")
HOP_HEADERS = {"connection", "keep-alive", "transfer-encoding", "proxy-connection", "upgrade"}
OPERATION_FAULTS = ("slowdown", "error", "drop", "drop_after")


@dataclass
class OperationFault:
    """`fault` (OPERATION_FAULTS) on a `share` of the `operation`s on keys containing `key`, at most `times`."""

    operation: str
    fault: str
    share: float = 1.0
    key: str = ""
    times: int | None = None


def operation_of(method: str, path: str, headers) -> str:
    """The S3 operation a path-style request is: LIST, COPY, UPLOAD_PART, COMPLETE_MULTIPART... or the method."""
    parts = urlsplit(path)
    query = parse_qs(parts.query, keep_blank_values=True)
    bucket_only = parts.path.strip("/").count("/") == 0
    if method == "GET" and (bucket_only or "list-type" in query):
        return "LIST"
    if method == "PUT" and "uploadId" in query:
        return "UPLOAD_PART"
    if method == "PUT" and headers.get("x-amz-copy-source"):
        return "COPY"
    if method == "POST":
        return "CREATE_MULTIPART" if "uploads" in query else "COMPLETE_MULTIPART" if "uploadId" in query else "DELETE"
    if method == "DELETE" and "uploadId" in query:
        return "ABORT_MULTIPART"
    return method


class FaultProxy:
    """A ThreadingHTTPServer on 127.0.0.1 forwarding to moto, injecting faults into a share of range GETs and of
    the operations `operations` names."""

    def __init__(self, upstream: str, slowdown: float = 0.0, stall: float = 0.0, truncate: float = 0.0,
                 cut_unsized: float = 0.0, ignore_range: float = 0.0, drop_whole: float = 0.0,
                 stall_seconds: float = 1.5, doomed: str = "doomed", seed: int = 7,
                 max_faults_per_range: int | None = None, operations: tuple[OperationFault, ...] = (),
                 max_faults_per_request: int | None = None):
        self.upstream = urlsplit(upstream)
        self.operations = list(operations)
        self.operation_faults: Counter = Counter()  # (operation, fault) -> injected
        self.operations_seen: Counter = Counter()
        self.max_faults_per_request = max_faults_per_request  # below the client's tries, every request gets through
        self.faults_by_request: Counter = Counter()
        self.shares = [("slowdown", slowdown), ("stall", stall), ("truncate", truncate),
                       ("cut_unsized", cut_unsized), ("ignore_range", ignore_range), ("drop_whole", drop_whole)]
        self.stall_seconds = stall_seconds
        self.doomed = doomed
        self.max_faults_per_range = max_faults_per_range  # below --attempts, every range (doomed aside) recovers:
        self.faults_by_range = Counter()  # threads draw in arrival order, so without a cap a run may be unlucky
        self.random = random.Random(seed)
        self.lock = threading.Lock()
        self.range_gets = 0
        self.injected = {kind: 0 for kind, share in self.shares if share} | {"doomed": 0}
        proxy = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def do_GET(self):
                proxy.handle(self, "GET")

            def do_PUT(self):
                proxy.handle(self, "PUT")

            def do_HEAD(self):
                proxy.handle(self, "HEAD")

            def do_POST(self):
                proxy.handle(self, "POST")

            def do_DELETE(self):
                proxy.handle(self, "DELETE")

            def log_message(self, *args):
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    @property
    def endpoint(self) -> str:
        return f"http://127.0.0.1:{self.server.server_address[1]}"

    def __enter__(self) -> Self:
        self.thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self.server.shutdown()
        self.thread.join()

    def draw(self, handler) -> str | None:
        """The fault for this request (deterministic in arrival order), None to pass it through."""
        if handler.command != "GET" or "Range" not in handler.headers:
            return None
        with self.lock:
            self.range_gets += 1
            if self.doomed and self.doomed in handler.path:
                self.injected["doomed"] += 1
                return "slowdown"
            roll, bound = self.random.random(), 0.0
            key = (handler.path, handler.headers["Range"])
            if self.max_faults_per_range is not None and self.faults_by_range[key] >= self.max_faults_per_range:
                return None
            for kind, share in self.shares:
                bound += share
                if roll < bound:
                    self.injected[kind] += 1
                    self.faults_by_range[key] += 1
                    return kind
        return None

    def draw_operation(self, handler, method: str) -> str | None:
        """The operation fault for this request, None to pass it through."""
        operation = operation_of(method, handler.path, handler.headers)
        request = (method, urlsplit(handler.path).path)
        with self.lock:
            self.operations_seen[operation] += 1
            if self.max_faults_per_request is not None and self.faults_by_request[request] >= self.max_faults_per_request:
                return None
            for rule in self.operations:
                if rule.operation != operation or rule.key not in unquote(urlsplit(handler.path).path):
                    continue
                if rule.times is not None and rule.times <= 0:
                    continue
                if self.random.random() < rule.share:
                    if rule.times is not None:
                        rule.times -= 1
                    self.operation_faults[operation, rule.fault] += 1
                    self.faults_by_request[request] += 1
                    return rule.fault
        return None

    def handle(self, handler, method: str) -> None:
        operation_fault = self.draw_operation(handler, method) if self.operations else None
        fault = operation_fault or self.draw(handler)
        body = self.request_body(handler)  # read whatever the answer: a body left unread would garble the next
        if fault == "slowdown":
            self.reply(handler, 503, {"Content-Type": "application/xml"}, SLOWDOWN_XML)
            return
        if fault == "error":
            self.reply(handler, 500, {"Content-Type": "application/xml"}, INTERNAL_ERROR_XML)
            return
        if fault == "drop":
            handler.close_connection = True
            return
        if fault == "stall":
            time.sleep(self.stall_seconds)
        upstream = http.client.HTTPConnection(self.upstream.hostname, self.upstream.port, timeout=30)
        dropped = HOP_HEADERS | ({"range"} if fault in ("ignore_range", "drop_whole") else set())
        headers = {k: v for k, v in handler.headers.items() if k.lower() not in dropped}
        upstream.request(method, handler.path, body=body, headers=headers)
        response = upstream.getresponse()
        data = response.read()
        upstream.close()
        if fault == "drop_after":  # the store did it; the client never hears
            handler.close_connection = True
            return
        kept = {k: v for k, v in response.getheaders() if k.lower() not in HOP_HEADERS | {"content-length"}}
        if method == "HEAD":  # no body: the object's size is the store's Content-Length, not the empty answer's
            self.reply(handler, response.status, {**kept, "Content-Length": response.getheader("Content-Length", "0")},
                       b"", sized=False)
            return
        cut = fault in ("truncate", "cut_unsized") and len(data) > 1
        if fault == "drop_whole":  # the whole object, dropped halfway through the range that was asked for, from
            first, last = (int(x) for x in handler.headers["Range"].split("=")[1].split("-"))  # an endpoint
            data = data[: first + (last - first + 1) // 2]  # without checksums (botocore would notice a bad one)
            kept = {k: v for k, v in kept.items() if not k.lower().startswith("x-amz-checksum")}
        self.reply(handler, response.status, kept, data, cut=cut, sized=fault not in ("cut_unsized", "drop_whole"))

    @staticmethod
    def reply(handler, status: int, headers: dict, data: bytes, cut: bool = False, sized: bool = True) -> None:
        try:
            handler.send_response(status)
            for key, value in headers.items():
                handler.send_header(key, value)
            if sized:
                handler.send_header("Content-Length", str(len(data)))
            if cut or not sized and handler.command != "HEAD":
                handler.send_header("Connection", "close")
            handler.end_headers()
            if handler.command != "HEAD":
                handler.wfile.write(data[: len(data) // 2] if cut else data)
            handler.wfile.flush()
            if cut or not sized and handler.command != "HEAD":
                handler.close_connection = True
        except (BrokenPipeError, ConnectionResetError):  # the client gave up (a stall): fine
            handler.close_connection = True

    @staticmethod
    def request_body(handler) -> bytes | None:
        """The request's body, de-chunked (botocore streams uploads with a Content-Length, pyarrow may not)."""
        length = handler.headers.get("Content-Length")
        if length is not None:
            return handler.rfile.read(int(length)) if int(length) else None
        if handler.headers.get("Transfer-Encoding", "").lower() != "chunked":
            return None
        chunks = []
        while True:
            size = int(handler.rfile.readline().split(b";")[0].strip() or b"0", 16)
            if size == 0:
                handler.rfile.readline()
                return b"".join(chunks)
            chunks.append(handler.rfile.read(size))
            handler.rfile.readline()


def keys(endpoint: str, bucket: str, prefix: str = "") -> list[str]:
    """The bucket's object keys (under `prefix`), sorted, as the store holds them."""
    client = boto3.client("s3", endpoint_url=endpoint)
    return sorted(item["Key"] for item in client.list_objects_v2(Bucket=bucket, Prefix=prefix).get("Contents", []))


def unfinished_uploads(endpoint: str, bucket: str) -> list[str]:
    """Keys of the bucket's multipart uploads never completed nor aborted (stored and billed until aborted)."""
    return [upload["Key"] for upload in
            boto3.client("s3", endpoint_url=endpoint).list_multipart_uploads(Bucket=bucket).get("Uploads", [])]
