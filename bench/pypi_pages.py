#!/usr/bin/env python3
"""A static index with PyPI's own pages for a set of wheels held locally, for the benchmarks
that must parse what a real index serves (bench/install_uv.sh).

    python3 bench/pypi_pages.py PAGES WHEELS SITE BASE

PAGES holds PyPI's JSON simple pages (PEP 691), one `{project}.json` per project; WHEELS the
wheels downloaded from PyPI; BASE the URL SITE is served at (`https://127.0.0.1:PORT/`). Writes
SITE/simple/index.html (the project list), and per project SITE/simple/{project}/index.json and
index.html: every file PyPI lists (numpy's page lists over 4,000), those held in WHEELS pointing
at SITE/files/{filename} (a symbolic link) with their PEP 658 metadata beside them, the others at
PyPI's URLs (never fetched: they are older versions or other platforms). So a client reads pages
of PyPI's size and downloads PyPI's bytes, all from 127.0.0.1.
"""

import hashlib
import html
import json
import os
import re
import sys
import zipfile


def normalize(name):
    return re.sub(r"[-_.]+", "-", name).lower()


def wheel_metadata(path):
    """The METADATA file of a wheel's .dist-info directory."""
    with zipfile.ZipFile(path) as archive:
        for name in archive.namelist():
            parts = name.split("/")
            if len(parts) == 2 and parts[0].endswith(".dist-info") and parts[1] == "METADATA":
                return archive.read(name)
    raise SystemExit(f"{path}: no METADATA")


def anchor(entry):
    attributes = [f'href="{html.escape(entry["url"])}#sha256={entry["hashes"]["sha256"]}"']
    if entry.get("requires-python"):
        attributes.append(f'data-requires-python="{html.escape(entry["requires-python"])}"')
    if entry.get("core-metadata"):
        digest = entry["core-metadata"]["sha256"]
        attributes.append(f'data-core-metadata="sha256={digest}"')
        attributes.append(f'data-dist-info-metadata="sha256={digest}"')
    if entry.get("yanked"):
        reason = entry["yanked"] if isinstance(entry["yanked"], str) else ""
        attributes.append(f'data-yanked="{html.escape(reason)}"')
    return f'<a {" ".join(attributes)}>{html.escape(entry["filename"])}</a><br/>'


def main():
    pages, wheels, site, base = sys.argv[1:5]
    files = os.path.join(site, "files")
    os.makedirs(files, exist_ok=True)
    local = {}
    for name in sorted(os.listdir(wheels)):
        if name.endswith(".whl"):
            local[name] = os.path.join(wheels, name)
    projects = sorted({normalize(name.split("-")[0]) for name in local})
    for project in projects:
        with open(os.path.join(pages, f"{project}.json")) as page:
            data = json.load(page)
        for entry in data["files"]:
            path = local.get(entry["filename"])
            # Only what PyPI's page says a client should see is changed: where the file is.
            entry.pop("core-metadata", None)
            entry.pop("data-dist-info-metadata", None)
            entry.pop("dist-info-metadata", None)
            if path is None:
                continue
            link = os.path.join(files, entry["filename"])
            if not os.path.lexists(link):
                os.symlink(path, link)
            metadata = wheel_metadata(path)
            with open(link + ".metadata", "wb") as out:
                out.write(metadata)
            digest = hashlib.sha256(metadata).hexdigest()
            entry["core-metadata"] = {"sha256": digest}
            entry["url"] = f"{base}files/{entry['filename']}"
        directory = os.path.join(site, "simple", project)
        os.makedirs(directory, exist_ok=True)
        with open(os.path.join(directory, "index.json"), "w") as out:
            json.dump(data, out)
        anchors = "\n".join(anchor(entry) for entry in data["files"])
        with open(os.path.join(directory, "index.html"), "w") as out:
            out.write('<!DOCTYPE html>\n<html><head>'
                      '<meta name="pypi:repository-version" content="1.1">'
                      f"<title>Links for {project}</title></head><body>\n"
                      f"<h1>Links for {project}</h1>\n{anchors}\n</body></html>\n")
    with open(os.path.join(site, "simple", "index.html"), "w") as out:
        links = "\n".join(f'<a href="{p}/">{p}</a><br/>' for p in projects)
        out.write(f"<!DOCTYPE html>\n<html><body>\n{links}\n</body></html>\n")
    print(len(projects))


if __name__ == "__main__":
    main()
