"""What telling a replayed branch costs the Branches tab (webapp/core/replay_plan.py).

    PYTHONPATH=. .venv/bin/python bench/replay_lookup.py [--quick]

The Branches tab and the node panel say of each branch whether a replay wrote it ("replay of
leaf X from Y, recorded tools: 5 hits, 2 misses"). A replay's first reply records it in its
`details`, a body the tree does not keep; it is found from the file's model changes (a replay's
branch begins with one), once per tree. This times `replay_info` for the 300 latest branches
(what the tab lists) on a fresh session of the 100k input of bench/run.py and (without --quick)
the 10,000-leaf input of bench/compare.py: as they are (no replay), and with one replay appended
to the 100k one. Wall and CPU time, medians of 3 fresh sessions (no body cache).
"""

from __future__ import annotations

import argparse
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import compare as compare_bench  # noqa: E402  (bench/compare.py: the 10,000-leaf input)
import run  # noqa: E402

from webapp.core.replay_plan import replay_info  # noqa: E402
from webapp.core.session import Session  # noqa: E402

SHOWN = 300  # the rows the Branches tab lists


def timed(path: Path) -> tuple[float, float, int]:
    walls, cpus, found = [], [], 0
    for _ in range(3):
        tree = Session.open(path).tree
        leaves = tree.leaves()[-SHOWN:]
        w, c = time.perf_counter(), time.process_time()
        found = sum(1 for leaf in leaves if replay_info(tree, leaf) is not None)
        walls.append(time.perf_counter() - w)
        cpus.append(time.process_time() - c)
    return statistics.median(walls), statistics.median(cpus), found


def with_a_replay(source: Path, folder: Path) -> Path:
    """A copy of `source` with one replay's entries appended (a model change, its first reply)."""
    path = folder / source.name
    shutil.copyfile(source, path)
    session = Session.open(path)
    tree = session.tree
    leaf = tree.leaves()[-1]
    start = tree.parent[leaf] or leaf
    change = session.append_model_change("openai", "other-model", parent=start)
    session.append_message({"role": "assistant", "content": [{"type": "text", "text": "replayed"}],
                            "provider": "openai", "model": "other-model", "stopReason": "stop"},
                           parent=change["id"], details={"replayOf": leaf, "replayFrom": start, "tools": "recorded"})
    return path


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--quick", action="store_true", help="the 100k session only")
    args = ap.parse_args()
    run.ensure_data(["100k"])
    with tempfile.TemporaryDirectory() as tmp:
        inputs = {"100k": run.dataset_path("100k"),
                  "100k + 1 replay": with_a_replay(run.dataset_path("100k"), Path(tmp))}
        if not args.quick:
            inputs["leaves10k"] = compare_bench.ensure_leaves10k()
        print(f"| session | branches asked | replays found | wall | CPU |\n|---|---|---|---|---|")
        for name, path in inputs.items():
            wall, cpu, found = timed(path)
            print(f"| {name} | {SHOWN} latest | {found} | {wall:.3f} s | {cpu:.3f} s |")


if __name__ == "__main__":
    main()
