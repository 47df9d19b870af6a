#!/usr/bin/env bash
# Selection from an index: `vari select` on a synthetic project page of 5,120 files (the size of
# PyTorch's) with the real PyTorch 2.10 variants.json per version, served from 127.0.0.1, whole
# process with a warm HTTP cache (median CPU time and median wall time); then, in one run,
# `vari download` of one 200 MB wheel from the same local index against `pip download --no-deps`
# and `uv pip install --no-deps --target` of the same file (wall time, fresh destination and no
# cache for each run).
#
#   bench/select.sh                  (needs cargo, python3; pip and uv from <repo>/.venv or
#                                     $VARI_TEST_VENV, made by scripts/test-env)
#   RUNS=5 BIG_MB=50 bench/select.sh (fewer runs, a smaller wheel)
#   VARI_BASE=/tmp/before/target/release/vari VARI=target/release/vari bench/select.sh
#       (`vari select` of an older binary against $VARI or this tree's release build instead of
#       the download comparison: same answer first, then interleaved runs, each binary with its
#       own warm cache; ratios after / before)
set -euo pipefail
source "$(dirname "$0")/lib.sh"

tools="${VARI_TEST_VENV:-$root/.venv}"
[ -x "$tools/bin/pip" ] && [ -x "$tools/bin/uv" ] || {
  echo "bench/select.sh: no pip and uv in $tools: run scripts/test-env" >&2
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

python3 "$here/gen_select_index.py" "$data/site" --big-mb "${BIG_MB:-200}"
port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
python3 -m http.server --bind 127.0.0.1 --directory "$data/site" "$port" >/dev/null 2>&1 &
server=$!
index="http://127.0.0.1:$port/simple/"
for _ in $(seq 50); do curl -sf "$index/bench/" >/dev/null 2>&1 && break; sleep 0.1; done

cat >"$data/gpu.toml" <<'TOML'
[nvidia]
cuda_version = "12.8"
compute_capability = "8.6"
TOML
export VARI_CACHE_DIR="$data/cache" VARI_NO_CONFIG=1
args="select bench --index-url $index --profile $data/gpu.toml --python-version 3.12 --python-platform x86_64-manylinux_2_28 --no-deps"
select="$vari $args"

echo
# The answer first (and the cache warmed): the newest version's CUDA 12.8 build.
$select
runs=${RUNS:-20}
if [ -n "$base" ]; then
  # Each binary with a cache of its own (the two may lay their caches out differently), both
  # through env so that they pay the same for it.
  select="env VARI_CACHE_DIR=$data/cache $vari $args"
  before="env VARI_CACHE_DIR=$data/base-cache $base $args"
  [ "$($before)" = "$($select)" ] || { echo "bench/select.sh: the two binaries select differently" >&2; exit 1; }
  echo
  echo "vari select before / after, 5,120-file page + variants.json, warm cache (median of $runs):"
  # CPU time primed (each run right after a run of itself; see compare.py) and plain, then wall.
  for how in "--clock cpu --primed" "--clock cpu" "--clock wall"; do
    python3 "$here/compare.py" --runs "$runs" --warmup 2 $how \
      "vari select (before)=$before" "vari select (after)=$select"
  done
  exit 0
fi
echo
echo "vari select, 5,120-file page + variants.json, warm cache (median of $runs):"
python3 "$here/compare.py" --runs "$runs" --warmup 2 "vari select (cpu)=$select"
python3 "$here/compare.py" --runs "$runs" --warmup 2 --clock wall "vari select (wall)=$select"

dest="$data/dest"
download_runs=${DOWNLOAD_RUNS:-5}
echo
echo "download of one ${BIG_MB:-200} MB wheel from the local index (wall, median of $download_runs):"
python3 "$here/compare.py" --runs "$download_runs" --warmup 1 --clock wall \
  "vari download=sh -c 'rm -rf $dest; VARI_CACHE_DIR=$data/dl-cache $vari download big -d $dest --index-url $index --python-version 3.12 --python-platform x86_64-manylinux_2_28 --profile $data/gpu.toml >/dev/null'" \
  "pip download --no-deps=sh -c 'rm -rf $dest; $tools/bin/pip download --quiet --no-deps --no-cache-dir --disable-pip-version-check --index-url $index -d $dest big'" \
  "uv pip install --no-deps --target=sh -c 'rm -rf $dest; $tools/bin/uv pip install --quiet --no-deps --no-cache --index-url $index --target $dest --python-version 3.12 big'"
