#!/usr/bin/env python3
"""Generates a wheel of real shared libraries for the `vari wheel scan` benchmark.

    python3 bench/gen_scan_wheel.py OUT.whl [TARGET_MB]

CPU libraries: the ELF shared libraries of this machine (/usr/lib, the Rust toolchain's), largest
first, real x86-64 machine code. GPU libraries: copies of a mid-sized library with a `.nv_fatbin`
section added by `objcopy` (a CUDA library is mostly fat binary), holding the real containers of
testdata/fatbin/ between synthetic, incompressible SASS and PTX entries. Members are deflated, as wheels are, until the wheel reaches
TARGET_MB (default 1000) megabytes.
"""

import glob
import os
import struct
import subprocess
import sys
import tempfile
import zipfile

HERE = os.path.dirname(os.path.abspath(__file__))
FATBINS = sorted(glob.glob(os.path.join(HERE, "..", "testdata", "fatbin", "*.nv_fatbin")))
GPU_LIBS = 6
FATBIN_MB = 48


def is_elf_library(path):
    try:
        with open(path, "rb") as f:
            head = f.read(18)
    except OSError:
        return False
    # ELF, 64-bit, e_type ET_DYN.
    return head[:4] == b"\x7fELF" and head[4] == 2 and head[16:18] == b"\x03\x00"


def libraries():
    roots = ["/usr/lib", os.path.expanduser("~/.rustup/toolchains")]
    seen, found = set(), []
    for root in roots:
        # Not following symbolic links: library directories link into each other.
        for directory, _, names in os.walk(root):
            for name in names:
                if ".so" not in name:
                    continue
                path = os.path.join(directory, name)
                if os.path.islink(path) or not os.path.isfile(path):
                    continue
                key = os.stat(path).st_ino
                if key in seen or os.path.getsize(path) < 1 << 20:
                    continue
                seen.add(key)
                if is_elf_library(path):
                    found.append(path)
    return sorted(found, key=os.path.getsize, reverse=True)


def container(entries):
    """A fat-binary container of (kind, arch, payload) entries, stored uncompressed."""
    body = b""
    for kind, arch, payload in entries:
        payload += b"\0" * (-len(payload) % 8)
        # kind, 0x0101, header size, payload size, stored size, options offset, code version
        # 1.7, architecture, name offset and length, flags (64-bit, Linux), zero, decompressed.
        header = struct.pack("<HHIQIIHHIIIQQQ", kind, 0x0101, 64, len(payload), 0, 0, 7, 1,
                             arch, 0, 0, 0x11, 0, 0)
        body += header + payload
    return struct.pack("<IHHQ", 0xBA55ED50, 1, 16, len(body)) + body


def cubin(arch, size):
    """An ELF64 EM_CUDA header (ABI version 7: the SM in e_flags' low byte), then random bytes:
    as incompressible as real (compressed) GPU code."""
    header = bytearray(64)
    header[:9] = b"\x7fELF\x02\x01\x01\x33\x07"
    struct.pack_into("<HH", header, 16, 2, 190)
    struct.pack_into("<I", header, 48, 0x0500_0500 | arch)
    return bytes(header) + os.urandom(size - 64)


def gpu_library(base, tmp, index):
    """`base` with a .nv_fatbin section of FATBIN_MB: the real containers of testdata/fatbin/
    (LZ4 and Zstandard entries) between synthetic ones with SASS for seven architectures and PTX."""
    real = b"".join(open(f, "rb").read() for f in FATBINS)
    section = os.path.join(tmp, f"fatbin{index}")
    with open(section, "wb") as f:
        written = 0
        while written < FATBIN_MB << 20:
            entries = [(2, arch, cubin(arch, 256 << 10)) for arch in (75, 80, 86, 89, 90, 100, 120)]
            entries.append((1, 90, os.urandom(64 << 10)))
            chunk = container(entries) + real
            f.write(chunk)
            written += len(chunk)
    out = os.path.join(tmp, f"libgpu{index}.so")
    # Not `alloc`: objcopy cannot place a new allocated section in a segment, and the scan reads
    # section headers only.
    subprocess.run(["objcopy", "--add-section", f".nv_fatbin={section}",
                    "--set-section-flags", ".nv_fatbin=readonly,data", base, out],
                   check=True)
    os.remove(section)
    return out


def main():
    out = sys.argv[1]
    target = int(sys.argv[2]) if len(sys.argv) > 2 else 1000
    libs = libraries()
    if not libs:
        sys.exit("no ELF shared libraries found on this machine")
    mid = min(libs, key=lambda p: abs(os.path.getsize(p) - (8 << 20)))
    with tempfile.TemporaryDirectory() as tmp, \
            zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as wheel:
        wheel.writestr("bench_scan/__init__.py", "")
        for i in range(GPU_LIBS):
            wheel.write(gpu_library(mid, tmp, i), f"bench_scan/lib/libgpu{i}.so")
        round_ = 0
        while True:
            for i, lib in enumerate(libs):
                wheel.fp.flush()
                if os.path.getsize(out) >= target << 20:
                    break
                wheel.write(lib, f"bench_scan/lib{round_}/{i:03}_{os.path.basename(lib)}")
            else:
                round_ += 1
                continue
            break
        wheel.writestr("bench_scan-1.0.dist-info/METADATA",
                       "Metadata-Version: 2.1\nName: bench-scan\nVersion: 1.0\n")
    print(f"{out}: {os.path.getsize(out) / 1e6:.0f} MB, "
          f"{len(zipfile.ZipFile(out).namelist())} members")


if __name__ == "__main__":
    main()
