#!/usr/bin/env python3
"""Writes a static PEP 503 index of a directory of wheels, with or without PEP 658 metadata.

    python3 bench/gen_simple_index.py WHEELS OUT [--metadata]

OUT/simple/index.html lists the projects, OUT/simple/{project}/index.html their files (linked
as ../../files/{file}#sha256=…), OUT/files/ holds the wheels (hard links where the file system
allows, else copies). With --metadata each wheel's .dist-info/METADATA is written beside it as
{file}.metadata and advertised (data-dist-info-metadata and data-core-metadata, with its
SHA-256), as PyPI does; without, the pages say nothing of metadata, as most indexes behind
Artifactory or Nexus do, and an installer must read it from the wheel.
"""

import hashlib
import html
import os
import re
import shutil
import sys
import zipfile


def normalized(name):
    return re.sub(r"[-_.]+", "-", name).lower()


def sha256(data):
    return hashlib.sha256(data).hexdigest()


def metadata_of(path):
    with zipfile.ZipFile(path) as wheel:
        names = [n for n in wheel.namelist() if re.fullmatch(r"[^/]+\.dist-info/METADATA", n)]
        if len(names) != 1:
            raise SystemExit(f"{path}: {len(names)} .dist-info/METADATA members")
        return wheel.read(names[0])


def main():
    args = [a for a in sys.argv[1:] if a != "--metadata"]
    with_metadata = "--metadata" in sys.argv[1:]
    if len(args) != 2:
        raise SystemExit(__doc__)
    wheels, out = args
    files = os.path.join(out, "files")
    os.makedirs(files, exist_ok=True)
    projects = {}
    for name in sorted(os.listdir(wheels)):
        if not name.endswith(".whl"):
            continue
        source = os.path.join(wheels, name)
        target = os.path.join(files, name)
        if not os.path.exists(target):
            try:
                os.link(source, target)
            except OSError:
                shutil.copyfile(source, target)
        with open(source, "rb") as f:
            digest = sha256(f.read())
        attributes = ""
        if with_metadata:
            metadata = metadata_of(source)
            with open(target + ".metadata", "wb") as f:
                f.write(metadata)
            value = f"sha256={sha256(metadata)}"
            attributes = f' data-dist-info-metadata="{value}" data-core-metadata="{value}"'
        link = f'<a href="../../files/{html.escape(name)}#sha256={digest}"{attributes}>{html.escape(name)}</a><br>'
        projects.setdefault(normalized(name.split("-")[0]), []).append(link)
    for project, links in projects.items():
        page = os.path.join(out, "simple", project)
        os.makedirs(page, exist_ok=True)
        with open(os.path.join(page, "index.html"), "w") as f:
            f.write("<!DOCTYPE html>\n<html><body>\n" + "\n".join(links) + "\n</body></html>\n")
    with open(os.path.join(out, "simple", "index.html"), "w") as f:
        rows = "".join(f'<a href="{p}/">{p}</a><br>\n' for p in sorted(projects))
        f.write(f"<!DOCTYPE html>\n<html><body>\n{rows}</body></html>\n")
    print(f"{sum(len(v) for v in projects.values())} wheels of {len(projects)} projects in {out}"
          f" ({'with' if with_metadata else 'without'} .metadata)")


if __name__ == "__main__":
    main()
