#!/usr/bin/env bash
# Detection benchmark, whole process each: `vari detect` from its cache and with --no-cache,
# against the Python path: archspec (PyPI) classifying the CPU, and variantlib 0.2.2 querying the
# reference x86_64 provider plugin (provider-variant-x86-64 from PyPI; it predates variantlib
# 0.2's plugin protocol, so bench/x86_64_adapter.py bridges the protocol, nothing else).
#
# Timing (bench/detect_python.py time): the four commands take turns with a pause before each run,
# and the ratios are reported on CPU time (user + system) as well as wall time, medians of 30 runs.
#
#   bench/detect.sh          (x86_64 Linux; needs cargo, python3 >= 3.10 and PyPI on first run)
set -euo pipefail
source "$(dirname "$0")/lib.sh"
# Keep bench/ free of __pycache__ (the adapter is imported from here).
export PYTHONDONTWRITEBYTECODE=1

if [ "$(uname -m)" != x86_64 ]; then
  echo "bench/detect.sh: the reference plugin measured here is the x86_64 one" >&2
  exit 1
fi
ensure_venv 'variantlib==0.2.2' 'archspec==0.2.7' 'provider-variant-x86-64==0.0.1.post2'
build_vari

# A private cache, filled once, so "cached" means what a second `vari` call sees.
VARI_CACHE_DIR=$(mktemp -d)
export VARI_CACHE_DIR
trap 'rm -rf "$VARI_CACHE_DIR"' EXIT
"$vari" detect --json >"$VARI_CACHE_DIR/vari.json"

# Same answer first: vari's x86_64 namespace against the reference plugin through variantlib.
PYTHONPATH="$here" "$venv/bin/python" "$here/detect_python.py" variantlib >"$VARI_CACHE_DIR/ref.json"
python3 - "$VARI_CACHE_DIR/vari.json" "$VARI_CACHE_DIR/ref.json" <<'PY'
import json, sys
profile = json.load(open(sys.argv[1]))
ns = next((n for n in profile["namespaces"] if n["namespace"] == "x86_64"), {"features": []})
ours = [{"name": f["name"], "values": f["values"]} for f in ns["features"]]
reference = json.load(open(sys.argv[2]))
if ours != reference:
    sys.exit(f"bench/detect.sh: x86_64 features differ\nvari: {ours}\nreference: {reference}")
print(f"x86_64 features agree with the reference plugin ({len(ours)} features)")
PY

PYTHONPATH="$here" "$venv/bin/python" "$here/detect_python.py" time --runs 30 --warmup 3 --pause 0.2 \
  "vari detect (cached)=$vari detect --json" \
  "vari detect --no-cache=$vari detect --json --no-cache" \
  "archspec host()=$venv/bin/python $here/detect_python.py archspec" \
  "variantlib 0.2.2 + plugin=$venv/bin/python $here/detect_python.py variantlib"
