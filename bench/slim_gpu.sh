#!/usr/bin/env bash
# Proof on a GPU that slimmed code still loads (issue 22): builds a small CUDA library with nvcc
# (scripts/cuda-test-env) for sm_75, sm_80, sm_86, sm_89, sm_90, sm_100, sm_120 and PTX for 12.0,
# puts it in a wheel, and slims it twice with `vari wheel slim`: to the GPU's own family, and to
# another family. Through the CUDA runtime (ctypes), the first must run its kernel and compute
# the right result; the second must fail to launch it with cudaErrorNoKernelImageForDevice
# (209, "no kernel image is available for execution on the device").
#
#   bench/slim_gpu.sh
#
# Without an NVIDIA GPU (no working `nvidia-smi`) it says so and exits 0: until it has passed on
# a real GPU, slimmed wheels are checked structurally only (crates/vari-cli/tests/wheel/slim*.rs).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)

cap=$(nvidia-smi --query-gpu=compute_cap --format=csv,noheader 2>/dev/null | head -n 1 || true)
if [ -z "$cap" ]; then
  echo "skipped: no NVIDIA GPU here (nvidia-smi found none); slimmed wheels are checked structurally only"
  exit 0
fi
major=${cap%%.*}
other=8
[ "$major" = 8 ] && other=9
echo "GPU compute capability $cap: keeping ${major}.x, and ${other}.x for the negative check"

"$root/scripts/cuda-test-env"
bin=$(ls -d "${VARI_CUDA_VENV:-$root/.venv-cuda}"/lib/python3*/site-packages/nvidia/cu13/bin | head -n 1)
export PATH="$bin:$PATH"
(cd "$root" && cargo build --quiet --locked -p vari-cli)
vari="${CARGO_TARGET_DIR:-$root/target}/debug/vari"

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cat > "$work/kernel.cu" <<'CU'
#include <cuda_runtime.h>
__global__ void add_one(int *x) { x[threadIdx.x] += 1; }
/* 0 when the kernel ran and computed 1 everywhere; else the CUDA error (or -1: wrong result). */
extern "C" int run(void) {
  int *d = 0, h[32] = {0};
  cudaError_t e = cudaMalloc(&d, sizeof h);
  if (e) return e;
  cudaMemcpy(d, h, sizeof h, cudaMemcpyHostToDevice);
  add_one<<<1, 32>>>(d);
  e = cudaGetLastError();
  if (!e) e = cudaMemcpy(h, d, sizeof h, cudaMemcpyDeviceToHost);
  cudaFree(d);
  if (e) return e;
  for (int i = 0; i < 32; i++) if (h[i] != 1) return -1;
  return 0;
}
CU
gencode=()
for sm in 75 80 86 89 90 100 120; do gencode+=(-gencode "arch=compute_$sm,code=sm_$sm"); done
gencode+=(-gencode "arch=compute_120,code=compute_120")
nvcc -shared -Xcompiler -fPIC "${gencode[@]}" -o "$work/libkernel.so" "$work/kernel.cu"

python3 - "$work" <<'PY'
import base64, hashlib, os, sys, zipfile
work = sys.argv[1]
info = "gpucheck-1.0.dist-info"
files = {
    "gpucheck/libkernel.so": open(os.path.join(work, "libkernel.so"), "rb").read(),
    f"{info}/METADATA": b"Metadata-Version: 2.1\nName: gpucheck\nVersion: 1.0\n",
    f"{info}/WHEEL": b"Wheel-Version: 1.0\nGenerator: slim_gpu.sh\nRoot-Is-Purelib: false\nTag: py3-none-linux_x86_64\n",
}
rows = [f"{n},sha256={base64.urlsafe_b64encode(hashlib.sha256(d).digest()).rstrip(b'=').decode()},{len(d)}"
        for n, d in files.items()]
files[f"{info}/RECORD"] = ("\n".join(rows + [f"{info}/RECORD,,"]) + "\n").encode()
with zipfile.ZipFile(os.path.join(work, "gpucheck-1.0-py3-none-linux_x86_64.whl"), "w",
                     zipfile.ZIP_DEFLATED) as z:
    for n, d in files.items():
        z.writestr(n, d)
PY

status=0
for family in "$major" "$other"; do
  "$vari" wheel slim "$work/gpucheck-1.0-py3-none-linux_x86_64.whl" --keep "$family.x" \
    -o "$work/slim-$family" >/dev/null
  rm -rf "$work/x" && mkdir "$work/x"
  python3 -m zipfile -e "$work"/slim-"$family"/*.whl "$work/x"
  result=$(python3 -c "import ctypes, sys; print(ctypes.CDLL(sys.argv[1]).run())" \
    "$work/x/gpucheck/libkernel.so")
  if [ "$family" = "$major" ]; then want=0; else want=209; fi
  if [ "$result" = "$want" ]; then
    echo "ok: slimmed to ${family}.x: run() = $result"
  else
    echo "FAILED: slimmed to ${family}.x: run() = $result, expected $want"
    status=1
  fi
done
exit $status
