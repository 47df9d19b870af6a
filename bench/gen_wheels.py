#!/usr/bin/env python3
"""Writes COUNT small wheels for the index benchmark: projects of 10 versions x 10 wheels
(9 variant wheels with a schema 0.0.3 `variant.json`, which vari and variantlib 0.2.2 both
read, and one plain wheel), each with a valid RECORD.

    python3 bench/gen_wheels.py DIR [COUNT]        (COUNT defaults to 10000)
    python3 bench/gen_wheels.py DIR --one NAME     one more variant wheel (for the rebuild)
"""

import base64
import hashlib
import json
import pathlib
import sys
import zipfile

SCHEMA = "https://variants-schema.wheelnext.dev/v0.0.3.json"


def variant_json(label, value):
    return json.dumps({
        "$schema": SCHEMA,
        "default-priorities": {"namespace": ["simd"]},
        "providers": {"simd": {"requires": ["simd-provider"]}},
        "variants": {label: {"simd": {"level": [value]}}},
    }, indent=4, sort_keys=True).encode()


def write_wheel(directory, name, version, label=None, value=None):
    dist_info = f"{name}-{version}.dist-info"
    members = [
        (f"{name}/__init__.py", f"LABEL = {label!r}\n".encode()),
        (f"{dist_info}/METADATA",
         f"Metadata-Version: 2.4\nName: {name}\nVersion: {version}\nRequires-Python: >=3.9\n".encode()),
        (f"{dist_info}/WHEEL", b"Wheel-Version: 1.0\nRoot-Is-Purelib: true\nTag: py3-none-any\n"),
    ]
    if label is not None:
        members.append((f"{dist_info}/variant.json", variant_json(label, value)))
    record = "".join(
        f"{member},sha256={base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b'=').decode()},{len(data)}\n"
        for member, data in members
    ) + f"{dist_info}/RECORD,,\n"
    members.append((f"{dist_info}/RECORD", record.encode()))
    suffix = f"-{label}" if label is not None else ""
    path = directory / f"{name}-{version}-py3-none-any{suffix}.whl"
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as archive:
        for member, data in members:
            archive.writestr(member, data)


def main():
    directory = pathlib.Path(sys.argv[1])
    directory.mkdir(parents=True, exist_ok=True)
    if len(sys.argv) > 3 and sys.argv[2] == "--one":
        write_wheel(directory, "pkg_0000", "1.0", sys.argv[3], sys.argv[3])
        return
    count = int(sys.argv[2]) if len(sys.argv) > 2 else 10000
    written = 0
    project = 0
    while written < count:
        for version in range(10):
            for slot in range(10):
                if written == count:
                    return
                name, ver = f"pkg_{project:04d}", f"1.{version}"
                if slot == 9:
                    write_wheel(directory, name, ver)
                else:
                    write_wheel(directory, name, ver, f"l{slot}", f"l{slot}")
                written += 1
        project += 1


if __name__ == "__main__":
    main()
