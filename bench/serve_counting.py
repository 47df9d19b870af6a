#!/usr/bin/env python3
"""Serves a directory on 127.0.0.1 as bench/serve_static.py does, with single byte ranges
(206, as object stores and Artifactory answer them) and counts of what it sent.

    python3 bench/serve_counting.py DIR PORT

GET /__stats answers the counts since the last reset as JSON: requests and body bytes, in all
and per kind (pages: directory indexes; wheels, answered whole or as ranges; metadata: .metadata
files; HEAD requests), and how many wheel answers were whole files. GET /__stats?reset=1 answers
them and starts counting again.
"""

import functools
import http.server
import json
import os
import re
import sys
import threading

LOCK = threading.Lock()


def zero():
    return {"requests": 0, "bytes": 0, "pages": 0, "page_bytes": 0, "wheel_ranges": 0,
            "whole_wheels": 0, "wheel_bytes": 0, "metadata": 0, "metadata_bytes": 0, "heads": 0}


STATS = zero()


def count(kind, sent):
    with LOCK:
        STATS["requests"] += 1
        STATS["bytes"] += sent
        if kind == "page":
            STATS["pages"] += 1
            STATS["page_bytes"] += sent
        elif kind in ("range", "whole"):
            STATS["wheel_ranges" if kind == "range" else "whole_wheels"] += 1
            STATS["wheel_bytes"] += sent
        elif kind == "metadata":
            STATS["metadata"] += 1
            STATS["metadata_bytes"] += sent
        elif kind == "head":
            STATS["heads"] += 1


class Server(http.server.ThreadingHTTPServer):
    request_queue_size = 1024


class Handler(http.server.SimpleHTTPRequestHandler):
    def log_message(self, *args):
        pass

    def do_GET(self):
        global STATS
        if self.path.startswith("/__stats"):
            with LOCK:
                body = json.dumps(STATS).encode()
                if "reset=1" in self.path:
                    STATS = zero()
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)
            return
        self.answer(head=False)

    def do_HEAD(self):
        self.answer(head=True)

    def answer(self, head):
        path = self.translate_path(self.path)
        if os.path.isdir(path):
            if not self.path.split("?")[0].endswith("/"):
                self.send_response(301)
                self.send_header("Location", self.path.split("?")[0] + "/")
                self.send_header("Content-Length", "0")
                self.end_headers()
                return
            path = os.path.join(path, "index.html")
        try:
            with open(path, "rb") as f:
                data = f.read()
        except OSError:
            self.send_error(404)
            return
        kind = "page" if path.endswith(".html") else (
            "metadata" if path.endswith(".metadata") else "whole")
        start, end = 0, len(data)
        match = re.fullmatch(r"bytes=(\d*)-(\d*)", self.headers.get("Range", "").strip())
        if match and path.endswith(".whl") and (match.group(1) or match.group(2)):
            first, last = match.groups()
            if first:
                start, end = int(first), min(len(data), int(last) + 1 if last else len(data))
            else:
                start = max(0, len(data) - int(last))
            if start >= len(data) or start >= end:
                self.send_response(416)
                self.send_header("Content-Range", f"bytes */{len(data)}")
                self.send_header("Content-Length", "0")
                self.end_headers()
                return
            kind = "range"
            self.send_response(206)
            self.send_header("Content-Range", f"bytes {start}-{end - 1}/{len(data)}")
        else:
            self.send_response(200)
        self.send_header("Content-Type", "text/html" if path.endswith(".html")
                         else "application/octet-stream")
        self.send_header("Accept-Ranges", "bytes")
        self.send_header("Content-Length", str(end - start))
        self.end_headers()
        if head:
            count("head", 0)
            return
        self.wfile.write(data[start:end])
        count(kind, end - start)


def main():
    directory, port = sys.argv[1], int(sys.argv[2])
    handler = functools.partial(Handler, directory=directory)
    with Server(("127.0.0.1", port), handler) as server:
        server.serve_forever()


if __name__ == "__main__":
    main()
