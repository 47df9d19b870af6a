#!/usr/bin/env python3
"""Writes the wheels of the 50-package set that bench/proxy.sh installs.

    python3 bench/gen_proxy_index.py DIR [--kib 64]

- `pkg00` … `pkg44`: plain `py3-none-any` wheels, each with a module of `--kib` KiB of
  incompressible data (so installing does real copying) and, for every fifth one, a dependency
  on the next package (so the installers resolve a little).
- `gpu00` … `gpu04`: projects with variants. Each has a plain wheel (what a variant-unaware
  installer takes) and a second plain wheel written to DIR/variant-sources/, which bench/proxy.sh
  turns into the null variant and a CUDA 12.8 variant with `vari wheel make-variant`. Each
  variant's METADATA has a dependency behind a variant marker, so the proxy rewrites the wheel
  it serves.

Everything is deterministic (fixed timestamps, seeded data), so two runs give the same index.
"""

import argparse
import base64
import hashlib
import os
import random
import zipfile

EPOCH = (2024, 1, 1, 0, 0, 0)


def record_line(name, data):
    digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
    return f"{name},sha256={digest},{len(data)}"


def wheel(path, name, version, requires, payload):
    dist = f"{name}-{version}.dist-info"
    metadata = f"Metadata-Version: 2.1\nName: {name}\nVersion: {version}\n"
    metadata += "".join(f"Requires-Dist: {r}\n" for r in requires)
    members = [
        (f"{name}/__init__.py", f"VERSION = {version!r}\n".encode()),
        (f"{name}/_data.bin", payload),
        (f"{dist}/METADATA", metadata.encode()),
        (f"{dist}/WHEEL", b"Wheel-Version: 1.0\nGenerator: bench\nRoot-Is-Purelib: true\nTag: py3-none-any\n"),
    ]
    record = "\n".join(record_line(n, d) for n, d in members) + f"\n{dist}/RECORD,,\n"
    members.append((f"{dist}/RECORD", record.encode()))
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as z:
        for member, data in members:
            info = zipfile.ZipInfo(member, EPOCH)
            info.compress_type = zipfile.ZIP_DEFLATED
            info.external_attr = 0o644 << 16
            z.writestr(info, data)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("dir")
    parser.add_argument("--kib", type=int, default=64)
    args = parser.parse_args()
    os.makedirs(os.path.join(args.dir, "wheels"), exist_ok=True)
    os.makedirs(os.path.join(args.dir, "variant-sources"), exist_ok=True)
    rng = random.Random(50)
    for i in range(45):
        name = f"pkg{i:02d}"
        requires = [f"pkg{i + 1:02d}"] if i % 5 == 0 and i + 1 < 45 else []
        payload = rng.randbytes(args.kib * 1024)
        wheel(os.path.join(args.dir, "wheels", f"{name}-1.0.0-py3-none-any.whl"), name, "1.0.0", requires, payload)
    for i in range(5):
        name = f"gpu{i:02d}"
        payload = rng.randbytes(args.kib * 1024)
        wheel(os.path.join(args.dir, "wheels", f"{name}-1.0.0-py3-none-any.whl"), name, "1.0.0", [], payload)
        wheel(
            os.path.join(args.dir, "variant-sources", f"{name}-1.0.0-py3-none-any.whl"),
            name,
            "1.0.0",
            ['pkg44; "nvidia" in variant_namespaces'],
            payload,
        )


if __name__ == "__main__":
    main()
