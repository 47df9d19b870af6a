#!/usr/bin/env bash
# What `vari install --installer uv` costs over plain `uv pip install`, warm caches, from an
# HTTPS index holding real PyPI files (issue 34: at most 1.15x, wall and CPU).
#
# 1. The set: requests, numpy, pandas, scikit-learn, packaging, attrs, click, jinja2 and pyyaml
#    with their dependencies (21 distributions, 74 MB of wheels: scipy, numpy, pandas and
#    scikit-learn are the large ones), downloaded once from PyPI for the tools' Python into
#    ~/.cache/vari-bench/install-uv-wheels and reused afterwards (offline from then on).
# 2. A static index with PyPI's own pages for those projects (their JSON simple pages,
#    downloaded once into ~/.cache/vari-bench/install-uv-pages: every file PyPI lists, numpy's
#    over 4,000), the wheels held locally pointing at local copies with PEP 658 metadata beside
#    them (bench/pypi_pages.py), served over HTTPS from 127.0.0.1 by bench/serve_https.py
#    (HTTP/1.1, keep-alive, JSON to clients that ask for it) with a certificate made here by
#    `openssl` for 127.0.0.1 and signed by a CA made here; uv and vari trust that CA alone
#    through SSL_CERT_FILE. Its files are dated an hour back (a mirror built once and served for
#    a while: bench/install.sh says why).
#    With INDEX=URL, that index instead (INDEX=https://pypi.org/simple/ for PyPI itself, with
#    the system's roots), when it is reachable.
# 3. Two commands, each installing the set into a fresh environment at a new path (made before
#    each run, untimed), uv's and vari's caches kept warm across runs (a warm-up round fills
#    them): plain `uv pip install`, and `vari install --installer uv` with that uv. Repetitions
#    interleaved (A B A B …), a pause before each, wall time and CPU time (user + system of the
#    command and every process it waited for), medians of RUNS (default 7), ratios of vari to
#    uv; the TLS connections and requests the local server answered per run (median); uv's
#    cache size before and after the measured runs (it must not grow: the proxy's index URL
#    is the same every run).
#
#   bench/install_uv.sh              (needs cargo, python3, openssl; uv from <repo>/.venv or
#                                     $VARI_TEST_VENV: scripts/test-env; PyPI on the first run)
#   RUNS=11 bench/install_uv.sh
#   VARI=target/release/vari bench/install_uv.sh       (an already built binary)
#   VARI_BASE=/tmp/vari-old bench/install_uv.sh         (also an older binary, same rounds)
#   INDEX=https://pypi.org/simple/ bench/install_uv.sh  (PyPI itself)
set -euo pipefail
source "$(dirname "$0")/lib.sh"

tools="${VARI_TEST_VENV:-$root/.venv}"
[ -x "$tools/bin/uv" ] && [ -x "$tools/bin/pip" ] || {
  echo "bench/install_uv.sh: no pip and uv in $tools: run scripts/test-env" >&2
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
pages="${HOME}/.cache/vari-bench/install-uv-pages"
mkdir -p "$pages"
for wheel in "$wheels"/*.whl; do
  project=$(basename "$wheel" | cut -d- -f1 | tr '_.' '--' | tr '[:upper:]' '[:lower:]')
  [ -s "$pages/$project.json" ] && continue
  echo "downloading PyPI's page of $project into $pages (once)"
  curl -sf -H 'Accept: application/vnd.pypi.simple.v1+json' \
    "https://pypi.org/simple/$project/" -o "$pages/$project.json"
done
count=$(ls "$wheels"/*.whl | wc -l)
[ "$count" -ge 15 ] || { echo "bench/install_uv.sh: only $count wheels in $wheels" >&2; exit 1; }

data=$(mktemp -d)
servers=()
cleanup() {
  for server in "${servers[@]}"; do kill "$server" 2>/dev/null; done
  rm -rf "$data"
}
trap cleanup EXIT

free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'; }

# Each scenario: a name, an index URL, the server's process and its counts file.
scenarios=()
servers=()
if [ -z "${INDEX:-}" ]; then
  # A CA and a certificate for 127.0.0.1 signed by it (P-256, as the client tests make them).
  (
    cd "$data"
    ec=(-newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes)
    openssl req -x509 -days 2 -subj "/CN=vari bench CA" "${ec[@]}" -keyout ca.key -out ca.pem \
      -addext basicConstraints=critical,CA:TRUE -addext keyUsage=critical,keyCertSign 2>/dev/null
    printf 'subjectAltName=IP:127.0.0.1\nextendedKeyUsage=serverAuth\nbasicConstraints=CA:FALSE\n' \
      >leaf.ext
    openssl req -subj /CN=127.0.0.1 "${ec[@]}" -keyout leaf.key -out leaf.csr 2>/dev/null
    openssl x509 -req -in leaf.csr -CA ca.pem -CAkey ca.key -CAcreateserial -days 2 \
      -extfile leaf.ext -out leaf.pem 2>/dev/null
  )
  export SSL_CERT_FILE="$data/ca.pem"
  unset SSL_CERT_DIR
  # Two servers of the same files: pages fresh for 600 s as PyPI says (runs seconds apart
  # revalidate nothing), and pages to revalidate on every run (what every run more than ten
  # minutes after the last one does).
  for scenario in fresh:600 revalidated:0; do
    name=${scenario%%:*}
    port=$(free_port)
    python3 "$here/pypi_pages.py" "$pages" "$wheels" "$data/site-$name" \
      "https://127.0.0.1:$port/" >/dev/null
    find -L "$data/site-$name" -exec touch -d '1 hour ago' {} +
    PAGE_MAX_AGE=${scenario##*:} python3 "$here/serve_https.py" "$data/site-$name" "$port" \
      "$data/leaf.pem" "$data/leaf.key" "$data/counts-$name" >/dev/null 2>&1 &
    servers+=($!)
    index="https://127.0.0.1:$port/simple/"
    for _ in $(seq 100); do curl -sf --cacert "$data/ca.pem" "$index" >/dev/null 2>&1 && break; sleep 0.1; done
    curl -sf --cacert "$data/ca.pem" "$index" >/dev/null || { echo "bench/install_uv.sh: $index never answered" >&2; exit 1; }
    scenarios+=("pages $name (max-age=${scenario##*:})" "$index" "$!" "$data/counts-$name")
  done
  echo "$count wheels ($(du -shL "$wheels" | cut -f1)) and PyPI's pages of their projects" \
    "($(cat "$pages"/*.json | wc -c) bytes) in static indexes at 127.0.0.1 over HTTPS"
else
  curl -sf "$INDEX" -o /dev/null || { echo "bench/install_uv.sh: $INDEX is not reachable" >&2; exit 1; }
  scenarios+=("$INDEX" "$INDEX" "" "")
fi
echo "vari: $vari${base:+ (and $base)}"

# Hermetic uv and vari: no user configuration, caches under $data.
export VARI_CACHE_DIR="$data/vari-cache" VARI_NO_CONFIG=1 UV_NO_CONFIG=1 \
  UV_CACHE_DIR="$data/uv-cache" PIP_CONFIG_FILE=/dev/null
unset PIP_INDEX_URL PIP_EXTRA_INDEX_URL PIP_FIND_LINKS UV_INDEX_URL UV_EXTRA_INDEX_URL UV_INDEX \
  UV_DEFAULT_INDEX UV_FIND_LINKS VIRTUAL_ENV 2>/dev/null || true

# shellcheck disable=SC2086
python3 - "$tools" "$vari" "$data" "${RUNS:-7}" "$base" "$REQUESTS" "${scenarios[@]}" <<'PY'
import os, resource, shutil, signal, statistics, subprocess, sys, time

tools, vari, data, runs, base, requests = sys.argv[1:7]
runs = int(runs)
requests = requests.split()
given = sys.argv[7:]
scenarios = [given[i:i + 4] for i in range(0, len(given), 4)]
uv = os.path.join(tools, "bin", "uv")
PYTHON = object()  # stands for the run's fresh environment's interpreter

def commands_for(index):
    commands = [
        ("uv", [uv, "pip", "install", "--quiet", "--python", PYTHON, "--index-url", index,
                *requests]),
        ("vari install (uv)", [vari, "install", "--installer", uv, "--python", PYTHON,
                               "--index-url", index, *requests, "--", "--quiet"]),
    ]
    if base:
        commands.append(("base install (uv)", [base, "install", "--installer", uv, "--python",
                                               PYTHON, "--index-url", index, *requests, "--",
                                               "--quiet"]))
    return commands

serial = 0

def fresh_venv():
    """A new environment at a new path (uv keys nothing by it, but a real user's is new)."""
    global serial
    serial += 1
    venv = os.path.join(data, f"venv-{serial}")
    subprocess.run([os.path.join(tools, "bin", "python"), "-m", "venv", "--without-pip", venv],
                   check=True)
    return venv

def installed(venv):
    site = next(os.path.join(venv, "lib", d, "site-packages")
                for d in os.listdir(os.path.join(venv, "lib")))
    return sum(1 for n in os.listdir(site) if n.endswith(".dist-info"))

def cpu_of_children():
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime

def server_counts(server, counts):
    """(connections, requests) the local server has answered so far; (0, 0) for INDEX=URL."""
    if not counts:
        return (0, 0)
    try:
        os.remove(counts)
    except FileNotFoundError:
        pass
    os.kill(int(server), signal.SIGUSR1)
    for _ in range(200):
        if os.path.exists(counts):
            text = open(counts).read()
            if text.endswith("\n") and text.count("\n") == 2:
                values = dict(line.split() for line in text.splitlines())
                return (int(values["connections"]), int(values["requests"]))
        time.sleep(0.01)
    raise SystemExit("the server never wrote its counts")

def once(args, server, counts):
    """(wall, CPU, connections, requests, distributions) of one run into a fresh environment:
    CPU is user + system time of the command and every process it waited for (uv under
    vari)."""
    venv = fresh_venv()
    env = dict(os.environ, VIRTUAL_ENV=venv)
    before = server_counts(server, counts)
    time.sleep(0.2)  # let the previous process's exit settle
    cpu = cpu_of_children()
    start = time.perf_counter()
    python = os.path.join(venv, "bin", "python")
    done = subprocess.run([python if a is PYTHON else a for a in args],
                          stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, env=env)
    wall = time.perf_counter() - start
    cpu = cpu_of_children() - cpu
    after = server_counts(server, counts)
    if done.returncode != 0:
        raise SystemExit(f"{args[0]} exited with {done.returncode}:\n{done.stderr.decode()}")
    count = installed(venv)
    shutil.rmtree(venv, ignore_errors=True)
    if count < 15:
        raise SystemExit(f"{args[0]}: {count} distributions installed")
    return wall, cpu, after[0] - before[0], after[1] - before[1], count

def du(path):
    total = 0
    for top, _, files in os.walk(path):
        for name in files:
            try:
                total += os.lstat(os.path.join(top, name)).st_size
            except OSError:
                pass
    return total

uv_cache = os.environ["UV_CACHE_DIR"]
for title, index, server, counts in scenarios:
    commands = commands_for(index)
    # Warm-up round: fills uv's and vari's caches.
    for _, args in commands:
        once(args, server, counts)
    cache_before = du(uv_cache)
    results = {name: [] for name, _ in commands}
    for _ in range(runs):
        for name, args in commands:
            results[name].append(once(args, server, counts))
    cache_after = du(uv_cache)

    def med(name, i):
        return statistics.median(r[i] for r in results[name])

    print(f"\n{title}: `uv pip install` of {' '.join(requests)} "
          f"({results['uv'][0][4]} distributions) into a fresh environment, warm caches, median "
          f"of {runs} interleaved runs; CPU is user + system of the command and its children:")
    for name, _ in commands:
        walls = ", ".join(f"{r[0]:.2f}" for r in results[name])
        line = f"  {name:<18} {med(name, 0):7.3f} s wall  {med(name, 1):7.3f} s CPU"
        if counts:
            line += f"  {med(name, 2):3.0f} TLS connections {med(name, 3):4.0f} requests"
        print(f"{line}   (wall: {walls})")
    for name, _ in commands[1:]:
        print(f"  {name} / uv = {med(name, 0) / med('uv', 0):.2f}x wall, "
              f"{med(name, 1) / med('uv', 1):.2f}x CPU  (aim: <= 1.15x)")
    print(f"  uv's cache: {cache_before / 1e6:.1f} MB before the measured runs, "
          f"{cache_after / 1e6:.1f} MB after (grew by {(cache_after - cache_before) / 1e6:.1f} MB)")
PY
