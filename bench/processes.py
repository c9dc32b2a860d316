"""What the benchmarks that time whole `session-tree` processes share: the wall and CPU time of
one fresh process, and an environment in which the modules are compiled once, as an installed
package has them (this machine's environment sets PYTHONDONTWRITEBYTECODE, which would make every
run compile every module again)."""

from __future__ import annotations

import json
import os
import resource
import subprocess
import time
from pathlib import Path


def compiled_env(project: Path, cache: Path) -> dict:
    """The environment for processes running `project`'s code, compiling into `cache`."""
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    env.update(PYTHONPATH=str(project), PYTHONPYCACHEPREFIX=str(cache))
    return env


def child_times(cmd: list[str], env: dict | None = None, cwd: Path | None = None) -> tuple[float, float]:
    """(wall, CPU) seconds of `cmd` in a fresh process: CPU is user + system, its children's
    included, what it costs on a shared machine. Its output is dropped; a failure raises."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t = time.perf_counter()
    subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, check=True, env=env, cwd=cwd)
    wall = time.perf_counter() - t
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return wall, after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime


def print_server_figures(cmd: list[str], cwd: Path | None = None) -> None:
    """Run a benchmark's `server` half in a fresh process and print the figures its last line
    holds (a JSON object), then the load average they were taken under; a failure stops here."""
    got = subprocess.run(cmd, capture_output=True, text=True, cwd=cwd)
    if got.returncode:
        raise SystemExit(got.stderr)
    for k, v in json.loads(got.stdout.strip().splitlines()[-1]).items():
        print(f"{k}: {v}")
    print("load average:", os.getloadavg())
