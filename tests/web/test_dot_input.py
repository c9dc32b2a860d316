"""The whole DOT source reaches `dot`, however slowly `dot` starts reading it: a source bigger
than a pipe holds, not all written when the first short poll for the drawing ran out, used to
leave `dot` waiting for the rest until the time limit (the page then came without its drawing)."""

from __future__ import annotations

import os
import shutil

from webapp.web.graph import dot as graph


def test_a_big_source_reaches_a_dot_that_starts_reading_late(tmp_path, monkeypatch):
    real = shutil.which("dot")
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    late = bin_dir / "dot"
    late.write_text(f"#!/bin/sh\nsleep 0.5\nexec {real} \"$@\"\n")  # reads nothing for half a second
    late.chmod(0o755)
    monkeypatch.setenv("PATH", f"{bin_dir}{os.pathsep}{os.environ['PATH']}")
    monkeypatch.setattr(graph, "DOT_POLL", 0.01)
    filler = ("// " + "x" * 77 + "\n") * 12_000  # about a megabyte before the graph: far past a pipe's 64 KiB
    svg = graph.run_dot(filler + 'digraph { last [label="the last node"] }\n', timeout=30)
    assert "the last node" in svg
