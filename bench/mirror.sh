#!/usr/bin/env bash
# Mirror benchmark (`vari mirror`, release build), against a local upstream served by
# bench/serve_static.py on 127.0.0.1 (a `vari index build` site of bench/gen_mirror.py's
# wheels, SIZE MiB of random bytes each):
#   1. a torch-like release (examples/demo's six variants + plain wheel, and its CUDA runtime)
#      mirrored for two machine classes (a CPU node, an A100 node) against fetching every file
#      of the release (8 parallel curl transfers): files, bytes and time;
#   2. download throughput on eight plain SIZE MiB wheels: `vari mirror` against
#      `pip download --no-deps` and uv fetching the same files (`uv pip install --no-deps
#      --target`, a fresh cache each run: uv has no download-only command, so its figure
#      includes unpacking stored, uncompressed wheels), in interleaved runs (one of each per
#      round, so a busy moment of the machine hits all of them alike);
#   3. an incremental re-run after one new release is added to the lock (a small wheel).
# Each figure is the median of RUNS runs (wall and CPU time, user+sys, of the whole process).
# With VARI_BASE (an older vari binary), sections 1 and 2 also time it in the same interleaved
# runs, to show what a change to the mirror gained.
#
#   bench/mirror.sh [SIZE_MIB] [RUNS]     (defaults 32 and 5; needs cargo, python3, curl, pip, uv)
#   VARI=target/release/vari VARI_BASE=/tmp/vari-old bench/mirror.sh 16 9
set -euo pipefail
source "$(dirname "$0")/lib.sh"

size=${1:-32}
runs=${2:-5}
test_venv="${VARI_TEST_VENV:-$root/.venv}"
pip=("$test_venv/bin/python" -m pip)
uv="$test_venv/bin/uv"
build_vari

data=$(mktemp -d)
server=
cleanup() {
  [ -n "$server" ] && kill "$server" 2>/dev/null
  rm -rf "$data"
}
trap cleanup EXIT

python3 "$here/gen_mirror.py" wheels "$data/up" "$size"
"$vari" index build "$data/up" -o "$data/site" >/dev/null
port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
python3 "$here/serve_static.py" "$data/site" "$port" &
server=$!
url="http://127.0.0.1:$port"
for _ in $(seq 50); do curl -fs "$url/simple/" >/dev/null && break; sleep 0.1; done
python3 "$here/gen_mirror.py" lock "$data/up" "$url" "$data/torch.lock" vari-demo vari-demo-cuda-runtime
python3 "$here/gen_mirror.py" lock "$data/up" "$url" "$data/torch-new.lock" vari-demo vari-demo-cuda-runtime newlike
python3 "$here/gen_mirror.py" lock "$data/up" "$url" "$data/blobs.lock" blob0 blob1 blob2 blob3 blob4 blob5 blob6 blob7
mkdir -p "$data/profiles"
printf '[platform]\nsystem = "Linux"\nmachine = "x86_64"\nlibc = "glibc 2.36"\n[x86_64]\nlevel = 3\n' >"$data/profiles/cpu.toml"
printf '[platform]\nsystem = "Linux"\nmachine = "x86_64"\nlibc = "glibc 2.36"\n[nvidia]\ncuda_version = "12.8"\ncompute_capability = "8.0"\n[x86_64]\nlevel = 3\n' >"$data/profiles/a100.toml"
targets=(--target "$data/profiles/cpu.toml" --target "$data/profiles/a100.toml")

# measure NAME PREPARE COMMAND...: runs PREPARE (untimed) then COMMAND, RUNS times; prints the
# median wall and CPU seconds.
measure() {
  local name=$1 prepare=$2
  shift 2
  jobs=()
  job "$name" "$prepare" "$@"
  interleave
}

# job NAME PREPARE COMMAND...: adds a job to the next `interleave`.
jobs=()
job() {
  jobs+=("$(python3 -c 'import json, sys; print(json.dumps(sys.argv[1:]))' "$@")")
}

# interleave: runs the jobs added with `job` round-robin, RUNS rounds (each job's PREPARE
# untimed, then its COMMAND); prints each job's median wall and CPU seconds.
interleave() {
  python3 - "$runs" "${jobs[@]}" <<'PY'
import json, resource, statistics, subprocess, sys, time
runs, jobs = int(sys.argv[1]), [json.loads(j) for j in sys.argv[2:]]
walls = {j[0]: [] for j in jobs}
cpus = {j[0]: [] for j in jobs}
for _ in range(runs):
    for name, prepare, *command in jobs:
        subprocess.run(prepare, shell=True, check=True)
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        start = time.perf_counter()
        subprocess.run(command, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        walls[name].append(time.perf_counter() - start)
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        cpus[name].append((after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime))
how = f"median of {runs}" + (", interleaved" if len(jobs) > 1 else "")
for name, *_ in jobs:
    print(f"{name}: wall {statistics.median(walls[name]):.3f} s, "
          f"cpu {statistics.median(cpus[name]):.3f} s ({how})", flush=True)
PY
  jobs=()
}

echo "== 1. torch-like release, 2 targets against every variant ($size MiB per wheel)"
"$vari" mirror --lock "$data/torch.lock" "${targets[@]}" -o "$data/m1"
echo "every variant: $(ls "$data"/up/vari_demo*.whl | wc -l) files, $(du -cb "$data"/up/vari_demo*.whl | tail -1 | cut -f1) bytes"
ls "$data"/up/vari_demo*.whl | xargs -n1 basename | sed "s|^|$url/files/|" >"$data/every.txt"
job "vari mirror, 2 targets (cold)" "rm -rf $data/m1" \
  "$vari" mirror --lock "$data/torch.lock" "${targets[@]}" -o "$data/m1"
if [ -n "$base" ]; then
  job "VARI_BASE mirror, 2 targets (cold)" "rm -rf $data/m1" \
    "$base" mirror --lock "$data/torch.lock" "${targets[@]}" -o "$data/m1"
fi
job "every variant, 8 parallel curl" "rm -rf $data/every && mkdir $data/every" \
  sh -c "cd $data/every && xargs -P 8 -n 1 curl -fsSO <$data/every.txt"
interleave

echo "== 2. throughput: 8 plain wheels of $size MiB"
blobs=(blob0 blob1 blob2 blob3 blob4 blob5 blob6 blob7)
job "vari mirror" "rm -rf $data/m2" \
  "$vari" mirror --lock "$data/blobs.lock" --target "$data/profiles/cpu.toml" -o "$data/m2"
if [ -n "$base" ]; then
  job "VARI_BASE mirror" "rm -rf $data/m2" \
    "$base" mirror --lock "$data/blobs.lock" --target "$data/profiles/cpu.toml" -o "$data/m2"
fi
job "pip download --no-deps" "rm -rf $data/pip" \
  "${pip[@]}" download --isolated --no-cache-dir --disable-pip-version-check --no-deps \
  -d "$data/pip" -i "$url/simple/" "${blobs[@]}"
job "uv pip install --no-deps --target (fresh cache)" "rm -rf $data/uv $data/uv-cache" \
  env UV_CACHE_DIR="$data/uv-cache" "$uv" pip install --no-config --no-deps --python "$test_venv/bin/python" \
  --target "$data/uv" -i "$url/simple/" "${blobs[@]}"
interleave

echo "== 3. incremental re-run after one new release"
"$vari" mirror --lock "$data/torch-new.lock" "${targets[@]}" -o "$data/m1"
measure "vari mirror, nothing changed" "true" \
  "$vari" mirror --lock "$data/torch-new.lock" "${targets[@]}" -o "$data/m1"
measure "vari mirror, one new release" \
  "$vari mirror --lock $data/torch.lock ${targets[*]} -o $data/m1 >/dev/null" \
  "$vari" mirror --lock "$data/torch-new.lock" "${targets[@]}" -o "$data/m1"
"$vari" mirror --lock "$data/torch-new.lock" "${targets[@]}" -o "$data/m1"
