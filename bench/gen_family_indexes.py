#!/usr/bin/env python3
"""Writes stand-ins of PyTorch's per-line indexes for bench/families.sh.

    python3 bench/gen_family_indexes.py SITE BASE_URL

- `SITE/whl/LINE/torch/index.html` for the five lines cu130, cu128, cu126, rocm6.4 and cpu, laid
  out as download.pytorch.org's pages are (links to `/whl/LINE/torch-VERSION%2BLINE-TAG.whl`
  with `data-requires-python` and a SHA-256): 24 versions x 4 CPython versions x 3 platforms per
  line, 288 files a page. The wheels themselves are not written: selecting reads the pages only.
- `SITE/simple/`: an empty default index (its `torch` page is absent, as on a mirror without it).
- `SITE/families.toml`: a user's catalog whose `torch` family names the five stand-in indexes
  (`BASE_URL/whl/LINE`), replacing the built-in one.
"""

import hashlib
import os
import sys

LINES = [
    ("cu130", ["nvidia :: cuda_version_lower_bound :: 13.0", "nvidia :: sm_arch :: 80_real"]),
    ("cu128", ["nvidia :: cuda_version_lower_bound :: 12.8", "nvidia :: sm_arch :: 80_real"]),
    ("cu126", ["nvidia :: cuda_version_lower_bound :: 12.6", "nvidia :: sm_arch :: 80_real"]),
    ("rocm6.4", ["amd :: gfx_arch :: gfx942"]),
    ("cpu", None),
]
PYTHONS = ["cp310", "cp311", "cp312", "cp313"]
PLATFORMS = ["manylinux_2_28_x86_64", "manylinux_2_28_aarch64", "win_amd64"]
VERSIONS = [f"2.{minor}.{patch}" for minor in range(2, 10) for patch in range(3)]


def write(path, text):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w") as f:
        f.write(text)


def main():
    site, base = sys.argv[1], sys.argv[2].rstrip("/")
    for line, _ in LINES:
        rows = []
        for version in VERSIONS:
            for python in PYTHONS:
                for platform in PLATFORMS:
                    name = f"torch-{version}+{line}-{python}-{python}-{platform}.whl"
                    sha = hashlib.sha256(name.encode()).hexdigest()
                    href = f"/whl/{line}/{name.replace('+', '%2B')}#sha256={sha}"
                    rows.append(
                        f'    <a href="{href}" data-requires-python="&gt;=3.10">{name}</a><br/>'
                    )
        write(
            os.path.join(site, "whl", line, "torch", "index.html"),
            "<!DOCTYPE html>\n<html>\n  <body>\n    <h1>Links for torch</h1>\n"
            + "\n".join(rows)
            + "\n  </body>\n</html>\n",
        )
    write(os.path.join(site, "simple", "index.html"), "<!DOCTYPE html>\n<html><body></body></html>\n")
    catalog = ['schema = "vari-families/1"', "", "[[family]]", 'name = "torch"', 'same-name = "build"']
    for line, requires in LINES:
        catalog += ["", "[[family.build]]", f'name = "{line}"', f'index = "{base}/whl/{line}"']
        catalog.append(f'local = "{line}"')
        if requires is None:
            catalog.append("null = true")
        else:
            catalog.append("requires = [" + ", ".join(f'"{r}"' for r in requires) + "]")
    write(os.path.join(site, "families.toml"), "\n".join(catalog) + "\n")


if __name__ == "__main__":
    main()
