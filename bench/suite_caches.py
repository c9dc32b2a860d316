"""What the test suite's repeated work costs, with and without what is now built once per process.

CPU seconds, not wall time: the figures hold on a loaded machine (the suite runs beside other
work). Three measures, each the median of `--runs`:

  app+page   a new app and its first session page (templates compiled again, or taken compiled)
  main       one in-process `session-tree tree FILE` (the parser built again, or reused)
  process    one `session-tree tree FILE` as a fresh process, or forked from one that has
             imported the CLI already (tests/cli_process.py); CPU of the children

    .venv/bin/python bench/suite_caches.py [--runs 5]
"""

from __future__ import annotations

import argparse
import contextlib
import io
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from tests.cli_process import CLI_PROCESS  # noqa: E402
from tests.conftest import Builder  # noqa: E402
from webapp import cli  # noqa: E402
from webapp.web import app as app_module  # noqa: E402
from webapp.web.auth import owner_client  # noqa: E402


def cpu(fn) -> float:
    start = time.process_time()
    fn()
    return time.process_time() - start


def child_cpu(fn) -> float:
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    fn()
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--runs", type=int, default=5)
    runs = ap.parse_args().runs
    root = Path(tempfile.mkdtemp())
    b = Builder()
    for i in range(20):
        b.user(f"question {i}")
        b.assistant(f"answer {i}")
    path = b.write(root / "s.jsonl")

    def page():
        assert owner_client(app_module.create_app(root)).get("/s/s.jsonl").status_code == 200

    def show():
        with contextlib.redirect_stdout(io.StringIO()):
            assert cli.main(["tree", str(path)]) == 0

    page(), show()  # imports, the first compile and the first parser: paid once either way
    cached_load = app_module.CompiledTemplates.load_bytecode
    rows = []
    for label, setup in (("compiled again / built again", "off"), ("built once per process", "on")):
        app_module.CompiledTemplates.load_bytecode = cached_load if setup == "on" else (lambda self, bucket: None)
        parser = cli._parser
        if setup == "off":
            cli._parser = cli.build_parser
        rows.append((label, statistics.median(cpu(page) for _ in range(runs)),
                     statistics.median(cpu(show) for _ in range(runs))))
        cli._parser = parser
    tree = [str(REPO / ".venv" / "bin" / "session-tree"), "tree", str(path)]
    fresh = statistics.median(child_cpu(lambda: subprocess.run(tree, capture_output=True, check=True))
                              for _ in range(runs))
    CLI_PROCESS.run(tree[1:])  # the helper starts (its imports are not counted below)
    forked = statistics.median((CLI_PROCESS.run(tree[1:]), CLI_PROCESS.child_cpu)[1] for _ in range(runs))
    print(f"{'':32} {'app+page':>9} {'main':>7}")
    for label, p, m in rows:
        print(f"{label:32} {p:8.3f}s {m:6.3f}s")
    print(f"`session-tree tree FILE`: {fresh:.3f}s as a fresh process, {forked:.3f}s forked")
    CLI_PROCESS.stop()


if __name__ == "__main__":
    main()
