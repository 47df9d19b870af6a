#!/usr/bin/env bash
# The proxy's cost to installers, and its page latency under load.
#
# 1. A 50-package set (bench/gen_proxy_index.py: 45 plain projects, 5 with a null and a CUDA 12.8
#    variant whose dependency sits behind a variant marker) in one static index built by
#    `vari index build`, served from 127.0.0.1 by bench/serve_static.py (Python's http.server
#    with a backlog big enough for uv's parallel connections).
# 2. `pip install --target` and `uv pip install --target` of all 50, straight from that index and
#    through `vari proxy` in front of it (target: a CUDA 12.8 facts profile, so the proxy picks and
#    rewrites the CUDA variants). Fresh destination and no installer cache for every run; the
#    proxy stays up, so its page cache is warm after the warm-up run (as for a user's second
#    install). Wall time, runs interleaved, median of RUNS; ratios against the direct install.
# 3. Page latency of the proxy's cached pages under load: bench/loadgen.rs (std-only, compiled
#    with rustc) keeps CONNECTIONS keep-alive connections asking for the 50 project pages in
#    PEP 691 JSON, then in HTML, for DURATION seconds each.
#
#   bench/proxy.sh                          (needs cargo, rustc, python3; pip and uv from
#                                            <repo>/.venv or $VARI_TEST_VENV: scripts/test-env)
#   RUNS=3 CONNECTIONS=32 DURATION=5 bench/proxy.sh
set -euo pipefail
source "$(dirname "$0")/lib.sh"

tools="${VARI_TEST_VENV:-$root/.venv}"
[ -x "$tools/bin/pip" ] && [ -x "$tools/bin/uv" ] || {
  echo "bench/proxy.sh: no pip and uv in $tools: run scripts/test-env" >&2
  exit 1
}
build_vari

data=$(mktemp -d)
server=
proxy=
cleanup() {
  [ -n "$proxy" ] && kill "$proxy" 2>/dev/null
  [ -n "$server" ] && kill "$server" 2>/dev/null
  rm -rf "$data"
}
trap cleanup EXIT

free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'; }
wait_for() { for _ in $(seq 100); do curl -sf "$1" >/dev/null 2>&1 && return 0; sleep 0.1; done; echo "bench/proxy.sh: $1 never answered" >&2; exit 1; }

export VARI_CACHE_DIR="$data/cache" VARI_NO_CONFIG=1
python3 "$here/gen_proxy_index.py" "$data" --kib "${KIB:-64}"
cat >"$data/pyproject.toml" <<'TOML'
[variant.default-priorities]
namespace = ["nvidia"]

[variant.providers.nvidia]
requires = ["nvidia-variant-provider"]
TOML
for source in "$data"/variant-sources/*.whl; do
  $vari wheel make-variant "$source" --null --metadata "$data/pyproject.toml" \
    -o "$data/wheels" >/dev/null
  $vari wheel make-variant "$source" --label cu128 --metadata "$data/pyproject.toml" \
    -p 'nvidia :: cuda_version_lower_bound :: 12.8' -o "$data/wheels" >/dev/null
done
$vari index build "$data/wheels" -o "$data/site" >/dev/null

port=$(free_port)
python3 "$here/serve_static.py" "$data/site" "$port" >/dev/null 2>&1 &
server=$!
index="http://127.0.0.1:$port/simple/"
wait_for "$index"

cat >"$data/gpu.toml" <<'TOML'
[nvidia]
cuda_version = "12.8"
compute_capability = "8.6"
TOML
proxy_port=$(free_port)
$vari proxy --index-url "$index" --bind "127.0.0.1:$proxy_port" --profile "$data/gpu.toml" \
  2>"$data/proxy.log" &
proxy=$!
via="http://127.0.0.1:$proxy_port/simple/"
wait_for "$via"

packages=$(printf 'pkg%02d ' $(seq 0 44); printf 'gpu%02d ' $(seq 0 4))
dest="$data/dest"
pip="$tools/bin/python -m pip install --quiet --disable-pip-version-check --no-cache-dir --no-deps --target $dest"
uv="$tools/bin/uv pip install --quiet --no-cache --no-deps --target $dest"
runs=${RUNS:-5}

echo
echo "install of 50 packages, direct vs through vari proxy (wall, median of $runs):"
python3 "$here/compare.py" --runs "$runs" --warmup 1 --clock wall \
  "pip direct=sh -c 'rm -rf $dest; $pip --index-url $index $packages'" \
  "pip via vari proxy=sh -c 'rm -rf $dest; $pip --index-url $via $packages'"
python3 "$here/compare.py" --runs "$runs" --warmup 1 --clock wall \
  "uv direct=sh -c 'rm -rf $dest; $uv --index-url $index $packages'" \
  "uv via vari proxy=sh -c 'rm -rf $dest; $uv --index-url $via $packages'"

# The answer: the CUDA variants went in, renamed, with their marker-gated dependency kept.
rm -rf "$dest"
$pip --index-url "$via" gpu00 pkg44
python3 - "$dest" <<'PY'
import json, pathlib, sys
dest = pathlib.Path(sys.argv[1])
info = next(dest.glob("gpu00-*.dist-info"))
label = json.loads((info / "variant.json").read_text())["variants"]
print("gpu00 installed through the proxy with variant(s):", ", ".join(label))
print("its Requires-Dist:", [l for l in (info / "METADATA").read_text().splitlines() if l.startswith("Requires-Dist")])
PY

rustc -O --edition 2021 "$here/loadgen.rs" -o "$data/loadgen"
paths=$(for p in $packages; do printf '/simple/%s/ ' "$p"; done)
echo
echo "page latency of vari proxy, cached pages, ${CONNECTIONS:-16} connections, ${DURATION:-5} s each:"
printf 'JSON: '
"$data/loadgen" "127.0.0.1:$proxy_port" "${CONNECTIONS:-16}" "${DURATION:-5}" \
  'application/vnd.pypi.simple.v1+json' $paths
printf 'HTML: '
"$data/loadgen" "127.0.0.1:$proxy_port" "${CONNECTIONS:-16}" "${DURATION:-5}" 'text/html' $paths
