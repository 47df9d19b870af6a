#!/usr/bin/env bash
# What `vari lock` of a data-science project for 3 machine classes x 2 Pythons costs against
# `uv pip compile --universal` of the same input on the same index: an index WITHOUT PEP 658
# `.metadata` files (the common case behind Artifactory or Nexus; issue 34) and the same index
# WITH them, in time and in bytes read at the index.
#
# 1. The input: 28 requirements (numpy, pandas, scipy, scikit-learn, matplotlib, seaborn,
#    statsmodels, pyarrow, ipython, …; 85 packages once resolved for every platform). Their
#    real PyPI wheels for CPython 3.11 and 3.12 on manylinux x86-64 (and the pure wheels of
#    the packages only other platforms need) are downloaded once into
#    ~/.cache/vari-bench/pypi-wheels (about 500 MB) from `uv pip compile --universal` pins,
#    each Python's wheels also of the versions only the other Python pins (so that one
#    version can serve both, as a universal lock pins it).
# 2. Two static indexes of those wheels (bench/gen_simple_index.py): one without `.metadata`,
#    one with, each served from 127.0.0.1 by bench/serve_counting.py, which honours byte
#    ranges (as object stores and Artifactory do) and counts requests and body bytes.
# 3. Per index, two commands: `uv pip compile --universal --python-version 3.11` and
#    `vari lock` with three targets (the facts of bench/lock.sh: a CPU-only x86-64-v3 machine,
#    an A100-like node with CUDA 12.8, a CUDA 13.0 node) and `--python-version 3.11
#    --python-version 3.12`. Cold: COLD runs each with empty caches (uv's and vari's), the
#    bytes the index sent counted per run. Warm: one warm-up, then RUNS interleaved rounds
#    (uv, vari, uv, vari, …). Medians of wall and CPU time (user + system of the process and
#    its children).
#
# Aims (issue 34): without metadata, vari lock at most 1.5x uv and no more bytes read at the
# index; with metadata, at most 1.3x.
#
#   bench/lock_index.sh              (needs cargo, python3, curl; uv and pip from
#                                     <repo>/.venv or $VARI_TEST_VENV; PyPI on the first run)
#   RUNS=7 COLD=3 bench/lock_index.sh
#   PYTHONS=3.12 bench/lock_index.sh   (the Pythons vari locks for; uv gets the oldest)
#   VARI=target/release/vari bench/lock_index.sh   (an already built binary)
set -euo pipefail
source "$(dirname "$0")/lib.sh"

tools="${VARI_TEST_VENV:-$root/.venv}"
[ -x "$tools/bin/pip" ] && [ -x "$tools/bin/uv" ] || {
  echo "bench/lock_index.sh: no pip and uv in $tools: run scripts/test-env" >&2
  exit 1
}
build_vari

REQUIREMENTS="numpy pandas scipy scikit-learn matplotlib seaborn statsmodels pyarrow sympy networkx
requests tqdm joblib ipython plotly h5py numba sqlalchemy openpyxl beautifulsoup4 lxml jinja2
pydantic fsspec altair tabulate click rich"
wheels="${HOME}/.cache/vari-bench/pypi-wheels"
data=$(mktemp -d)
servers=()
cleanup() {
  for pid in "${servers[@]}"; do kill "$pid" 2>/dev/null || true; done
  rm -rf "$data"
}
trap cleanup EXIT
printf '%s\n' $REQUIREMENTS >"$data/requirements.in"

# Version of the wheel cache: 2 holds, for each Python, the versions the other Python pins too
# (a universal lock pins one version for both where one serves both).
if [ "$(cat "$wheels/.complete" 2>/dev/null)" != 2 ]; then
  echo "downloading the project's wheels from PyPI into $wheels (once)"
  mkdir -p "$wheels"
  "$tools/bin/uv" pip compile --no-config --universal --python-version 3.11 --quiet \
    --no-header "$data/requirements.in" -o "$data/universal.txt"
  # Split the pins by the Python (3.11, 3.12, on Linux) their markers select; pins for other
  # platforms only (colorama) are fetched as they come (pure wheels).
  "$tools/bin/python" - "$data" <<'PY'
import sys
from pip._vendor.packaging.markers import default_environment
from pip._vendor.packaging.requirements import Requirement
data = sys.argv[1]
pins = {"3.11": [], "3.12": [], "other": []}
for line in open(f"{data}/universal.txt"):
    line = line.split("#")[0].strip()
    if not line or line.startswith("-"):
        continue
    req, placed = Requirement(line), False
    for py in ("3.11", "3.12"):
        env = dict(default_environment(), python_version=py, python_full_version=py + ".9",
                   sys_platform="linux", platform_system="Linux", platform_machine="x86_64")
        if req.marker is None or req.marker.evaluate(env):
            pins[py].append(f"{req.name}{req.specifier}")
            placed = True
    if not placed:
        pins["other"].append(f"{req.name}{req.specifier}")
for key, lines in pins.items():
    with open(f"{data}/pins-{key}.txt", "w") as f:
        f.write("".join(line + "\n" for line in lines))
PY
  for py in 3.11 3.12; do
    "$tools/bin/pip" download --quiet --disable-pip-version-check --no-deps --only-binary=:all: \
      --python-version "$py.9" --implementation cp --platform manylinux_2_28_x86_64 \
      --platform manylinux_2_27_x86_64 --platform manylinux_2_17_x86_64 \
      --platform manylinux2014_x86_64 --platform linux_x86_64 \
      -d "$wheels" -r "$data/pins-$py.txt"
  done
  "$tools/bin/pip" download --quiet --disable-pip-version-check --no-deps --only-binary=:all: \
    -d "$wheels" -r "$data/pins-other.txt"
  # Each Python's wheels of the versions only the other Python pinned, where PyPI has them
  # (one at a time: a version without a wheel for this Python is skipped).
  for py in 3.11 3.12; do
    other=3.12
    [ "$py" = 3.12 ] && other=3.11
    grep -vxF -f "$data/pins-$py.txt" "$data/pins-$other.txt" | while read -r pin; do
      "$tools/bin/pip" download --quiet --disable-pip-version-check --no-deps \
        --only-binary=:all: --python-version "$py.9" --implementation cp \
        --platform manylinux_2_28_x86_64 --platform manylinux_2_27_x86_64 \
        --platform manylinux_2_17_x86_64 --platform manylinux2014_x86_64 \
        --platform linux_x86_64 -d "$wheels" "$pin" 2>/dev/null || echo "  no $py wheel of $pin"
    done
  done
  echo 2 >"$wheels/.complete"
fi

free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'; }
wait_for() { for _ in $(seq 100); do curl -sf "$1" >/dev/null 2>&1 && return 0; sleep 0.1; done; echo "bench/lock_index.sh: $1 never answered" >&2; exit 1; }

declare -A index
for kind in plain metadata; do
  flag=
  [ "$kind" = metadata ] && flag=--metadata
  python3 "$here/gen_simple_index.py" "$wheels" "$data/$kind" $flag
  # Dated an hour back, as bench/lock.sh does: a served mirror's pages are not brand new.
  find "$data/$kind" -exec touch -h -d '1 hour ago' {} +
  port=$(free_port)
  python3 "$here/serve_counting.py" "$data/$kind" "$port" >/dev/null 2>&1 &
  servers+=($!)
  index[$kind]="http://127.0.0.1:$port"
  wait_for "${index[$kind]}/simple/"
done
echo "vari: $vari"

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

export VARI_NO_CONFIG=1 UV_NO_CONFIG=1 PATH="$tools/bin:$PATH"
unset PIP_INDEX_URL PIP_EXTRA_INDEX_URL UV_INDEX_URL UV_EXTRA_INDEX_URL UV_INDEX \
  UV_DEFAULT_INDEX VIRTUAL_ENV VARI_PROFILE VARI_CACHE_DIR UV_CACHE_DIR 2>/dev/null || true

python3 - "$tools" "$vari" "$data" "${RUNS:-5}" "${COLD:-3}" "${index[plain]}" "${index[metadata]}" \
  "${PYTHONS:-3.11 3.12}" <<'PY'
import json, os, shutil, statistics, sys, urllib.request
from interleave import interleaved, once as timed

tools, vari, data, runs, cold, plain, with_metadata, pythons = sys.argv[1:9]
runs, cold, pythons = int(runs), int(cold), pythons.split()
versions = [a for p in pythons for a in ("--python-version", p)]
uv = os.path.join(tools, "bin", "uv")
req_in = os.path.join(data, "requirements.in")
targets = [a for c in ("cpu", "a100", "cuda13") for a in ("--target", os.path.join(data, c + ".toml"))]

def commands(base):
    url = base + "/simple/"
    return [
        ("uv pip compile --universal", [uv, "pip", "compile", "--universal", "--no-python-downloads", "--python-version",
         min(pythons, key=lambda p: tuple(map(int, p.split(".")))), "--quiet", "--no-header", "--index-url", url, req_in,
         "-o", os.path.join(data, "requirements.txt")]),
        (f"vari lock (3 classes x {len(pythons)} Python)", [vari, "lock", "--index-url", url,
         *targets, *versions, "-r", req_in,
         "-o", os.path.join(data, "pylock.toml")]),
    ]

def stats(base, reset=True):
    with urllib.request.urlopen(base + "/__stats" + ("?reset=1" if reset else "")) as answer:
        return json.load(answer)

def once(args, caches):
    env = dict(os.environ, UV_CACHE_DIR=os.path.join(caches, "uv"),
               VARI_CACHE_DIR=os.path.join(caches, "vari"))
    outputs = (os.path.join(data, "requirements.txt"), os.path.join(data, "pylock.toml"))
    return timed(args, data, env=env, remove=outputs)

def median(values):
    return statistics.median(values)

summary = {}
for label, base in (("no .metadata", plain), ("with .metadata", with_metadata)):
    print(f"\nindex {label} ({base}/simple/)")
    cmds = commands(base)
    # Cold: empty caches each run; the bytes the index sent per run.
    cold_times, cold_bytes = {}, {}
    for _ in range(cold):
        for name, args in cmds:
            caches = os.path.join(data, "cold-caches")
            shutil.rmtree(caches, ignore_errors=True)
            stats(base)
            wall, cpu = once(args, caches)
            sent = stats(base)
            cold_times.setdefault(name, []).append((wall, cpu))
            cold_bytes.setdefault(name, []).append(sent)
    for name, _ in cmds:
        walls = [w for w, _ in cold_times[name]]
        cpus = [c for _, c in cold_times[name]]
        sent = cold_bytes[name][-1]
        print(f"  cold {name:<34} {median(walls):7.2f} s wall {median(cpus):7.2f} s CPU   "
              f"index sent {sent['bytes'] / 1e6:6.2f} MB in {sent['requests']} requests "
              f"({sent['whole_wheels']} whole wheels, {sent['wheel_ranges']} ranges, "
              f"{sent['metadata']} .metadata, {sent['heads']} HEAD)")
    # Warm: one warm-up, then interleaved rounds on kept caches.
    caches = os.path.join(data, "warm-caches-" + label.split()[0])
    for _, args in cmds:
        once(args, caches)
    stats(base)
    walls, cpus = interleaved(runs, [(name, lambda args=args: once(args, caches))
                                     for name, args in cmds])
    warm = {name: list(zip(walls[name], cpus[name])) for name, _ in cmds}
    sent = stats(base)
    for name, _ in cmds:
        print(f"  warm {name:<34} {median([w for w, _ in warm[name]]):7.3f} s wall "
              f"{median([c for _, c in warm[name]]):7.3f} s CPU   "
              f"(runs: {', '.join(f'{w:.2f}' for w, _ in warm[name])})")
    print(f"  warm rounds: the index sent {sent['bytes'] / 1e6:.2f} MB in {sent['requests']} requests")
    (uv_name, _), (vari_name, _) = cmds
    for when, table in (("cold", {n: cold_times[n] for n, _ in cmds}), ("warm", warm)):
        wall = median([w for w, _ in table[vari_name]]) / median([w for w, _ in table[uv_name]])
        cpu = median([c for _, c in table[vari_name]]) / median([c for _, c in table[uv_name]])
        print(f"  {when}: vari lock / uv pip compile --universal = {wall:.2f}x wall, {cpu:.2f}x CPU")
    ratio = cold_bytes[vari_name][-1]["bytes"] / max(1, cold_bytes[uv_name][-1]["bytes"])
    print(f"  cold bytes read at the index: vari lock / uv = {ratio:.2f}x")
aims = "aims: no .metadata <= 1.5x and no more bytes; with .metadata <= 1.3x"
print(f"\n{aims}")
PY
