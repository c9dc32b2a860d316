"""`session-tree export` against pi's own `pi --export` on the same pi sessions (about 10 MB and
100 MB), both timed as a person runs them: the whole command, from start to written file.

    .venv/bin/python bench/export_vs_pi.py [--sizes 10,100] [--runs 3]

The sessions are made by `samplegen.synthetic_session` into bench/data/ (gitignored). pi's npm
package (`@mariozechner/pi-coding-agent`, PI_VERSION) is installed into bench/data/pi-npm/ by
this script, outside the product's dependencies; without npm (or when the install fails) pi's
side is skipped and only ours is timed. pi runs with a HOME of its own in a temporary folder and
PI_OFFLINE=1, so it reads no settings of the user's and asks nothing of the network.

Each figure is the median of --runs runs (one for the 100 MB session unless --runs says more):
**wall** is what a person waits, **cpu** the CPU seconds of the command and its children (our
`dot`). The ratio is ours ÷ pi's, of each; the goal is ≤ 1. It prints a table and never fails.
"""

from __future__ import annotations

import argparse
import os
import platform
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench.run import DATASETS, dataset_path, ensure_data  # noqa: E402

PROJECT_DIR = Path(__file__).resolve().parents[1]
PI_VERSION = "0.73.1"
PI_DIR = PROJECT_DIR / "bench" / "data" / "pi-npm"
PI_BIN = PI_DIR / "node_modules" / ".bin" / "pi"
OURS = Path(sys.executable).with_name("session-tree")
# ~0.76 KB an entry with the generator's defaults: these give the 10.5 MB and 105 MB.
SIZES = {10: dict(n_entries=14_000, seed=14), 100: dict(n_entries=140_000, seed=140)}


def install_pi() -> Path | None:
    """pi's CLI, installed once into bench/data/pi-npm; None (and why, printed) without it."""
    if PI_BIN.exists():
        return PI_BIN
    npm = shutil.which("npm")
    if npm is None:
        print("npm not found: pi's side is skipped, only session-tree is timed")
        return None
    PI_DIR.mkdir(parents=True, exist_ok=True)
    print(f"installing @mariozechner/pi-coding-agent@{PI_VERSION} into {PI_DIR.relative_to(PROJECT_DIR)} …", flush=True)
    done = subprocess.run([npm, "install", "--prefix", str(PI_DIR), "--no-audit", "--no-fund", "--loglevel=error",
                           f"@mariozechner/pi-coding-agent@{PI_VERSION}"], capture_output=True, text=True)
    if done.returncode != 0 or not PI_BIN.exists():
        print(f"npm install failed ({done.stderr.strip()[-300:]}): pi's side is skipped")
        return None
    return PI_BIN


def timed(argv: list[str], env: dict, runs: int) -> tuple[float, float, int]:
    """(median wall s, median cpu s, output bytes) of running `argv`; its last argument is the
    file it writes. A failing run is reported and ends the timing of that command."""
    walls, cpus, size = [], [], 0
    for _ in range(runs):
        out = Path(argv[-1])
        out.unlink(missing_ok=True)
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        t = time.perf_counter()
        done = subprocess.run(argv, env=env, capture_output=True, text=True)
        walls.append(time.perf_counter() - t)
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        cpus.append(after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime)
        if done.returncode != 0 or not out.exists():
            raise RuntimeError(f"{' '.join(argv[:2])} failed: {(done.stderr or done.stdout).strip()[-300:]}")
        size = out.stat().st_size
    return statistics.median(walls), statistics.median(cpus), size


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--sizes", default="10,100", help="which sessions, in MB: 10, 100 or both (default)")
    ap.add_argument("--runs", type=int, default=3)
    args = ap.parse_args()
    sizes = [int(s) for s in args.sizes.split(",")]
    for mb in sizes:
        DATASETS[f"export-{mb}mb"] = SIZES[mb]
    ensure_data([f"export-{mb}mb" for mb in sizes])
    pi = install_pi()
    load = os.getloadavg()[0]
    print(f"machine: {platform.machine()}, {os.cpu_count()} cores, Python {platform.python_version()}, "
          f"pi {PI_VERSION if pi else '(skipped)'}; load average {load:.1f} at the start")
    rows = []
    with tempfile.TemporaryDirectory(prefix="bench-export-") as tmp:
        home = Path(tmp) / "home"
        home.mkdir()
        pi_env = {**os.environ, "HOME": str(home), "PI_OFFLINE": "1"}
        for mb in sizes:
            path = dataset_path(f"export-{mb}mb")
            runs = args.runs if mb < 100 else max(1, args.runs // 3)
            print(f"{path.name} ({path.stat().st_size / 1e6:.1f} MB), {runs} run{'s' if runs > 1 else ''} each …", flush=True)
            ours = timed([str(OURS), "export", str(path), "-o", str(Path(tmp) / "ours.html")], dict(os.environ), runs)
            theirs = None
            if pi:
                try:
                    theirs = timed([str(pi), "--export", str(path), str(Path(tmp) / "pi.html")], pi_env, runs)
                except RuntimeError as exc:
                    print(exc)
            rows.append((f"{path.stat().st_size / 1e6:.1f} MB", ours, theirs))
    print(f"load average {os.getloadavg()[0]:.1f} at the end\n")
    print("| session | ours wall / cpu | pi wall / cpu | ratio wall / cpu (goal ≤ 1) | output ours / pi |")
    print("|---|---|---|---|---|")
    for name, (ow, oc, osz), theirs in rows:
        if theirs is None:
            print(f"| {name} | {ow:.2f} s / {oc:.2f} s | – | – | {osz / 1e6:.1f} MB / – |")
            continue
        tw, tc, tsz = theirs
        print(f"| {name} | {ow:.2f} s / {oc:.2f} s | {tw:.2f} s / {tc:.2f} s | {ow / tw:.2f} / {oc / tc:.2f} "
              f"| {osz / 1e6:.1f} MB / {tsz / 1e6:.1f} MB |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
