#!/usr/bin/env python3
"""Holds idle connections open against a server, for bench/proxy_load.sh.

    python3 bench/hold_idle.py HOST:PORT COUNT SECONDS

Opens COUNT TCP connections that never send a byte (what a port scanner, a stalled client or a
slowloris attack leaves behind), prints "holding N" once they are all open, keeps them for
SECONDS, then prints how many the server closed in that time (its idle timeout, or its cap on
connections making room for clients that ask) and how many could not be opened at all.
"""

import selectors
import socket
import sys
import time


def main():
    host, port = sys.argv[1].rsplit(":", 1)
    count, seconds = int(sys.argv[2]), float(sys.argv[3])
    selector = selectors.DefaultSelector()
    failed = 0
    for _ in range(count):
        try:
            sock = socket.create_connection((host, int(port)), timeout=5)
        except OSError:
            failed += 1
            continue
        sock.setblocking(False)
        selector.register(sock, selectors.EVENT_READ)
    print(f"holding {count - failed}", flush=True)
    closed = 0
    deadline = time.monotonic() + seconds
    while (left := deadline - time.monotonic()) > 0:
        for key, _ in selector.select(timeout=left):
            try:
                data = key.fileobj.recv(4096)
            except OSError:
                data = b""
            if not data:
                closed += 1
                selector.unregister(key.fileobj)
                key.fileobj.close()
    print(f"idle connections: {count} opened, {failed} refused, {closed} closed by the server "
          f"within {seconds:g} s", flush=True)


if __name__ == "__main__":
    main()
