"""Which files a corpus index reads under its ROOTs."""

from __future__ import annotations

from pathlib import Path

from ..core.agents.places import agent_places, discover, discover_names


def corpus_files(root: Path) -> list[Path]:
    """Every session file under `root`: under the agents' folders it holds when it holds any (see
    `places.agent_places`: as the home folder is searched), else under it as a sessions folder."""
    return discover(root, agent_places(root))


def corpus_names(root: Path) -> list[str]:
    """`corpus_files` as path names (str): the index's check of thousands of files for changes."""
    return discover_names(root, agent_places(root))
