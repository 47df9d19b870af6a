# Shared by the bench scripts (sourced): the reference Python environment and the vari binary.

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
root=$(dirname "$here")
venv="$here/.venv"

# ensure_venv PACKAGE...: a venv under bench/.venv (reused across runs) holding PACKAGEs from PyPI.
ensure_venv() {
  [ -x "$venv/bin/python" ] || python3 -m venv "$venv"
  "$venv/bin/pip" install --quiet --disable-pip-version-check "$@"
}

# build_vari: builds the release binary and sets $vari to it.
build_vari() {
  (cd "$root" && cargo build --quiet --release --locked -p vari-cli)
  vari="${CARGO_TARGET_DIR:-$root/target}/release/vari"
}
