"""The `vari` command-line binary, installed by this wheel into the environment's scripts.

There is no Python API: `python -m vari` and `find_vari_bin()` exist so that the binary can be run
from an environment whose scripts directory is not on PATH.
"""

from __future__ import annotations

import os
import sys
import sysconfig

__all__ = ["find_vari_bin"]


def find_vari_bin() -> str:
    """Return the path of the `vari` binary this wheel installed.

    Looks where the installer put the wheel's scripts: the environment's scripts directory, then
    the user scheme's (``pip install --user``), then next to this package's prefix (``pip install
    --target``). Raises FileNotFoundError when none of them has it.
    """
    exe = "vari.exe" if sys.platform == "win32" else "vari"

    candidates = [os.path.join(sysconfig.get_path("scripts"), exe)]
    user_scheme = _user_scheme()
    if user_scheme is not None:
        candidates.append(os.path.join(sysconfig.get_path("scripts", scheme=user_scheme), exe))
    # `pip install --target DIR` puts the package in DIR and the scripts in DIR/bin.
    package_root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    candidates.append(os.path.join(package_root, "bin", exe))

    for candidate in candidates:
        if os.path.isfile(candidate):
            return candidate
    raise FileNotFoundError("the vari binary is not installed; looked in: " + ", ".join(candidates))


def _user_scheme() -> str | None:
    if sys.version_info >= (3, 10):
        scheme = sysconfig.get_preferred_scheme("user")
    elif os.name == "nt":
        scheme = "nt_user"
    elif sys.platform == "darwin" and sys._framework:  # type: ignore[attr-defined]
        scheme = "osx_framework_user"
    else:
        scheme = "posix_user"
    return scheme if scheme in sysconfig.get_scheme_names() else None
