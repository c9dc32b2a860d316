"""Opening a file through the format seam: pi v3 (the hot path, which must not get slower) and the
read-only formats, each as open+index time against a bare `orjson.loads` of its lines.

    PYTHONPATH=. .venv/bin/python bench/formats.py [--sizes 10k,100k] [--runs 5]

The pi v3 data is bench/run.py's synthetic sessions (generated on first use into bench/data/).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench.run import bench_open, ensure_data  # noqa: E402


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="10k,100k")
    parser.add_argument("--runs", type=int, default=5)
    args = parser.parse_args()
    names = args.sizes.split(",")
    ensure_data(names)
    for name in names:
        for row in bench_open(name, args.runs):
            print(f"pi v3 {name}: open+index {row.detail}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
