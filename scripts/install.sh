#!/bin/sh
# Installs the standalone `vari` binary of a release, after checking its SHA-256.
#
#   curl -LsSf https://github.com/vari-dev/vari/releases/latest/download/install.sh | sh
#
# Settings (environment):
#   VARI_VERSION       the release, e.g. 0.1.0 (default: the latest)
#   VARI_INSTALL_DIR   where `vari` goes (default: $HOME/.local/bin)
#   VARI_DOWNLOAD_URL  the directory holding `vari-TRIPLE` and `vari-TRIPLE.sha256` (default:
#                      the GitHub release); https:// or file:// only
#   VARI_SHA256        the expected SHA-256 of the binary; when unset, the `.sha256` file
#                      published beside it is used
#   VARI_TARGET        the target triple (default: this machine's)
#
# Nothing is installed unless the whole binary arrived and its SHA-256 matches: it is downloaded
# into a temporary file in the install directory, checked, run once (`vari --version`) and only
# then renamed over `vari`. Any failure exits non-zero with one `error:` line.
set -eu

# Bounds for what the server sends: the binary (about 10 MB today) and the checksum file.
max_binary_bytes=209715200
max_checksum_bytes=4096

err() {
  echo "error: $*" >&2
  exit 1
}

detect_target() {
  arch="$(uname -m)"
  case "$arch" in
    x86_64 | amd64) arch=x86_64 ;;
    aarch64 | arm64) arch=aarch64 ;;
    *) err "no vari binary for this machine's architecture: $arch" ;;
  esac
  case "$(uname -s)" in
    Linux)
      # A system whose C library is musl (Alpine) gets the static musl build.
      if (ldd --version 2>&1 || true) | grep -qi musl; then
        echo "$arch-unknown-linux-musl"
      else
        echo "$arch-unknown-linux-gnu"
      fi
      ;;
    Darwin) echo "$arch-apple-darwin" ;;
    *) err "no standalone vari binary for $(uname -s); use \`pip install vari-cli\` or \`uv tool install vari-cli\`" ;;
  esac
}

# download URL FILE MAX_BYTES: https (TLS 1.2+, redirects to https only) or a local file URL.
download() {
  case "$1" in
    https://*) proto='=https' ;;
    file://*) proto='=file' ;;
    *) err "refusing to download from $1: only https:// and file:// URLs" ;;
  esac
  command -v curl >/dev/null 2>&1 || err "curl is needed to download vari"
  curl --fail --silent --show-error --location --proto "$proto" --proto-redir '=https' \
    --tlsv1.2 --max-filesize "$3" --max-time 600 --output "$2" "$1" ||
    err "cannot download $1"
}

sha256_of() {
  if command -v sha256sum >/dev/null 2>&1; then
    sha256sum "$1" | cut -d ' ' -f 1
  elif command -v shasum >/dev/null 2>&1; then
    shasum -a 256 "$1" | cut -d ' ' -f 1
  else
    err "sha256sum or shasum is needed to check the download"
  fi
}

# A SHA-256 as 64 lowercase hexadecimal digits, or nothing.
normalise_sha256() {
  printf '%s' "$1" | tr 'A-F' 'a-f' | grep -E '^[0-9a-f]{64}$' || true
}

target="${VARI_TARGET:-$(detect_target)}"
case "$target" in
  *[!A-Za-z0-9_.-]* | '') err "not a target triple: $target" ;;
esac
if [ -n "${VARI_DOWNLOAD_URL:-}" ]; then
  base="${VARI_DOWNLOAD_URL%/}"
elif [ -n "${VARI_VERSION:-}" ]; then
  case "$VARI_VERSION" in
    *[!A-Za-z0-9_.+-]*) err "not a version: $VARI_VERSION" ;;
  esac
  base="https://github.com/vari-dev/vari/releases/download/v${VARI_VERSION#v}"
else
  base="https://github.com/vari-dev/vari/releases/latest/download"
fi
install_dir="${VARI_INSTALL_DIR:-${HOME:?HOME is not set; set VARI_INSTALL_DIR}/.local/bin}"
name="vari-$target"

mkdir -p "$install_dir" || err "cannot create $install_dir"
tmp="$(mktemp "$install_dir/.vari-install.XXXXXX")" || err "cannot write in $install_dir"
sums="$(mktemp "${TMPDIR:-/tmp}/vari-sha256.XXXXXX")" || err "cannot create a temporary file"
trap 'rm -f "$tmp" "$sums"' EXIT
trap 'exit 130' INT TERM HUP

if [ -n "${VARI_SHA256:-}" ]; then
  expected="$(normalise_sha256 "$VARI_SHA256")"
  [ -n "$expected" ] || err "VARI_SHA256 is not a SHA-256 (64 hexadecimal digits)"
else
  download "$base/$name.sha256" "$sums" "$max_checksum_bytes"
  expected="$(normalise_sha256 "$(head -c 64 "$sums")")"
  [ -n "$expected" ] || err "$base/$name.sha256 does not start with a SHA-256"
fi

download "$base/$name" "$tmp" "$max_binary_bytes"
actual="$(sha256_of "$tmp")"
if [ "$actual" != "$expected" ]; then
  err "$base/$name: SHA-256 is $actual, expected $expected; nothing installed"
fi
chmod 755 "$tmp"
"$tmp" --version >/dev/null 2>&1 || err "$base/$name does not run on this machine; nothing installed"
mv -f "$tmp" "$install_dir/vari" || err "cannot install $install_dir/vari"
echo "installed $("$install_dir/vari" --version 2>/dev/null | head -n 1) to $install_dir/vari"
case ":${PATH:-}:" in
  *":$install_dir:"*) ;;
  *) echo "note: $install_dir is not on PATH; add it to run \`vari\`" ;;
esac
