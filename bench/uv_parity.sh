#!/usr/bin/env bash
# uv's native variant support against vari's: the parity tests of
# crates/vari-cli/tests/select/uv_parity.rs, with the table of choices they compare printed.
#
# Each row is one simulated target (NV_VARIANT_PROVIDER_FORCE_CUDA_DRIVER_VERSION and
# NV_VARIANT_PROVIDER_FORCE_SM_ARCH, which uv 0.13 and vari both honour) and the file uv
# (`uv pip install --dry-run --preview-features wheel-variants`) and `vari select` choose from a
# release written by `vari wheel repack --for uv`: the demo release and torch 2.10's builds.
# The x86-64 row compares this machine's detected level (uv takes no profile).
#
# Needs the test environment (scripts/test-env; uv 0.13.9) or VARI_TEST_VENV pointing at one.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
cd "$root"
if [[ -z "${VARI_TEST_VENV:-}" ]]; then
  scripts/test-env
fi
echo "| release | CUDA driver | compute capability | uv | vari |"
echo "|---|---|---|---|---|"
log="$(mktemp)"
trap 'rm -f "$log"' EXIT
status=0
cargo test -q -p vari-cli --test select uv_parity -- --nocapture --test-threads 1 >"$log" 2>&1 || status=$?
grep -oE '\| (vari-demo|torch|levels) \|.*\|$|test result.*|panicked.*|FAILED.*' "$log" || true
exit "$status"
