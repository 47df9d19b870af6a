#!/usr/bin/env bash
# `vari sync pylock.toml` against `uv pip sync` of a requirements file pinning the same files by
# hash (issue 34: at most 1.05x), warm caches.
#
# 1. The set: the 21 real PyPI wheels of bench/install_uv.sh (requests, numpy, pandas,
#    scikit-learn, packaging, attrs, click, jinja2, pyyaml and their dependencies, 74 MB),
#    downloaded once into ~/.cache/vari-bench/install-uv-wheels and reused (offline from then
#    on), served over HTTP from 127.0.0.1 by bench/serve_static.py.
# 2. The same pins twice: a pylock.toml (each wheel's URL, size and SHA-256, as `vari lock`
#    writes them) and a requirements file of `name @ URL --hash=sha256:…` lines for the same
#    URLs and hashes.
# 3. Two commands, each into a fresh environment (made before each run, untimed), caches warm
#    across runs (a warm-up round fills them):
#      `vari sync pylock.toml --installer uv`   (the machine detected, as a user runs it), and
#      `uv pip sync requirements.txt`           (the same uv).
#    Repetitions interleaved (A B A B …), a pause before each run, wall time and CPU time (user
#    + system of the command and every process it waited for), medians of RUNS (default 11),
#    the ratio of vari to uv. With VARI_BASE, an older vari binary is timed in the same rounds.
#
# bench/sync.sh compares `vari sync` with `uv pip sync` of the files `vari export
# --wheelhouse` writes (local paths, variants of a demo release); this one pins the same URLs
# and hashes on both sides, with real wheels.
#
#   bench/sync_pinned.sh                 (needs cargo, python3, curl; uv and pip from
#                                         <repo>/.venv or $VARI_TEST_VENV: scripts/test-env)
#   RUNS=21 VARI=target/release/vari bench/sync_pinned.sh
#   VARI=target/release/vari VARI_BASE=old/vari bench/sync_pinned.sh
set -euo pipefail
source "$(dirname "$0")/lib.sh"

tools="${VARI_TEST_VENV:-$root/.venv}"
[ -x "$tools/bin/uv" ] && [ -x "$tools/bin/pip" ] || {
  echo "bench/sync_pinned.sh: no pip and uv in $tools: run scripts/test-env" >&2
  exit 1
}
build_vari

REQUESTS="requests numpy pandas scikit-learn packaging attrs click jinja2 pyyaml"
wheels="${HOME}/.cache/vari-bench/install-uv-wheels"
if ! ls "$wheels"/*.whl >/dev/null 2>&1; then
  echo "downloading the set's wheels from PyPI into $wheels (once)"
  mkdir -p "$wheels"
  # shellcheck disable=SC2086
  "$tools/bin/pip" download --quiet --disable-pip-version-check --only-binary=:all: \
    --dest "$wheels" $REQUESTS
fi

data=$(mktemp -d)
server=
cleanup() {
  [ -n "$server" ] && kill "$server" 2>/dev/null
  rm -rf "$data"
}
trap cleanup EXIT

free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'; }
port=$(free_port)
python3 "$here/serve_static.py" "$wheels" "$port" >/dev/null 2>&1 &
server=$!
base_url="http://127.0.0.1:$port/"
for _ in $(seq 100); do curl -sf "$base_url" >/dev/null 2>&1 && break; sleep 0.1; done
curl -sf "$base_url" >/dev/null || { echo "bench/sync_pinned.sh: $base_url never answered" >&2; exit 1; }

python3 - "$wheels" "$base_url" "$data" <<'PY'
import hashlib, json, os, re, sys

wheels, base, data = sys.argv[1:4]
lock = ['lock-version = "1.0"', 'requires-python = ">=3.9"', 'created-by = "bench/sync_pinned.sh"', ""]
requirements = []
for name in sorted(os.listdir(wheels)):
    if not name.endswith(".whl"):
        continue
    body = open(os.path.join(wheels, name), "rb").read()
    sha256 = hashlib.sha256(body).hexdigest()
    project = re.sub(r"[-_.]+", "-", name.split("-")[0]).lower()
    version = name.split("-")[1]
    url = base + name
    lock += ["[[packages]]", f"name = {json.dumps(project)}", f"version = {json.dumps(version)}",
             f"wheels = [{{ url = {json.dumps(url)}, size = {len(body)}, "
             f"hashes = {{ sha256 = {json.dumps(sha256)} }} }}]", ""]
    requirements.append(f"{project} @ {url} --hash=sha256:{sha256}")
open(os.path.join(data, "pylock.toml"), "w").write("\n".join(lock))
open(os.path.join(data, "requirements.txt"), "w").write("\n".join(requirements) + "\n")
PY
count=$(grep -c '^\[\[packages\]\]' "$data/pylock.toml")
echo "$count wheels ($(du -shL "$wheels" | cut -f1)) served at $base_url"
echo "vari: $vari${base:+ (and $base)}"

# Hermetic: no user configuration, caches under $data.
export VARI_CACHE_DIR="$data/vari-cache" VARI_NO_CONFIG=1 UV_NO_CONFIG=1 UV_CACHE_DIR="$data/uv-cache"
unset PIP_INDEX_URL PIP_EXTRA_INDEX_URL PIP_FIND_LINKS UV_INDEX_URL UV_EXTRA_INDEX_URL UV_INDEX \
  UV_DEFAULT_INDEX UV_FIND_LINKS VIRTUAL_ENV 2>/dev/null || true

python3 - "$tools" "$vari" "$data" "${RUNS:-11}" "$base" <<'PY'
import os, resource, shutil, statistics, subprocess, sys, time

tools, vari, data, runs, base = sys.argv[1:6]
runs = int(runs)
venv = os.path.join(data, "venv")
python = os.path.join(venv, "bin", "python")
uv = os.path.join(tools, "bin", "uv")

def vari_sync(binary):
    return [binary, "sync", "pylock.toml", "--python", python, "--installer", uv]

commands = [
    ("uv pip sync", [uv, "pip", "sync", "--quiet", "--python", python, "requirements.txt"]),
    ("vari sync", vari_sync(vari)),
]
if base:
    commands.append(("base vari sync", vari_sync(base)))

def installed():
    site = next(os.path.join(venv, "lib", d, "site-packages")
                for d in os.listdir(os.path.join(venv, "lib")))
    return sum(1 for n in os.listdir(site) if n.endswith(".dist-info"))

def once(args):
    shutil.rmtree(venv, ignore_errors=True)
    subprocess.run([os.path.join(tools, "bin", "python"), "-m", "venv", "--without-pip", venv],
                   check=True)
    time.sleep(0.2)  # let the previous process's exit settle
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    done = subprocess.run(args, cwd=data, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if done.returncode != 0:
        raise SystemExit(f"{args[0]} exited with {done.returncode}:\n{done.stderr.decode()}")
    count = installed()
    if count < 15:
        raise SystemExit(f"{args[0]}: {count} distributions installed")
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return wall, cpu

for _, args in commands:  # warm-up: fills uv's cache and vari's store
    once(args)
times = {name: [] for name, _ in commands}
for _ in range(runs):
    for name, args in commands:
        times[name].append(once(args))
print(f"\nsync of the same pinned files into a fresh environment, warm caches, median of {runs} "
      "interleaved runs; CPU is user + system of the command and its children:")
med = {}
for name, _ in commands:
    wall = statistics.median(t[0] for t in times[name])
    cpu = statistics.median(t[1] for t in times[name])
    med[name] = (wall, cpu)
    walls = ", ".join(f"{t[0]:.3f}" for t in times[name])
    print(f"  {name:<15} wall {wall:6.3f} s   cpu {cpu:6.3f} s   (wall: {walls})")
for name, _ in commands[1:]:
    print(f"  {name} / uv pip sync: wall {med[name][0] / med['uv pip sync'][0]:.2f}x, "
          f"cpu {med[name][1] / med['uv pip sync'][1]:.2f}x  (aim: <= 1.05x)")
PY
