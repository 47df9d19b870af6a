#!/usr/bin/env bash
# What `vari lock` for three machine classes over build families costs against one
# `uv pip compile` of the same input for one class (issue 35: at most 1.5x), warm caches.
#
# 1. The sites (bench/gen_lock_families.py, small valid stand-in wheels, each built into a static
#    index with `vari index build` and served from 127.0.0.1 by bench/serve_static.py): PyTorch's
#    five per-line indexes (`/whl/LINE/simple/`: torch 2.8.0 and 2.9.0 `+LINE`, the CUDA lines
#    requiring their CUDA runtime) and a default index (`/default/simple/`) with a by-name family's
#    builds (faiss-cpu, faiss-gpu-cu12), the runtimes and the ordinary dependencies; a user's
#    catalog names family `torch` (by index, the five indexes) and family `faiss` (by name).
# 2. Two commands, each writing a fresh output (the previous one removed, untimed):
#    `vari lock torch faiss --families CATALOG` for three classes (a CPU-only x86-64-v3 machine,
#    an A100-like node with CUDA 12.8, a CUDA 13.0 node), which chooses each family's build per
#    class (torch's five pages, faiss's two), resolves through its proxies and lists and hashes
#    every file the classes install; and `uv pip compile` of what one class asks for
#    (`torch faiss-gpu-cu12`, the default index with the cu128 index as an extra one: how a team
#    locks one class today). Python 3.12 on manylinux_2_28 x86_64 for both. One warm-up round
#    fills the caches; then repetitions interleaved (A B A B …), a pause before each, wall time
#    and CPU time (user + system of the process and its children), medians of RUNS.
#
# The lock is checked before the timings are printed: each class's builds (torch +cpu, +cu128
# and +cu130; faiss-cpu and faiss-gpu-cu12) and nothing of the other lines.
#
#   bench/lock_families.sh          (needs cargo, python3, curl; uv from <repo>/.venv or
#                                    $VARI_TEST_VENV: scripts/test-env)
#   RUNS=9 VARI=target/release/vari bench/lock_families.sh
set -euo pipefail
source "$(dirname "$0")/lib.sh"

tools="${VARI_TEST_VENV:-$root/.venv}"
[ -x "$tools/bin/uv" ] || {
  echo "bench/lock_families.sh: no uv in $tools: run scripts/test-env" >&2
  exit 1
}
build_vari

data=$(mktemp -d)
server=
cleanup() {
  [ -n "$server" ] && kill "$server" 2>/dev/null
  rm -rf "$data"
}
trap cleanup EXIT

port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
base="http://127.0.0.1:$port"
python3 "$here/gen_lock_families.py" "$data" "$base"
for dir in "$data"/wheels/*; do
  line=$(basename "$dir")
  case $line in
    default) out="$data/site/default" ;;
    *) out="$data/site/whl/$line" ;;
  esac
  "$vari" index build --quiet "$dir" -o "$out" >/dev/null
done
# Dated an hour back, as bench/lock.sh does: a served index's pages are not brand new.
find "$data/site" -exec touch -d '1 hour ago' {} +
python3 "$here/serve_static.py" "$data/site" "$port" >/dev/null 2>&1 &
server=$!
for _ in $(seq 100); do curl -sf "$base/default/simple/" >/dev/null 2>&1 && break; sleep 0.1; done
echo "vari: $vari"

# The three machine classes (bench/lock.sh's facts).
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

# Hermetic: no user configuration, caches under $data, uv from the tools venv on PATH, and no
# Python downloads (uv would try to fetch a 3.12 it does not find, in vari's runs of uv too).
export VARI_CACHE_DIR="$data/vari-cache" VARI_NO_CONFIG=1 UV_NO_CONFIG=1 \
  UV_CACHE_DIR="$data/uv-cache" UV_PYTHON_DOWNLOADS=never PATH="$tools/bin:$PATH"
unset PIP_INDEX_URL PIP_EXTRA_INDEX_URL UV_INDEX_URL UV_EXTRA_INDEX_URL UV_INDEX \
  UV_DEFAULT_INDEX VIRTUAL_ENV VARI_PROFILE VARI_FAMILIES 2>/dev/null || true

python3 - "$tools" "$vari" "$base" "$data" "${RUNS:-5}" <<'PY'
import os, statistics, sys

tools, vari, base, data, runs = sys.argv[1:6]
runs = int(runs)
uv = os.path.join(tools, "bin", "uv")
default, cu128 = f"{base}/default/simple/", f"{base}/whl/cu128/simple/"
python = ["--python-version", "3.12", "--python-platform", "x86_64-manylinux_2_28"]
one_class = os.path.join(data, "one-class.in")
with open(one_class, "w") as f:
    f.write("torch\nfaiss-gpu-cu12\n")
lock = os.path.join(data, "pylock.toml")
compiled = os.path.join(data, "requirements.txt")
targets = [a for c in ("cpu", "a100", "cuda13") for a in ("--target", os.path.join(data, c + ".toml"))]
commands = [
    ("uv pip compile (1 class)", compiled,
     [uv, "pip", "compile", "--quiet", "--no-header", "--index-url", default,
      "--extra-index-url", cu128, *python, one_class, "-o", compiled]),
    ("vari lock (3 classes)", lock,
     [vari, "lock", "torch", "faiss", "--families", os.path.join(data, "families.toml"),
      "--index-url", default, *targets, *python, "-o", lock]),
]

from interleave import interleaved, once as run_once


def once(output, args):
    return run_once(args, data, remove=(output,))


for _, output, args in commands:  # warm-up: fills uv's and vari's caches
    once(output, args)

# The lock holds each class's builds and no other line's.
with open(lock) as f:
    text = f.read()
wanted = ["torch-2.9.0+cpu-cp312", "torch-2.9.0+cu128-cp312", "torch-2.9.0+cu130-cp312",
          "faiss_cpu-1.15.1-", "faiss_gpu_cu12-1.14.1.post1-"]
missing = [w for w in wanted if w.replace("+", "%2B") not in text and w not in text]
unwanted = [w for w in ("+cu126", "%2Bcu126", "+rocm", "%2Brocm") if w in text]
if missing or unwanted:
    raise SystemExit(f"the lock lacks {missing} or holds {unwanted}:\n{text}")

times, cpus = interleaved(
    runs, [(name, lambda output=output, args=args: once(output, args)) for name, output, args in commands])

packages = text.count("[[packages]]")
print(f"\nthe lock: {packages} packages for 3 classes (torch +cpu/+cu128/+cu130, faiss-cpu, "
      f"faiss-gpu-cu12, each class's CUDA runtime)")
print(f"warm caches, median of {runs} interleaved runs (wall time; CPU time = user + system "
      f"of the process and its children):")
for name, _, _ in commands:
    w, c = statistics.median(times[name]), statistics.median(cpus[name])
    print(f"  {name:<26} {w:7.3f} s wall  {c:7.3f} s CPU   "
          f"(runs: {', '.join(f'{t:.2f}' for t in times[name])})")
ratio = statistics.median(times["vari lock (3 classes)"]) / statistics.median(times["uv pip compile (1 class)"])
cpu_ratio = statistics.median(cpus["vari lock (3 classes)"]) / statistics.median(cpus["uv pip compile (1 class)"])
print(f"  vari lock (3 classes) / uv pip compile (1 class) = {ratio:.2f}x wall, "
      f"{cpu_ratio:.2f}x CPU (aim: <= 1.5x)")
PY
