#!/usr/bin/env bash
# Index benchmark: `vari index build` against `variantlib generate-index-json` (0.2.2) on 10,000
# small generated wheels (100 projects x 10 versions x 9 variant wheels + 1 plain), then an
# incremental rebuild after adding one wheel.
#
# Not the same work: variantlib writes only the `*-variants.json` files; vari also hashes every
# file, writes the PEP 658 metadata files and the PEP 503/691 pages, and links the files into
# the site. Each figure is the median of RUNS runs (wall time and CPU time, user+sys, of the
# whole process); a pause separates the tools since the machine is shared.
#
#   bench/index.sh [COUNT] [RUNS]     (defaults 10000 and 3; needs cargo and python3)
set -euo pipefail
source "$(dirname "$0")/lib.sh"

count=${1:-10000}
runs=${2:-3}
test_venv="${VARI_TEST_VENV:-$root/.venv}"
if [ -x "$test_venv/bin/variantlib" ]; then
  variantlib="$test_venv/bin/variantlib"
else
  ensure_venv 'variantlib==0.2.2'
  variantlib="$venv/bin/variantlib"
fi
build_vari

data=$(mktemp -d)
trap 'rm -rf "$data"' EXIT
python3 "$here/gen_wheels.py" "$data/wheels" "$count"
echo "generated $count wheels ($(du -sh "$data/wheels" | cut -f1))"

# measure NAME PREPARE COMMAND...: runs PREPARE (untimed) then COMMAND, RUNS times; prints the
# median wall and CPU seconds.
measure() {
  local name=$1 prepare=$2
  shift 2
  python3 - "$name" "$runs" "$prepare" "$@" <<'PY'
import os, resource, statistics, subprocess, sys, time
name, runs, prepare, command = sys.argv[1], int(sys.argv[2]), sys.argv[3], sys.argv[4:]
walls, cpus = [], []
for _ in range(runs):
    subprocess.run(prepare, shell=True, check=True)
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    subprocess.run(command, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    walls.append(wall)
    cpus.append((after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime))
print(f"{name}: wall {statistics.median(walls):.3f} s, cpu {statistics.median(cpus):.3f} s "
      f"(median of {runs})", flush=True)
with open(os.environ["BENCH_OUT"], "a") as out:
    out.write(f"{name} {statistics.median(walls)} {statistics.median(cpus)}\n")
PY
}
export BENCH_OUT="$data/results"
: >"$BENCH_OUT"

# Same answer first: every release's variants agree between the two tools.
"$vari" index build "$data/wheels" -o "$data/check" --json >/dev/null 2>&1
"$variantlib" generate-index-json -d "$data/wheels" >/dev/null 2>&1
python3 - "$data/check/files" "$data/wheels" <<'PY'
import json, pathlib, sys
ours, theirs = pathlib.Path(sys.argv[1]), pathlib.Path(sys.argv[2])
files = sorted(theirs.glob("*-variants.json"))
for f in files:
    a = json.loads((ours / f.name).read_text())
    b = json.loads(f.read_text())
    assert a["variants"] == b["variants"], f.name
    assert a["default-priorities"] == b["default-priorities"], f.name
print(f"both tools agree on the variants of {len(files)} releases")
PY
rm -f "$data"/wheels/*-variants.json

measure "vari index build (cold, $count wheels)" "rm -rf $data/site" \
  "$vari" index build "$data/wheels" -o "$data/site"
sleep 5
measure "variantlib generate-index-json ($count wheels)" "rm -f $data/wheels/*-variants.json" \
  "$variantlib" generate-index-json -d "$data/wheels"
rm -f "$data"/wheels/*-variants.json
sleep 5
"$vari" index build "$data/wheels" -o "$data/site" >/dev/null
measure "vari index build (one wheel added)" \
  "python3 $here/gen_wheels.py $data/wheels --one extra\$(date +%s%N | tail -c 7)" \
  "$vari" index build "$data/wheels" -o "$data/site"

python3 - "$BENCH_OUT" "$count" <<'PY'
import sys
rows = [line.rsplit(" ", 2) for line in open(sys.argv[1])]
count = int(sys.argv[2])
(vari_name, vari_wall, vari_cpu), (vl_name, vl_wall, vl_cpu), (inc_name, inc_wall, _) = [
    (n, float(w), float(c)) for n, w, c in rows]
print(f"vari: {count / vari_wall:,.0f} wheels/s (wall), variantlib: {count / vl_wall:,.0f} wheels/s; "
      f"variantlib takes {vl_wall / vari_wall:.1f}x the wall time and {vl_cpu / vari_cpu:.1f}x the CPU time; "
      f"incremental rebuild {inc_wall * 1000:.0f} ms")
PY
