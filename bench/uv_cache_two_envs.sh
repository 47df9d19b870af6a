#!/usr/bin/env bash
# uv's cache after `vari install --installer uv` into two fresh virtual environments at
# different paths (as two CI jobs or two Docker builds make them), from the demo release
# (offline, examples/demo). Each environment already holds one distribution, so the target's
# `abi_dependency` facts are read from its own site-packages path. The proxy's URL, and so uv's
# cache, depends only on facts that can change a choice: the second install adds nothing.
#
#   bench/uv_cache_two_envs.sh        (needs cargo, python3 with venv, uv on PATH or
#                                      $VARI_TEST_VENV/bin/uv)
#
# Prints one line per install: the environment, uv's cache size in bytes and in files, and the
# proxy URL vari gave uv (from `vari -v`); then the files the second install added to the cache
# (uv's record of the new environment's interpreter, no wheel and no index page).
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
cd "$root"
cargo build --locked -q -p vari-cli
vari="$root/target/debug/vari"
uv_bin="$(command -v uv || true)"
if [ -z "$uv_bin" ] && [ -n "${VARI_TEST_VENV:-}" ]; then
  uv_bin="$VARI_TEST_VENV/bin/uv"
fi
[ -x "$uv_bin" ] || { echo "error: uv not found (put it on PATH or set VARI_TEST_VENV)" >&2; exit 1; }

scratch="$(mktemp -d)"
trap 'rm -rf "$scratch"' EXIT
export UV_CACHE_DIR="$scratch/uv-cache" VARI_CACHE_DIR="$scratch/vari-cache"
export NV_VARIANT_PROVIDER_FORCE_CUDA_DRIVER_VERSION=12.8
unset VIRTUAL_ENV CONDA_PREFIX

for job in ci-job-1 ci-job-2; do
  env_dir="$scratch/$job/venv"
  python3 -m venv --without-pip "$env_dir"
  site="$("$env_dir/bin/python" -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')"
  mkdir -p "$site/basepkg-1.0.dist-info"
  printf 'Metadata-Version: 2.1\nName: basepkg\nVersion: 1.0\n' >"$site/basepkg-1.0.dist-info/METADATA"
  log="$scratch/$job.log"
  "$vari" -v install --python "$env_dir" --installer "$uv_bin" \
    --find-links examples/demo vari-demo >"$scratch/$job.out" 2>"$log"
  url="$(grep -o 'http://127\.0\.0\.1:[0-9]*/t/[0-9a-f]*/simple/' "$log" | head -1 || true)"
  bytes="$(du -sb "$UV_CACHE_DIR" | cut -f1)"
  files="$(find "$UV_CACHE_DIR" -type f | wc -l)"
  printf '%s: uv cache %s bytes, %s files; proxy %s\n' "$job" "$bytes" "$files" "${url:-?}"
  (cd "$UV_CACHE_DIR" && find . -type f | sort) >"$scratch/$job.files"
  if [ -f "$scratch/previous.files" ]; then
    comm -13 "$scratch/previous.files" "$scratch/$job.files" | sed 's/^/  added: /'
  fi
  cp "$scratch/$job.files" "$scratch/previous.files"
done
