#!/usr/bin/env bash
# What `vari install` costs over plain uv and plain pip, warm caches, on the same 15 packages
# from a local static index that mirrors real PyPI files.
#
# 1. The set: 15 ordinary packages (PACKAGES below; numpy is the large one), their real wheels
#    for the tools' Python downloaded once from PyPI into bench/.cache/install-wheels (reused
#    afterwards, so the benchmark runs offline from then on).
# 2. A static index of those files (`vari index build`), served from 127.0.0.1 by
#    bench/serve_static.py.
# 3. Four commands, each installing all 15 into a fresh environment (made before each run,
#    untimed) with its own installer cache kept warm across runs (one warm-up round fills
#    them): plain uv, `vari install` with that uv, plain pip, `vari install` with that pip.
#    Repetitions interleaved (A B C D A B C D …), a pause before each run, wall time and CPU
#    time (user + system of the command and the processes it waited for: steadier than wall
#    time on a shared machine), medians of RUNS; ratios of vari to the plain installer. Also: how much uv's cache grew over the
#    measured `vari install` runs (it must not: every run is the same index URL to uv).
#
# The target is this machine (no profile): none of these projects has variants, so the proxy
# passes their files through, and the aim is that this costs (almost) nothing: uv through vari
# at most 1.2x plain uv, pip through vari at most 1.10x plain pip.
#
# Pages: plain uv takes its cached pages as fresh (the static server's Last-Modified gives them
# a heuristic lifetime; PyPI says max-age=600) and resolves without a request. The proxy's pages
# under the target's own URL (/t/{fingerprint}/simple/) carry max-age too: the least of what the
# upstream allowed and the proxy's page TTL (60 s), so uv with a warm cache need not ask it
# either; a revalidation is a 304 by entity tag, and a new proxy process reads upstream pages
# that are still fresh from vari's HTTP cache without a request.
#
#   bench/install.sh                 (needs cargo, python3; pip and uv from <repo>/.venv or
#                                     $VARI_TEST_VENV: scripts/test-env; PyPI on the first run)
#   RUNS=9 bench/install.sh
#   VARI=target/debug/vari bench/install.sh     (an already built binary instead of a release
#                                                build)
#   VARI_BASE=/tmp/vari-old bench/install.sh    (also `vari install` with uv by an older binary,
#                                                in the same interleaved runs)
set -euo pipefail
source "$(dirname "$0")/lib.sh"

tools="${VARI_TEST_VENV:-$root/.venv}"
[ -x "$tools/bin/pip" ] && [ -x "$tools/bin/uv" ] || {
  echo "bench/install.sh: no pip and uv in $tools: run scripts/test-env" >&2
  exit 1
}
build_vari

PACKAGES="requests urllib3 idna certifi charset-normalizer six python-dateutil tzdata packaging
attrs click jinja2 markupsafe pyyaml numpy"
# shellcheck disable=SC2086
set -- $PACKAGES
[ $# -eq 15 ] || { echo "bench/install.sh: expected 15 packages" >&2; exit 1; }

wheels="$here/.cache/install-wheels"
if ! ls "$wheels"/*.whl >/dev/null 2>&1; then
  echo "downloading the 15 packages' wheels from PyPI into $wheels (once)"
  mkdir -p "$wheels"
  # shellcheck disable=SC2086
  "$tools/bin/pip" download --quiet --disable-pip-version-check --only-binary=:all: \
    --dest "$wheels" $PACKAGES
fi

data=$(mktemp -d)
server=
cleanup() {
  [ -n "$server" ] && kill "$server" 2>/dev/null
  rm -rf "$data"
}
trap cleanup EXIT

free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'; }
wait_for() { for _ in $(seq 100); do curl -sf "$1" >/dev/null 2>&1 && return 0; sleep 0.1; done; echo "bench/install.sh: $1 never answered" >&2; exit 1; }

"$vari" index build "$wheels" -o "$data/site" >/dev/null 2>&1
# A mirror is built once and served for a while, not rebuilt before each install: date its
# pages an hour back, so the Last-Modified heuristic (10 % of the page's age) gives plain uv and
# vari's client the same few minutes of freshness that a real static mirror's pages get (pages
# written a second ago would be stale for both at once; PyPI itself says max-age=600).
find "$data/site" -exec touch -d '1 hour ago' {} +
port=$(free_port)
python3 "$here/serve_static.py" "$data/site" "$port" >/dev/null 2>&1 &
server=$!
index="http://127.0.0.1:$port/simple/"
wait_for "$index"
echo "$(ls "$wheels"/*.whl | wc -l) wheels ($(du -sh "$wheels" | cut -f1)) in a static index at $index"
echo "vari: $vari${base:+ (and $base)}"

# Hermetic installers and vari: no user configuration, caches under $data.
export VARI_CACHE_DIR="$data/vari-cache" VARI_NO_CONFIG=1 UV_NO_CONFIG=1 \
  UV_CACHE_DIR="$data/uv-cache" PIP_CACHE_DIR="$data/pip-cache" PIP_CONFIG_FILE=/dev/null \
  PIP_DISABLE_PIP_VERSION_CHECK=1 PIP_NO_INPUT=1
unset PIP_INDEX_URL PIP_EXTRA_INDEX_URL UV_INDEX_URL UV_EXTRA_INDEX_URL UV_INDEX \
  UV_DEFAULT_INDEX VIRTUAL_ENV 2>/dev/null || true

python3 - "$tools" "$vari" "$index" "$data" "${RUNS:-5}" "$base" $PACKAGES <<'PY'
import os, resource, shutil, statistics, subprocess, sys, time

tools, vari, index, data, runs, base = sys.argv[1:7]
runs = int(runs)
packages = sys.argv[7:]
venv = os.path.join(data, "venv")
python = os.path.join(venv, "bin", "python")
uv = os.path.join(tools, "bin", "uv")
pip = os.path.join(tools, "bin", "pip")
commands = [
    ("uv", [uv, "pip", "install", "--quiet", "--python", python, "--index-url", index, *packages]),
    ("vari install (uv)", [vari, "install", "--installer", uv, "--python", python,
                           "--index-url", index, *packages, "--", "--quiet"]),
    ("pip", [pip, "--python", python, "install", "--quiet", "--index-url", index, *packages]),
    ("vari install (pip)", [vari, "install", "--installer", pip, "--python", python,
                            "--index-url", index, *packages, "--", "--quiet"]),
]
if base:
    # VARI_BASE: an older vari in the same interleaved runs, with uv (before and after a change).
    commands.insert(2, ("base install (uv)", [base, "install", "--installer", uv, "--python", python,
                                              "--index-url", index, *packages, "--", "--quiet"]))

def fresh_venv():
    shutil.rmtree(venv, ignore_errors=True)
    subprocess.run([os.path.join(tools, "bin", "python"), "-m", "venv", "--without-pip", venv],
                   check=True)

def installed():
    site = next(os.path.join(venv, "lib", d, "site-packages")
                for d in os.listdir(os.path.join(venv, "lib")))
    return sum(1 for n in os.listdir(site) if n.endswith(".dist-info"))

def cpu_of_children():
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime

def once(args):
    """(wall, CPU) seconds of one run: CPU is user + system time of the command and every
    process it waited for (the installer under vari), steadier than wall time on a busy
    machine."""
    fresh_venv()
    time.sleep(0.2)  # let the previous process's exit settle
    cpu = cpu_of_children()
    start = time.perf_counter()
    done = subprocess.run(args, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    wall = time.perf_counter() - start
    cpu = cpu_of_children() - cpu
    if done.returncode != 0:
        raise SystemExit(f"{args[0]} exited with {done.returncode}:\n{done.stderr.decode()}")
    count = installed()
    if count != len(packages):
        raise SystemExit(f"{' '.join(args[:3])}: {count} distributions installed, not {len(packages)}")
    return wall, cpu

def du(path):
    total = 0
    for top, _, files in os.walk(path):
        for name in files:
            try:
                total += os.lstat(os.path.join(top, name)).st_size
            except OSError:
                pass
    return total

# Warm-up round: fills uv's, pip's and vari's caches.
for _, args in commands:
    once(args)
uv_cache = os.environ["UV_CACHE_DIR"]
times = {name: [] for name, _ in commands}
cpus = {name: [] for name, _ in commands}
grown = 0
for _ in range(runs):
    for name, args in commands:
        before = du(uv_cache) if name == "vari install (uv)" else 0
        wall, cpu = once(args)
        times[name].append(wall)
        cpus[name].append(cpu)
        if name == "vari install (uv)":
            grown += du(uv_cache) - before

median = {name: statistics.median(t) for name, t in times.items()}
cpu_median = {name: statistics.median(t) for name, t in cpus.items()}
print(f"\ninstall of {len(packages)} packages into a fresh environment, warm caches, "
      f"median of {runs} interleaved runs, wall time and CPU time (user + system, the "
      f"installer included):")
for name, _ in commands:
    print(f"  {name:<20} {median[name]:7.3f} s wall  {cpu_median[name]:7.3f} s CPU   "
          f"(wall: {', '.join(f'{t:.2f}' for t in times[name])})")
for vari_name, plain, aim in [("vari install (uv)", "uv", "1.20"), ("vari install (pip)", "pip", "1.10")]:
    print(f"  {vari_name} / {plain:<3} = {median[vari_name] / median[plain]:.2f}x wall, "
          f"{cpu_median[vari_name] / cpu_median[plain]:.2f}x CPU  (aim: <= {aim}x)")
print(f"  uv's cache grew by {grown / 1e6:.1f} MB over the {runs} measured `vari install (uv)` runs")
PY
