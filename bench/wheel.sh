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
#     - ~1 GB of deflated members, as build backends write them: variantlib inflates and
#       deflates every member again; vari copies them as they are.
#
# Fairness, since the machine is shared and noisy, and a 1 GB write leaves dirty pages behind:
# the tools take turns within each run (cp, vari, variantlib, cp, …) rather than running five
# times in a row. Before every timed command `sync` writes back what the previous command left,
# a pause follows, the input is read once more (this VM reclaims page cache it has not seen
# used for a while: `kdamond` runs), and only then is the command's previous output deleted (so
# no tool pays for removing or truncating a 1 GB file, and the memory it writes into is memory
# just freed: see `compare`). Every tool reads the same input from the page cache and writes to
# the same directory. Each output is checked: `vari wheel validate` on vari's and variantlib's
# wheels (RECORD hashes of every member, label ↔ variant.json), `cmp` on cp's copy.
# `cp` and vari both copy with `copy_file_range` (the kernel copies page cache to page cache;
# check with `strace -c`), so the stored-member comparison is like for like: vari's extra is
# reading the central directory and writing the new members and directory.
#
#   bench/wheel.sh [FILES] [MB] [RUNS] [DEFLATED_MB]
#   (defaults 30000, 1000, 5 and 1000; needs cargo, python3, unzip). Inspect, a 50 ms command,
#   runs 4 × RUNS times with a shorter pause ($INSPECT_PAUSE, 0.5 s). Each median is printed
#   with the range of the runs, to show how noisy the machine was.
set -euo pipefail
source "$(dirname "$0")/lib.sh"

files=${1:-30000}
mb=${2:-1000}
runs=${3:-5}
deflated_mb=${4:-1000}
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
# times, taking turns; before each run syncs, pauses, reads the file $WARM (if set) into the
# page cache and deletes the command's OUTPUT (a file, or a directory's files; `-` for none).
# Prints each median wall and CPU time and records them in $data/NAME.
compare() {
  python3 - "$runs" "$data" "$pause" "${WARM:-}" "$@" <<'PY'
import os, resource, statistics, subprocess, sys, time
runs, data, pause, warm, rest = int(sys.argv[1]), sys.argv[2], float(sys.argv[3]), sys.argv[4], sys.argv[5:]
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
        os.sync()
        time.sleep(pause)
        if warm:
            with open(warm, "rb") as f:
                while f.read(1 << 20):
                    pass
        # Deleted last: this VM hands memory freed for more than about half a second back to
        # the host, and the next program to need it pays to fault it in again (1.3 s a GB,
        # measured), so the memory of the output deleted here is what the command writes into.
        if output == "-":
            pass
        elif os.path.isdir(output):
            for f in os.listdir(output):
                os.remove(os.path.join(output, f))
        elif os.path.isfile(output):
            os.remove(output)
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
    best_wall, best_cpu = min(walls[name]), min(cpus[name])
    open(os.path.join(data, name), "w").write(f"{wall} {cpu} {best_wall} {best_cpu}\n")
PY
}

ratio() { # ratio A B FIELD: A's time over B's (FIELD 1 = median wall, 2 = median cpu, 3 = fastest wall, 4 = fastest cpu)
  python3 -c "import sys; a=float(open(sys.argv[1]).read().split()[int(sys.argv[3])-1]); b=float(open(sys.argv[2]).read().split()[int(sys.argv[3])-1]); print(f'{a/b:.2f}')" "$data/$1" "$data/$2" "$3"
}

percent() { # percent A B FIELD: B's throughput as a percentage of A's (A's time over B's; FIELD as for ratio)
  python3 -c "import sys; a=float(open(sys.argv[1]).read().split()[int(sys.argv[3])-1]); b=float(open(sys.argv[2]).read().split()[int(sys.argv[3])-1]); print(f'{a/b:.0%}')" "$data/$1" "$data/$2" "$3"
}

echo "== inspect: $files small files ($(du -h "$small" | cut -f1))"
cat "$small" >/dev/null # into the page cache
WARM=$small runs=$((4 * ${3:-5})) pause=$inspect_pause compare unzip-l - unzip -l "$small" \; vari-inspect - "$vari" wheel inspect "$small"
echo "vari inspect / unzip -l: wall $(ratio vari-inspect unzip-l 1)x, cpu $(ratio vari-inspect unzip-l 2)x (≤ 1 is the aim)"

# make_variant KIND WHEEL: the make-variant comparison on WHEEL.
make_variant() {
  local kind=$1 wheel=$2
  echo "== make-variant: $(du -h "$wheel" | cut -f1) wheel, $kind members"
  cat "$wheel" >/dev/null
  mkdir -p "$data/out-vari-dir" "$data/out-variantlib-dir"
  WARM=$wheel compare \
    "cp-$kind" "$data/out-copy.whl" cp "$wheel" "$data/out-copy.whl" \; \
    "vari-$kind" "$data/out-vari-dir" "$vari" wheel make-variant "$wheel" -p x86_64::level::v3 -o "$data/out-vari-dir" \; \
    "variantlib-$kind" "$data/out-variantlib-dir" "$venv/bin/variantlib" make-variant -f "$wheel" -o "$data/out-variantlib-dir" \
    -p "x86_64 :: level :: v3" --skip-plugin-validation --pyproject-toml "$data/pyproject.toml"
  # Each tool's output of the last run is still there: check them.
  cmp "$wheel" "$data/out-copy.whl"
  "$vari" wheel validate "$data"/out-vari-dir/*.whl >/dev/null
  "$vari" wheel validate "$data"/out-variantlib-dir/*.whl >/dev/null
  echo "outputs valid: vari $(du -h "$data"/out-vari-dir/*.whl | cut -f1), variantlib $(du -h "$data"/out-variantlib-dir/*.whl | cut -f1)"
  # Medians, and the fastest run of each: on this VM a command that needs memory freed a while
  # before (here: the page cache it writes into) can pay up to 1.3 s a GB for the host to give
  # it back, at random, whichever tool it is; the fastest runs are the ones that did not.
  echo "vari throughput / cp throughput: medians: wall $(percent "cp-$kind" "vari-$kind" 1), cpu $(percent "cp-$kind" "vari-$kind" 2); fastest runs: wall $(percent "cp-$kind" "vari-$kind" 3), cpu $(percent "cp-$kind" "vari-$kind" 4) (≥ 80 % is the aim)"
  echo "variantlib / vari: medians: wall $(ratio "variantlib-$kind" "vari-$kind" 1)x, cpu $(ratio "variantlib-$kind" "vari-$kind" 2)x; fastest runs: wall $(ratio "variantlib-$kind" "vari-$kind" 3)x, cpu $(ratio "variantlib-$kind" "vari-$kind" 4)x (≥ 10x is the aim)"
}

make_variant stored "$large"
make_variant deflated "$deflated"
