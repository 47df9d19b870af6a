#!/usr/bin/env python3
"""Writes the stand-in wheels and the family catalog of bench/lock_families.sh.

    python3 bench/gen_lock_families.py DATA BASE_URL

- `DATA/wheels/LINE/`: torch 2.8.0 and 2.9.0 for each of PyTorch's five lines (cu130, cu128,
  cu126, rocm6.4, cpu), as PyTorch names them (`torch-2.9.0+cu128-cp312-cp312-…`), for CPython
  3.10-3.13 on manylinux_2_28 x86_64; each requires `filelock` and `typing-extensions`, and the
  CUDA lines the CUDA runtime of their line (`nvidia-cuda-runtime-cu12==12.8.*`,
  `nvidia-cuda-runtime==13.0.*`), as PyTorch's do. bench/lock_families.sh builds each line's
  directory into an index of its own (`BASE_URL/whl/LINE/simple/`).
- `DATA/wheels/default/`: the default index's wheels: a by-name family's builds (faiss-cpu 1.15.1
  and faiss-gpu-cu12 1.14.1.post1, released on their own schedules as the real ones are; the GPU
  build requires the CUDA 12 runtime), the runtimes and the ordinary dependencies.
- `DATA/families.toml`: a user's catalog with family `torch` (by index, the five stand-in
  indexes) and family `faiss` (by name), replacing the built-in ones.

Every wheel is small (a module and its metadata) and valid (RECORD with hashes).
"""

import base64
import hashlib
import os
import sys
import zipfile

LINES = [
    ("cu130", ["nvidia :: cuda_version_lower_bound :: 13.0"],
     "nvidia-cuda-runtime==13.0.*"),
    ("cu128", ["nvidia :: cuda_version_lower_bound :: 12.8"],
     "nvidia-cuda-runtime-cu12==12.8.*"),
    ("cu126", ["nvidia :: cuda_version_lower_bound :: 12.6"],
     "nvidia-cuda-runtime-cu12==12.6.*"),
    ("rocm6.4", ["amd :: gfx_arch :: gfx942"], None),
    ("cpu", None, None),
]
PYTHONS = ["cp310", "cp311", "cp312", "cp313"]
TORCH_VERSIONS = ["2.8.0", "2.9.0"]
# name, version, requirements: the default index.
DEFAULT = [
    ("faiss-cpu", "1.15.1", ["numpy>=1.25", "packaging"]),
    ("faiss-gpu-cu12", "1.14.1.post1",
     ["numpy>=1.25", "packaging", "nvidia-cuda-runtime-cu12>=12.1"]),
    ("nvidia-cuda-runtime-cu12", "12.6.77", []),
    ("nvidia-cuda-runtime-cu12", "12.8.90", []),
    ("nvidia-cuda-runtime", "13.0.96", []),
    ("filelock", "3.20.0", []),
    ("typing-extensions", "4.15.0", []),
    ("numpy", "2.3.4", []),
    ("packaging", "25.0", []),
]


def record_line(name, data):
    digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
    return f"{name},sha256={digest},{len(data)}\n"


def wheel(directory, name, version, tag, requires):
    module = name.replace("-", "_")
    dist_info = f"{module}-{version}.dist-info"
    metadata = f"Metadata-Version: 2.1\nName: {name}\nVersion: {version}\nRequires-Python: >=3.10\n"
    metadata += "".join(f"Requires-Dist: {r}\n" for r in requires)
    members = [
        (f"{module}/__init__.py", f"VERSION = {version!r}\n".encode()),
        (f"{dist_info}/METADATA", metadata.encode()),
        (f"{dist_info}/WHEEL",
         f"Wheel-Version: 1.0\nGenerator: bench\nRoot-Is-Purelib: false\nTag: {tag}\n".encode()),
    ]
    record = "".join(record_line(n, d) for n, d in members) + f"{dist_info}/RECORD,,\n"
    members.append((f"{dist_info}/RECORD", record.encode()))
    os.makedirs(directory, exist_ok=True)
    path = os.path.join(directory, f"{module}-{version}-{tag}.whl")
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as z:
        for member, data in members:
            # A fixed date: the same bytes (and hashes) every time the bench runs.
            info = zipfile.ZipInfo(member, date_time=(2026, 1, 1, 0, 0, 0))
            z.writestr(info, data)


def main():
    data, base = sys.argv[1], sys.argv[2].rstrip("/")
    for line, _, runtime in LINES:
        for version in TORCH_VERSIONS:
            for python in PYTHONS:
                requires = ["filelock", "typing-extensions>=4.10.0"]
                if runtime:
                    requires.append(f'{runtime}; platform_system == "Linux"')
                wheel(os.path.join(data, "wheels", line), "torch", f"{version}+{line}",
                      f"{python}-{python}-manylinux_2_28_x86_64", requires)
    for name, version, requires in DEFAULT:
        wheel(os.path.join(data, "wheels", "default"), name, version, "py3-none-any", requires)
    catalog = ['schema = "vari-families/1"', "",
               "[[family]]", 'name = "torch"', 'same-name = "build"']
    for line, requires, _ in LINES:
        catalog += ["", "[[family.build]]", f'name = "{line}"',
                    f'index = "{base}/whl/{line}/simple/"', f'local = "{line}"']
        if requires is None:
            catalog.append("null = true")
        else:
            catalog.append("requires = [" + ", ".join(f'"{r}"' for r in requires) + "]")
    catalog += ["", "[[family]]", 'name = "faiss"', 'same-name = "unrelated"',
                "", "[[family.build]]", 'name = "cu12"', 'distribution = "faiss-gpu-cu12"',
                'requires = ["nvidia :: cuda_version_lower_bound :: 12.1"]',
                "", "[[family.build]]", 'name = "cpu"', 'distribution = "faiss-cpu"',
                "null = true"]
    with open(os.path.join(data, "families.toml"), "w") as f:
        f.write("\n".join(catalog) + "\n")


if __name__ == "__main__":
    main()
