"""The interleaved timing loop the lock benchmarks share (bench/lock.sh, lock_universal.sh,
lock_index.sh import it; bench/lib.sh puts this directory on PYTHONPATH).

Runs are interleaved (A B A B …) so that load from other processes on a shared machine falls
on every command alike; each run is measured in wall time and in CPU time (user + system of
the process and its children), with a pause before it so that the previous process's exit
has settled.
"""

import os
import resource
import subprocess
import time


def once(args, cwd, env=None, remove=()):
    """Runs `args` in `cwd` (first removing the files `remove`); returns (wall, CPU) seconds.
    A command that fails stops the benchmark with its error output."""
    for path in remove:
        if os.path.exists(path):
            os.remove(path)
    time.sleep(0.2)  # let the previous process's exit settle
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    done = subprocess.run(args, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, cwd=cwd,
                          env=env)
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if done.returncode != 0:
        raise SystemExit(f"{' '.join(map(str, args[:3]))} exited with {done.returncode}:\n"
                         f"{done.stderr.decode()[-4000:]}")
    return wall, (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def interleaved(runs, commands):
    """`runs` rounds of `commands` ((name, run) pairs, `run()` giving (wall, CPU)), one of
    each per round in order; returns per name its wall times and its CPU times, in run order."""
    walls = {name: [] for name, _ in commands}
    cpus = {name: [] for name, _ in commands}
    for _ in range(runs):
        for name, run in commands:
            wall, cpu = run()
            walls[name].append(wall)
            cpus[name].append(cpu)
    return walls, cpus
