"""One first full index of ROOT into a fresh database, by a fresh process (`bench/corpus.py`'s
`full_index`): its wall time, the CPU of every process and of the writing one, and the writer's
peak memory. To compare two commits' builds of the same files, run it from each checkout.

    PYTHONPATH=$PWD .venv/bin/python bench/index_build.py /tmp/session-tree-bench/corpus2-1000

ROOT is a generated corpus (`bench/corpus.py --generate --sizes 1000`). A measurement, not a test.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
from pathlib import Path

BENCH = Path(__file__).resolve().parent
sys.path.insert(0, str(BENCH))

from corpus import full_index  # noqa: E402


def main() -> None:
    p = argparse.ArgumentParser()
    p.add_argument("root", type=Path)
    args = p.parse_args()
    with tempfile.TemporaryDirectory(prefix="index-build-") as out:
        figures = full_index(args.root, Path(out) / "c.duckdb")
    print(json.dumps({**figures, "code": str(BENCH.parent)}, indent=1))


if __name__ == "__main__":
    main()
