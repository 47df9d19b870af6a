#!/usr/bin/env python3
"""Serves a directory on 127.0.0.1 for the benchmarks, like `python3 -m http.server`, but with a
listen backlog of 1,024.

    python3 bench/serve_static.py DIR PORT

`http.server`'s backlog is 5: uv opens dozens of connections at once, the kernel drops the
SYNs beyond the backlog, and each dropped one costs a 1 s (then 3 s) retransmission, so a
50-package uv install took 10-12 s of waiting on the server, not on uv. It stays HTTP/1.0 (one
request per connection) like http.server: with HTTP/1.1 keep-alive, pip's installs through it
took 6 s instead of 1 s.
"""

import functools
import http.server
import sys


class Server(http.server.ThreadingHTTPServer):
    request_queue_size = 1024


class Handler(http.server.SimpleHTTPRequestHandler):
    def log_message(self, *args):
        pass


def main():
    directory, port = sys.argv[1], int(sys.argv[2])
    handler = functools.partial(Handler, directory=directory)
    with Server(("127.0.0.1", port), handler) as server:
        server.serve_forever()


if __name__ == "__main__":
    main()
