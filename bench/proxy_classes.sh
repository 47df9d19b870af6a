#!/usr/bin/env bash
# One proxy for three machine classes against three single-target proxies: the proxy's own CPU
# time and memory for the same work.
#
# 1. The 50-package set of bench/proxy.sh (bench/gen_proxy_index.py: 45 plain projects, 5 with
#    variants, here a null, a CUDA 12.6 and a CUDA 12.8 variant each, whose dependency sits
#    behind a variant marker, so the proxy rewrites the wheel it serves) in one static index
#    built by `vari index build`, served from 127.0.0.1 by bench/serve_static.py.
# 2. Three classes: cpu (facts without a GPU: the null variants), gpu-v100 (CUDA 12.6, compute
#    capability 7.0: cu126) and gpu-a100 (CUDA 12.8, 8.0: cu128).
# 3. Each run starts from an empty cache (VARI_CACHE_DIR) and either
#      one:   `vari proxy --target cpu=… --target gpu-v100=… --target gpu-a100=…`, or
#      three: three `vari proxy --profile …`, one per class, on three ports (one cache directory
#             between them, as on one host),
#    then, for each class in turn, asks for the 50 project pages (PEP 691 JSON) and downloads
#    every file listed under the proxy (a rewritten copy is built and served by the proxy; the
#    others are redirects to the upstream, not followed: the upstream's work is not the
#    proxy's), then stops the proxies. Measured for the proxy processes only: CPU time (user +
#    system, /proc/PID/stat, read just before SIGTERM; summed over the three) and peak RSS
#    (VmHWM; summed over the three). Runs interleaved (one, three, one, …), median of RUNS.
#
#   bench/proxy_classes.sh                  (needs cargo, python3, curl)
#   RUNS=7 VARI=target/release/vari bench/proxy_classes.sh
set -euo pipefail
source "$(dirname "$0")/lib.sh"
build_vari

data=$(mktemp -d)
server=
pids=()
cleanup() {
  for pid in "${pids[@]}"; do kill "$pid" 2>/dev/null || true; done
  [ -n "$server" ] && kill "$server" 2>/dev/null
  rm -rf "$data"
}
trap cleanup EXIT

free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'; }
wait_for() { for _ in $(seq 200); do curl -sf "$1" >/dev/null 2>&1 && return 0; sleep 0.05; done; echo "bench/proxy_classes.sh: $1 never answered" >&2; exit 1; }

export VARI_NO_CONFIG=1
python3 "$here/gen_proxy_index.py" "$data" --kib "${KIB:-64}" >/dev/null
cat >"$data/pyproject.toml" <<'TOML'
[variant.default-priorities]
namespace = ["nvidia"]

[variant.providers.nvidia]
requires = ["nvidia-variant-provider"]
TOML
for source in "$data"/variant-sources/*.whl; do
  $vari wheel make-variant "$source" --null --metadata "$data/pyproject.toml" \
    -o "$data/wheels" >/dev/null
  for cuda in 12.6 12.8; do
    $vari wheel make-variant "$source" --label "cu${cuda/./}" --metadata "$data/pyproject.toml" \
      -p "nvidia :: cuda_version_lower_bound :: $cuda" -o "$data/wheels" >/dev/null
  done
done
$vari index build "$data/wheels" -o "$data/site" >/dev/null

port=$(free_port)
python3 "$here/serve_static.py" "$data/site" "$port" >/dev/null 2>&1 &
server=$!
index="http://127.0.0.1:$port/simple/"
wait_for "$index"

platform=$'[platform]\nsystem = "Linux"\nmachine = "x86_64"\n'
printf '%s' "$platform" >"$data/cpu.toml"
printf '%s[nvidia]\ncuda_version = "12.6"\ncompute_capability = "7.0"\n' "$platform" >"$data/gpu-v100.toml"
printf '%s[nvidia]\ncuda_version = "12.8"\ncompute_capability = "8.0"\n' "$platform" >"$data/gpu-a100.toml"
classes=(cpu gpu-v100 gpu-a100)
packages=$(printf 'pkg%02d ' $(seq 0 44); printf 'gpu%02d ' $(seq 0 4))

# The client: every page of a class, then every file it lists (redirects not followed).
# Prints the labels the five projects with variants were shown as (a check that each class got
# its own choice), from the journal in the proxy's log, not here.
cat >"$data/load.py" <<'PY'
import json, sys, urllib.request
from concurrent.futures import ThreadPoolExecutor

class NoRedirect(urllib.request.HTTPRedirectHandler):
    def redirect_request(self, *args):
        return None

opener = urllib.request.build_opener(NoRedirect)

def fetch(url, accept="*/*"):
    request = urllib.request.Request(url, headers={"Accept": accept})
    try:
        with opener.open(request) as answer:
            return answer.read()
    except urllib.error.HTTPError as e:
        if e.code in (301, 302):
            return b""
        raise

def project(base, name):
    page = json.loads(fetch(f"{base}{name}/", "application/vnd.pypi.simple.v1+json"))
    for file in page["files"]:
        fetch(urllib.parse.urljoin(f"{base}{name}/", file["url"]))

base, names = sys.argv[1], sys.argv[2:]
with ThreadPoolExecutor(8) as pool:
    list(pool.map(lambda name: project(base, name), names))
PY

# cpu_ticks PID / peak_kib PID: the process's CPU time in clock ticks, its peak RSS in KiB.
cpu_ticks() { awk '{print $14 + $15}' "/proc/$1/stat"; }
peak_kib() { awk '/^VmHWM:/ {print $2}' "/proc/$1/status"; }
ticks=$(getconf CLK_TCK)

# run MODE: starts the proxies of MODE (one or three) on an empty cache, runs the load for each
# class, prints "CPU_SECONDS PEAK_MIB".
run() {
  local mode=$1 cache="$data/cache-$RANDOM$RANDOM" urls=() pid p url
  pids=()
  export VARI_CACHE_DIR="$cache"
  if [ "$mode" = one ]; then
    p=$(free_port)
    local targets=()
    for class in "${classes[@]}"; do targets+=(--target "$class=$data/$class.toml"); done
    $vari proxy --index-url "$index" --bind "127.0.0.1:$p" "${targets[@]}" >/dev/null 2>"$data/one.log" &
    pids+=($!)
    wait_for "http://127.0.0.1:$p/"
    for class in "${classes[@]}"; do urls+=("http://127.0.0.1:$p/t/$class/simple/"); done
  else
    for class in "${classes[@]}"; do
      p=$(free_port)
      $vari proxy --index-url "$index" --bind "127.0.0.1:$p" --profile "$data/$class.toml" \
        >/dev/null 2>"$data/three-$class.log" &
      pids+=($!)
      wait_for "http://127.0.0.1:$p/simple/"
      urls+=("http://127.0.0.1:$p/simple/")
    done
  fi
  for url in "${urls[@]}"; do python3 "$data/load.py" "$url" $packages; done
  local cpu=0 peak=0
  for pid in "${pids[@]}"; do
    cpu=$((cpu + $(cpu_ticks "$pid")))
    peak=$((peak + $(peak_kib "$pid")))
    kill "$pid"
    wait "$pid" 2>/dev/null || true
  done
  pids=()
  rm -rf "$cache"
  awk -v c="$cpu" -v t="$ticks" -v k="$peak" 'BEGIN {printf "%.2f %.1f\n", c / t, k / 1024}'
}

runs=${RUNS:-5}
run one >/dev/null  # warm-up: the page cache of the disk, the upstream's
run three >/dev/null
one=() three=()
for _ in $(seq "$runs"); do
  one+=("$(run one)")
  three+=("$(run three)")
done

# The check: each class was shown its own variant by the one proxy.
for label in null cu126 cu128; do
  grep -q "serving label $label as gpu00-" "$data/one.log" ||
    { echo "bench/proxy_classes.sh: the one proxy never served label $label" >&2; exit 1; }
done

median() { sort -n | awk '{v[NR] = $1} END {print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2}'; }
column_median() { printf '%s\n' "${@:2}" | awk -v c="$1" '{print $c}' | median; }
echo
echo "3 classes x (50 pages + their files), cold cache, median of $runs (interleaved):"
printf '%-34s %12s %14s\n' "" "CPU time (s)" "peak RSS (MiB)"
printf '%-34s %12s %14s\n' "one proxy, --target x3" "$(column_median 1 "${one[@]}")" "$(column_median 2 "${one[@]}")"
printf '%-34s %12s %14s\n' "three single-target proxies (sum)" "$(column_median 1 "${three[@]}")" "$(column_median 2 "${three[@]}")"
