"""The product's extractor gives exactly the rows of the oracle (the extractor as it was, every
entry holding its body: tests/corpus/oracle_extract.py) for every fixture, every sample session
and every hostile file, whole and from a line on (a grown file)."""

from __future__ import annotations

import math
from pathlib import Path

import pytest

from tests.conftest import FIXTURES
from tests.corpus import oracle_extract
from tests.test_hostile_files import FILES as HOSTILE
from webapp.corpus.extract import COLUMNS, extract, read_tree

SAMPLES = Path(__file__).resolve().parents[2] / "sample_sessions"
REAL = sorted([*FIXTURES.rglob("*.jsonl"), *SAMPLES.rglob("*.jsonl")])


def same(a, b) -> bool:
    """Equal, a NaN equal to a NaN (a row may hold one; NaN != NaN would hide nothing else)."""
    if isinstance(a, float) and isinstance(b, float) and math.isnan(a) and math.isnan(b):
        return True
    return type(a) is type(b) and a == b


def check(path: Path, from_line: int = 0) -> None:
    want, got = oracle_extract.extract(path, from_line), extract(path, from_line)
    if got.kept_summaries:  # (a grown file whose earlier summaries' rows hold: those from from_line on)
        line = {e.id: e.line for e in read_tree(path).entries}
        want.rows["summaries"] = [r for r in want.rows["summaries"] if line[r[1]] >= from_line]
    for table in COLUMNS:
        assert len(got.rows[table]) == len(want.rows[table]), (path.name, table)
        for g, w in zip(got.rows[table], want.rows[table]):
            diff = [c for c, x, y in zip(COLUMNS[table], g, w) if not same(x, y)]
            assert not diff, (path.name, table, diff, g, w)
    assert got.tips == want.tips


def test_the_files_compared_are_the_ones_meant():
    # every agent's fixtures and every sample are there (a moved folder would compare nothing)
    assert {p.parent.name for p in FIXTURES.rglob("*.jsonl")} >= {"pi", "claude-code", "codex"}
    assert len(list(SAMPLES.rglob("*.jsonl"))) >= 4 and len(HOSTILE) >= 20


@pytest.mark.parametrize("path", REAL, ids=lambda p: f"{p.parent.name[:24]}/{p.name[:40]}")
def test_rows_of_every_fixture_and_sample_equal_the_oracle(path):
    check(path)
    check(path, from_line=3)


@pytest.mark.parametrize("name", sorted(HOSTILE))
def test_rows_of_every_hostile_file_equal_the_oracle(tmp_path, name):
    path = tmp_path / f"{name}.jsonl"
    path.write_bytes(HOSTILE[name])
    check(path)
    check(path, from_line=2)
