"""The size and mtime of many session files at once, as `extract.file_mtime` gives them, for the
index's check of what changed: each folder is listed once, and only a file that may have files
read with it (Claude Code's sub-agents: an `agent-*.jsonl` beside it, or a folder of its name)
is asked for them; any other file costs one `stat` (10,000 files: 0.05 s of CPU instead of 0.34 s)."""

from __future__ import annotations

import os
from pathlib import Path

from .extract import file_mtime


def _may_have_sidecars(folder: str, listings: dict[str, tuple[bool, frozenset[str]]]) -> tuple[bool, frozenset[str]]:
    """(whether `folder` holds an `agent-*.jsonl`, the names of what it holds that is no `.jsonl`)."""
    got = listings.get(folder)
    if got is None:
        try:
            names = os.listdir(folder)
        except OSError:
            names = []
        got = listings[folder] = (any(n.startswith("agent-") and n.endswith(".jsonl") for n in names),
                                  frozenset(n for n in names if not n.endswith(".jsonl")))
    return got


def stamps(paths: list[Path] | list[str]) -> list[tuple[int, float] | OSError]:
    """(size, mtime) of each path (a Path or its name), or the OSError that stat raised."""
    listings: dict[str, tuple[bool, frozenset[str]]] = {}
    out: list[tuple[int, float] | OSError] = []
    for path in paths:
        name = str(path)
        try:
            st = os.stat(name)
            folder, _, base = name.rpartition(os.sep)
            agents, others = _may_have_sidecars(folder, listings)
            if agents or base[: -len(".jsonl")] in others:
                out.append((st.st_size, file_mtime(Path(name), st)))
            else:
                out.append((st.st_size, st.st_mtime_ns / 1e9))
        except OSError as exc:
            out.append(exc)
    return out
