"""Crafted text at the sizes that froze the server: what one view or command costs now.

    PYTHONPATH=$PWD .venv/bin/python bench/crafted.py

Each case is the issue's reproduction, run in this process through the code a view or command
runs (the audit's facts, a listing's summary, a comparison export's file-list stripping, the
highlighting of a tool call); it prints the thread CPU time of the best of three runs. A
measurement, not a test (the tests compare two sizes instead).
"""

from __future__ import annotations

import sys
import tempfile
import time
from pathlib import Path

import orjson

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from tests.conftest import Builder  # noqa: E402
from webapp.core.audit import collect_facts  # noqa: E402
from webapp.core.catalog import summarize_session  # noqa: E402
from webapp.core.compaction import strip_file_lists  # noqa: E402
from webapp.core.session import Session  # noqa: E402
from webapp.web import lexers, render  # noqa: E402


def best(work) -> float:
    times = []
    for _ in range(3):
        start = time.thread_time()
        work()
        times.append(time.thread_time() - start)
    return min(times)


def main() -> None:
    folder = Path(tempfile.mkdtemp())
    b = Builder()
    b.user("@" * 200_000, id="u1")
    entries = Session.in_memory(b.data()).tree.entries
    claude = folder / "c.jsonl"
    claude.write_bytes(orjson.dumps({"type": "user", "sessionId": "s", "uuid": "u", "parentUuid": None,
                                     "message": {"role": "user", "content": "<command-name>" * 16_000}}) + b"\n")
    service = lexers.for_path("unit.service")
    cases = [
        ("audit facts of a message of 200,000 @", lambda: collect_facts(entries)),
        ("ls summary of 16,000 unclosed <command-name>", lambda: summarize_session(claude)),
        ("file-list stripping of 16,000 <read-files> lines", lambda: strip_file_lists("<read-files>\n" * 16_000)),
        ("a .service file of 1,500 spaces, highlighted", lambda: render.highlight_lines(" " * 1_500 + "x", service)),
        ("a .service file of 2,000 spaces, highlighted", lambda: render.highlight_lines(" " * 2_000 + "x", service)),
    ]
    for name, work in cases:
        print(f"{name:52} {best(work) * 1000:8.1f} ms")


if __name__ == "__main__":
    main()
