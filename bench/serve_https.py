#!/usr/bin/env python3
"""Serves a directory over HTTPS on 127.0.0.1 for the benchmarks, as a real index does: TLS,
HTTP/1.1 with keep-alive (a client that reuses its connections pays one handshake, one that
does not pays one per request), and a listen backlog of 1,024 (bench/serve_static.py says why).

    python3 bench/serve_https.py DIR PORT CERT KEY [COUNTS]

A directory holding index.json answers with it (as PEP 691 JSON) a client that accepts that,
else with its index.html. CERT and KEY are the server's certificate chain and key (PEM). With
COUNTS, a file: on SIGUSR1 the server writes to it how many TLS handshakes (connections) and
requests it has answered, as `connections N\\nrequests N\\n` (the bench reads them to show
connection reuse).

Cache-Control as PyPI sends it: `max-age=600` on pages (PAGE_MAX_AGE in the environment
changes it), `max-age=365000000, immutable` on files; Last-Modified from the files' times, and
304 to a request whose If-Modified-Since is not older (http.server's own).

TCP_NODELAY on every connection: http.server writes the headers and the body in separate
writes, and with keep-alive Nagle's algorithm then held each response's body back for the
client's delayed acknowledgement (40 ms a request).
"""

import functools
import http.server
import os
import signal
import socket
import ssl
import sys
import threading

counts = {"connections": 0, "requests": 0}
lock = threading.Lock()


def bump(key):
    with lock:
        counts[key] += 1


class Server(http.server.ThreadingHTTPServer):
    request_queue_size = 1024
    daemon_threads = True

    def get_request(self):
        conn, addr = super().get_request()
        conn.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        return conn, addr


JSON = "application/vnd.pypi.simple.v1+json"
PAGE_MAX_AGE = int(os.environ.get("PAGE_MAX_AGE", "600"))


class Handler(http.server.SimpleHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def send_head(self):
        # A directory's index.json for a client that takes PEP 691 JSON (as PyPI answers).
        path = self.translate_path(self.path)
        if os.path.isdir(path) and JSON in self.headers.get("Accept", ""):
            if os.path.exists(os.path.join(path, "index.json")):
                self.path = self.path.split("?", 1)[0].rstrip("/") + "/index.json"
        return super().send_head()

    def end_headers(self):
        # PyPI's cache rules: pages for PAGE_MAX_AGE seconds (PyPI says 600; 0 makes every
        # client revalidate each page, as it does when its copy is older than that), files for
        # ever (files.pythonhosted.org: immutable).
        if self.path.endswith("/") or self.path.endswith("/index.json"):
            self.send_header("Cache-Control", f"max-age={PAGE_MAX_AGE}, public")
        elif "/files/" in self.path:
            self.send_header("Cache-Control", "max-age=365000000, immutable, public")
        super().end_headers()

    def guess_type(self, path):
        if str(path).endswith("index.json"):
            return JSON
        return super().guess_type(path)

    def setup(self):
        bump("connections")
        super().setup()

    def handle_one_request(self):
        super().handle_one_request()
        if self.command:
            bump("requests")

    def log_message(self, *args):
        pass


def main():
    directory, port, cert, key = sys.argv[1], int(sys.argv[2]), sys.argv[3], sys.argv[4]
    counts_file = sys.argv[5] if len(sys.argv) > 5 else None
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.load_cert_chain(cert, key)
    context.set_alpn_protocols(["http/1.1"])
    handler = functools.partial(Handler, directory=directory)
    with Server(("127.0.0.1", port), handler) as server:
        # Handshakes in the connection's own thread (do_handshake_on_connect would make the
        # accepting thread wait for each client).
        server.socket = context.wrap_socket(server.socket, server_side=True,
                                            do_handshake_on_connect=False)
        if counts_file:
            def write_counts(*_):
                with lock:
                    text = "".join(f"{k} {v}\n" for k, v in counts.items())
                with open(counts_file, "w") as out:
                    out.write(text)
            signal.signal(signal.SIGUSR1, write_counts)
        server.serve_forever()


if __name__ == "__main__":
    main()
