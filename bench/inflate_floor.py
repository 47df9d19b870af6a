#!/usr/bin/env python3
"""The inflating floor of a wheel scan: every deflated member of WHEEL inflated by libdeflate
(the `deflate` package from PyPI; libdeflate is the fastest whole-buffer deflate decoder we know
of), nothing else done with the bytes, members shared among one worker process per core.

    inflate_floor.py WHEEL [RUNS]

Any tool that reads what is inside a deflated member pays at least this: deflate is one
sequential stream per member, so the work cannot be skipped or split further. The compressed
bytes are read into memory before the clock starts, so only inflating is timed. Prints the
median wall and CPU seconds (the workers' user + system time) of RUNS runs (default 3), and
appends them to $BENCH_OUT as `NAME<TAB>wall<TAB>cpu` when that is set.
"""

import multiprocessing
import os
import resource
import statistics
import struct
import sys
import time
import zipfile

import deflate

RAW = []


def deflated_members(path):
    """(compressed bytes, declared size) of every deflated member, read raw."""
    members = []
    with zipfile.ZipFile(path) as archive, open(path, "rb") as f:
        for info in archive.infolist():
            if info.compress_type != zipfile.ZIP_DEFLATED:
                continue
            f.seek(info.header_offset)
            header = f.read(30)
            name_len, extra_len = struct.unpack("<HH", header[26:30])
            f.seek(info.header_offset + 30 + name_len + extra_len)
            members.append((f.read(info.compress_size), info.file_size))
    # Largest first, so that the last member a worker takes is a small one.
    members.sort(key=lambda m: m[1], reverse=True)
    return members


def inflate(index):
    data, size = RAW[index]
    out = deflate.deflate_decompress(data, size)
    if len(out) != size:
        raise SystemExit(f"member {index}: {len(out)} bytes, {size} declared")
    return size


def main():
    path = sys.argv[1]
    runs = int(sys.argv[2]) if len(sys.argv) > 2 else 3
    RAW.extend(deflated_members(path))
    workers = os.cpu_count() or 1
    total = sum(size for _, size in RAW)
    walls, cpus = [], []
    # Forked workers share the compressed bytes read above; each run starts fresh workers so
    # that every run pays the same (the output buffers are new memory each time).
    context = multiprocessing.get_context("fork")
    for _ in range(runs):
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        start = time.perf_counter()
        pool = context.Pool(workers)
        inflated = sum(pool.imap_unordered(inflate, range(len(RAW))))
        # Joined, so that the workers' CPU time is counted in RUSAGE_CHILDREN.
        pool.close()
        pool.join()
        walls.append(time.perf_counter() - start)
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        cpus.append((after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime))
        assert inflated == total
    wall, cpu = statistics.median(walls), statistics.median(cpus)
    name = f"inflate only ({workers} x libdeflate)"
    print(f"{name}: {total / 1e6:.0f} MB inflated from {len(RAW)} members, wall {wall:.3f} s, "
          f"cpu {cpu:.3f} s (median of {runs})", flush=True)
    if "BENCH_OUT" in os.environ:
        with open(os.environ["BENCH_OUT"], "a") as out:
            out.write(f"{name}\t{wall}\t{cpu}\n")


if __name__ == "__main__":
    main()
