"""A small corpus of the real fixture files (copied: the index reads them, nothing writes them)
laid out as each agent keeps its sessions under a home folder."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from tests.conftest import FIXTURES

# The fixtures the corpus tests count on (others may be added to tests/fixtures/ later).
NAMES = {
    "pi": ("agent-sessions_pi_small.jsonl", "pi-mono_before-compaction.jsonl", "pi-mono_large-session.jsonl"),
    "claude-code": ("agent-sessions_claude_small.jsonl", "d-kimuson_fe5e1c67-53e7-4862-81ae-d0e013e3270b.jsonl",
                    "daaain_dag_compact_after_rewind.jsonl"),
    "codex": ("agent-sessions_codex_small.jsonl",),
}


def lay_out_home(home: Path) -> dict[str, Path]:
    """The fixtures copied under `home` in each agent's own folders; name -> path."""
    places = {
        "pi": home / ".pi" / "agent" / "sessions" / "--home-ana-proj--",
        "claude-code": home / ".claude" / "projects" / "-home-ana-proj",
        "codex": home / ".codex" / "sessions" / "2026" / "08" / "03",
    }
    out = {}
    for agent, folder in places.items():
        folder.mkdir(parents=True, exist_ok=True)
        for name in NAMES[agent]:
            out[name] = Path(shutil.copy(FIXTURES / agent / name, folder / name))
    return out


@pytest.fixture
def home(tmp_path) -> tuple[Path, dict[str, Path]]:
    root = tmp_path / "home"
    return root, lay_out_home(root)
