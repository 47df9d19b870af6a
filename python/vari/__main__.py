"""`python -m vari ARGS…`: run the `vari` binary with ARGS (and its exit status)."""

from __future__ import annotations

import os
import sys

from vari import find_vari_bin


def _run() -> None:
    try:
        vari = find_vari_bin()
    except FileNotFoundError as e:
        sys.stderr.write(f"error: {e}\n")
        sys.exit(1)
    if sys.platform == "win32":
        # Windows has no exec: run the binary as a child and pass its exit status on.
        import subprocess

        completed = subprocess.run([vari, *sys.argv[1:]])
        sys.exit(completed.returncode)
    os.execvp(vari, [vari, *sys.argv[1:]])


if __name__ == "__main__":
    _run()
