"""Benchmarks of the core and the web explorer against their goals (see BENCHMARKS.md).

    .venv/bin/python bench/run.py [--json out.json] [--only core|web] [--sizes 1k,10k] [--quick]

Inputs are generated once into bench/data/ (gitignored) with `samplegen.synthetic_session`
and regenerated when the generator changes. Every figure is the median of several runs; the peak
memory of opening a file is measured in a fresh subprocess per size. This is a measurement, not a
test: it prints a table of figures against goals and never fails on a missed goal.
"""

from __future__ import annotations

import argparse
import gc
import hashlib
import json
import os
import platform
import re
import shutil
import statistics
import subprocess
import sys
import time
from dataclasses import asdict, dataclass
from pathlib import Path

BENCH_DIR = Path(__file__).resolve().parent
PROJECT_DIR = BENCH_DIR.parent
DATA_DIR = BENCH_DIR / "data"
sys.path.insert(0, str(PROJECT_DIR))

import orjson  # noqa: E402

import samplegen  # noqa: E402
from webapp.core.context import build_context  # noqa: E402
from webapp.core.session import Session  # noqa: E402

# name -> synthetic_session arguments. "deep" holds a ~10k-entry active path (DEEP_PATH_ENTRIES).
DATASETS = {
    "1k": dict(n_entries=1_000, seed=1),
    "10k": dict(n_entries=10_000, seed=10),
    "100k": dict(n_entries=100_000, seed=100),
    "deep": dict(n_entries=12_000, seed=12, deep=True),
}
RUNS = {"1k": 31, "10k": 9, "100k": 3, "deep": 9}  # runs per timing; the median is reported
APPENDS = 200

GOALS = {  # a figure meets its goal when it is <= the limit
    "open_ratio": 2.0,  # open + index time / bare orjson parse of the same lines
    "context_ms": 50.0,  # build_context at the deepest leaf of the deep file
    "append_ms": 5.0,  # median and p95 of one Session.append
    "memory_ratio": 3.0,  # peak memory while opening and indexing / file size
    "cold_10k_s": 1.0,  # first render of the session page, fresh app
    "cold_100k_s": 3.0,
    "svg_mb": 1.0,
    "cached_ms": 50.0,  # the same request again
}


@dataclass
class Row:
    issue: str
    metric: str
    size: str
    value: float
    unit: str
    goal: float | None
    detail: str = ""

    @property
    def met(self) -> bool | None:
        return None if self.goal is None else self.value <= self.goal


# -- inputs ----------------------------------------------------------------------------------------


def generator_hash() -> str:
    """A hash of the generator's sources: the inputs are made again when it changes."""
    sources = sorted(Path(samplegen.__file__).parent.glob("*.py"))
    return hashlib.sha256(b"".join(p.read_bytes() for p in sources)).hexdigest()[:16]


def dataset_path(name: str) -> Path:
    return DATA_DIR / f"{name}.jsonl"


def ensure_data(names: list[str]) -> None:
    """Generate the inputs that are missing or were made by another version of the generator."""
    manifest_path = DATA_DIR / "manifest.json"
    manifest = json.loads(manifest_path.read_text()) if manifest_path.exists() else {}
    before = dict(manifest)
    current = generator_hash()
    for name in names:
        spec = {**DATASETS[name], "generator": current}
        path = dataset_path(name)
        if manifest.get(name, {}).get("spec") == spec and path.exists():
            continue
        t = time.perf_counter()
        header, entries = samplegen.synthetic_session(**DATASETS[name])
        path.unlink(missing_ok=True)  # a new file, not a rewrite of one hard-linked elsewhere
        samplegen.write_jsonl(path, header, entries)
        manifest[name] = {"spec": spec, "bytes": path.stat().st_size, "entries": len(entries)}
        print(f"generated {path.relative_to(PROJECT_DIR)}: {len(entries)} entries, "
              f"{path.stat().st_size / 1e6:.1f} MB in {time.perf_counter() - t:.1f}s", flush=True)
    if manifest != before:
        manifest_path.unlink(missing_ok=True)
        manifest_path.write_text(json.dumps(manifest, indent=2))


# -- timing helpers --------------------------------------------------------------------------------


def timed(fn, runs: int, gc_off: bool = False) -> tuple[float, list[float]]:
    """Median wall time of `fn()` in seconds; each run starts from a collected heap. `gc_off`
    keeps the cyclic garbage collector off during the runs (see bench_open)."""
    times = []
    for _ in range(runs):
        gc.collect()
        if gc_off:
            gc.disable()
        try:
            t = time.perf_counter()
            result = fn()
            times.append(time.perf_counter() - t)
        finally:
            gc.enable()
        del result
    return statistics.median(times), times


def percentile(values: list[float], p: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(p / 100 * (len(ordered) - 1)))]


# -- core ------------------------------------------------------------------------------------------


def bench_open(name: str, runs: int) -> list[Row]:
    path = dataset_path(name)
    data = path.read_bytes()
    def bare_parse():
        return [orjson.loads(line) for line in data.splitlines()]

    def open_and_index():
        return Session.open(path).tree

    bare, _ = timed(bare_parse, runs)
    opened, _ = timed(open_and_index, runs)
    # The same two with the cyclic GC off throughout: our own work against orjson's alone, since
    # the reader pauses the collector while it parses and a bare parse does not.
    bare_nogc, _ = timed(bare_parse, runs, gc_off=True)
    opened_nogc, _ = timed(open_and_index, runs, gc_off=True)
    tree = Session.open(path).tree
    detail = (f"{opened * 1000:.1f} ms vs {bare * 1000:.1f} ms; GC off for both: "
              f"{opened_nogc * 1000:.1f} vs {bare_nogc * 1000:.1f} ms = {opened_nogc / bare_nogc:.2f}×; "
              f"{len(tree.entries)} entries, {len(data) / 1e6:.1f} MB")
    return [Row("core", "open+index / bare parse", name, opened / bare, "×", GOALS["open_ratio"], detail)]


def deepest_leaf(tree) -> str:
    return max(tree.leaves(), key=lambda leaf: len(tree.path(leaf)))


def bench_context(runs: int = 21) -> list[Row]:
    tree = Session.open(dataset_path("deep")).tree
    leaf = deepest_leaf(tree)
    median, _ = timed(lambda: build_context(tree, leaf), runs)
    ctx = build_context(tree, leaf)
    detail = f"path of {len(ctx.path)} entries -> {len(ctx.messages)} messages"
    return [Row("core", "context at deepest leaf", "deep", median * 1000, "ms", GOALS["context_ms"], detail)]


def bench_append(name: str, n: int = APPENDS) -> list[Row]:
    """Appends to a copy of the file, the session already loaded (its tree built once)."""
    scratch = DATA_DIR / "scratch"
    scratch.mkdir(exist_ok=True)
    copy = scratch / f"append-{name}.jsonl"
    shutil.copyfile(dataset_path(name), copy)
    try:
        session = Session.open(copy)
        session.tree  # noqa: B018 - load it
        fields = {"type": "message", "message": {"role": "user", "content": "one more small message"}}
        for _ in range(5):  # warm up the page cache and the code paths
            session.append(fields)
        times = []
        for _ in range(n):
            t = time.perf_counter()
            session.append(fields)
            times.append(time.perf_counter() - t)
    finally:
        copy.unlink(missing_ok=True)
    median, p95 = statistics.median(times) * 1000, percentile(times, 95) * 1000
    limit = GOALS["append_ms"]
    return [
        Row("core", "append latency, median", name, median, "ms", limit, f"{n} appends, lock + catch up + write + fsync"),
        Row("core", "append latency, p95", name, p95, "ms", limit, f"max {max(times) * 1000:.2f} ms"),
    ]


def memory_child(path: str, mode: str) -> None:
    """Run in a fresh interpreter: open and index `path`, print the memory it took as JSON."""
    def rss_kb(field: str) -> int:
        for line in Path("/proc/self/status").read_text().splitlines():
            if line.startswith(field + ":"):
                return int(line.split()[1])
        raise RuntimeError(field)

    if mode == "tracemalloc":
        import tracemalloc

        tracemalloc.start()
        tree = Session.open(path).tree
        peak = tracemalloc.get_traced_memory()[1]
        tracemalloc.stop()
    else:
        before = rss_kb("VmRSS")
        tree = Session.open(path).tree
        peak = (rss_kb("VmHWM") - before) * 1024
    print(json.dumps({"peak": peak, "entries": len(tree.entries)}))


def bench_memory(name: str) -> list[Row]:
    path = dataset_path(name)
    size = path.stat().st_size
    peaks = {}
    for mode in ("tracemalloc", "rss"):
        out = subprocess.run(
            [sys.executable, __file__, "--memory-child", str(path), mode],
            check=True, capture_output=True, text=True,
        ).stdout
        peaks[mode] = json.loads(out)["peak"]
    limit = GOALS["memory_ratio"]
    return [
        Row("core", "peak memory / file size (tracemalloc)", name, peaks["tracemalloc"] / size, "×", limit,
            f"{peaks['tracemalloc'] / 1e6:.0f} MB peak for {size / 1e6:.1f} MB"),
        Row("core", "peak memory / file size (RSS delta)", name, peaks["rss"] / size, "×", limit,
            f"{peaks['rss'] / 1e6:.0f} MB peak for {size / 1e6:.1f} MB"),
    ]


# -- web -------------------------------------------------------------------------------------------

SVG_RE = re.compile(r"<svg.*?</svg>", re.S)


class GcClock:
    """Time spent in the cyclic garbage collector while it is installed."""

    def __init__(self) -> None:
        self.total = 0.0
        self._start = 0.0

    def _callback(self, phase: str, info: dict) -> None:
        if phase == "start":
            self._start = time.perf_counter()
        else:
            self.total += time.perf_counter() - self._start

    def __enter__(self) -> "GcClock":
        gc.callbacks.append(self._callback)
        return self

    def __exit__(self, *exc) -> None:
        gc.callbacks.remove(self._callback)


def bench_web(name: str, runs: int, cached_runs: int = 11) -> list[Row]:
    from webapp.web.app import create_app
    from webapp.web.auth import owner_client

    url = f"/s/{dataset_path(name).name}"
    def cold_request():
        gc.collect()  # the previous app (Flask objects hold cycles) and all it loaded are gone
        client = owner_client(create_app(DATA_DIR))  # a fresh app: its caches are empty
        with GcClock() as clock:
            t = time.perf_counter()
            response = client.get(url)
            elapsed = time.perf_counter() - t
        if response.status_code != 200:
            raise RuntimeError(f"GET {url}: {response.status_code}")
        return client, elapsed, clock.total, response.get_data(as_text=True)

    cold_times, gc_times = [], []
    for _ in range(runs):
        client = None
        client, elapsed, gc_time, body = cold_request()
        cold_times.append(elapsed)
        gc_times.append(gc_time)
    warm = []
    for _ in range(cached_runs):  # the same request again, on the last app: every cache is warm
        t = time.perf_counter()
        client.get(url)
        warm.append(time.perf_counter() - t)
    match = SVG_RE.search(body)
    svg_bytes = len(match.group(0).encode()) if match else 0
    parts = cold_parts(name, runs)
    parts["cyclic GC"] = statistics.median(gc_times)
    cold = statistics.median(cold_times)
    rest = cold - sum(parts.values())
    breakdown = ", ".join(f"{k} {v * 1000:.0f}" for k, v in parts.items()) + f", views+templates {rest * 1000:.0f} ms"
    goal = GOALS.get(f"cold_{name}_s")
    return [
        Row("web explorer", "cold render of the session page", name, cold, "s", goal, breakdown),
        Row("web explorer", "SVG size", name, svg_bytes / 1e6, "MB", GOALS["svg_mb"],
            f"page {len(body.encode()) / 1e6:.2f} MB"),
        Row("web explorer", "cached re-render", name, statistics.median(warm) * 1000, "ms",
            GOALS["cached_ms"], f"median of {cached_runs}"),
    ]


def cold_parts(name: str, runs: int) -> dict[str, float]:
    """A cold render taken apart, with the cyclic GC off (its share is timed in the real
    request): where the time goes, median of `runs`; what is left is views, templates, Flask."""
    samples = []
    for _ in range(runs):
        gc.collect()
        gc.disable()
        try:
            samples.append(_cold_parts(name))
        finally:
            gc.enable()
    return {key: statistics.median(s[key] for s in samples) for key in samples[0]}


def _cold_parts(name: str) -> dict[str, float]:
    from webapp.web.graph import build_layout, to_dot

    t0 = time.perf_counter()
    tree = Session.open(dataset_path(name)).tree
    t1 = time.perf_counter()
    leaf = tree.conversation_leaf(tree.active_leaf)
    layout = build_layout(tree, "auto", frozenset(), frozenset({leaf}))
    t2 = time.perf_counter()
    graph = to_dot(tree, layout, lambda entry_id, *_: f"/s/x?node={entry_id}")
    source = graph.source
    t3 = time.perf_counter()
    subprocess.run(["dot", "-Tsvg"], input=source.encode(), capture_output=True, check=True)
    t4 = time.perf_counter()
    return {"open+index": t1 - t0, "layout": t2 - t1, "dot source": t3 - t2, "dot": t4 - t3}


# -- report ----------------------------------------------------------------------------------------


def machine() -> dict:
    cpu = "?"
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    try:
        dot = subprocess.run(["dot", "-V"], capture_output=True, text=True).stderr.strip()
    except OSError:
        dot = "not installed"
    return {
        "cpu": cpu,
        "cores": os.cpu_count(),
        "python": platform.python_version(),
        "orjson": orjson.__version__,
        "dot": dot,
        "platform": platform.platform(),
    }


def fmt(value: float, unit: str) -> str:
    if unit == "×":
        return f"{value:.2f}×"
    if unit == "MB":
        return f"{value:.2f} MB"
    if unit == "s":
        return f"{value:.2f} s"
    return f"{value:.1f} {unit}" if value < 100 else f"{value:.0f} {unit}"


def print_table(rows: list[Row]) -> None:
    table = [("issue", "metric", "size", "figure", "goal", "status", "detail")]
    for r in rows:
        status = "-" if r.met is None else "met" if r.met else "NOT MET"
        goal = "-" if r.goal is None else "≤ " + fmt(r.goal, r.unit)
        table.append((r.issue, r.metric, r.size, fmt(r.value, r.unit), goal, status, r.detail))
    widths = [max(len(row[i]) for row in table) for i in range(len(table[0]) - 1)]
    for i, row in enumerate(table):
        print("  ".join(cell.ljust(w) for cell, w in zip(row, widths)) + "  " + row[-1])
        if i == 0:
            print("  ".join("-" * w for w in widths) + "  " + "-" * 6)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--json", metavar="PATH", help="also write the figures as JSON")
    parser.add_argument("--only", choices=("core", "web"), help="run one half only")
    parser.add_argument("--sizes", default="1k,10k,100k", help="comma-separated sizes (default: 1k,10k,100k)")
    parser.add_argument("--quick", action="store_true", help="fewer runs, for a rough look")
    parser.add_argument("--memory-child", nargs=2, metavar=("PATH", "MODE"), help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.memory_child:
        memory_child(*args.memory_child)
        return 0

    sizes = [s for s in args.sizes.split(",") if s]
    unknown = [s for s in sizes if s not in DATASETS or s == "deep"]
    if unknown:
        parser.error(f"unknown size {unknown[0]!r}; choose from 1k, 10k, 100k")
    runs = {k: (max(1, v // 3) if args.quick else v) for k, v in RUNS.items()}
    info = machine()
    print(f"machine: {info['cpu']}, {info['cores']} cores; Python {info['python']}, "
          f"orjson {info['orjson']}; {info['dot']}", flush=True)
    ensure_data(sizes + ["deep"])

    rows: list[Row] = []

    def run(label: str, fn, *a) -> None:
        print(f"  {label} ...", flush=True)
        rows.extend(fn(*a))

    if args.only in (None, "core"):
        for name in sizes + ["deep"]:
            run(f"open+index {name}", bench_open, name, runs[name])
        run("context at the deepest leaf", bench_context, 5 if args.quick else 21)
        for name in [s for s in sizes if s in ("10k", "100k")]:
            run(f"append {name}", bench_append, name, 50 if args.quick else APPENDS)
        for name in sizes:
            run(f"memory {name}", bench_memory, name)
    if args.only in (None, "web"):
        for name in [s for s in sizes if s in ("10k", "100k")]:
            run(f"web {name}", bench_web, name, runs[name], 5 if args.quick else 11)
    print()
    print_table(rows)
    if args.json:
        out = {"machine": info, "results": [{**asdict(r), "met": r.met} for r in rows]}
        Path(args.json).write_text(json.dumps(out, indent=2, ensure_ascii=False) + "\n")
        print(f"\nwrote {args.json}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
