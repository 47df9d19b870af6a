#!/usr/bin/env bash
# Slim benchmark: `vari wheel split` on real fat CUDA wheels from PyPI — download bytes per
# machine class (a GPU of compute capability major M downloads the slim wheel of family M when
# there is one, else the fat wheel) against the fat wheel, and the time to split (median wall
# and CPU time, user+sys, of RUNS runs).
#
#   bench/slim.sh [RUNS] [WHEEL-SPEC...]
#   (default 3 runs; wheels: jax-cuda12-plugin==0.8.0 and jax-cuda12-pjrt==0.8.0 (JAX 0.8's
#   CUDA code is in the PJRT wheel), cupy-cuda12x==13.6.0, and nvidia-cublas-cu12==12.9.1.4
#   when BENCH_CUBLAS=1; needs cargo, python3; VARI_BIN=path uses that binary instead of
#   building the release one)
#
# The wheels are downloaded once with the test venv's pip (scripts/test-env) into
# bench/.cache/slim (git-ignored). Only the slimmed wheels' structure is checked here and in
# the tests; loading them on a GPU is bench/slim_gpu.sh.
set -euo pipefail
source "$(dirname "$0")/lib.sh"

runs=${1:-3}
shift || true
specs=("$@")
if [ ${#specs[@]} -eq 0 ]; then
  specs=(jax-cuda12-plugin==0.8.0 jax-cuda12-pjrt==0.8.0 cupy-cuda12x==13.6.0)
  [ "${BENCH_CUBLAS:-0}" = 1 ] && specs+=(nvidia-cublas-cu12==12.9.1.4)
fi
if [ -n "${VARI_BIN:-}" ]; then vari=$VARI_BIN; else build_vari; fi
pip="${VARI_TEST_VENV:-$root/.venv}/bin/pip"
cache="$here/.cache/slim"
mkdir -p "$cache"
for spec in "${specs[@]}"; do
  "$pip" download --quiet --disable-pip-version-check --no-deps --only-binary=:all: \
    --python-version 3.12 --platform manylinux_2_28_x86_64 --platform manylinux_2_27_x86_64 \
    --platform manylinux2014_x86_64 --platform manylinux_2_17_x86_64 --dest "$cache" "$spec"
done

out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
for spec in "${specs[@]}"; do
  name=${spec%%==*}
  version=${spec##*==}
  wheel=$(ls "$cache"/"${name//-/_}"-"$version"-*.whl | head -n 1)
  python3 - "$vari" "$wheel" "$out" "$runs" <<'PY'
import json, os, resource, shutil, statistics, subprocess, sys, time
vari, wheel, out, runs = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])
walls, cpus, report = [], [], None
for _ in range(runs):
    target = os.path.join(out, "split")
    shutil.rmtree(target, ignore_errors=True)
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    run = subprocess.run([vari, "wheel", "split", wheel, "-o", target, "--json"],
                         check=True, capture_output=True, text=True)
    walls.append(time.perf_counter() - start)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpus.append((after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime))
    report = json.loads(run.stdout)
mib = lambda n: f"{n / 2**20:.1f} MiB" if n >= 2**20 else f"{n / 2**10:.1f} KiB"
fat = os.path.getsize(wheel)
print(f"\n### {os.path.basename(wheel)}\n")
print(f"fat wheel: {mib(fat)}; split into {len(report['wheels'])} wheels in "
      f"{statistics.median(walls):.2f} s wall, {statistics.median(cpus):.2f} s CPU "
      f"(median of {runs})\n")
print("| machine class | its wheel | download | vs fat |")
print("|---|---|---|---|")
for w in report["wheels"]:
    sm = sorted({p.split(" :: ")[2] for p in w["properties"] if p.startswith("nvidia :: sm_arch")},
                key=lambda v: int(v.split("_")[0]))
    major = int(sm[0].split("_")[0]) // 10 if sm else "?"
    size = w["size"]["after"]
    print(f"| compute capability {major}.x | {', '.join(sm)} | {mib(size)} | "
          f"{100 * size / fat:.0f}% ({mib(fat - size)} less) |")
print(f"| any other (PTX JIT) | the fat build | {mib(fat)} | 100% |")
code = report["wheels"][0]["code"]
print("\nGPU code in the fat build, per architecture (as stored in the fat binaries):\n")
print("| code | bytes |")
print("|---|---|")
for c in code:
    print(f"| {c['code']} | {mib(c['before'])} |")
left = {l["path"]: l["reason"] for w in report["wheels"] for l in w["left_whole"]}
if left:
    print(f"\nleft whole ({len(left)} files):")
    for path, reason in sorted(left.items()):
        print(f"- {path}: {reason}")
PY
done
