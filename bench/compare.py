#!/usr/bin/env python3
"""Times whole-process commands and prints each median and the ratios to the first one.

    python3 bench/compare.py [--runs N] [--warmup N] [--clock cpu|wall] [--primed] NAME=COMMAND ...

The first command is the baseline (vari); ratios say how many times slower each other one is.

The runs of the commands are interleaved (A B A B …) so that load from other processes on a
shared machine falls on all of them alike, and by default each run is measured in CPU time
(user + system of the child, from `wait4`), which other processes' load barely changes; a short
process timed right after a long one otherwise runs up to 2x slower in wall time. `--clock
wall` measures wall time instead, with a pause before each run.

CPU time does not remove all of that slowdown here: on this VM a short process run after
about 300 ms of anything else (variantlib, a CPU-bound C loop that touches no memory, or
`sleep 0.3`) takes 1.5-2 ms more CPU than the same process run twice in a row, whatever the
process. `--primed` therefore precedes each measured run by an unmeasured run of the same
command, so that no program is timed right after another one; both programs get the same
treatment. Scripts print both figures.
"""

import argparse
import os
import shlex
import statistics
import subprocess
import time


def run_once(args, clock):
    """One run of `args` (output discarded): its CPU time (user + sys) or wall time, in s."""
    if clock == "wall":
        time.sleep(0.05)  # let the previous process's exit settle
    start = time.perf_counter()
    child = subprocess.Popen(args, stdout=subprocess.DEVNULL)
    _, status, usage = os.wait4(child.pid, 0)
    wall = time.perf_counter() - start
    child.returncode = os.waitstatus_to_exitcode(status)
    if child.returncode != 0:
        raise SystemExit(f"{shlex.join(args)} exited with {child.returncode}")
    return usage.ru_utime + usage.ru_stime if clock == "cpu" else wall


def measure(commands, runs, warmup, clock, primed):
    """The median time of each command over `runs` interleaved runs (each right after an
    unmeasured run of itself when `primed`)."""
    argv = [shlex.split(command) for _, command in commands]
    for _ in range(warmup):
        for args in argv:
            run_once(args, clock)
    times = [[] for _ in commands]
    for _ in range(runs):
        for i, args in enumerate(argv):
            if primed:
                run_once(args, clock)
            times[i].append(run_once(args, clock))
    return [statistics.median(t) for t in times]


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=20)
    parser.add_argument("--warmup", type=int, default=3)
    parser.add_argument("--clock", choices=["cpu", "wall"], default="cpu")
    parser.add_argument(
        "--primed",
        action="store_true",
        help="time each run right after an unmeasured run of the same command",
    )
    parser.add_argument("commands", nargs="+", metavar="NAME=COMMAND")
    args = parser.parse_args()
    commands = [tuple(c.split("=", 1)) for c in args.commands]
    medians = measure(commands, args.runs, args.warmup, args.clock, args.primed)
    what = "CPU time (user + sys)" if args.clock == "cpu" else "wall time"
    how = "interleaved runs each, each right after a run of itself" if args.primed else (
        "interleaved runs each"
    )
    print(f"{args.runs} {how}, median {what} of the whole process:")
    base = medians[0]
    for (name, _), median in zip(commands, medians):
        ratio = "" if median is base else f"  ({median / base:.2f}x the time of {commands[0][0]})"
        print(f"  {name:<28} {median * 1000:9.2f} ms{ratio}")


if __name__ == "__main__":
    main()
