#!/usr/bin/env bash
# What `vari lock` for three machine classes on two Pythons (six targets) costs against one
# `uv pip compile --universal` of the same requirements on the same index, warm caches.
#
# 1. The index: the PyTorch-like `vari-demo` release of examples/demo (six variants, a plain
#    wheel, a CUDA runtime behind a variant marker) and the 15 ordinary packages of
#    bench/install.sh, their real PyPI wheels for CPython 3.10 and 3.12 on Linux x86-64
#    (downloaded once into ~/.cache/vari-bench/lock-universal-wheels), numpy both at its
#    newest (2.5, Python 3.11 and up) and at the newest for 3.10 (2.2.6, both Pythons' wheels):
#    the Pythons' newest versions differ, the usual case. Built into a static index with PEP 658
#    metadata (`vari index build`), served from 127.0.0.1 by bench/serve_static.py.
# 2. Three commands on the same 16 requirements: `uv pip compile --universal --python-version
#    3.10 --no-python-downloads` (the reference); `vari lock` with three targets (the machine
#    classes of bench/lock.sh) and `--python-version 3.10 --python-version 3.12`, which runs
#    uv once (`--universal` through a proxy serving the six targets' union), evaluates each
#    pin's marker per target, verifies per target and lists and hashes every usable file; the same
#    with VARI_LOCK_PER_TARGET=1 (one uv run per target, twice when the targets disagree at
#    first: the path six targets on two Pythons took before, for comparison; its lock must be
#    the same bytes). Each writes a fresh output (untimed removal: no preferences). One warm-up
#    round fills uv's and vari's caches; then repetitions interleaved (A B C A B C …), a pause
#    before each, wall time and CPU time (user + system of the process and its children),
#    medians of RUNS.
#
# The aim (issue 34): `vari lock` for the six targets at most 1.3x `uv pip compile --universal`
# on an index with metadata.
#
#   bench/lock_universal.sh        (needs cargo, python3; pip and uv from <repo>/.venv or
#                                   $VARI_TEST_VENV: scripts/test-env; PyPI on the first run)
#   RUNS=9 bench/lock_universal.sh
#   VARI=target/release/vari bench/lock_universal.sh   (an already built binary)
#   VARI_BASE=old/vari bench/lock_universal.sh   (also times an older build on the same
#                                                 targets, in the same interleaved runs)
set -euo pipefail
source "$(dirname "$0")/lib.sh"

tools="${VARI_TEST_VENV:-$root/.venv}"
[ -x "$tools/bin/pip" ] && [ -x "$tools/bin/uv" ] || {
  echo "bench/lock_universal.sh: no pip and uv in $tools: run scripts/test-env" >&2
  exit 1
}
build_vari

PACKAGES="requests urllib3 idna certifi charset-normalizer six python-dateutil tzdata packaging
attrs click jinja2 markupsafe pyyaml numpy"
wheels="${XDG_CACHE_HOME:-$HOME/.cache}/vari-bench/lock-universal-wheels"
if ! ls "$wheels"/numpy-2.2.6-cp312-*.whl >/dev/null 2>&1; then
  echo "downloading the 15 packages' wheels for CPython 3.10 and 3.12 from PyPI into $wheels (once)"
  mkdir -p "$wheels"
  download() {
    "$tools/bin/pip" download --quiet --disable-pip-version-check --only-binary=:all: \
      --implementation cp --python-version "$1" --platform manylinux_2_28_x86_64 \
      --platform manylinux_2_17_x86_64 --platform manylinux2014_x86_64 --dest "$wheels" "${@:2}"
  }
  # shellcheck disable=SC2086
  download 3.10 $PACKAGES
  # shellcheck disable=SC2086
  download 3.12 $PACKAGES
  # The version one lock for both Pythons pins (numpy 2.3 and later need Python 3.11).
  download 3.12 numpy==2.2.6
fi

data=$(mktemp -d)
server=
cleanup() {
  [ -n "$server" ] && kill "$server" 2>/dev/null
  rm -rf "$data"
}
trap cleanup EXIT

free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'; }
wait_for() { for _ in $(seq 100); do curl -sf "$1" >/dev/null 2>&1 && return 0; sleep 0.1; done; echo "bench/lock_universal.sh: $1 never answered" >&2; exit 1; }

mkdir -p "$data/files"
cp "$wheels"/*.whl "$data/files/"
cp "$root"/examples/demo/*.whl "$root"/examples/demo/*-variants.json "$data/files/"
"$vari" index build "$data/files" -o "$data/site" >/dev/null 2>&1
# Dated an hour back, as bench/lock.sh does: a served mirror's pages are not brand new.
find "$data/site" -exec touch -d '1 hour ago' {} +
port=$(free_port)
python3 "$here/serve_static.py" "$data/site" "$port" >/dev/null 2>&1 &
server=$!
index="http://127.0.0.1:$port/simple/"
wait_for "$index"
echo "$(ls "$data/files"/*.whl | wc -l) wheels in a static index at $index" \
  "($(find "$data/site" -name '*.metadata' | wc -l) .metadata files)"
echo "vari: $vari"

# The three machine classes (vari_test_support::fleet's facts, as bench/lock.sh).
head='schema = "vari-facts/1"
[platform]
system = "Linux"
machine = "x86_64"
libc = "glibc 2.36"'
printf '%s\n[x86_64]\nlevel = 3\n' "$head" >"$data/cpu.toml"
printf '%s\n[nvidia]\ncuda_version = "12.8"\ncompute_capability = "8.0"\n[x86_64]\nlevel = 3\n' \
  "$head" >"$data/a100.toml"
printf '%s\n[nvidia]\ncuda_version = "13.0"\ncompute_capability = "9.0"\n[x86_64]\nlevel = 4\n' \
  "$head" >"$data/cuda13.toml"

# Hermetic: no user configuration, caches under $data, uv from the tools venv on PATH and
# only the system's directories after it. A version manager's shims on PATH (pyenv's) cost
# every uv run that looks for a Python 3.10 interpreter about 2 s, one shim tried after
# another: the same for uv and vari, but the seconds would hide what is measured.
export VARI_CACHE_DIR="$data/vari-cache" VARI_NO_CONFIG=1 UV_NO_CONFIG=1 \
  UV_CACHE_DIR="$data/uv-cache" PATH="$tools/bin:/usr/bin:/bin"
unset PIP_INDEX_URL PIP_EXTRA_INDEX_URL UV_INDEX_URL UV_EXTRA_INDEX_URL UV_INDEX \
  UV_DEFAULT_INDEX VIRTUAL_ENV VARI_PROFILE VARI_LOCK_PER_TARGET 2>/dev/null || true

# shellcheck disable=SC2086
python3 - "$tools" "$vari" "$index" "$data" "${RUNS:-5}" "${base:-}" vari-demo $PACKAGES <<'PY'
import os, statistics, subprocess, sys
from interleave import interleaved, once

tools, vari, index, data, runs, base = sys.argv[1:7]
runs = int(runs)
requirements = sys.argv[7:]
uv = os.path.join(tools, "bin", "uv")
req_in = os.path.join(data, "requirements.in")
with open(req_in, "w") as f:
    f.write("".join(r + "\n" for r in requirements))
lock = os.path.join(data, "pylock.toml")
compiled = os.path.join(data, "requirements.txt")
targets = [a for c in ("cpu", "a100", "cuda13") for a in ("--target", os.path.join(data, c + ".toml"))]
pythons = ["--python-version", "3.10", "--python-version", "3.12"]
REFERENCE, VARI, PER_TARGET = ("uv pip compile --universal", "vari lock (6 targets)",
                               "  per target (before)")
commands = [
    # `--no-python-downloads` as vari passes it: without it uv spends seconds trying to
    # download a Python 3.10 when none is installed.
    (REFERENCE, compiled,
     [uv, "pip", "compile", "--quiet", "--no-header", "--universal", "--python-version", "3.10",
      "--no-python-downloads", "--index-url", index, req_in, "-o", compiled]),
    (VARI, lock,
     [vari, "lock", "--index-url", index, *targets, *pythons, "-r", req_in, "-o", lock]),
    (PER_TARGET, lock + ".per-target",
     [vari, "lock", "--index-url", index, *targets, *pythons, "-r", req_in, "-o",
      lock + ".per-target"]),
]
BASE = "  VARI_BASE (older build)"
if base:
    commands.append((BASE, lock + ".base",
                     [base, "lock", "--index-url", index, *targets, *pythons, "-r", req_in, "-o",
                      lock + ".base"]))
per_target = dict(os.environ, VARI_LOCK_PER_TARGET="1")

def run(output, args):
    env = per_target if output.endswith(".per-target") else None
    return lambda: once(args, data, env=env, remove=(output,))

for _, output, args in commands:  # warm-up: fills uv's and vari's caches
    run(output, args)()
# One verbose run: how many times vari ran uv (each `uv pip compile` is logged at debug level).
verbose = subprocess.run(commands[1][2] + ["-v"], stdout=subprocess.DEVNULL,
                         stderr=subprocess.PIPE, cwd=data, text=True)
uv_runs = verbose.stderr.count('"pip" "compile"')
times, cpus = interleaved(runs, [(name, run(output, args)) for name, output, args in commands])

with open(lock) as f:
    text = f.read()
with open(lock + ".per-target") as f:
    if f.read() != text:
        raise SystemExit("the lock resolved once for every target differs from the per-target one")
packages = text.count("[[packages]]")
wheels = sum(1 for line in text.splitlines() if line.startswith("    { url = "))
print(f"\n{len(requirements)} requirements; the lock: {packages} packages, {wheels} files "
      f"listed with hashes (the same bytes either way); vari ran uv {uv_runs} time(s)")
print(f"warm caches, median of {runs} interleaved runs (wall time; CPU time = user + system "
      f"of the process and its children):")
for name, _, _ in commands:
    w, c = statistics.median(times[name]), statistics.median(cpus[name])
    print(f"  {name:<27} {w:7.3f} s wall  {c:7.3f} s CPU   "
          f"(runs: {', '.join(f'{t:.2f}' for t in times[name])})")
for name in (VARI, PER_TARGET) + ((BASE,) if base else ()):
    ratio = statistics.median(times[name]) / statistics.median(times[REFERENCE])
    cpu_ratio = statistics.median(cpus[name]) / statistics.median(cpus[REFERENCE])
    print(f"  {name.strip()} / uv pip compile --universal = {ratio:.2f}x wall, "
          f"{cpu_ratio:.2f}x CPU" + (" (aim: <= 1.3x)" if name == VARI else ""))
PY
