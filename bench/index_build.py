"""One first full index of ROOT into a fresh database, by a fresh process: its wall time, the CPU
of every process (the worker processes are its descendants) and of the writing one, and the
writer's peak memory. To compare two commits' builds of the same files, run it from each checkout.

    PYTHONPATH=$PWD .venv/bin/python bench/index_build.py /tmp/session-tree-bench/corpus2-1000 [--out DIR]

ROOT is a generated corpus (`bench/corpus.py --generate --sizes 1000`). A measurement, not a test.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

BENCH = Path(__file__).resolve().parent

_BUILD = r'''
import json, sys, time
from webapp.corpus.db import Index
index = Index(sys.argv[2])
cpu = time.process_time()
progress = index.build([sys.argv[1]])
cpu = time.process_time() - cpu
index.close()
from multiprocessing import forkserver
forkserver._forkserver._stop()  # (its workers' CPU is then counted among this process's children)
peak = int(open("/proc/self/status").read().split("VmHWM:")[1].split()[0]) / 1024
print(json.dumps({"writer CPU s": round(cpu, 1), "files failed": progress.failed, "writer peak MB": round(peak)}))
'''


def main() -> None:
    p = argparse.ArgumentParser()
    p.add_argument("root", type=Path)
    p.add_argument("--out", type=Path, help="where the database goes (default: a temporary folder, removed)")
    args = p.parse_args()
    out = args.out or Path(tempfile.mkdtemp(prefix="index-build-"))
    shutil.rmtree(out, ignore_errors=True)
    out.mkdir(parents=True)
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    got = subprocess.run([sys.executable, "-c", _BUILD, str(args.root), str(out / "c.duckdb")], capture_output=True,
                         text=True, cwd=BENCH.parent, check=True)
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime
    print(json.dumps({"wall s": round(wall, 1), "CPU of all s": round(cpu, 1), **json.loads(got.stdout.splitlines()[-1]),
                      "load (1 min) after": round(os.getloadavg()[0], 2), "code": str(BENCH.parent)}))
    if args.out is None:
        shutil.rmtree(out)


if __name__ == "__main__":
    main()
