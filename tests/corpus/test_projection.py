"""The SQL projection of pi's lines (webapp/core/agents/pi/projection.py) reads every line as the format
seam does: each entry's facts (id, parent, type, role, time, usage, cost, tool calls, …) equal the
seam's, and the rows a batch makes of each file (`batch.tables_of`: the projection where it reads
the file, the seam elsewhere) equal the oracle's (the extractor as it was), whole and from a line
on, for every fixture, sample and hostile file. A file the projection cannot read as the seam
does is left to the seam, and says why."""

from __future__ import annotations

import math
from pathlib import Path

import pytest

from tests.conftest import FIXTURES
from tests.corpus import oracle_extract
from tests.test_hostile_files import FILES as HOSTILE
from webapp.corpus import columns
from webapp.corpus.batch import tables_of
from webapp.corpus.db import Index
from webapp.corpus.extract import COLUMNS, read_tree
from webapp.corpus.lines import read_file
from webapp.corpus.schema import BEYOND_64_BITS

SAMPLES = Path(__file__).resolve().parents[2] / "sample_sessions"
REAL = sorted([*FIXTURES.rglob("*.jsonl"), *SAMPLES.rglob("*.jsonl")])
PI = [p for p in REAL if p.read_bytes().startswith(b'{"type":"session"')]


def same(a, b) -> bool:
    if isinstance(a, float) and isinstance(b, float) and math.isnan(a) and math.isnan(b):
        return True
    return type(a) is type(b) and a == b


def facts(entry) -> tuple:
    """What the tree and the rows read of an entry without its body."""
    return (entry.line, entry.id, entry.parent_id, entry.type, entry.role, entry.facts, entry.instant,
            entry.tool_call_ids, entry.tool_call_id, entry.missing_fields)


def test_the_files_compared_are_the_ones_meant():
    assert len(PI) >= 6 and {p.parent.name for p in PI} >= {"pi"}  # pi v1 and v3 fixtures, the samples
    assert len(HOSTILE) >= 20


@pytest.mark.parametrize("path", PI, ids=lambda p: f"{p.parent.name[:24]}/{p.name[:40]}")
def test_each_pi_line_is_read_as_the_seam_reads_it(path):
    trees = {}
    got = columns.project(columns.connection(), [read_file(str(path))], [0], trees)
    if path.name.startswith("2026-03-03T16-40-12-034Z"):  # the sample with a damaged line
        assert "damaged" in got.left[0]
        return
    assert 0 in got.plain, got.left
    tree = trees[0]
    seam = read_tree(path)
    assert [facts(e) for e in tree.entries] == [facts(e) for e in seam.entries]
    assert (tree.format, tree.active_leaf, tree.leaves(), tree.problem_counts(), tree.name) == \
        (seam.format, seam.active_leaf, seam.leaves(), seam.problem_counts(), seam.name)


def check(paths: list[Path], from_line: int) -> list[bool]:
    """The rows `tables_of` makes of `paths` against the oracle's (their text and audits aside:
    `later.py` makes them); whether each file was read by the projection."""
    got = tables_of([(str(p), from_line) for p in paths])
    made = {t: sorted((tuple(r.values()) for r in got.tables[t].to_pylist()), key=repr) for t in COLUMNS}
    want: dict[str, list[tuple]] = {t: [] for t in COLUMNS}
    for path, done in zip(paths, got.done):
        assert done.error is None, (path.name, done.error)
        oracle = oracle_extract.extract(path, from_line)
        assert done.tips == oracle.tips, path.name
        for t in COLUMNS:
            rows = oracle.rows[t]
            if t == "entries":
                rows = [r[:-1] + (None,) for r in rows]
            elif t == "summaries":
                rows = [r[:6] + (None, None, None) for r in rows]
                if done.kept_summaries:  # (a grown file whose earlier summaries' rows hold)
                    line = {e.id: e.line for e in read_tree(path).entries}
                    rows = [r for r in rows if line[r[1]] >= from_line]
            want[t].extend(rows)
    for t in COLUMNS:
        expected = sorted(want[t], key=repr)
        assert len(made[t]) == len(expected), t
        for g, w in zip(made[t], expected):
            diff = [c for c, x, y in zip(COLUMNS[t], g, w) if not same(x, y)]
            assert not diff, (t, diff, g, w)
    return [done.projected for done in got.done]


def test_a_batch_of_every_fixture_and_sample_gives_the_oracles_rows():
    for from_line in (0, 3):
        projected = check(REAL, from_line)
        # every pi file but the damaged sample is read by the projection, the other agents' by the seam
        assert sum(projected) == len(PI) - 1
        assert not any(p for p, path in zip(projected, REAL) if path not in PI)


def test_a_batch_of_every_hostile_file_gives_the_oracles_rows(tmp_path):
    paths = []
    for name, data in sorted(HOSTILE.items()):
        path = tmp_path / f"{name}.jsonl"
        path.write_bytes(data)
        paths.append(path)
    for from_line in (0, 2):
        projected = dict(zip((p.stem for p in paths), check(paths, from_line)))
        assert projected["1-nul"] and projected["big-message"] and projected["newline-name"]  # read as they are
        assert not projected["3-role-int"] and not projected["garbage"] and not projected["6-deep-arguments"]


def test_a_count_beyond_64_bits_fails_its_file_alone_and_says_why(tmp_path):
    """DuckDB's cast of such a count failed the batch's query; the seam's rows of it then failed
    the batch's tables: one hostile file stopped every file of its batch."""
    huge = tmp_path / "huge.jsonl"
    ok = FIXTURES / "pi" / "agent-sessions_pi_small.jsonl"
    huge.write_bytes(ok.read_bytes().splitlines(keepends=True)[0] + b'{"type":"message","id":"a1","parentId":null,'
                     b'"message":{"role":"assistant","content":[],"model":"m","usage":{"input":12345678901234567890,'
                     b'"output":1,"cacheRead":0,"cacheWrite":0,"totalTokens":5}}}\n')
    got = tables_of([(str(huge), 0), (str(ok), 0)])
    assert got.done[0].error == BEYOND_64_BITS
    assert got.done[1].error is None and got.done[1].projected
    assert set(got.tables["sessions"].column("file").to_pylist()) == {got.tables["entries"].column("file")[0].as_py()}
    assert got.tables["entries"].num_rows == len(read_tree(ok).entries)
    # a build small enough to be read here (no workers) lists it with the same line
    index = Index(tmp_path / "c.duckdb")
    index.build([tmp_path])
    assert index.cursor().execute("SELECT error FROM files WHERE file = ?", [str(huge)]).fetchone() == (BEYOND_64_BITS,)


@pytest.mark.parametrize("line", [
    b'{"type":"message","id":"x1","parentId":"a1","message":{"role":"user","content":"n"},"v":NaN}',
    b'{"type":"message","id":"x1","parentId":"a1","message":{"role":"user","content":"c",}}',
    b'{"type":"message","id":"x1","parentId":"a1","message":{"role":"assistant","content":[],'
    b'"usage":{"input":1.5,"output":2}}}',
    b'{"type":"message","id":"x1","parentId":"a1","message":{"role":"assistant","content":[],'
    b'"usage":{"input":true,"output":2}}}',
    b'{"type":"message","id":"x1","parentId":"a1","timestamp":"2026-01-02","message":{"role":"user","content":"d"}}',
    b'{"type":"message","id":"a1","parentId":null,"message":{"role":"user","content":"twice"}}',
    b'  {"type":"message","id":"x1","parentId":"a1","message":{"role":"user","content":"indented"}}',
], ids=["nan", "trailing-comma", "float-usage", "bool-usage", "date-only", "duplicate-id", "indented"])
def test_a_line_the_projection_might_read_otherwise_sends_its_file_to_the_seam(tmp_path, line):
    # JSON DuckDB reads and orjson refuses, numbers Python adds up otherwise, a time only Python
    # reads, an id the seam renames: the seam reads the file, and its rows are the oracle's
    path = tmp_path / "s.jsonl"
    path.write_bytes(b'{"type":"session","version":3,"id":"s","timestamp":"2026-01-02T03:04:05.000Z","cwd":"/p"}\n'
                     b'{"type":"message","id":"a1","parentId":null,"timestamp":"2026-01-02T03:04:06.000Z",'
                     b'"message":{"role":"user","content":"hello"}}\n' + line + b"\n")
    assert check([path], 0) == [False]


_REPLY = (b'{"type":"message","id":"x1","parentId":"a1","timestamp":"2026-01-02T03:04:07.000Z",'
          b'"message":{"role":"assistant","content":[')
_USER = b'{"type":"message","id":"x1","parentId":"a1","timestamp":"%s","message":{"role":"user","content":"d"}}'


@pytest.mark.parametrize("line, projected", [
    (_USER % b"2026-02-30T03:04:06.000Z", False),  # pi's form of a time, a day no month has
    (_USER % b"0999-01-02T03:04:06.000Z", False),  # a year before 1000
    (_USER % b"2026-12-31T23:59:60.000Z", False),  # a leap second Python does not read
    (_USER % b"2026-01-02T05:04:06.123456+02:00", True),  # another form: an offset of hours, microseconds
    (_USER % b"2026-01-02T03:04:06Z", True),
    (b'{"type":"message","id":"x\\u0031","parentId":"a\\u0031","message":{"role":"user","content":"d"}}', True),
    (_REPLY + b'{"type":"toolCall","id":null,"name":"bash","arguments":{"command":"ls"}}]}}', False),
    (_REPLY + b'{"type":"toolCall","name":"bash","arguments":{"command":"ls"}}]}}', True),
    (_REPLY + b'{"type":"toolCall","id":"c1","arguments":{"command":"ls"}}]}}', True),
    (_REPLY + b'{"type":"toolCall","id":"c1","name":"ba\\u0073h","arguments":{"command":"l\\u0073"}}]}}', True),
    (_REPLY + b'{"type":"text","text":"hi"},{"type":"toolCall","id":"c1","name":"bash",'
              b'"arguments":{"command":["ls","-l"]}}]}}', True),
    (_REPLY + b'{"text":"hi"}]}}', False),
    (_REPLY + b'"hi"]}}', False),
    (b'{"type":"message","id":"x1","parentId":"a1","message":{"content":"d"}}', True),
    (b'{"type":"message","id":"x1","parentId":"a1"}', True),
    (b'{"type":"message","id":"x1","parentId":"a1","message":{"role":"assistant","content":[],"usage":5}}', True),
    (b'{"type":"message","id":"x1","parentId":"a1","message":{"role":"assistant","content":[],'
     b'"usage":{"input":"5","output":2,"totalTokens":7}}}', True),
    (b'{"type":"custom_message","id":"x1","parentId":"a1","customType":"c",'
     b'"content":[{"type":"toolCall","id":"c1","name":"bash","arguments":{}}]}', False),
    (b'{"type":"compaction","id":"x1","parentId":"a1","summary":"s","tokensBefore":5,"usage":{},'
     b'"details":{"usage":{"cost":{"total":2.5}}}}', True),
], ids=["no-such-day", "year-999", "leap-second", "offset-micro", "no-fraction", "escaped-ids", "call-id-null",
        "call-id-absent", "call-name-absent", "call-name-escaped", "call-args-list", "block-without-type",
        "block-not-object", "no-role", "no-message", "usage-not-object", "usage-string", "custom-message-call",
        "compaction-usage-empty"])
def test_a_line_each_way_of_reading_it_gives_the_oracles_rows(tmp_path, line, projected):
    # each thing the projection reads a second way (a time in pi's form or another, a string with
    # an escape, a call's id or name null or absent, a block that is not one, a message without its
    # role, fields only some lines hold): the projection reads the file, or leaves it to the seam,
    # and either way its rows are the oracle's
    path = tmp_path / "s.jsonl"
    path.write_bytes(b'{"type":"session","version":3,"id":"s","timestamp":"2026-01-02T03:04:05.000Z","cwd":"/p"}\n'
                     b'{"type":"message","id":"a1","parentId":null,"timestamp":"2026-01-02T03:04:06.000Z",'
                     b'"message":{"role":"user","content":"hello"}}\n' + line + b"\n")
    assert check([path], 0) == [projected]


def test_a_batch_leaves_no_cycle_for_the_collector():
    """The trees a batch builds are freed by reference counting as each file's rows are made: a
    worker collects only once a batch is made (`workers._batch`), and a log and its reader held
    in a cycle made the collector walk every entry of the batch again (a twentieth of the tables'
    CPU) or, frozen, kept them for good."""
    import gc

    paths = [str(p) for p in sorted((FIXTURES / "pi").glob("*.jsonl"))]
    tables_of([(p, 0) for p in paths])  # (the imports and caches of a first batch)
    gc.collect()
    enabled = gc.isenabled()
    gc.disable()
    try:
        got = tables_of([(p, 0) for p in paths])
        assert got.tables["entries"].num_rows > 1000 and all(d.projected for d in got.done)
        del got
        gc.set_debug(gc.DEBUG_SAVEALL)  # (what the collector finds is kept in gc.garbage, to be read)
        gc.collect()
        ours = [type(o).__name__ for o in gc.garbage if type(o).__module__.startswith("webapp.")]
        assert ours == []
    finally:
        gc.set_debug(0)
        gc.garbage.clear()
        if enabled:
            gc.enable()
