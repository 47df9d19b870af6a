#!/usr/bin/env python3
"""Times whole-process commands and prints each median and the ratios to the first one.

Uses hyperfine when it is installed (its JSON export), else a plain timing loop.

    python3 bench/compare.py [--runs N] [--warmup N] NAME=COMMAND NAME=COMMAND ...

The first command is the baseline (vari); ratios say how many times slower each other one is.
"""

import argparse
import json
import shutil
import statistics
import subprocess
import sys
import tempfile
import time


def with_hyperfine(commands, runs, warmup):
    with tempfile.NamedTemporaryFile(suffix=".json") as export:
        cmd = ["hyperfine", "--style", "basic", "--shell=none", "--warmup", str(warmup),
               "--runs", str(runs), "--export-json", export.name]
        for name, command in commands:
            cmd += ["--command-name", name, command]
        subprocess.run(cmd, check=True, stdout=sys.stderr)
        results = json.load(open(export.name))["results"]
    return [statistics.median(r["times"]) for r in results]


def with_loop(commands, runs, warmup):
    medians = []
    for _, command in commands:
        args = command.split()
        for _ in range(warmup):
            subprocess.run(args, check=True, stdout=subprocess.DEVNULL)
        times = []
        for _ in range(runs):
            start = time.perf_counter()
            subprocess.run(args, check=True, stdout=subprocess.DEVNULL)
            times.append(time.perf_counter() - start)
        medians.append(statistics.median(times))
    return medians


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=20)
    parser.add_argument("--warmup", type=int, default=3)
    parser.add_argument("commands", nargs="+", metavar="NAME=COMMAND")
    args = parser.parse_args()
    commands = [tuple(c.split("=", 1)) for c in args.commands]
    timer = with_hyperfine if shutil.which("hyperfine") else with_loop
    medians = timer(commands, args.runs, args.warmup)
    print(f"timing with {'hyperfine' if timer is with_hyperfine else 'a Python loop'}, "
          f"{args.runs} runs each, median wall time of the whole process:")
    base = medians[0]
    for (name, _), median in zip(commands, medians):
        ratio = "" if median is base else f"  ({median / base:.1f}x the time of {commands[0][0]})"
        print(f"  {name:<28} {median * 1000:9.2f} ms{ratio}")


if __name__ == "__main__":
    main()
