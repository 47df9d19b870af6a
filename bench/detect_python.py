#!/usr/bin/env python3
"""The Python side of `bench/detect.sh`: the reference ways of learning what this CPU supports,
and the timer that compares them with `vari detect`.

    python bench/detect_python.py archspec    # archspec (PyPI) classifies the CPU
    python bench/detect_python.py variantlib  # variantlib 0.2.2 queries the x86_64 provider
                                              # plugin (provider-variant-x86-64 from PyPI,
                                              # through bench/x86_64_adapter.py; PYTHONPATH=bench)
    python bench/detect_python.py time [--runs N] [--pause S] NAME=COMMAND ...

The first two print the supported x86_64 features as JSON, so `detect.sh` can check that they
agree with `vari detect`.

`time` runs whole processes fairly on a shared, noisy machine: the commands take turns (one run
of each per round, the order rotating every round, so no command always follows the same one),
with a pause between runs (a short process started right after a long one runs up to twice as
slow), and it reports for each the median CPU time (user + system, from the kernel's accounting
of the process; insensitive to other load) and the median wall time over the runs, with the
ratios to the first command.
"""

import json
import os
import sys
import time


def with_archspec():
    import archspec.cpu

    host = archspec.cpu.host()
    print(json.dumps({"host": host.name, "generic": host.generic.name,
                      "features": sorted(host.features)}))


def with_variantlib():
    from variantlib.plugins.loader import DictPluginLoader

    # The reference plugin does not follow variantlib 0.2.2's plugin protocol;
    # `x86_64_adapter` bridges only the differences (see its docstring).
    plugin = "x86_64_adapter:plugin"
    with DictPluginLoader({"x86_64": plugin}) as loader:
        configs = loader.get_supported_configs()
    features = [
        {"name": c.name, "values": list(c.values)}
        for provider in configs.values()
        for c in provider.configs
    ]
    print(json.dumps(features))


def run_once(argv):
    """Wall and CPU seconds of one run of `argv` (stdout discarded); fails on a non-zero exit."""
    devnull = [(os.POSIX_SPAWN_OPEN, 1, os.devnull, os.O_WRONLY, 0)]
    start = time.perf_counter()
    pid = os.posix_spawnp(argv[0], argv, os.environ, file_actions=devnull)
    _, status, usage = os.wait4(pid, 0)
    wall = time.perf_counter() - start
    if os.waitstatus_to_exitcode(status) != 0:
        sys.exit(f"{' '.join(argv)} failed with status {status}")
    return wall, usage.ru_utime + usage.ru_stime


def time_commands(args):
    # Imported here: the reference runs above must not pay for them.
    import argparse
    import statistics

    parser = argparse.ArgumentParser(prog="detect_python.py time")
    parser.add_argument("--runs", type=int, default=30)
    parser.add_argument("--warmup", type=int, default=3)
    parser.add_argument("--pause", type=float, default=0.2, help="seconds between runs")
    parser.add_argument("commands", nargs="+", metavar="NAME=COMMAND")
    options = parser.parse_args(args)
    commands = [(name, command.split()) for name, command in
                (c.split("=", 1) for c in options.commands)]
    for _ in range(options.warmup):
        for _, argv in commands:
            run_once(argv)
    walls = {name: [] for name, _ in commands}
    cpus = {name: [] for name, _ in commands}
    for round_ in range(options.runs):
        shift = round_ % len(commands)
        for name, argv in commands[shift:] + commands[:shift]:
            time.sleep(options.pause)
            wall, cpu = run_once(argv)
            walls[name].append(wall)
            cpus[name].append(cpu)
    print(f"{options.runs} runs each, taking turns, {options.pause} s pause before each run; "
          f"medians of the whole process:")
    base_name = commands[0][0]
    base_cpu = statistics.median(cpus[base_name])
    base_wall = statistics.median(walls[base_name])
    print(f"  {'':<28} {'CPU time':>10} {'ratio':>7}   {'wall time':>10} {'ratio':>7}")
    for name, _ in commands:
        cpu = statistics.median(cpus[name])
        wall = statistics.median(walls[name])
        print(f"  {name:<28} {cpu * 1000:8.2f} ms {cpu / base_cpu:6.1f}x   "
              f"{wall * 1000:8.2f} ms {wall / base_wall:6.1f}x")


if __name__ == "__main__":
    modes = {"archspec": with_archspec, "variantlib": with_variantlib}
    if sys.argv[1] == "time":
        time_commands(sys.argv[2:])
    else:
        modes[sys.argv[1]]()
