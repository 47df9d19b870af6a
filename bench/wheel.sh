#!/usr/bin/env bash
# Wheel benchmarks, the tools side by side in one run: medians of RUNS runs, wall and CPU time
# (user + system of the process and its children).
#
#  1. `vari wheel inspect` on a wheel of 30,000 small files against `unzip -l` (both read the
#     central directory; vari also reads RECORD and checks the format of every row).
#  2. `vari wheel make-variant` against `cp` of the same file (the copy floor) and
#     `variantlib make-variant` 0.2.2 (the reference tool, in bench/.venv with `build`, which
#     its CLI imports), on two wheels of shared libraries:
#     - ~1 GB of stored members of random bytes: nothing to inflate, the best case for
#       variantlib, which decompresses and recompresses every member (here: only a CRC);
#     - ~200 MB of deflated members, as build backends write them: variantlib inflates and
#       deflates every member again; vari copies them as they are.
#
# Fairness, since the machine is shared and noisy, and a 1 GB write leaves dirty pages behind:
# the tools take turns within each run (cp, vari, variantlib, cp, …) rather than running five
# times in a row; before every timed command the previous outputs are deleted (so no tool pays
# for removing or truncating a 1 GB file), `sync` writes back what the previous command left,
# and a pause follows. Every tool reads the same input from the page cache and writes to the
# same directory. Each output is checked: `vari wheel validate` on vari's and variantlib's
# wheels (RECORD hashes of every member, label ↔ variant.json), `cmp` on cp's copy.
# `cp` and vari both copy with `copy_file_range` (the kernel copies page cache to page cache;
# check with `strace -c`), so the stored-member comparison is like for like: vari's extra is
# reading the central directory and writing the new members and directory.
#
#   bench/wheel.sh [FILES] [MB] [RUNS] [DEFLATED_MB]
#   (defaults 30000, 1000, 5 and 200; needs cargo, python3, unzip). Inspect, a 50 ms command,
#   runs 4 × RUNS times with a shorter pause ($INSPECT_PAUSE, 0.5 s). Each median is printed
#   with the range of the runs, to show how noisy the machine was.
set -euo pipefail
source "$(dirname "$0")/lib.sh"

files=${1:-30000}
mb=${2:-1000}
runs=${3:-5}
deflated_mb=${4:-200}
pause=${PAUSE:-2}
inspect_pause=${INSPECT_PAUSE:-0.5}
build_vari
ensure_venv variantlib==0.2.2 build==1.6.1

data=$(mktemp -d)
trap 'rm -rf "$data"' EXIT
small="$data/bench_small-1.0-py3-none-any.whl"
large="$data/bench_large-1.0-py3-none-any.whl"
deflated="$data/bench_deflated-1.0-py3-none-any.whl"
python3 "$here/gen_wheel_bench.py" small "$small" "$files"
python3 "$here/gen_wheel_bench.py" large "$large" "$mb"
python3 "$here/gen_wheel_bench.py" deflated "$deflated" "$deflated_mb"
cat >"$data/pyproject.toml" <<'TOML'
[variant.default-priorities]
namespace = ["x86_64"]

[variant.providers.x86_64]
requires = ["provider-variant-x86-64"]
TOML

# compare (NAME OUTPUT COMMAND... \;)...: runs each NAME's COMMAND (stdout discarded) RUNS
# times, taking turns; before each run deletes its OUTPUT (a file, or a directory's files; `-`
# for none), syncs and pauses. Prints each median wall and CPU time and records them in $data/NAME.
compare() {
  python3 - "$runs" "$data" "$pause" "$@" <<'PY'
import os, resource, statistics, subprocess, sys, time
runs, data, pause, rest = int(sys.argv[1]), sys.argv[2], float(sys.argv[3]), sys.argv[4:]
tools, current = [], None
for arg in rest:
    if arg == ";":
        current = None
    elif current is None:
        current = (arg, [])
        tools.append(current)
    else:
        current[1].append(arg)
walls = {name: [] for name, _ in tools}
cpus = {name: [] for name, _ in tools}
for _ in range(runs):
    for name, (output, *command) in tools:
        if output == "-":
            pass
        elif os.path.isdir(output):
            for f in os.listdir(output):
                os.remove(os.path.join(output, f))
        elif os.path.isfile(output):
            os.remove(output)
        os.sync()
        time.sleep(pause)
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        start = time.perf_counter()
        subprocess.run(command, check=True, stdout=subprocess.DEVNULL)
        walls[name].append(time.perf_counter() - start)
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        cpus[name].append((after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime))
for name, _ in tools:
    wall, cpu = statistics.median(walls[name]), statistics.median(cpus[name])
    spread = f"{min(walls[name]):.3f}–{max(walls[name]):.3f} / {min(cpus[name]):.3f}–{max(cpus[name]):.3f}"
    print(f"{name:26} wall {wall:8.3f} s   cpu {cpu:8.3f} s   (median of {runs}; range {spread})", flush=True)
    open(os.path.join(data, name), "w").write(f"{wall} {cpu}\n")
PY
}

ratio() { # ratio A B FIELD: A's median over B's (FIELD 1 = wall, 2 = cpu)
  python3 -c "import sys; a=float(open(sys.argv[1]).read().split()[int(sys.argv[3])-1]); b=float(open(sys.argv[2]).read().split()[int(sys.argv[3])-1]); print(f'{a/b:.2f}')" "$data/$1" "$data/$2" "$3"
}

percent() { # percent A B FIELD: B's throughput as a percentage of A's (A's median over B's)
  python3 -c "import sys; a=float(open(sys.argv[1]).read().split()[int(sys.argv[3])-1]); b=float(open(sys.argv[2]).read().split()[int(sys.argv[3])-1]); print(f'{a/b:.0%}')" "$data/$1" "$data/$2" "$3"
}

echo "== inspect: $files small files ($(du -h "$small" | cut -f1))"
cat "$small" >/dev/null # into the page cache
runs=$((4 * ${3:-5})) pause=$inspect_pause compare unzip-l - unzip -l "$small" \; vari-inspect - "$vari" wheel inspect "$small"
echo "vari inspect / unzip -l: wall $(ratio vari-inspect unzip-l 1)x, cpu $(ratio vari-inspect unzip-l 2)x (≤ 1 is the aim)"

# make_variant KIND WHEEL: the make-variant comparison on WHEEL.
make_variant() {
  local kind=$1 wheel=$2
  echo "== make-variant: $(du -h "$wheel" | cut -f1) wheel, $kind members"
  cat "$wheel" >/dev/null
  mkdir -p "$data/out-vari-dir" "$data/out-variantlib-dir"
  compare \
    "cp-$kind" "$data/out-copy.whl" cp "$wheel" "$data/out-copy.whl" \; \
    "vari-$kind" "$data/out-vari-dir" "$vari" wheel make-variant "$wheel" -p x86_64::level::v3 -o "$data/out-vari-dir" \; \
    "variantlib-$kind" "$data/out-variantlib-dir" "$venv/bin/variantlib" make-variant -f "$wheel" -o "$data/out-variantlib-dir" \
    -p "x86_64 :: level :: v3" --skip-plugin-validation --pyproject-toml "$data/pyproject.toml"
  # Each tool's output of the last run is still there: check them.
  cmp "$wheel" "$data/out-copy.whl"
  "$vari" wheel validate "$data"/out-vari-dir/*.whl >/dev/null
  "$vari" wheel validate "$data"/out-variantlib-dir/*.whl >/dev/null
  echo "outputs valid: vari $(du -h "$data"/out-vari-dir/*.whl | cut -f1), variantlib $(du -h "$data"/out-variantlib-dir/*.whl | cut -f1)"
  echo "vari throughput / cp throughput: wall $(percent "cp-$kind" "vari-$kind" 1), cpu $(percent "cp-$kind" "vari-$kind" 2) (≥ 80 % is the aim)"
  echo "variantlib / vari: wall $(ratio "variantlib-$kind" "vari-$kind" 1)x, cpu $(ratio "variantlib-$kind" "vari-$kind" 2)x (≥ 10x is the aim)"
}

make_variant stored "$large"
make_variant deflated "$deflated"
