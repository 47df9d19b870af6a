#!/usr/bin/env python3
"""Writes a static simple index for bench/select.sh.

    python3 bench/gen_select_index.py SITE [--big-mb 200]

- `bench`: a project page of 5,120 files, the size of PyTorch's: 32 versions x 4 CPython
  versions x 5 platforms x the 7 labels of the real PyTorch 2.10 release plus a plain wheel,
  each version linking its `bench-VERSION-variants.json` (the real 2.10 metadata). The wheels
  themselves are not written: selecting reads the page and the variants.json only.
- `big`: one real wheel of `--big-mb` MB (stored, incompressible), hash in its link, for the
  download comparison.
"""

import argparse
import hashlib
import json
import os
import zipfile

HERE = os.path.dirname(os.path.abspath(__file__))
TORCH = os.path.join(HERE, "..", "testdata", "variants-json", "torch-2.10.0-variants.json")

PYTHONS = ["cp310", "cp311", "cp312", "cp313"]
PLATFORMS = [
    "manylinux_2_28_x86_64",
    "manylinux_2_28_aarch64",
    "musllinux_1_2_x86_64",
    "win_amd64",
    "macosx_11_0_arm64",
]


def page(links):
    rows = "\n".join(f'<a href="{href}">{name}</a><br/>' for href, name in links)
    return f"<!DOCTYPE html>\n<html><body>\n{rows}\n</body></html>\n"


def write(path, text):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w") as f:
        f.write(text)


def bench_project(site):
    with open(TORCH) as f:
        document = f.read()
    labels = list(json.loads(document)["variants"]) + [None]
    links = []
    for major in range(1, 33):
        version = f"{major}.0.0"
        for py in PYTHONS:
            for platform in PLATFORMS:
                for label in labels:
                    suffix = f"-{label}" if label else ""
                    name = f"bench-{version}-{py}-{py}-{platform}{suffix}.whl"
                    digest = hashlib.sha256(name.encode()).hexdigest()
                    links.append((f"../../files/{name}#sha256={digest}", name))
        json_name = f"bench-{version}-variants.json"
        write(os.path.join(site, "files", json_name), document)
        links.append((f"../../files/{json_name}", json_name))
    write(os.path.join(site, "simple", "bench", "index.html"), page(links))
    return len(links) - 32


def big_project(site, megabytes):
    name = "big-1.0-py3-none-any.whl"
    path = os.path.join(site, "files", name)
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with zipfile.ZipFile(path, "w", zipfile.ZIP_STORED) as z:
        with z.open("big/payload.bin", "w", force_zip64=True) as out:
            for _ in range(megabytes):
                out.write(os.urandom(1 << 20))
        z.writestr("big-1.0.dist-info/METADATA", "Metadata-Version: 2.1\nName: big\nVersion: 1.0\n")
        z.writestr("big-1.0.dist-info/WHEEL", "Wheel-Version: 1.0\nGenerator: bench\nRoot-Is-Purelib: true\nTag: py3-none-any\n")
        z.writestr(
            "big-1.0.dist-info/RECORD",
            "big/payload.bin,,\nbig-1.0.dist-info/METADATA,,\nbig-1.0.dist-info/WHEEL,,\n"
            "big-1.0.dist-info/RECORD,,\n",
        )
    digest = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            digest.update(block)
    href = f"../../files/{name}#sha256={digest.hexdigest()}"
    write(os.path.join(site, "simple", "big", "index.html"), page([(href, name)]))


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("site")
    parser.add_argument("--big-mb", type=int, default=200)
    args = parser.parse_args()
    files = bench_project(args.site)
    if args.big_mb:
        big_project(args.site, args.big_mb)
    print(f"{args.site}: bench ({files} wheels), big ({args.big_mb} MB)")


if __name__ == "__main__":
    main()
