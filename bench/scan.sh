#!/usr/bin/env bash
# Scan benchmark: `vari wheel scan` on a ~1 GB wheel of real shared libraries (x86-64 code from
# this machine, plus CUDA-style libraries whose `.nv_fatbin` holds the real containers of
# testdata/fatbin/), against:
# - `dd iflag=direct`: reading the file from the disk itself, past the page cache (what
#   "disk-bound" means: a scan as fast as this is limited by the disk);
# - `cat WHEEL > /dev/null`: reading it from the page cache after a first read;
# - `unzip -p WHEEL > /dev/null`: inflating every member with zlib, single-threaded;
# - bench/inflate_floor.py: inflating every deflated member with libdeflate on every core and
#   nothing else, the floor any tool pays that reads what is inside the members.
# Medians of RUNS runs, wall and CPU time (user+sys); a pause separates the tools since the
# machine is shared.
#
#   bench/scan.sh [TARGET_MB] [RUNS]
#   (defaults 1000 and 3; needs cargo, python3, objcopy, unzip, dd)
set -euo pipefail
source "$(dirname "$0")/lib.sh"

target=${1:-1000}
runs=${2:-3}
build_vari
ensure_venv deflate==0.9.0

data=$(mktemp -d)
trap 'rm -rf "$data"' EXIT
wheel="$data/bench_scan-1.0-py3-none-manylinux_2_28_x86_64.whl"
python3 "$here/gen_scan_wheel.py" "$wheel" "$target"
cat "$wheel" >/dev/null # into the page cache

# measure NAME COMMAND...: COMMAND (its stdout discarded) RUNS times; prints and records the
# median wall and CPU seconds.
measure() {
  local name=$1
  shift
  python3 - "$name" "$runs" "$@" <<'PY'
import os, resource, statistics, subprocess, sys, time
name, runs, command = sys.argv[1], int(sys.argv[2]), sys.argv[3:]
walls, cpus = [], []
for _ in range(runs):
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    subprocess.run(command, check=True, stdout=subprocess.DEVNULL)
    walls.append(time.perf_counter() - start)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpus.append((after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime))
print(f"{name}: wall {statistics.median(walls):.3f} s, cpu {statistics.median(cpus):.3f} s "
      f"(median of {runs})", flush=True)
with open(os.environ["BENCH_OUT"], "a") as out:
    out.write(f"{name}\t{statistics.median(walls)}\t{statistics.median(cpus)}\n")
PY
}
export BENCH_OUT="$data/results"
: >"$BENCH_OUT"

"$vari" wheel scan "$wheel" | head -n 12
measure "disk (dd iflag=direct)" dd if="$wheel" of=/dev/null bs=4M iflag=direct status=none
sleep 5
measure "cat" cat "$wheel"
sleep 5
measure "unzip -p" unzip -p "$wheel"
sleep 5
"$venv/bin/python" "$here/inflate_floor.py" "$wheel" "$runs"
sleep 5
measure "vari wheel scan" "$vari" wheel scan --json "$wheel"

python3 - "$BENCH_OUT" "$(stat -c %s "$wheel")" <<'PY'
import sys
rows = [line.rstrip("\n").split("\t") for line in open(sys.argv[1])]
size_mb = int(sys.argv[2]) / 1e6
results = {name: (float(wall), float(cpu)) for name, wall, cpu in rows}
disk_wall = results["disk (dd iflag=direct)"][0]
for name, (wall, cpu) in results.items():
    print(f"{name:34} {size_mb / wall:8.0f} MB/s wall  {size_mb / cpu:8.0f} MB/s per CPU second"
          f"  ({wall / disk_wall:.1f}x the time of reading from disk)")
PY
