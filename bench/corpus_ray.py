"""The Ray build's throughput per core against the embedded Parquet build of the same files.

    PYTHONPATH=$PWD .venv/bin/python bench/corpus_ray.py [--files 200] [--source DATA/corpus2-1000]

The first `--files` session files of the 1,000-session corpus `bench/corpus.py` generated
(/tmp/session-tree-bench/corpus2-1000, hard-linked into DATA/ray-N). The embedded build
(`parquet.write_embedded`) runs in this process, on one core; the Ray build (`write_ray`) on a
local instance with num_cpus=2, its start-up (`ray.init`) timed apart. Throughput per core:
MB of session files a second, divided by the cores each used. A measurement, not a test.
"""

from __future__ import annotations

import argparse
import os
import shutil
import sys
import time
from pathlib import Path

BENCH = Path(__file__).resolve().parent
sys.path.insert(0, str(BENCH.parent))

SOURCE = Path("/tmp/session-tree-bench/corpus2-1000")
DATA = Path("/tmp/corpusrest")


def corpus(n: int) -> tuple[Path, list[str]]:
    from webapp.corpus.parquet import session_files

    root = DATA / f"ray-{n}-{SOURCE.name}"
    if not root.exists():
        picked = sorted(SOURCE.rglob("*.jsonl"))[:n]
        for f in picked:
            dest = root / f.relative_to(SOURCE)
            dest.parent.mkdir(parents=True, exist_ok=True)
            os.link(f, dest)
    return root, session_files([root])


def _ray_cpu() -> tuple[float, float]:
    """CPU seconds used so far by this machine's Ray processes, from /proc: (its workers, the
    rest: raylet, GCS, the dashboard agent…)."""
    workers = rest = 0.0
    tick = os.sysconf("SC_CLK_TCK")
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            line = Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ")
            if b"ray::" in line or b"/ray/" in line or b"raylet" in line or b"gcs_server" in line:
                fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
                used = (int(fields[11]) + int(fields[12])) / tick
                if b"ray::" in line or b"default_worker" in line:
                    workers += used
                else:
                    rest += used
        except OSError:
            continue
    return workers, rest


def main() -> None:
    global SOURCE
    p = argparse.ArgumentParser()
    p.add_argument("--files", type=int, default=200)
    p.add_argument("--source", type=Path, default=SOURCE, help="a corpus bench/corpus.py generated")
    args = p.parse_args()
    SOURCE = args.source.resolve()
    from webapp.corpus.parquet import table_rows, write_embedded, write_ray

    root, files = corpus(args.files)
    mb = sum(os.path.getsize(f) for f in files) / 1e6
    print(f"{len(files)} files, {mb:.0f} MB; load average {os.getloadavg()}")
    out = DATA / "ray-out"
    shutil.rmtree(out, ignore_errors=True)
    t, c = time.perf_counter(), time.process_time()
    write_embedded(files, out / "embedded")
    wall, cpu = time.perf_counter() - t, time.process_time() - c
    print(f"embedded: {wall:.1f} s wall, {cpu:.1f} s CPU, {mb / wall:.2f} MB/s on 1 core")
    import ray

    t = time.perf_counter()
    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False, logging_level="ERROR")
    print(f"ray.init: {time.perf_counter() - t:.1f} s")
    before = _ray_cpu()
    t = time.perf_counter()
    write_ray(files, str(out / "ray"))
    wall_ray = time.perf_counter() - t
    after = _ray_cpu()
    cpu_workers, cpu_rest = after[0] - before[0], after[1] - before[1]
    cpu_ray = cpu_workers + cpu_rest
    print(f"ray: {wall_ray:.1f} s wall, {mb / wall_ray / 2:.2f} MB/s per core (2 cores); "
          f"per core {wall_ray * 2 / wall:.2f}x the embedded build's time; "
          f"CPU of Ray's processes {cpu_ray:.1f} s ({cpu_ray / cpu:.2f}x the embedded build's), "
          f"of its workers {cpu_workers:.1f} s ({cpu_workers / cpu:.2f}x)")
    assert table_rows(out / "embedded") == table_rows(out / "ray"), "the two builds differ"
    print(f"rows equal: {table_rows(out / 'ray')}; load average {os.getloadavg()}")
    ray.shutdown()


if __name__ == "__main__":
    main()
