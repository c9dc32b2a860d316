"""The bundled samples are what the generator writes: `python -m samplegen OUTDIR` gives
sample_sessions/ byte for byte, so a change to either shows up here and not in a surprised demo."""

from __future__ import annotations

from pathlib import Path

from samplegen.__main__ import main

SAMPLES = Path(__file__).resolve().parents[1] / "sample_sessions"


def files(root: Path) -> dict[str, bytes]:
    return {p.relative_to(root).as_posix(): p.read_bytes() for p in sorted(root.rglob("*.jsonl"))}


def test_the_generator_writes_the_tracked_samples(tmp_path, capsys):
    assert main([str(tmp_path)]) == 0
    written, tracked = files(tmp_path), files(SAMPLES)
    assert len(tracked) >= 4 and written.keys() == tracked.keys()
    assert [name for name in tracked if written[name] != tracked[name]] == []
