#!/usr/bin/env bash
# Load test of `vari proxy` as a server, on 127.0.0.1 only, bounded in time:
#
#   CONNECTIONS (200) keep-alive clients asking for the cached pages of the 50-package set
#   (bench/gen_proxy_index.py, PEP 691 JSON) in a closed loop for DURATION (10) seconds
#   (bench/loadgen.rs), while IDLE (500) more connections sit open without sending a byte
#   (bench/hold_idle.py). Each run starts a fresh proxy (the upstream: the static index built by
#   `vari index build`, served by bench/serve_static.py), asks once for every page so they are
#   cached, then loads it.
#
# Printed per run: requests, errors (loadgen stops at the first failed request, so "0" or a
# failure), latency percentiles, the proxy's peak resident memory (VmHWM) and peak virtual
# memory (VmPeak) from /proc, its thread count, and how many idle connections it closed. Then
# the median of RUNS (3) runs.
#
#   bench/proxy_load.sh                    (needs cargo, rustc, python3, curl)
#   RUNS=3 CONNECTIONS=200 IDLE=500 DURATION=10 bench/proxy_load.sh
#   VARI=target/debug/vari bench/proxy_load.sh      (another binary; default: a release build)
set -euo pipefail
source "$(dirname "$0")/lib.sh"

runs=${RUNS:-3}
connections=${CONNECTIONS:-200}
idle=${IDLE:-500}
duration=${DURATION:-10}

if [ -n "${VARI:-}" ]; then
  vari=$VARI
else
  build_vari
fi

data=$(mktemp -d)
server=
proxy=
holder=
cleanup() {
  [ -n "$holder" ] && kill "$holder" 2>/dev/null
  [ -n "$proxy" ] && kill "$proxy" 2>/dev/null
  [ -n "$server" ] && kill "$server" 2>/dev/null
  rm -rf "$data"
}
trap cleanup EXIT

free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'; }
wait_for() { for _ in $(seq 100); do curl -sf "$1" >/dev/null 2>&1 && return 0; sleep 0.1; done; echo "bench/proxy_load.sh: $1 never answered" >&2; exit 1; }
status_kib() { awk -v key="$2:" '$1 == key { print $2 }' "/proc/$1/status"; }

export VARI_NO_CONFIG=1
python3 "$here/gen_proxy_index.py" "$data" --kib 4 >/dev/null
$vari index build "$data/wheels" -o "$data/site" >/dev/null
port=$(free_port)
python3 "$here/serve_static.py" "$data/site" "$port" >/dev/null 2>&1 &
server=$!
index="http://127.0.0.1:$port/simple/"
wait_for "$index"

rustc -O --edition 2021 "$here/loadgen.rs" -o "$data/loadgen"
packages=$(printf 'pkg%02d ' $(seq 0 44); printf 'gpu%02d ' $(seq 0 4))
paths=$(for p in $packages; do printf '/simple/%s/ ' "$p"; done)
json='application/vnd.pypi.simple.v1+json'

echo "vari proxy load: $connections clients for $duration s + $idle idle connections, cached JSON pages, $runs runs"
: >"$data/results"
for run in $(seq "$runs"); do
  proxy_port=$(free_port)
  VARI_CACHE_DIR="$data/cache-$run" $vari proxy --index-url "$index" \
    --bind "127.0.0.1:$proxy_port" >/dev/null 2>"$data/proxy-$run.log" &
  proxy=$!
  via="http://127.0.0.1:$proxy_port/simple/"
  wait_for "$via"
  for p in $packages; do
    curl -sf -H "Accept: $json" "${via}$p/" >/dev/null
  done
  python3 "$here/hold_idle.py" "127.0.0.1:$proxy_port" "$idle" "$((duration + 2))" \
    >"$data/idle-$run.txt" &
  holder=$!
  for _ in $(seq 200); do grep -q holding "$data/idle-$run.txt" 2>/dev/null && break; sleep 0.05; done
  if ! load=$("$data/loadgen" "127.0.0.1:$proxy_port" "$connections" "$duration" "$json" $paths 2>&1); then
    echo "run $run: FAILED: $load"
    tail -5 "$data/proxy-$run.log"
    exit 1
  fi
  wait "$holder" || true
  holder=
  hwm=$(status_kib "$proxy" VmHWM)
  peak=$(status_kib "$proxy" VmPeak)
  threads=$(status_kib "$proxy" Threads)
  kill "$proxy"
  wait "$proxy" 2>/dev/null || true
  proxy=
  p50=$(sed -n 's/.*p50 \([0-9.]*\) ms.*/\1/p' <<<"$load")
  p99=$(sed -n 's/.*p99 \([0-9.]*\) ms.*/\1/p' <<<"$load")
  rate=$(sed -n 's/.*(\([0-9]*\)\/s).*/\1/p' <<<"$load")
  echo "run $run: $load; 0 errors; VmHWM $((hwm / 1024)) MiB, VmPeak $((peak / 1024)) MiB, $threads threads; $(tail -1 "$data/idle-$run.txt" | sed 's/^idle connections: //')"
  echo "$rate $p50 $p99 $hwm $peak" >>"$data/results"
done

median() { sort -g | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'; }
col() { awk -v c="$1" '{ print $c }' "$data/results" | median; }
echo "median of $runs: $(col 1) requests/s, p50 $(col 2) ms, p99 $(col 3) ms, VmHWM $(( $(col 4) / 1024 )) MiB, VmPeak $(( $(col 5) / 1024 )) MiB; 0 errors"
