#!/usr/bin/env python3
"""Writes the mirror benchmark's upstream and its lock.

    python3 bench/gen_mirror.py wheels DIR SIZE_MIB
        a torch-like release: examples/demo's vari-demo 1.0.0 (six variants and a plain wheel)
        and its CUDA runtime, each padded with SIZE_MIB of random bytes (stored, so no tool
        gains by compressing); eight plain packages `blob0`..`blob7` of SIZE_MIB each (the
        throughput set, which pip and uv can fetch too); a small `newlike 1.0` (the new release
        of the incremental run). Every wheel has a valid RECORD.
    python3 bench/gen_mirror.py lock DIR BASE_URL OUT [PACKAGE...]
        a pylock.toml (PEP 751 with PEP 825's [packages.variants-json]) listing every wheel of
        DIR for PACKAGE (default: vari-demo and its runtime) at BASE_URL/files/NAME, with
        SHA-256 and size, as `vari lock` writes them.
"""

import base64
import hashlib
import json
import os
import pathlib
import sys
import zipfile

ROOT = pathlib.Path(__file__).resolve().parent.parent
DEMO = ROOT / "examples" / "demo"


def record_line(name, data):
    digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
    return f"{name},sha256={digest},{len(data)}\n"


def write_wheel(path, members):
    """Writes `members` [(name, bytes)] plus a RECORD; large payloads are stored."""
    dist_info = next(n.split("/")[0] for n, _ in members if n.endswith(".dist-info/METADATA"))
    record = "".join(record_line(n, d) for n, d in members) + f"{dist_info}/RECORD,,\n"
    with zipfile.ZipFile(path, "w") as zf:
        for name, data in members:
            kind = zipfile.ZIP_STORED if name.endswith(".bin") else zipfile.ZIP_DEFLATED
            zf.writestr(name, data, compress_type=kind)
        zf.writestr(f"{dist_info}/RECORD", record)


def padded(source, dest, size):
    """The wheel `source` with a `_payload.bin` of `size` random bytes added."""
    with zipfile.ZipFile(source) as zf:
        members = [(i.filename, zf.read(i)) for i in zf.infolist() if not i.filename.endswith("/RECORD")]
    package = next(n.split("/")[0] for n, _ in members if not n.split("/")[0].endswith(".dist-info"))
    members.append((f"{package}/_payload.bin", os.urandom(size)))
    write_wheel(dest, members)


def plain(dest_dir, name, version, size):
    dist_info = f"{name}-{version}.dist-info"
    members = [
        (f"{name}/__init__.py", b""),
        (f"{dist_info}/METADATA", f"Metadata-Version: 2.1\nName: {name}\nVersion: {version}\n".encode()),
        (f"{dist_info}/WHEEL", b"Wheel-Version: 1.0\nRoot-Is-Purelib: true\nTag: py3-none-any\n"),
    ]
    if size:
        members.append((f"{name}/_payload.bin", os.urandom(size)))
    write_wheel(dest_dir / f"{name}-{version}-py3-none-any.whl", members)


def wheels(directory, size_mib):
    directory = pathlib.Path(directory)
    directory.mkdir(parents=True, exist_ok=True)
    size = int(float(size_mib) * 1024 * 1024)
    for source in sorted(DEMO.glob("*.whl")):
        padded(source, directory / source.name, size)
    for source in DEMO.glob("*-variants.json"):
        (directory / source.name).write_bytes(source.read_bytes())
    for i in range(8):
        plain(directory, f"blob{i}", "1.0", size)
    plain(directory, "newlike", "1.0", 0)


def toml_value(value):
    if isinstance(value, dict):
        return "{ " + ", ".join(f"{json.dumps(k)} = {toml_value(v)}" for k, v in value.items()) + " }"
    if isinstance(value, list):
        return "[" + ", ".join(toml_value(v) for v in value) + "]"
    return json.dumps(value)


def lock(directory, base_url, out, packages):
    directory = pathlib.Path(directory)
    packages = packages or ["vari-demo", "vari-demo-cuda-runtime"]
    text = 'lock-version = "1.0"\ncreated-by = "bench/gen_mirror.py"\n'
    for package in packages:
        stem = package.replace("-", "_")
        files = sorted(f for f in directory.glob(f"{stem}-*.whl"))
        version = files[0].name.split("-")[1]
        text += f'\n[[packages]]\nname = "{package}"\nversion = "{version}"\n'
        text += "wheels = [\n"
        for f in files:
            data = f.read_bytes()
            text += (f'  {{ name = "{f.name}", url = "{base_url}/files/{f.name}", size = {len(data)}, '
                     f'hashes = {{ sha256 = "{hashlib.sha256(data).hexdigest()}" }} }},\n')
        text += "]\n"
        variants = directory / f"{stem}-{version}-variants.json"
        if variants.exists():
            meta = json.loads(variants.read_text())
            meta.pop("$schema", None)
            text += f"variants-json = {toml_value(meta)}\n"
        if package == "vari-demo":
            text += ('[packages.tool.vari]\nvariant-dependencies = '
                     '[\'vari-demo-cuda-runtime==1.0.0; "nvidia" in variant_namespaces\']\n')
        if package == "vari-demo-cuda-runtime":
            text += "[packages.tool.vari]\nthrough-variants = true\n"
    pathlib.Path(out).write_text(text)


def main():
    if sys.argv[1] == "wheels":
        wheels(sys.argv[2], sys.argv[3])
    elif sys.argv[1] == "lock":
        lock(sys.argv[2], sys.argv[3], sys.argv[4], sys.argv[5:])
    else:
        sys.exit(__doc__)


if __name__ == "__main__":
    main()
