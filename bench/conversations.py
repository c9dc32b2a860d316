"""Conversations across files at 10,000 sessions: the index page and the page of a file of a
conversation, served from the corpus index, each in a fresh process (medians of --runs), for the
code at PYTHONPATH (run it twice, once with another checkout first on PYTHONPATH, to compare).

    PYTHONPATH=$PWD .venv/bin/python bench/conversations.py make        # DATA/conv10k: 10,000 small pi files
    PYTHONPATH=$PWD .venv/bin/python bench/conversations.py measure [--db NAME] [--runs 3]

`make` writes 10,000 pi sessions (10 entries each) in 20 project folders of 500, about one in ten
a fork of another (a `parentSession` header and copies of the path, as pi's /fork writes it):
conversations of two files, and in the first folder one chain of CHAIN files, each a fork of the
one before (a session forked or resumed again and again). `measure` builds the index
(`session-tree index`, its own database file per checkout: --db) and times, in a fresh server:
the index page fresh and again, and four session pages (a fork, its parent, a session alone, the
last file of the chain) cold and again. A measurement, not a test.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import statistics
import subprocess
import sys
import time
from pathlib import Path

import orjson
from processes import print_server_figures

DATA = Path("/tmp/session-tree-bench/conv10k")
SESSIONS, FOLDERS, FORK_EVERY, CHAIN = 10_000, 20, 10, 50


def _source(n: int) -> int | None:
    """The session `n` is a fork of: the one before it in its folder, for the chain's files and
    for one row of folders in FORK_EVERY (whose sources are no forks: conversations of two)."""
    if n % FOLDERS == 0:
        return n - FOLDERS if 0 < n < CHAIN * FOLDERS else None
    return n - FOLDERS if (n // FOLDERS) % FORK_EVERY == FORK_EVERY - 1 else None


def _uuid(n: int, k: int) -> str:
    return f"01970000-{n:04x}-7000-8000-{k:012x}"


def _time(n: int) -> str:
    return f"2026-04-{1 + n // 1440:02d}T{(n // 60) % 24:02d}:{n % 60:02d}:00.000Z"


def _name(n: int) -> str:
    return _time(n).replace(":", "-").replace(".", "-") + f"_{_uuid(n, 0)}.jsonl"


def make() -> None:
    root = DATA / "home" / ".pi" / "agent" / "sessions"
    for n in range(SESSIONS):
        folder = root / f"--p{n % FOLDERS}--"
        folder.mkdir(parents=True, exist_ok=True)
        sid = _uuid(n, 0)
        header = {"type": "session", "version": 3, "id": sid, "timestamp": _time(n), "cwd": f"/p{n % FOLDERS}"}
        entries = [{"type": "model_change", "id": _uuid(n, 1), "parentId": None, "timestamp": header["timestamp"],
                    "provider": "anthropic", "modelId": "claude-sonnet-4-5"}]
        source = _source(n)
        first = n  # whose first turns these are: a fork's copies keep the ids its source holds them by
        while _source(first) is not None:
            first = _source(first)
        for turn in range(4):
            who = first if turn < 2 else n  # a fork copies its source's first turns
            entries.append({"type": "message", "id": _uuid(who, 2 + 2 * turn), "parentId": entries[-1]["id"],
                            "timestamp": header["timestamp"], "message": {"role": "user", "content": [
                                {"type": "text", "text": f"turn {turn} of session {who}: pipeline step {turn}"}]}})
            entries.append({"type": "message", "id": _uuid(who, 3 + 2 * turn), "parentId": entries[-1]["id"],
                            "timestamp": header["timestamp"], "message": {
                                "role": "assistant", "content": [{"type": "text", "text": f"done step {turn} of {who}"}],
                                "provider": "anthropic", "model": "claude-sonnet-4-5", "stopReason": "stop",
                                "usage": {"input": 1000, "output": 50, "cacheRead": 0, "cacheWrite": 0, "totalTokens": 1050}}})
        if source is not None:
            entries[0]["id"] = _uuid(first, 1)
            entries[1]["parentId"] = entries[0]["id"]
            header["parentSession"] = str(root / f"--p{source % FOLDERS}--" / _name(source))
        path = folder / _name(n)
        path.write_bytes(b"".join(orjson.dumps(x) + b"\n" for x in (header, *entries)))
    print(json.dumps({"root": str(DATA / "home"), "sessions": SESSIONS}))


def _page(url_of: str, client, htmx: bool = False) -> tuple[float, float]:
    t, c = time.perf_counter(), time.process_time()
    got = client.get(url_of, headers={"HX-Request": "true"} if htmx else {})
    assert got.status_code == 200, (url_of, got.status_code)
    return time.perf_counter() - t, time.process_time() - c


def server(db: Path, runs: int) -> dict:
    """(in a fresh process) the pages, wall and CPU of each request."""
    from webapp.web.app import create_app
    from webapp.web.auth import owner_client

    home = DATA / "home"
    app = create_app(home, CORPUS_DB=db)
    client = owner_client(app)
    median = lambda pairs: f"{statistics.median(w for w, _ in pairs):.3f} s wall, {statistics.median(c for _, c in pairs):.3f} s CPU"  # noqa: E731
    out = {"index page, fresh server": median([_page("/", client)])}
    app.extensions["corpus"].join()
    out["index page, again"] = median([_page("/", client) for _ in range(runs)])
    folder = home / ".pi" / "agent" / "sessions"
    fork_n = FOLDERS * (3 * FORK_EVERY - 1) + FOLDERS // 2  # a fork of row 29 (its source: row 28), folder 10
    names = {"a fork": fork_n, "its parent": fork_n - FOLDERS, "a session alone": fork_n - 2 * FOLDERS,
             f"the chain's last file ({CHAIN} files)": (CHAIN - 1) * FOLDERS}
    assert _source(fork_n) == fork_n - FOLDERS and _source(fork_n - FOLDERS) is None and _source(fork_n - 2 * FOLDERS) is None
    for what, n in names.items():
        path = next((folder / f"--p{n % FOLDERS}--").glob(f"*_{_uuid(n, 0)}.jsonl"))
        rel = "/s/" + path.relative_to(home).as_posix()
        cold = _page(rel, client)
        out[f"session page of {what}, cold"] = median([cold])
        out[f"session page of {what}, again"] = median([_page(rel, client) for _ in range(runs)])
        html = client.get(rel).get_data(as_text=True)
        files = re.search(r"One conversation, (\d+) files", html)
        out[f"session page of {what}: drawn as"] = f"a conversation of {files.group(1)} files" if files \
            else "one file" if "conversation-bar" not in html else "?"
    return out


def measure(db_name: str, runs: int) -> None:
    db = DATA / f"{db_name}.duckdb"
    cli = [sys.executable, "-m", "webapp.cli"]
    print("load average:", os.getloadavg(), flush=True)
    t = time.perf_counter()
    subprocess.run(cli + ["index", str(DATA / "home"), "--db", str(db)], check=True, stdout=subprocess.DEVNULL)
    print(f"index built/updated in {time.perf_counter() - t:.1f} s", flush=True)
    print_server_figures([sys.executable, __file__, "server", "--db", db_name, "--runs", str(runs)])


def main() -> None:
    p = argparse.ArgumentParser()
    p.add_argument("what", choices=("make", "measure", "server"))
    p.add_argument("--db", default="index")
    p.add_argument("--runs", type=int, default=3)
    args = p.parse_args()
    if args.what == "make":
        make()
    elif args.what == "measure":
        measure(args.db, args.runs)
    else:
        print(json.dumps(server(DATA / f"{args.db}.duckdb", args.runs)))


if __name__ == "__main__":
    main()
