#!/usr/bin/env bash
# What `vari sync` costs over `uv pip sync` of the same files, warm caches.
#
# 1. The set: the demo release of examples/demo (six variants and a plain wheel, its CUDA
#    runtime behind `"nvidia" in variant_namespaces`) and 12 ordinary wheels of about 2 MB each
#    (generated, deflated, each its own package), in a directory served from 127.0.0.1 by
#    bench/serve_static.py, and a pylock.toml of all of them (URLs, sizes, SHA-256, the demo's
#    variants inlined), as `vari lock` writes it.
# 2. Two machine classes as facts profiles: `cpu` (x86-64-v3, no GPU) and `a100` (CUDA 12.8).
# 3. Per class, two commands, each into a fresh environment (made before each run, untimed),
#    caches kept warm across runs (a warm-up round fills them):
#      `vari sync pylock.toml --profile CLASS --installer uv`, and
#      `uv pip sync requirements.txt` of the same files: the class's files as `vari export
#      --wheelhouse` writes them (the ones `vari sync` hands uv: variant wheels under their
#      plain name, variant markers evaluated), from a local directory.
#    Repetitions interleaved (A B A B …), a pause before each run, wall time and CPU time
#    (user + system of the process and its children), medians of RUNS; the ratio of vari to uv
#    (aim: at most 1.2x). With VARI_BASE, an older vari binary is timed in the same rounds.
# 4. A real `vari sync` on both classes, for the README.
#
# What vari adds to uv's work, measured with `perf stat --no-inherit` (vari's own process, its
# children excluded) on this set: 31 ms of CPU when every store file was hashed on every sync
# (25 ms of it SHA-256 over 28 MB, 2 ms reading each wheel's METADATA); about 6 ms since a
# record written when a file was hashed vouches for it (size, times, inode, device: see
# crates/vari-install/src/sync/record.rs), which is vari's start-up (2.3 ms for `vari
# --version`), reading the lock, planning and listing the environment. The installer run is
# uv's own: the files it gets are at the same paths with the same times on every run, so its
# cache of unpacked wheels is reused as `uv pip sync`'s is.
#
# uv's part, measured against `uv pip sync` of the same files (21 interleaved runs each, into
# fresh environments): `uv pip install --no-deps --no-index FILES` (what vari runs), the same
# with `--offline` or `--quiet`, `uv pip sync` of a requirements file naming the store's files,
# and `uv pip install -r` of the exported file all cost the same within the noise (medians
# within 2 ms, CPU within 1%): nothing to gain from other flags. vari's own part is its
# process: ~6.2 ms of CPU on the a100 class (`perf stat --no-inherit`): start-up (the dynamic
# loader ~0.75 ms, the command line ~0.6 ms), the target (~1.3 ms: the archspec catalog
# ~0.45 ms, the Python's cached facts and tags ~0.5 ms), reading and planning the lock
# (~1.2 ms), the environment listing and the store's records. Most of it no longer adds to
# uv's time: uv spends its first 10 ms or more on itself before it reads what to install
# (a 12 ms delay of its standard input changed nothing, 15 runs), so `vari sync` starts it as
# soon as the environment is known and hands it the checked files on its standard input
# (vari_install::sync::EarlyInstall; paired medians of 31 runs: 4.9 ms less wall time).
# Measured with this script (RUNS=11, three runs, the commit before as VARI_BASE): cpu class
# 1.06-1.11x wall, 1.07-1.11x CPU (before: 1.21x, 1.16x), a100 1.05-1.09x wall, 1.02-1.10x
# CPU (before: 1.17x, 1.13x). Reading the lock on a thread while the target resolves, and
# building the HTTP client only when a file must be downloaded, were tried: neither measurably
# changed the time (medians of 25 and 15 runs).
# One sync operation (issue 30: vari_install::sync::sync, the lock reader, judging in
# vari-select) against the commit before, both built with `--config profile.release.lto=false
# --config profile.release.codegen-units=16`, three runs (RUNS=9, 11, 11) on a loaded 2-core
# machine, CPU medians after/before: cpu class 0.134/0.136, 0.127/0.136, 0.123/0.133 s; a100
# 0.134/0.130, 0.122/0.123, 0.131/0.136 s: no slowdown (wall within the load's noise).
#
#   bench/sync.sh                        (needs cargo, python3, curl; uv from <repo>/.venv
#                                         or $VARI_TEST_VENV: scripts/test-env)
#   RUNS=9 bench/sync.sh
#   VARI=target/release/vari bench/sync.sh   (an already built binary instead of a build)
#   VARI=target/release/vari VARI_BASE=old/vari bench/sync.sh   (and an older binary beside it)
set -euo pipefail
source "$(dirname "$0")/lib.sh"

tools="${VARI_TEST_VENV:-$root/.venv}"
[ -x "$tools/bin/uv" ] || {
  echo "bench/sync.sh: no uv in $tools: run scripts/test-env" >&2
  exit 1
}
build_vari

data=$(mktemp -d)
server=
cleanup() {
  [ -n "$server" ] && kill "$server" 2>/dev/null
  rm -rf "$data"
}
trap cleanup EXIT

free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'; }
wait_for() { for _ in $(seq 100); do curl -sf "$1" >/dev/null 2>&1 && return 0; sleep 0.1; done; echo "bench/sync.sh: $1 never answered" >&2; exit 1; }

mkdir -p "$data/files" "$data/profiles"
cp "$root"/examples/demo/*.whl "$root"/examples/demo/*-variants.json "$data/files/"
cat >"$data/profiles/cpu.toml" <<'TOML'
schema = "vari-facts/1"
[platform]
system = "Linux"
machine = "x86_64"
libc = "glibc 2.36"
[x86_64]
level = 3
TOML
cat >"$data/profiles/a100.toml" <<'TOML'
schema = "vari-facts/1"
[platform]
system = "Linux"
machine = "x86_64"
libc = "glibc 2.36"
[nvidia]
cuda_version = "12.8"
compute_capability = "8.0"
[x86_64]
level = 3
TOML
port=$(free_port)
python3 "$here/serve_static.py" "$data/files" "$port" >/dev/null 2>&1 &
server=$!

# The ordinary wheels and the lock.
python3 - "$data/files" "http://127.0.0.1:$port/" "$data/pylock.toml" <<'PY'
import base64, hashlib, json, os, sys, zipfile

files, base, out = sys.argv[1:4]

def row(name, data):
    digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
    return f"{name},sha256={digest},{len(data)}\n"

letters = bytes.maketrans(bytes(range(256)), bytes(b"abcdefghijklmnop"[i % 16] for i in range(256)))
for n in range(12):
    name = f"plain{n:02d}"
    dist_info = f"{name}-1.0.dist-info"
    members = [(f"{name}/__init__.py", b"")]
    members += [(f"{name}/lib{i}.so", os.urandom(1 << 20).translate(letters)) for i in range(4)]
    members += [
        (f"{dist_info}/METADATA", f"Metadata-Version: 2.1\nName: {name}\nVersion: 1.0\n".encode()),
        (f"{dist_info}/WHEEL", b"Wheel-Version: 1.0\nGenerator: bench\nRoot-Is-Purelib: true\nTag: py3-none-any\n"),
    ]
    with zipfile.ZipFile(os.path.join(files, f"{name}-1.0-py3-none-any.whl"), "w") as z:
        record = []
        for member, data in members:
            z.writestr(zipfile.ZipInfo(member, (2024, 1, 1, 0, 0, 0)), data, compress_type=zipfile.ZIP_DEFLATED)
            record.append(row(member, data))
        record.append(f"{dist_info}/RECORD,,\n")
        z.writestr(f"{dist_info}/RECORD", "".join(record), compress_type=zipfile.ZIP_DEFLATED)

def toml(value):
    if isinstance(value, dict):
        return "{ " + ", ".join(f"{json.dumps(k)} = {toml(v)}" for k, v in value.items()) + " }"
    if isinstance(value, list):
        return "[" + ", ".join(toml(v) for v in value) + "]"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    return json.dumps(value)

projects = {}
for name in sorted(os.listdir(files)):
    if not name.endswith(".whl"):
        continue
    data = open(os.path.join(files, name), "rb").read()
    project, version = name.split("-")[:2]
    wheel = {"url": base + name, "size": len(data), "hashes": {"sha256": hashlib.sha256(data).hexdigest()}}
    projects.setdefault((project.replace("_", "-"), version), []).append(wheel)

lines = ['lock-version = "1.0"', 'requires-python = ">=3.9"', 'created-by = "bench/sync.sh"', ""]
for (project, version), wheels in sorted(projects.items()):
    lines += ["[[packages]]", f"name = {json.dumps(project)}", f"version = {json.dumps(version)}",
              "wheels = [" + ", ".join(toml(w) for w in wheels) + "]"]
    if project == "vari-demo":
        document = json.load(open(os.path.join(files, f"vari_demo-{version}-variants.json")))
        lines.append(f"variants-json = {toml(document)}")
        lines.append("tool = " + toml({"vari": {"variant-dependencies": [
            'vari-demo-cuda-runtime==1.0.0 ; "nvidia" in variant_namespaces']}}))
    if project == "vari-demo-cuda-runtime":
        lines.append("tool = " + toml({"vari": {"through-variants": True}}))
    lines.append("")
open(out, "w").write("\n".join(lines))
PY
wait_for "http://127.0.0.1:$port/"
echo "$(ls "$data/files"/*.whl | wc -l) wheels ($(du -sh "$data/files" | cut -f1)) served at http://127.0.0.1:$port/"
echo "vari: $vari"

# Hermetic: no user configuration, caches under $data.
export VARI_CACHE_DIR="$data/vari-cache" VARI_NO_CONFIG=1 UV_NO_CONFIG=1 UV_CACHE_DIR="$data/uv-cache"
unset PIP_INDEX_URL PIP_EXTRA_INDEX_URL PIP_FIND_LINKS UV_INDEX_URL UV_EXTRA_INDEX_URL UV_INDEX \
  UV_DEFAULT_INDEX VIRTUAL_ENV 2>/dev/null || true

# The same files for plain uv: what `vari sync` hands it, per class.
for class in cpu a100; do
  mkdir -p "$data/export-$class"
  "$vari" export "$data/pylock.toml" --target "$data/profiles/$class.toml" \
    --wheelhouse "$data/export-$class/wheels" -o "$data/export-$class/requirements.txt" 2>/dev/null
done

python3 - "$tools" "$vari" "$data" "${RUNS:-7}" "$base" <<'PY'
import os, resource, shutil, statistics, subprocess, sys, time

tools, vari, data, runs, base = sys.argv[1:6]
runs = int(runs)
venv = os.path.join(data, "venv")
python = os.path.join(venv, "bin", "python")
uv = os.path.join(tools, "bin", "uv")
lock = os.path.join(data, "pylock.toml")

def commands(cls):
    profile = os.path.join(data, "profiles", f"{cls}.toml")
    export = os.path.join(data, f"export-{cls}")
    def vari_sync(binary):
        return [binary, "sync", lock, "--python", python, "--profile", profile, "--installer", uv]
    pairs = [
        (f"uv pip sync ({cls})", [uv, "pip", "sync", "--quiet", "--python", python, "--no-index",
                                  "requirements.txt"], export),
        (f"vari sync ({cls})", vari_sync(vari), data),
    ]
    if base:
        pairs.append((f"base vari sync ({cls})", vari_sync(base), data))
    return pairs

def fresh_venv():
    shutil.rmtree(venv, ignore_errors=True)
    subprocess.run([os.path.join(tools, "bin", "python"), "-m", "venv", "--without-pip", venv],
                   check=True)

def once(args, cwd):
    fresh_venv()
    time.sleep(0.2)
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    done = subprocess.run(args, cwd=cwd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if done.returncode != 0:
        raise SystemExit(f"{args[0]} exited with {done.returncode}:\n{done.stderr.decode()}")
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return wall, cpu

for cls in ["cpu", "a100"]:
    pairs = commands(cls)
    for _, args, cwd in pairs:  # warm-up: fills uv's cache and vari's store
        once(args, cwd)
    times = {name: [] for name, _, _ in pairs}
    for _ in range(runs):
        for name, args, cwd in pairs:
            times[name].append(once(args, cwd))
    print(f"\n{cls}: sync into a fresh environment, warm caches, median of {runs} interleaved runs:")
    med = {}
    for name, _, _ in pairs:
        wall = statistics.median(t[0] for t in times[name])
        cpu = statistics.median(t[1] for t in times[name])
        med[name] = (wall, cpu)
        print(f"  {name:<27} wall {wall:6.3f} s   cpu {cpu:6.3f} s")
    uv_name, vari_name = pairs[0][0], pairs[1][0]
    print(f"  vari / uv: wall {med[vari_name][0] / med[uv_name][0]:.2f}x, "
          f"cpu {med[vari_name][1] / med[uv_name][1]:.2f}x  (aim: <= 1.20x)")
PY

echo
echo "A real run on each class (README):"
for class in cpu a100; do
  rm -rf "$data/venv"; "$tools/bin/python" -m venv --without-pip "$data/venv"
  echo "\$ vari sync pylock.toml --profile $class.toml"
  (cd "$data" && "$vari" sync pylock.toml --python venv --profile "profiles/$class.toml" \
    --installer "$tools/bin/uv" 2>/dev/null | grep -E 'vari-demo|removed' | sed "s|$data/||g")
done
