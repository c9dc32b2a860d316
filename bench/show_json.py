"""`session-tree show FILE --json` as a whole process ÷ a whole process that only parses every line
of FILE with orjson (the goal: ≤ 2×), at 10k, 100k entries and ~204 MB (270k entries).

    .venv/bin/python bench/show_json.py [--runs 5] [--only 10k 100k 204MB] [--project DIR] [--data DIR]

The files are made by `samplegen.synthetic_session` (the ones of bench/lazy.py) in `--data`
(default /tmp/session-tree-bench: big files stay out of the checkout). `--project` measures the
code of another checkout (e.g. main, for a before/after) on the same files. Each figure is the
best of `--runs` fresh processes in CPU time (user + system, what the process itself costs on a
shared machine) with the median wall time beside it. Modules are compiled once beforehand, into a
cache outside the checkouts, as an installed package has them (this machine's environment sets
PYTHONDONTWRITEBYTECODE, which would make every run compile every module again).
With `--instructions`, each command is also run once under valgrind's callgrind (Debian's
`valgrind`), which counts the instructions it executes: the same on a busy machine as on a quiet
one, where the CPU time of a best-of-N still moves with what shares the cores.
A measurement, not a test: it prints figures against the goal and never fails.
"""

from __future__ import annotations

import argparse
import os
import re
import statistics
import subprocess
import sys
import time
from pathlib import Path

from processes import child_times, compiled_env

PROJECT_DIR = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(PROJECT_DIR))

FILES = {  # name -> synthetic_session arguments (bench/lazy.py's files)
    "10k": dict(n_entries=10_000, seed=208),
    "100k": dict(n_entries=100_000, seed=208),
    "204MB": dict(n_entries=270_000, seed=208),
}
GOAL = 2.0

BARE = """
import sys, orjson
with open(sys.argv[1], "rb") as f:
    for line in f:
        try:
            orjson.loads(line)
        except orjson.JSONDecodeError:
            pass
"""


def ensure(data: Path, name: str) -> Path:
    import samplegen

    path = data / f"show-{name}.jsonl"
    if not path.exists():
        data.mkdir(parents=True, exist_ok=True)
        t = time.perf_counter()
        header, items = samplegen.synthetic_session(**FILES[name])
        samplegen.write_jsonl(path, header, items)
        print(f"generated {path}: {path.stat().st_size / 1e6:.0f} MB in {time.perf_counter() - t:.0f} s", flush=True)
    return path


def measure(cmd: list[str], env: dict, runs: int, cwd: Path) -> tuple[float, float]:
    """(best CPU time, median wall time) of `cmd` run `runs` times in `cwd` (`python -m` puts the
    current folder first on the path: run elsewhere, it would import that folder's code)."""
    wall, cpu = zip(*(child_times(cmd, env, cwd) for _ in range(runs)))
    return min(cpu), statistics.median(wall)


def instructions(cmd: list[str], env: dict, cwd: Path) -> int:
    """The instructions `cmd` executes, counted by callgrind (about 50× slower than the run)."""
    done = subprocess.run(["valgrind", "--tool=callgrind", "--callgrind-out-file=/dev/null", *cmd],
                          stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True, check=True, env=env, cwd=cwd)
    return int(re.search(r"Collected : (\d+)", done.stderr).group(1))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--only", nargs="+", choices=list(FILES), default=list(FILES))
    ap.add_argument("--project", type=Path, default=PROJECT_DIR, help="the checkout whose code is measured")
    ap.add_argument("--data", type=Path, default=Path("/tmp/session-tree-bench"))
    ap.add_argument("--instructions", action="store_true", help="also count instructions (needs valgrind)")
    args = ap.parse_args()
    env = compiled_env(args.project.resolve(), args.data / "pycache")
    show = [sys.executable, "-m", "webapp.cli", "show"]
    bare = [sys.executable, "-c", BARE]
    print(f"code: {args.project.resolve()}; load average {os.getloadavg()[0]:.1f}; best CPU of {args.runs} "
          f"(median wall)", flush=True)
    for name in args.only:
        path = ensure(args.data, name)
        project = args.project.resolve()
        subprocess.run([*show, str(path), "--json"], stdout=subprocess.DEVNULL, check=True, env=env, cwd=project)  # (compiles)
        b_cpu, b_wall = measure([*bare, str(path)], env, args.runs, project)
        s_cpu, s_wall = measure([*show, str(path), "--json"], env, args.runs, project)
        ratio = s_cpu / b_cpu
        print(f"{name:>6} ({path.stat().st_size / 1e6:4.0f} MB): show --json {s_cpu:5.2f} s ({s_wall:5.2f}), "
              f"bare parse {b_cpu:5.2f} s ({b_wall:5.2f}): {ratio:4.2f}× CPU, {s_wall / b_wall:4.2f}× wall "
              f"(goal ≤ {GOAL}×: {'met' if ratio <= GOAL else 'NOT met'})", flush=True)
        if args.instructions:
            s_ins, b_ins = instructions([*show, str(path), "--json"], env, project), instructions([*bare, str(path)], env, project)
            print(f"{'':>6}  instructions: show --json {s_ins / 1e6:,.0f} M, bare parse {b_ins / 1e6:,.0f} M: "
                  f"{s_ins / b_ins:4.2f}×", flush=True)
    print(f"load average after: {os.getloadavg()[0]:.1f}")


if __name__ == "__main__":
    main()
