"""Where the test suite's time goes: wall and CPU seconds of the whole run and of each test.

    .venv/bin/python bench/suite_cpu.py [--out DIR] [--top N] [-- PYTEST ARGS]

Runs pytest (by default as `make test` does: `-q -n 2`) and prints its wall time, the CPU
seconds of every process it started, the CPU of each worker, and the files and tests that cost
most. CPU is the figure to read on a shared machine: wall times there are several times the CPU
times and change with the others' load.

Why not `/usr/bin/time`: Chromium's zygote forks each renderer twice, so a renderer's parent is
gone when it ends and no `wait` of ours ever counts it (the pages' layout, scripts and painting).
Here every process the run starts is adopted when orphaned (PR_SET_CHILD_SUBREAPER, in this
process and in each test process) and counted: a test's CPU is that of the test process and of
every process under it, the orphans and the ended ones included, before and after the test.

As a pytest plugin (`-p suite_cpu`, with bench/ on PYTHONPATH; the script adds both) it writes one
JSON line per test to $SUITE_CPU_DIR/<worker>.jsonl.
"""

from __future__ import annotations

import argparse
import collections
import ctypes
import glob
import json
import os
import resource
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
PR_SET_CHILD_SUBREAPER = 36
TICK = os.sysconf("SC_CLK_TCK")


def adopt_orphans() -> None:
    """Orphaned descendants become this process's children (Linux), so their CPU is counted."""
    ctypes.CDLL(None, use_errno=True).prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0)


def _children(pid: int) -> list[int]:
    found: list[int] = []
    try:
        for tid in os.listdir(f"/proc/{pid}/task"):
            with open(f"/proc/{pid}/task/{tid}/children") as f:
                found += map(int, f.read().split())
    except OSError:
        pass
    return found


def tree_cpu(root: int | None = None) -> float:
    """CPU seconds of a process and all under it: each one's own, and its waited-for children's
    (a process not yet waited for, a zombie, still shows its own)."""
    total, stack = 0, [root or os.getpid()]
    while stack:
        pid = stack.pop()
        try:
            with open(f"/proc/{pid}/stat", "rb") as f:
                stat = f.read()
        except OSError:
            continue
        fields = stat[stat.rindex(b")") + 2:].split()
        total += sum(int(x) for x in fields[11:15])  # utime, stime, cutime, cstime
        stack += _children(pid)
    return total / TICK


# -- the plugin ---------------------------------------------------------------------------------

_out = None


def pytest_configure(config):
    global _out
    adopt_orphans()
    folder = os.environ.get("SUITE_CPU_DIR")
    if folder:
        _out = open(Path(folder) / f"{os.environ.get('PYTEST_XDIST_WORKER', 'main')}.jsonl", "a")


_failed: set[str] = set()


def pytest_runtest_logreport(report):
    if report.failed:
        _failed.add(report.nodeid)


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_protocol(item, nextitem):
    wall, cpu = time.perf_counter(), tree_cpu()
    yield
    if _out is not None:
        _out.write(json.dumps({"id": item.nodeid, "wall": time.perf_counter() - wall, "cpu": tree_cpu() - cpu,
                               "worker": os.environ.get("PYTEST_XDIST_WORKER", "main"),
                               "outcome": "failed" if item.nodeid in _failed else "passed"}) + "\n")
        _out.flush()


# -- the script ---------------------------------------------------------------------------------


def _reap_orphans(stop: threading.Event, pytest_pid: int, codes: dict) -> None:
    """Wait for every child, pytest and the orphans handed to us, so that each one's CPU is
    added to this process's children's."""
    while True:
        try:
            pid, status = os.waitpid(-1, 0)
        except ChildProcessError:
            if stop.is_set():
                return
            time.sleep(0.05)
            continue
        if pid == pytest_pid:
            codes["pytest"] = os.waitstatus_to_exitcode(status)
            stop.set()


def report(folder: Path, top: int) -> None:
    rows = [json.loads(line) for path in glob.glob(str(folder / "*.jsonl")) for line in open(path)]
    if not rows:
        return
    by_worker = collections.defaultdict(lambda: [0, 0.0, 0.0])
    by_file = collections.defaultdict(lambda: [0, 0.0, 0.0])
    for r in rows:
        for table, key in ((by_worker, r["worker"]), (by_file, r["id"].split("::")[0])):
            table[key][0] += 1
            table[key][1] += r["wall"]
            table[key][2] += r["cpu"]
    print(f"\n{len(rows)} tests: {sum(r['cpu'] for r in rows):.0f} s CPU inside tests "
          f"(the rest: start-up, collection, the workers' own)")
    for worker, (n, wall, cpu) in sorted(by_worker.items()):
        print(f"  {worker}: {n} tests, {wall:.0f} s wall, {cpu:.0f} s CPU")
    print(f"\nfiles by CPU (top {top}):  tests  wall s  CPU s")
    for name, (n, wall, cpu) in sorted(by_file.items(), key=lambda kv: -kv[1][2])[:top]:
        print(f"  {n:5d} {wall:7.1f} {cpu:7.1f}  {name}")
    for key in ("cpu", "wall"):
        print(f"\ntests by {key} (top {top}):  wall s  CPU s")
        for r in sorted(rows, key=lambda r: -r[key])[:top]:
            print(f"  {r['wall']:7.1f} {r['cpu']:6.1f}  {r['id'][:150]}")
    failed = [r["id"] for r in rows if r["outcome"] == "failed"]
    if failed:
        print(f"\n{len(failed)} failed: " + ", ".join(failed[:10]))


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--out", type=Path, help="folder for the per-test lines (default: a new temporary one)")
    ap.add_argument("--top", type=int, default=25)
    ap.add_argument("pytest_args", nargs="*", default=["-q", "-n", "2"])
    args = ap.parse_args()
    folder = args.out or Path(tempfile.mkdtemp(prefix="suite-cpu-"))
    folder.mkdir(parents=True, exist_ok=True)
    env = dict(os.environ, SUITE_CPU_DIR=str(folder),
               PYTHONPATH=os.pathsep.join(filter(None, [str(REPO / "bench"), os.environ.get("PYTHONPATH", str(REPO))])))
    adopt_orphans()
    load = os.getloadavg()[0]
    start = time.perf_counter()
    proc = subprocess.Popen([sys.executable, "-m", "pytest", "-p", "suite_cpu", *args.pytest_args], cwd=REPO, env=env)
    stop, codes = threading.Event(), {}
    reaper = threading.Thread(target=_reap_orphans, args=(stop, proc.pid, codes))
    reaper.start()
    reaper.join()
    wall = time.perf_counter() - start
    deadline = time.monotonic() + 30  # orphans that end after pytest (its servers, browsers): reaped here
    while time.monotonic() < deadline:
        try:
            if os.waitpid(-1, os.WNOHANG) == (0, 0):
                time.sleep(0.1)
        except ChildProcessError:
            break
    left = _children(os.getpid())
    if left:
        print(f"still running 30 s after pytest ended, not counted: {left}")
    used = resource.getrusage(resource.RUSAGE_CHILDREN)
    print(f"\npytest exit {codes.get('pytest')}; {wall:.0f} s wall, {used.ru_utime + used.ru_stime:.0f} s CPU "
          f"({used.ru_utime:.0f} user + {used.ru_stime:.0f} sys), every process it started; "
          f"load average {load:.1f} at the start, {os.getloadavg()[0]:.1f} at the end; per-test lines in {folder}")
    report(folder, args.top)
    return codes.get("pytest", 1)


if __name__ == "__main__":
    sys.exit(main())
