"""The corpus figures (issue: every session at once): index, index page, search, ls, RSS, against
ripgrep and a bare orjson parse of the same files.

    PYTHONPATH=$PWD .venv/bin/python bench/corpus.py [--sizes 100 1000] [--quick] [--runs 3]

A corpus of N sessions is generated once into DATA/corpus2-N/ (`--data`, default
/tmp/session-tree-bench: ~5 GB at 10,000 sessions, never in the repository): copies (`derive`: new
ids, times moved) of 300 distinct pi sessions from the samples generator (median ~270 KB, a
lognormal tail to ~9 MB), of the Claude Code and Codex fixtures (one in ten, one in fifteen), and
of big pi sessions of 20-50 MB (two from 1,000 sessions on, six at 10,000); one session holds a
rare word. Generating 10,000 takes minutes (the bases, once), not hours. `--quick`:
100 sessions only. Server figures come from a fresh process (its RSS is that process's). A
measurement, not a test: it prints figures and never fails.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import re
import shutil
import statistics
import subprocess
import sys
import time
from pathlib import Path

BENCH = Path(__file__).resolve().parent
sys.path.insert(0, str(BENCH.parent))

RARE, COMMON = "quetzalcoatl", "pipeline"
FIXTURES = BENCH.parent / "tests" / "fixtures"
DATA = Path("/tmp/session-tree-bench")
REUSE = False  # --reuse: the index built by an earlier run is kept (its build is not timed again)


BASES = 300  # distinct pi sessions generated; the rest of a corpus is copies of them
BIG_MB = (20, 50, 35, 25, 45, 30)  # the few big pi sessions (two at 1,000 sessions, six at 10,000)
_UUID = re.compile(rb"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}")
_DAY = re.compile(rb"\b(20\d\d-\d\d-\d\d)T")
_MS = re.compile(rb'"timestamp":(1\d{12})\b')


def _base(path: Path, entries: int, seed: int) -> Path:
    """One distinct pi session of `entries` entries, generated once into DATA/bases/ (all
    corpora share them)."""
    from samplegen.builder import write_jsonl
    from samplegen.synthetic import synthetic_session

    if not path.exists():
        header, lines = synthetic_session(entries, seed=seed, project=("data-pipeline", "legacy-cli")[seed % 2])
        tmp = path.with_suffix(".tmp")
        write_jsonl(tmp, header, lines)
        tmp.rename(path)
    return path


def derive(data: bytes, copy: int, days: int) -> bytes:
    """A copy of a session file as another session: every UUID (session, entry and parent ids)
    mapped through a permutation of the hex digits chosen by `copy` (a bijection, so the tree's
    links hold), and every time moved `days` days earlier. Byte-level: milliseconds per file."""
    from datetime import date, timedelta

    digits = b"0123456789abcdef"
    rng = random.Random(copy)
    table = bytes.maketrans(digits, bytes(rng.sample(list(digits), 16)))
    out = _UUID.sub(lambda m: m.group(0).translate(table), data)
    moved: dict[bytes, bytes] = {}

    def day(m):
        d = m.group(1)
        if d not in moved:
            moved[d] = (date.fromisoformat(d.decode()) - timedelta(days=days)).isoformat().encode()
        return moved[d] + b"T"

    out = _DAY.sub(day, out)
    shift = days * 86_400_000
    return _MS.sub(lambda m: b'"timestamp":%d' % (int(m.group(1)) - shift), out)


def generate(n: int) -> Path:
    """A corpus of `n` sessions: BASES distinct pi sessions (median ~270 KB, a lognormal tail to
    a few MB) and the big ones are generated once; each session of the corpus is a derived copy
    of one of them (`derive`), one in ten a copy of the Claude Code fixture, one in fifteen of the
    Codex one; session n // 2 holds the rare word."""
    import orjson

    root = DATA / f"corpus2-{n}"
    if (root / ".done").exists():
        return root
    shutil.rmtree(root, ignore_errors=True)
    bases_dir = DATA / "bases"
    bases_dir.mkdir(parents=True, exist_ok=True)
    rng = random.Random(7)
    sizes = [max(200, min(12_000, int(rng.lognormvariate(5.86, 1.1)))) for _ in range(BASES)]
    bases = [_base(bases_dir / f"pi-{k:03d}-{e}.jsonl", e, k) for k, e in enumerate(sizes)]
    bigs = [_base(bases_dir / f"pi-big-{mb}MB.jsonl", mb * 1300, 1000 + mb) for mb in BIG_MB[:0 if n < 1000 else 2 if n < 10_000 else 6]]
    claude = (FIXTURES / "claude-code" / "d-kimuson_fe5e1c67-53e7-4862-81ae-d0e013e3270b.jsonl").read_bytes()
    codex = (FIXTURES / "codex" / "agent-sessions_codex_small.jsonl").read_bytes()
    cache: dict[Path, bytes] = {}
    rng = random.Random(n)
    for i in range(n):
        days, pi = i % 180, False
        if i % 10 == 3:
            dest = root / ".claude" / "projects" / f"-home-ana-p{i % 7}" / f"{i:05d}.jsonl"
            data = claude
        elif i % 15 == 4:
            dest = root / ".codex" / "sessions" / "2026" / "08" / f"{i % 28 + 1:02d}" / f"rollout-{i:05d}.jsonl"
            data = codex
        else:
            dest, pi = root / ".pi" / "agent" / "sessions" / f"--p{i % 5}--" / f"{i:05d}.jsonl", True
            base = bigs[i - 11] if 11 <= i < 11 + len(bigs) else bases[rng.randrange(BASES)]
            if base not in cache:
                cache[base] = base.read_bytes()
            data = cache[base]
        out = derive(data, i, days)
        if pi and i == n // 2:
            last = orjson.loads(out[out.rstrip().rfind(b"\n") + 1:])
            out += orjson.dumps({"type": "message", "id": "rare", "parentId": last["id"],
                                 "timestamp": last["timestamp"],
                                 "message": {"role": "user", "content": f"what about {RARE}?"}}) + b"\n"
        dest.parent.mkdir(parents=True, exist_ok=True)
        dest.write_bytes(out)
    (root / ".done").write_text(orjson.dumps({"sessions": n}).decode())
    return root


def files_of(root: Path) -> list[Path]:
    from webapp.corpus.discovery import corpus_files

    return corpus_files(root)


def timed(fn, runs: int = 1):
    out = []
    for _ in range(runs):
        t = time.perf_counter()
        fn()
        out.append(time.perf_counter() - t)
    return statistics.median(out)


def orjson_parse(files) -> None:
    import orjson

    for f in files:
        for line in f.read_bytes().splitlines():
            try:
                orjson.loads(line)
            except orjson.JSONDecodeError:
                pass


def ripgrep(word: str, root: Path) -> float:
    if not shutil.which("rg"):
        subprocess.run(["apt-get", "install", "-y", "-qq", "ripgrep"], check=False, capture_output=True)
    return timed(lambda: subprocess.run(["rg", "-l", "--hidden", word, str(root)], capture_output=True), 3)


def server(root: Path, db: Path, runs: int) -> dict:
    """(in a fresh process) the index page, search and the corpus page on a built index, and RSS."""
    from webapp.web.app import create_app
    from webapp.web.auth import owner_client

    app = create_app(root, CORPUS_DB=db)
    client = owner_client(app)
    out = {"index first": timed(lambda: client.get("/"))}
    out["index again"] = timed(lambda: client.get("/"), runs)
    app.extensions["corpus"].join()
    out["search rare"] = timed(lambda: client.get(f"/?q={RARE}", headers={"HX-Request": "true"}), runs)
    out["search common"] = timed(lambda: client.get(f"/?q={COMMON}", headers={"HX-Request": "true"}), runs)
    out["corpus page"] = timed(lambda: client.get("/corpus"), runs)
    out["rss MB"] = int(Path("/proc/self/status").read_text().split("VmRSS:")[1].split()[0]) / 1024
    return out


def first_page_while_building(root: Path, db: Path) -> dict:
    from webapp.web.app import create_app
    from webapp.web.auth import owner_client

    app = create_app(root, CORPUS_DB=db)
    client = owner_client(app)
    t = timed(lambda: client.get("/"))
    progress = app.extensions["corpus"].progress
    said = f"{progress.done}/{progress.total}"
    return {"first page while building": t, "progress shown": said}  # (the build stops with the process)


def first_page_in_a_fresh_process(root: Path, db: Path) -> dict:
    """`--building` in a process of its own, stopped with its build's worker processes (in its
    process group) once it printed its figures: the build is not waited for."""
    import signal
    import tempfile

    with tempfile.TemporaryFile("w+") as out:
        proc = subprocess.Popen([sys.executable, __file__, "--building", str(root), str(db)], stdout=out,
                                stderr=subprocess.DEVNULL, cwd=BENCH.parent, start_new_session=True)
        try:
            while True:
                out.seek(0)
                lines = out.read().strip().splitlines()
                if lines or proc.poll() is not None:
                    break
                time.sleep(0.2)
        finally:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
    return json.loads(lines[-1]) if lines else {"first page while building": "failed"}


def full_index(root: Path, db: Path) -> dict:
    """The first full index, built by a fresh process (`--build`): its wall time, the CPU of every
    process it ran (its worker processes included: they are its descendants, reaped before it
    ends) and of itself (the one writing the database), and the load average while it ran."""
    import resource

    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t = time.perf_counter()
    got = subprocess.run([sys.executable, __file__, "--build", str(root), str(db)], capture_output=True, text=True,
                         cwd=BENCH.parent, check=True)
    wall = time.perf_counter() - t
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime
    return {"full index": wall, "full index, CPU of all processes": cpu, **json.loads(got.stdout.strip().splitlines()[-1])}


def build(root: Path, db: Path) -> dict:
    from webapp.corpus.db import Index

    index = Index(db)
    cpu = time.process_time()
    progress = index.build([root])
    peak = int(Path("/proc/self/status").read_text().split("VmHWM:")[1].split()[0]) / 1024
    import resource
    out = {"full index, CPU of the writing process": time.process_time() - cpu, "files failed": progress.failed,
           "tables ready after (s)": (progress.tables_ready or progress.finished) - progress.started,
           "text ready after (s)": (progress.text_ready or progress.finished) - progress.started,
           "audits ready after (s)": progress.finished - progress.started,
           "full index, peak memory of the writing process (MB)": peak,
           "load average (1 min) after the index": os.getloadavg()[0]}
    index.close()
    # The worker processes are the forkserver's children: stopping it (and waiting for it, as
    # multiprocessing's own tests do) counts their CPU among this process's descendants'.
    from multiprocessing import forkserver

    forkserver._forkserver._stop()
    out["full index, peak memory of a worker process (MB)"] = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024
    return out


def measure(n: int, runs: int) -> dict:
    from webapp.corpus.db import Index

    root = generate(n)
    files = files_of(root)
    size = sum(f.stat().st_size for f in files)
    sizes = sorted(f.stat().st_size for f in files)
    fig = {"sessions": len(files), "GB": size / 1e9, "median KB": sizes[len(sizes) // 2] / 1e3,
           "load average (1 min) at the start": os.getloadavg()[0]}
    cpu = time.process_time()
    fig["orjson parse"] = timed(lambda: orjson_parse(files))
    fig["orjson parse, CPU"] = time.process_time() - cpu
    db_dir = DATA / f"corpus2-{n}-db"
    if not (REUSE and (db_dir / "c.duckdb").exists()):
        shutil.rmtree(db_dir, ignore_errors=True)
        db_dir.mkdir(parents=True)
        fig.update(full_index(root, db_dir / "c.duckdb"))
    index = Index(db_dir / "c.duckdb")
    fig["re-index, nothing changed"] = timed(lambda: index.build([root]))
    grown = next(f for f in files if "/.pi/" in str(f))
    with open(grown, "ab") as fh:
        fh.write(b'{"type":"custom","id":"bench-grow-%d","parentId":null,"timestamp":"2026-03-01T00:00:00.000Z","customType":"bench"}\n' % time.time_ns())
    fig["re-index after one session grew"] = timed(lambda: index.build([root]))
    index.close()
    fig["ripgrep rare"] = ripgrep(RARE, root)
    fig["ripgrep common"] = ripgrep(COMMON, root)
    ls = [sys.executable, "-m", "webapp.cli", "ls", str(root), "--index", "--db", str(db_dir / "c.duckdb"), "--json"]
    fig["ls --index --json"] = timed(lambda: subprocess.run(ls, capture_output=True, cwd=BENCH.parent), runs)
    got = subprocess.run([sys.executable, __file__, "--server", str(root), str(db_dir / "c.duckdb"), str(runs)],
                         capture_output=True, text=True, cwd=BENCH.parent)
    fig.update(json.loads(got.stdout.strip().splitlines()[-1]))
    fresh_db = db_dir / "fresh.duckdb"
    for old in db_dir.glob("fresh.duckdb*"):  # what an earlier run's unfinished build left
        old.unlink()
    fig.update(first_page_in_a_fresh_process(root, fresh_db))
    return fig


def main() -> None:
    global DATA, REUSE
    p = argparse.ArgumentParser()
    p.add_argument("--sizes", type=int, nargs="+", default=[100, 1000])
    p.add_argument("--quick", action="store_true")
    p.add_argument("--runs", type=int, default=3)
    p.add_argument("--server", nargs=3)
    p.add_argument("--building", nargs=2)
    p.add_argument("--build", nargs=2)
    p.add_argument("--data", type=Path, default=DATA, help="where the corpora are generated and indexed")
    p.add_argument("--generate", action="store_true", help="only generate the corpora of --sizes")
    p.add_argument("--reuse", action="store_true", help="keep an index an earlier run built")
    args = p.parse_args()
    DATA, REUSE = args.data, args.reuse
    if args.generate:
        for n in args.sizes:
            print(n, generate(n))
        return
    if args.server:
        print(json.dumps(server(Path(args.server[0]), Path(args.server[1]), int(args.server[2]))))
        return
    if args.build:
        print(json.dumps(build(Path(args.build[0]), Path(args.build[1]))))
        return
    if args.building:
        print(json.dumps(first_page_while_building(Path(args.building[0]), Path(args.building[1]))), flush=True)
        time.sleep(3600)  # the caller stops this process and its build
    for n in [100] if args.quick else args.sizes:
        fig = measure(n, args.runs)
        print(f"\n{n:,} sessions")
        for k, v in fig.items():
            print(f"  {k:34} {v:.3f}" if isinstance(v, float) else f"  {k:34} {v}")


if __name__ == "__main__":
    main()
