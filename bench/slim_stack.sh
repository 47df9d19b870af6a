#!/usr/bin/env bash
# Bytes a GPU node of one family downloads from a slimmed mirror (`vari mirror --slim`) of the
# PyPI CUDA stack of torch, against the fat files: torch for Linux x86_64 and CPython 3.12 and
# the nvidia-* wheels it requires, each slimmed as the mirror slims it (`vari wheel slim
# --keep 9.x`: the sm_90 family's wheel), per file and in total. Not a CI test.
#
#   bench/slim_stack.sh [PIP-REQUIREMENT...]
#   (default: `torch`, the newest on PyPI, with its dependencies; only torch and nvidia-*
#   wheels are measured. Give other requirements to measure a subset, e.g.
#   `nvidia-cublas-cu12 nvidia-cufft-cu12`, into a directory of their own, every wheel of it
#   measured; their dependencies are not downloaded.)
#
# Environment: BENCH_CACHE (default ~/.cache/vari-bench) holds the downloads between runs;
# BENCH_FAMILY (default 9.x) is what is kept; BENCH_DELETE=1 deletes the downloads afterwards;
# VARI (a built binary) skips building the release one; VARI_TEST_VENV names the Python
# environment whose pip downloads (default: python3 -m pip).
#
# Needs about the stack's size free for the downloads (torch's CUDA 12 stack is some 3–4 GB)
# plus the largest wheel again for its slim copy (each slim wheel is deleted once measured).
# Whether the slim libraries load and run a kernel needs a GPU: bench/slim_gpu.sh.
set -euo pipefail
source "$(dirname "$0")/lib.sh"

family=${BENCH_FAMILY:-9.x}
cache="${BENCH_CACHE:-$HOME/.cache/vari-bench}/slim-stack"
if [ -n "${VARI_TEST_VENV:-}" ]; then
  pip=("$VARI_TEST_VENV/bin/python" -m pip)
else
  pip=(python3 -m pip)
fi
deps=()
only="torch-|nvidia_"
if [ $# -eq 0 ]; then
  set -- torch
else
  # A subset: its own directory, every wheel of it measured.
  deps=(--no-deps)
  only=""
  cache="$cache-$(printf '%s\n' "$@" | sha256sum | cut -c1-12)"
fi
mkdir -p "$cache"
df -h "$cache" | tail -n 1 | awk '{print "free space where the downloads go: " $4}' >&2
"${pip[@]}" download --quiet --disable-pip-version-check --only-binary=:all: "${deps[@]}" \
  --python-version 3.12 --implementation cp --abi cp312 \
  --platform manylinux_2_28_x86_64 --platform manylinux_2_27_x86_64 \
  --platform manylinux2014_x86_64 --platform manylinux_2_17_x86_64 \
  --platform manylinux1_x86_64 --platform linux_x86_64 \
  --dest "$cache" "$@"
build_vari

out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
python3 - "$vari" "$cache" "$out" "$family" "$only" <<'PY'
import json, os, re, shutil, subprocess, sys
vari, cache, out, family, only = sys.argv[1:6]
mib = lambda n: f"{n / 2**20:,.1f} MiB"
# Largest first: the files that decide the total are measured first.
wheels = sorted((w for w in os.listdir(cache)
                 if w.endswith(".whl") and (not only or re.match(only, w))),
                key=lambda w: -os.path.getsize(os.path.join(cache, w)))
rows, total_fat, total_slim = [], 0, 0
print(f"| file | fat | slim ({family}) | slim / fat | left whole |")
print("|---|---:|---:|---:|---|")
for wheel in wheels:
    path = os.path.join(cache, wheel)
    fat = os.path.getsize(path)
    target = os.path.join(out, "slim")
    shutil.rmtree(target, ignore_errors=True)
    run = subprocess.run([vari, "wheel", "slim", path, "--keep", family, "-o", target, "--json"],
                         capture_output=True, text=True)
    if run.returncode == 0:
        report = json.loads(run.stdout)["wheels"][0]
        slim = report["size"]["after"]
        left = "; ".join(f"{l['path']} ({l['reason']})" for l in report["left_whole"])
    else:
        # No GPU code for the family (or none at all): the node downloads the whole file.
        slim = fat
        error = run.stderr.strip().splitlines()
        why = error[-1].split(path + ": ", 1)[-1] if error else f"exit {run.returncode}"
        left = "whole: " + why
    shutil.rmtree(target, ignore_errors=True)
    total_fat += fat
    total_slim += slim
    print(f"| {wheel} | {mib(fat)} | {mib(slim)} | {100 * slim / fat:.0f} % | "
          f"{left.replace('|', '/')} |", flush=True)
if total_fat:
    print(f"| **total ({len(wheels)} files)** | **{mib(total_fat)}** | **{mib(total_slim)}** | "
          f"**{100 * total_slim / total_fat:.0f} %** | |")
PY
if [ "${BENCH_DELETE:-0}" = 1 ]; then rm -rf "$cache"; fi
