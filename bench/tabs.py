"""Benchmark of a session page's tabs: each tab's fragment (`/-/panel/<tab>`, what a click on a
tab fetches) and the whole page opened on it, on the 3,000-entry sample, warm (the layout and the
drawing made once before), at the active leaf.

    .venv/bin/python bench/tabs.py [--runs 15]

Each figure is the median of `--runs` runs, in milliseconds, through the Flask test client (no
network), as the owner sees it. A measurement, not a test.
"""

from __future__ import annotations

import argparse
import shutil
import sys
import tempfile
from pathlib import Path

BENCH_DIR = Path(__file__).resolve().parent
sys.path.insert(0, str(BENCH_DIR.parent))

from webapp.web.app import create_app  # noqa: E402
from webapp.web.auth import owner_client  # noqa: E402
from webapp.web.sessions import TABS  # noqa: E402
from timing import median_ms  # noqa: E402  (bench/ is the script's folder)

SAMPLE = (BENCH_DIR.parent / "sample_sessions" / "--home-ana-projects-data-pipeline--"
          / "2026-02-16T08-02-41-507Z_019c6579-1ae3-78f7-9da1-494c73cf256d.jsonl")


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--runs", type=int, default=15)
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp) / "s"
        (root / "--bench--").mkdir(parents=True)
        shutil.copy(SAMPLE, root / "--bench--" / SAMPLE.name)
        rel = f"--bench--/{SAMPLE.name}"
        client = owner_client(create_app(root))
        assert client.get(f"/s/{rel}").status_code == 200  # the layout and the drawing, made once
        print(f"{'tab':12} {'fragment ms':>12} {'page ms':>9}")
        for tab in TABS:
            def fragment():
                r = client.get(f"/s/{rel}/-/panel/{tab}", headers={"HX-Request": "true"})
                assert r.status_code == 200, (tab, r.status_code)

            def page():
                assert client.get(f"/s/{rel}?tab={tab}").status_code == 200

            fragment()  # (what a tab caches is made once, as on a second click)
            print(f"{tab:12} {median_ms(fragment, args.runs):12.1f} {median_ms(page, args.runs):9.1f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
