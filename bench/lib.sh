# Shared by the bench scripts (sourced): the reference Python environment and the vari binary.

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
root=$(dirname "$here")
venv="$here/.venv"
# The scripts' Python programs import the shared timing loop (bench/interleave.py).
export PYTHONPATH="$here${PYTHONPATH:+:$PYTHONPATH}"

# ensure_venv PACKAGE...: a venv under bench/.venv (reused across runs) holding PACKAGEs from PyPI.
ensure_venv() {
  [ -x "$venv/bin/python" ] || python3 -m venv "$venv"
  "$venv/bin/pip" install --quiet --disable-pip-version-check "$@"
}

# build_vari: sets $vari to $VARI (an already built binary) when given, else builds the release
# binary and sets $vari to it. Also sets $base to $VARI_BASE when given: an older vari binary
# (say, a release build of the commit before a refactor) that the scripts which know it time
# against $vari in the same interleaved runs, to show a change made nothing slower.
build_vari() {
  if [ -n "${VARI:-}" ]; then
    vari=$(absolute "$VARI")
  else
    (cd "$root" && cargo build --quiet --release --locked -p vari-cli)
    vari="${CARGO_TARGET_DIR:-$root/target}/release/vari"
  fi
  base=
  if [ -n "${VARI_BASE:-}" ]; then base=$(absolute "$VARI_BASE"); fi
}

# absolute PATH: PATH made absolute (the scripts change directory), failing when it is not an
# executable file.
absolute() {
  [ -f "$1" ] && [ -x "$1" ] || { echo "bench: $1 is not an executable file" >&2; exit 1; }
  echo "$(cd "$(dirname "$1")" && pwd)/$(basename "$1")"
}
