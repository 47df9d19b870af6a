# The reference answers for vari-python's tag tests, from `packaging.tags` itself.
#
# Usage: python packaging_tags.py PACKAGING_PARENT_DIR JSON_REQUEST
# Prints one tag per line, best first.
#
# Requests:
#   {"mode": "sys"}: packaging.tags.sys_tags() of the interpreter running this script.
#   {"mode": "described", "implementation": "cpython"|"pypy"|..., "version": [3, 12],
#    "interpreter": "cp312", "abis": ["cp312"], "compat_interpreter": "cp312" or null,
#    "platform": {"os": "manylinux", "arch": "x86_64", "version": [2, 28]}
#              | {"os": "musllinux", ...} | {"os": "macos", ...} | {"os": "windows", "tag": "win_amd64"}
#              | {"os": "host"}}
#   A described target's platform tags are what packaging computes on a machine with that
#   glibc / musl / macOS version and architecture: packaging's own detection is replaced by the
#   given values (its functions are called, not re-implemented).
import json
import sys

sys.path.insert(0, sys.argv[1])
request = json.loads(sys.argv[2])

from packaging import tags  # noqa: E402

if request["mode"] == "sys":
    for tag in tags.sys_tags():
        print(tag)
    sys.exit(0)

import sysconfig  # noqa: E402

from packaging import _manylinux, _musllinux  # noqa: E402

spec = request["platform"]
os_name = spec["os"]
if os_name in ("manylinux", "musllinux", "linux"):
    arch = spec["arch"]
    sysconfig.get_platform = lambda: "linux-" + arch
    major, minor = spec.get("version", [0, 0])
    if os_name == "manylinux":
        _manylinux._get_glibc_version = lambda: _manylinux._GLibCVersion(major, minor)
    else:
        _manylinux._get_glibc_version = lambda: _manylinux._GLibCVersion(-1, -1)
    if os_name == "musllinux":
        _musllinux._get_musl_version = lambda executable: _musllinux._MuslVersion(major, minor)
    else:
        _musllinux._get_musl_version = lambda executable: None
    platforms = list(tags._linux_platforms(is_32bit=False))
elif os_name == "macos":
    platforms = list(tags.mac_platforms(tuple(spec["version"]), spec["arch"]))
elif os_name == "windows":
    platforms = [spec["tag"]]
elif os_name == "host":
    platforms = list(tags.platform_tags())
else:
    raise SystemExit("unknown platform os " + os_name)

version = tuple(request["version"])
if request["implementation"] == "cpython":
    result = list(tags.cpython_tags(version, request["abis"], platforms))
else:
    result = list(tags.generic_tags(request["interpreter"], request["abis"], platforms))
result += list(tags.compatible_tags(version, request["compat_interpreter"], platforms))
for tag in result:
    print(tag)
