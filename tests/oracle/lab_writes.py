"""Compactions the compaction lab keeps, for pi to read: on copies of the oracle's trees (pi 1.6.0
and 0.73.1 wrote them), a lab at the active leaf with the extractive summarizer and two keep
budgets (no model, no test), and its best candidate kept as a compaction beside the branch.
`pi_oracle.py lab` has the pi that wrote each tree record them; tests/core/test_lab_oracle.py
checks that pi's context at every leaf is ours, the kept compactions included."""

from __future__ import annotations

import os
import shutil
import tempfile
from pathlib import Path

from webapp.core.lab_keep import keep_candidate, report
from webapp.core.lab_store import RunFile
from webapp.core.session import Session
from webapp.model.lab import Lab, LabSettings
from webapp.model.llm import ModelConfig


def keep_the_best(path: Path, keeps: tuple[int, ...] = (30, 80)) -> dict | None:
    """Run the lab at the active leaf of `path` and keep its best candidate; the kept entry."""
    session = Session.open(path)
    tree = session.tree
    leaf = tree.conversation_leaf(tree.active_leaf)
    settings = LabSettings(models=["extractive"], prompts=["ours"], keeps=list(keeps), turns=0, concurrency=1)
    run = RunFile.create(f"oracle-{path.stem}", {"settings": settings.as_dict()})
    Lab(run, settings, ModelConfig(None)).run([(session, str(path), leaf)])
    table = report(run.state())["targets"][0]["table"]
    best = next((r for r in table if not r.get("error")), None)
    if best is None:
        return None
    return keep_candidate(session, run, str(path), leaf, best["id"]).entry


def write_lab_files(sources: list[Path], out: Path) -> list[Path]:
    """Copies of `sources` in `out` with a lab's best candidate kept in each; the files written."""
    out.mkdir(parents=True, exist_ok=True)
    files = []
    with tempfile.TemporaryDirectory(prefix="lab-oracle-") as data:
        before = os.environ.get("XDG_DATA_HOME")
        os.environ["XDG_DATA_HOME"] = data  # (the runs are the oracle's own, not the user's)
        try:
            for src in sources:
                dst = out / f"lab-{src.name}"
                shutil.copyfile(src, dst)
                if keep_the_best(dst) is not None:
                    files.append(dst)
                else:
                    dst.unlink()
        finally:
            if before is None:
                os.environ.pop("XDG_DATA_HOME", None)
            else:
                os.environ["XDG_DATA_HOME"] = before
    return files
