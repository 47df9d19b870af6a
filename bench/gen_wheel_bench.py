"""Generates the wheels bench/wheel.sh measures.

    gen_wheel_bench.py small PATH N     a wheel of N small files (a few dozen bytes each, deflated)
    gen_wheel_bench.py large PATH MB    a wheel of about MB megabytes: 16 MiB members of random
                                        (incompressible) bytes, stored, plus a small package and
                                        a correct RECORD (the cheapest wheel for a tool that
                                        decompresses and recompresses: nothing to inflate)
    gen_wheel_bench.py deflated PATH MB a wheel of about MB megabytes of deflated members, as
                                        build backends write them: 16 MiB of random bytes over a
                                        16-letter alphabet each (deflate halves them, as it does
                                        shared libraries)
"""
import base64
import hashlib
import os
import sys
import zipfile


def row(name, data):
    digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
    return f"{name},sha256={digest},{len(data)}\n"


def write(path, members):
    stem = os.path.basename(path)[: -len(".whl")]
    name, version = stem.split("-")[:2]
    dist_info = f"{name}-{version}.dist-info"
    record = []
    with zipfile.ZipFile(path, "w") as z:
        for member, data, method in members:
            z.writestr(zipfile.ZipInfo(member, (2024, 1, 1, 0, 0, 0)), data, compress_type=method)
            record.append(row(member, data))
        for member, data in [
            (f"{dist_info}/METADATA", f"Metadata-Version: 2.1\nName: {name}\nVersion: {version}\n".encode()),
            (f"{dist_info}/WHEEL", b"Wheel-Version: 1.0\nGenerator: bench\nRoot-Is-Purelib: true\nTag: py3-none-any\n"),
        ]:
            z.writestr(member, data, compress_type=zipfile.ZIP_DEFLATED)
            record.append(row(member, data))
        record.append(f"{dist_info}/RECORD,,\n")
        z.writestr(f"{dist_info}/RECORD", "".join(record), compress_type=zipfile.ZIP_DEFLATED)


def main():
    kind, path, size = sys.argv[1], sys.argv[2], int(sys.argv[3])
    if kind == "small":
        members = (
            (f"bench_pkg/m{i // 1000}/f{i}.py", f"VALUE = {i}\n".encode(), zipfile.ZIP_DEFLATED)
            for i in range(size)
        )
    elif kind == "large":
        chunk = 16 * 1024 * 1024
        members = (
            (f"bench_pkg/lib{i}.so", os.urandom(chunk), zipfile.ZIP_STORED)
            for i in range(max(1, size * 1_000_000 // chunk))
        )
    else:
        chunk = 16 * 1024 * 1024
        sixteen_letters = bytes.maketrans(bytes(range(256)), bytes(b"abcdefghijklmnop"[i % 16] for i in range(256)))
        members = (
            (f"bench_pkg/lib{i}.so", os.urandom(chunk).translate(sixteen_letters), zipfile.ZIP_DEFLATED)
            # Deflate stores about 4.3 bits per byte.
            for i in range(max(1, size * 1_000_000 * 100 // 54 // chunk))
        )
    write(path, members)


main()
