#!/usr/bin/env bash
# What `vari lock` for three machine classes costs against one `uv pip compile` of the same
# requirements on the same index, warm caches.
#
# 1. The index: the PyTorch-like `vari-demo` release of examples/demo (six variants, a plain
#    wheel, a CUDA runtime behind a variant marker) and the 15 ordinary packages of
#    bench/install.sh (their real PyPI wheels, downloaded once into bench/.cache/install-wheels
#    and shared with that script), built into a static index (`vari index build`) served from
#    127.0.0.1 by bench/serve_static.py.
# 2. Three commands on the same 16 requirements: `vari lock` with three targets (a CPU-only
#    x86-64-v3 machine, an A100-like node with CUDA 12.8, a CUDA 13.0 node: the facts profiles
#    of vari_test_support::fleet), which runs uv once through a proxy serving the three
#    targets' union, checks the result per target and then lists and hashes every usable
#    file; the same with VARI_LOCK_PER_TARGET=1 (uv once per target, as before the union:
#    for comparison); and plain `uv pip compile` against the index. Each writes a
#    fresh output (the previous one removed, untimed: no preferences). One warm-up round fills
#    uv's and vari's caches; then repetitions interleaved (A B A B …), a pause before each,
#    wall time and CPU time (user + system of the process and its children), medians of RUNS.
#
# The aim (issue 18): `vari lock` for three targets at most 1.5x one `uv pip compile`.
#
# Where the time goes (this set, release build, 2 cores; `vari lock -v` prints the phases):
# uv through the proxy costs what plain uv does (same CPU, medians of 15): with warm caches it
# sends the proxy no request at all, as it sends the static index none. Its pages are fresh
# (`max-age` bounded by the upstream's freshness, an entity tag for 304s), and since the proxy
# gives the metadata it serves itself (the union's METADATA of a release with variants) the
# page's `max-age` and an entity tag too, no longer one revalidation per run (a 200 each time,
# on uv's critical path). vari's own client does not revalidate the index's pages either: they
# are dated an hour back, and RFC 9111's heuristic (a tenth of their age: six minutes) keeps
# them fresh in its cache, as uv's heuristic keeps them in uv's (strace: no connection to the
# index in a warm run). What vari adds, in wall time: start-up ~1.5 ms,
# resolving the three targets ~2.3 ms (Python tags, hardware facts), runtime, client and proxy
# ~1.5 ms, then uv; after uv, the releases uv pinned that were not listed while it ran
# (~0.3 ms: the requirements' likely releases are listed, and the union page of a release with
# variants built, while uv resolves, instead of ~2.5 ms after it), verification and proxy stop
# ~0.5 ms, building and writing the lock ~0.9 ms. Before these changes (release builds, same
# machine, load 0.5-1, RUNS=9, four runs each): 1.51-1.58x wall, 1.51-1.55x CPU; after:
# 1.26-1.41x wall, 1.35-1.49x CPU. In CPU time vari's own process went from ~17 to ~15 ms
# (perf, 20 runs); uv's grew by about as much when the listing ahead competes with it for the
# machine's two cores (alone, uv through the proxy and plain uv cost the same). Left: the dynamic loader's
# relocations (~1 ms of CPU per vari process: a PIE with 28k relative relocations), parsing the
# command line (~0.6 ms: every subcommand's clap definition), the archspec catalog (~0.45 ms,
# once), each target's Python tags (~0.3 ms each), and the proxy's union page for the release
# with variants (~1-2 ms of CPU on its threads, overlapping uv).
# Moving the lock maker into vari-lockmaker (issue 30) cost nothing: against the commit before
# (both release builds without LTO, VARI_BASE, load 10-19 on 2 cores), `vari lock` medians of
# 7, 15 and 15 interleaved runs took 0.031/0.033, 0.033/0.033 and 0.033/0.032 s of CPU (0.94x,
# 1.00x, 1.03x); wall time was too noisy under that load to say more (0.62x-1.09x).
#
#   bench/lock.sh                 (needs cargo, python3; uv from <repo>/.venv or
#                                  $VARI_TEST_VENV: scripts/test-env; PyPI on the first run)
#   RUNS=9 bench/lock.sh
#   VARI=target/release/vari bench/lock.sh   (an already built binary)
#   VARI_BASE=/tmp/vari-old bench/lock.sh    (also times an older binary's `vari lock` in the
#                                            same interleaved runs: a change made nothing slower)
set -euo pipefail
source "$(dirname "$0")/lib.sh"

tools="${VARI_TEST_VENV:-$root/.venv}"
[ -x "$tools/bin/pip" ] && [ -x "$tools/bin/uv" ] || {
  echo "bench/lock.sh: no pip and uv in $tools: run scripts/test-env" >&2
  exit 1
}
build_vari

PACKAGES="requests urllib3 idna certifi charset-normalizer six python-dateutil tzdata packaging
attrs click jinja2 markupsafe pyyaml numpy"
wheels="$here/.cache/install-wheels"
if ! ls "$wheels"/*.whl >/dev/null 2>&1; then
  echo "downloading the 15 packages' wheels from PyPI into $wheels (once)"
  mkdir -p "$wheels"
  # shellcheck disable=SC2086
  "$tools/bin/pip" download --quiet --disable-pip-version-check --only-binary=:all: \
    --dest "$wheels" $PACKAGES
fi

data=$(mktemp -d)
server=
cleanup() {
  [ -n "$server" ] && kill "$server" 2>/dev/null
  rm -rf "$data"
}
trap cleanup EXIT

free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'; }
wait_for() { for _ in $(seq 100); do curl -sf "$1" >/dev/null 2>&1 && return 0; sleep 0.1; done; echo "bench/lock.sh: $1 never answered" >&2; exit 1; }

mkdir -p "$data/files"
cp "$wheels"/*.whl "$data/files/"
cp "$root"/examples/demo/*.whl "$root"/examples/demo/*-variants.json "$data/files/"
"$vari" index build "$data/files" -o "$data/site" >/dev/null 2>&1
# Dated an hour back, as bench/install.sh does: a served mirror's pages are not brand new.
find "$data/site" -exec touch -d '1 hour ago' {} +
port=$(free_port)
python3 "$here/serve_static.py" "$data/site" "$port" >/dev/null 2>&1 &
server=$!
index="http://127.0.0.1:$port/simple/"
wait_for "$index"
echo "$(ls "$data/files"/*.whl | wc -l) wheels in a static index at $index"
echo "vari: $vari"

# The three machine classes (vari_test_support::fleet's facts).
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

# Hermetic: no user configuration, caches under $data, uv from the tools venv on PATH.
export VARI_CACHE_DIR="$data/vari-cache" VARI_NO_CONFIG=1 UV_NO_CONFIG=1 \
  UV_CACHE_DIR="$data/uv-cache" PATH="$tools/bin:$PATH"
unset PIP_INDEX_URL PIP_EXTRA_INDEX_URL UV_INDEX_URL UV_EXTRA_INDEX_URL UV_INDEX \
  UV_DEFAULT_INDEX VIRTUAL_ENV VARI_PROFILE 2>/dev/null || true

# shellcheck disable=SC2086
python3 - "$tools" "$vari" "$index" "$data" "${RUNS:-5}" "${base:-}" vari-demo $PACKAGES <<'PY'
import os, statistics, sys
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
commands = [
    ("uv pip compile", compiled,
     [uv, "pip", "compile", "--quiet", "--no-header", "--index-url", index, req_in, "-o", compiled]),
    ("vari lock (3 targets)", lock,
     [vari, "lock", "--index-url", index, *targets, "-r", req_in, "-o", lock]),
    ("  per target (before)", lock + ".per-target",
     [vari, "lock", "--index-url", index, *targets, "-r", req_in, "-o", lock + ".per-target"]),
]
if base:
    commands.append(("vari lock (base)", lock + ".base",
                     [base, "lock", "--index-url", index, *targets, "-r", req_in, "-o", lock + ".base"]))
per_target = dict(os.environ, VARI_LOCK_PER_TARGET="1")

def run(output, args):
    env = per_target if output.endswith(".per-target") else None
    return lambda: once(args, data, env=env, remove=(output,))

for _, output, args in commands:  # warm-up: fills uv's and vari's caches
    run(output, args)()
times, cpus = interleaved(runs, [(name, run(output, args)) for name, output, args in commands])

with open(lock) as f:
    text = f.read()
with open(lock + ".per-target") as f:
    if f.read() != text:
        raise SystemExit("the lock resolved once for the union differs from the per-target one")
if base:
    with open(lock + ".base") as f:
        if f.read() != text:
            raise SystemExit("the base binary's lock differs from this one's")
packages = text.count("[[packages]]")
wheels = sum(1 for line in text.splitlines() if line.startswith("    { url = "))
print(f"\n{len(requirements)} requirements; the lock: {packages} packages, {wheels} files "
      f"listed with hashes (the same bytes either way)")
print(f"warm caches, median of {runs} interleaved runs (wall time; CPU time = user + system "
      f"of the process and its children):")
for name, _, _ in commands:
    w, c = statistics.median(times[name]), statistics.median(cpus[name])
    print(f"  {name:<22} {w:7.3f} s wall  {c:7.3f} s CPU   "
          f"(runs: {', '.join(f'{t:.2f}' for t in times[name])})")
ratio = statistics.median(times["vari lock (3 targets)"]) / statistics.median(times["uv pip compile"])
cpu_ratio = statistics.median(cpus["vari lock (3 targets)"]) / statistics.median(cpus["uv pip compile"])
print(f"  vari lock (3 targets) / uv pip compile = {ratio:.2f}x wall, {cpu_ratio:.2f}x CPU "
      f"(aim: <= 1.5x)")
if base:
    name = "vari lock (3 targets)"
    wall = statistics.median(times[name]) / statistics.median(times["vari lock (base)"])
    cpu = statistics.median(cpus[name]) / statistics.median(cpus["vari lock (base)"])
    print(f"  vari lock (3 targets) / base = {wall:.2f}x wall, {cpu:.2f}x CPU")
PY
