"""`show --json` reads a pi file into columns (`outline.outline_json`) instead of building its
tree: its document is the tree's (`outline.tree_outline`, what `show --json` printed before),
byte for byte, on every fixture, sample session, hostile file and crafted line, on files of
broken structure (loops, orphans, duplicate ids, markers, compactions that keep nothing), on
synthetic sessions, and on fuzzed files. `show` prints that document as text: the facts the
tree says."""

from __future__ import annotations

import json
from pathlib import Path

import orjson
import pytest
from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import strategies as st

import samplegen
from tests.conftest import Builder
from tests.core.crafted_lines import CRAFTED, tool_call_line
from tests.test_cli import run
from tests.test_hostile_files import ENTRY, FILES, FIXTURE_FILES, any_json, hostile, msg
from webapp.core.agents.pi import columns
from webapp.core.agents.pi.columns import ColumnLog
from webapp.core import outline
from webapp.cli.output import escape_controls, shown
from webapp.core.outline import outline_facts, outline_json, tree_outline
from webapp.core.session import Session

SAMPLES = sorted((Path(__file__).parents[2] / "sample_sessions").glob("*/*.jsonl"))


def _bytes(doc: dict) -> bytes:
    return orjson.dumps(doc, option=orjson.OPT_INDENT_2 | orjson.OPT_APPEND_NEWLINE)


def outline_bytes(path: Path) -> bytes:
    return b"".join(outline_json(path, {}))


def check_same(path: Path) -> bytes:
    """The columns' document is the tree's, and so are the facts `show` prints as text."""
    new = outline_bytes(path)
    tree_doc = tree_outline(Session.open(path))
    assert new == _bytes(tree_doc)
    assert _bytes(without_rows(outline_facts(path))) == _bytes(without_rows(tree_doc))
    return new


def without_rows(doc: dict) -> dict:
    return {k: v for k, v in doc.items() if k != "entries"}


def tree_text(tree) -> list[str]:
    """What `show` printed from the tree before it printed the document."""
    header = tree.header or {}
    version = f"format {tree.format}" if tree.format != "unknown" else "no session header"
    problems = tree.all_problems()
    return [f"session   {shown(header.get('id'))}  ({version})", f"name      {shown(tree.name)}",
            f"cwd       {shown(header.get('cwd'))}", f"created   {shown(header.get('timestamp'))}",
            "entries   " + (", ".join(f"{k} {v}" for k, v in sorted(tree.counts_by_type().items())) or "none"),
            f"roots     {', '.join(tree.roots) or '-'}", f"orphans   {', '.join(tree.orphans) or '-'}",
            f"leaves    {', '.join(tree.leaves()) or '-'}", f"active    {tree.active_leaf or '(empty conversation)'}",
            *(f"label     {target}: {label}" for target, label in tree.labels.items()),
            f"problems  {len(problems)}", *(f"  {p.where}: {p.kind}: {p.message}" for p in problems)]


@pytest.fixture
def lean(monkeypatch):
    """Fails a test whose pi file is not read into columns (else it would compare the tree with itself)."""
    monkeypatch.setattr(outline, "tree_outline", lambda session: pytest.fail("read by the tree"))


def test_a_pi_file_is_read_into_columns(tmp_path, lean):
    b = Builder()
    b.user("hello", id="u0")
    b.assistant("hi", id="a1")
    doc = orjson.loads(outline_bytes(b.write(tmp_path / "s.jsonl")))
    assert [e["id"] for e in doc["entries"]] == ["u0", "a1"] and doc["leaves"] == ["a1"]


def test_a_parent_id_naming_the_entry_before_is_kept_as_its_id(tmp_path):
    """(One string per entry held, not two: the usual parent is the entry before.)"""
    b = Builder()
    b.user("hello", id="u0")
    b.assistant("hi", id="a1")
    b.user("again", id="u2")
    path = b.write(tmp_path / "s.jsonl")
    log = ColumnLog(path)
    with open(path, "rb") as file:
        log.read(file)
    assert log.id_of == ["u0", "a1", "u2"] and not log.others
    assert log.parents[1] is log.id_of[0] and log.parents[2] is log.id_of[1]


@pytest.mark.parametrize("fixture", FIXTURE_FILES + SAMPLES, ids=lambda p: f"{p.parent.name[:20]}/{p.name}")
def test_every_fixture_and_sample_gives_the_same_document(fixture):
    check_same(fixture)


def test_other_agents_files_are_read_by_the_tree(monkeypatch):
    read = []
    real = outline.tree_outline
    monkeypatch.setattr(outline, "tree_outline", lambda session: read.append(session) or real(session))
    others = [p for p in FIXTURE_FILES if p.parent.name in ("claude-code", "codex")]
    for path in others:
        check_same(path)
    assert others and len(read) == 2 * len(others)  # (the document, and show's text)


@pytest.mark.parametrize("name", sorted(FILES))
def test_every_hostile_file_gives_the_same_document(tmp_path, name):
    path = tmp_path / "h.jsonl"
    path.write_bytes(FILES[name])
    check_same(path)


@pytest.mark.parametrize("name", sorted(CRAFTED))
def test_every_crafted_line_gives_the_same_document(tmp_path, name):
    path = tmp_path / "c.jsonl"
    after = msg("r9", {"role": "toolResult", "toolCallId": "c1", "content": "ok"}, parent="r1")
    path.write_bytes(hostile(CRAFTED[name], after, msg("r10", {"role": "assistant", "content": "x"}, parent="r9")))
    check_same(path)


def _user(i: str, parent, **extra) -> dict:
    return msg(i, {"role": "user", "content": "x"}, parent=parent, **extra)


def _calls(i: str, parent: str, *calls: str, stop: str = "toolUse") -> dict:
    return msg(i, {"role": "assistant", "stopReason": stop, "content": [
        {"type": "toolCall", "id": c, "name": "bash", "arguments": {"command": "ls"}} for c in calls]}, parent=parent)


def _result(i: str, parent: str, call: str) -> dict:
    return msg(i, {"role": "toolResult", "toolCallId": call, "content": "ok"}, parent=parent)


def _entry(kind: str, i: str, parent, **fields) -> dict:
    return {"type": kind, "id": i, "parentId": parent, "timestamp": "2026-01-02T03:04:09.000Z", **fields}


# Structure the columns compute themselves (the lines are the decoder's usual ones, mostly).
STRUCTURES = {
    "loop-of-two": [_user("x1", "x2"), _user("x2", "x1"), _user("x3", "x2")],
    "self-parent": [_user("x1", "x1"), _user("x2", "x1")],
    "loop-after-a-forward-parent": [_user("x1", "x3"), _user("x2", "a1"), _user("x3", "x2"), _user("x4", "x5"),
                                    _user("x5", "x4")],
    "forward-parent-no-loop": [_user("x1", "x2"), _user("x2", "a1")],
    "orphans": [_user("x1", "nowhere"), _user("x2", "x1"), _user("x3", "gone")],
    "empty-and-null-parents": [_user("x1", ""), _user("x2", None)],
    "duplicate-decoded-id": [_user("x1", "a1"), _user("x1", "a1"), _user("x2", "x1")],
    "duplicate-of-a-header-like-id": [_user("L3", "a1"), {"type": "model_change", "provider": "p", "modelId": "m"}],
    "duplicate-after-an-other-line": [_entry("model_change", "x1", "a1", provider="p", modelId="m"),
                                      _user("x1", "x1")],
    "id-of-a-later-duplicate": [_entry("model_change", "x1", "a1", provider="p", modelId="m"),
                                _entry("model_change", "x1", "x1", provider="p", modelId="m"), _user("x1@L6", "a1")],
    "labels": [_user("x1", "a1"), _entry("label", "l1", "x1", targetId="x1", label="one"),
               _entry("label", "l2", "l1", targetId="a1", label="two"),
               _entry("label", "l3", "l2", targetId="x1", label=" "), _entry("label", "l4", "l3", targetId="gone"),
               _entry("label", "l5", "l4", targetId="x1", label="again"), _user("x2", "l5")],
    "leaf-markers": [_user("x1", "a1"), _user("x2", "x1"), _entry("leaf", "f1", "x2", targetId="x1"),
                     _entry("leaf", "f2", "f1", targetId="nowhere")],
    "active-leaf-a-label": [_user("x1", "a1"), _entry("label", "l1", "x1", targetId="x1", label="t")],
    "marker-children-only": [_user("x1", "a1"), _entry("label", "l1", "x1", targetId="x1", label="t"),
                             _entry("label", "l2", "l1", targetId="a1", label="u"), _user("x2", "a1")],
    "verdict-marker": [_user("x1", "a1"), _entry("custom", "v1", "x1", customType="session-tree.verdict",
                                                 data={"verdict": "good"}), _user("x2", "a1")],
    "side-lines-after-the-leaf": [_user("x1", "a1"), _entry("leaf", "f1", "x1", targetId="x1"),
                                  _entry("custom", "c1", "x1", customType="hook"),
                                  _entry("custom", "c2", "c1", customType="hook"), _user("x2", "a1"),
                                  _entry("leaf", "f2", "x2", targetId="x1")],
    "names": [_entry("session_info", "s1", "a1", name="first"), _entry("session_info", "s2", "s1", name=" "),
              _entry("session_info", "s3", "s2", name=["x"]), _user("x1", "s3")],
    "compactions": [_user("x1", "a1"), _calls("x2", "x1", "k1"), _result("x3", "x2", "k1"),
                    _entry("compaction", "c1", "x3", summary="s", firstKeptEntryId="x3", tokensBefore=5),
                    _entry("compaction", "c2", "c1", summary="s", firstKeptEntryId="gone", tokensBefore=5),
                    _entry("compaction", "c3", "c2", summary="s", tokensBefore=5),
                    _entry("compaction", "c4", "c3", summary="s", firstKeptEntryId="u0", tokensBefore=5),
                    _user("y1", "a1"), _entry("compaction", "c5", "y1", summary="s", firstKeptEntryId="x1",
                                              tokensBefore=5),
                    _entry("compaction", "c6", "c5", firstKeptEntryId="x1")],
    "tool-calls": [_calls("t1", "a1", "k1"), _result("t2", "t1", "k1"),
                   _calls("t3", "t2", "k2", "k3"), _result("t4", "t3", "k2"), _result("t5", "t4", "k3"),
                   _calls("t6", "t5", "k4", "k5"), _result("t7", "t6", "k4"), _user("t8", "t7"),
                   _calls("t9", "t8", "k6", stop="aborted"), _user("t10", "t9"),
                   _calls("t11", "t10", "k7", stop="error"),
                   _calls("t12", "t11", "k8"), _entry("custom", "s1", "t12", customType="progress"),
                   _result("t13", "s1", "k8"),
                   _calls("t14", "t13", "k9"), _entry("label", "l1", "t14", targetId="t14", label="x"),
                   _result("t15", "l1", "k9"),
                   _calls("t16", "t15", "k10"), _result("t17", "t16", "k10"), _result("t18", "t16", "k10"),
                   _calls("t19", "t18", "k11"), _result("t20", "t19", "other"),
                   _calls("t21", "t20", "k12"), _user("t22", "t21"),
                   _calls("t23", "t22", "k13"), _result("t24", "t23", "k13"), _calls("t25", "t24", "k14"),
                   msg("t26", {"role": "toolResult", "toolCallId": "k14", "content": "x", "details": {"n": 1e400}},
                       parent="t25")],
    "results-next-but-elsewhere": [_calls("u1", "a1", "q1", "q2"), _result("u2", "u1", "q1"), _result("u3", "a1", "q2"),
                                   _calls("w1", "u3", "q3"), _result("w2", "u1", "q3"),
                                   _calls("w3", "w2", "q4", "q4"), _result("w4", "w3", "q4")],
    "a-streak-broken-after-some-results": [_calls("t1", "a1", "k1", "k2"), _result("t2", "t1", "k1"),
                                           _result("t3", "t2", "wrong"), _result("t4", "t2", "k2"),
                                           _calls("t5", "t4", "k3", "k4"), _result("t6", "t5", "k3"),
                                           _result("t7", "t6", None), _user("t8", "t7"), _result("t9", "t7", "k4")],
    "results-without-call-ids": [_calls("t1", "a1", "k1"), msg("t2", {"role": "toolResult", "content": "x"},
                                                                parent="t1")],
    "pi-v1-lines-after-decoded-ones": [_user("x1", "a1"),
                                       {"type": "message", "message": {"role": "user", "content": "v1"}},
                                       {"type": "model_change", "provider": "p", "modelId": "m"}, _user("x2", "L4")],
    "other-types": [_entry("model_change", "m1", "a1", provider="p", modelId="m"), _entry("thinking_level_change",
                    "m2", "m1"), _entry("branch_summary", "b1", "m2", fromId="a1", summary="s"),
                    _entry("custom_message", "m3", "b1", customType="x", content="c", display=True),
                    _entry("future_type", "m4", "m3"), _entry(["a list"], "m5", "m4"), _entry(None, "m6", "m5"),
                    _user("x1", "m6")],
    "header-title": [_user("x1", "a1")],
}


@pytest.mark.parametrize("name", sorted(STRUCTURES))
def test_every_structure_gives_the_same_document(tmp_path, name):
    lines = [any_json(line) for line in STRUCTURES[name]]
    path = tmp_path / "s.jsonl"
    data = hostile(*lines)
    if name == "header-title":
        data = data.replace(b'"type":"session"', b'"type":"session","title":"From the header"', 1)
    path.write_bytes(data)
    check_same(path)


# Files whose whole shape is unusual: where the reading starts, how it ends.
SHAPES = {
    "empty": b"",
    "blank-lines": b"\n\n",
    "header-only": b'{"type":"session","version":3,"id":"s"}\n',
    "header-without-newline": b'{"type":"session","version":3,"id":"s"}',
    "torn-message": hostile() + b'{"type":"message","id":"t1","parentId":"a1","message":{"role":"user","content":"x"}}',
    "torn-bad": hostile() + b'{"type":"message","id":"t1",',
    "torn-duplicate": hostile() + b'{"type":"message","id":"a1","parentId":"a1","message":{"role":"user"}}',
    "torn-leaf": hostile() + b'{"type":"leaf","id":"f1","parentId":"a1","targetId":"u0"}',
    "bom-and-crlf": b"\xef\xbb\xbf" + hostile().replace(b"\n", b"\r\n"),
    "blank-and-bad-first": b"\n{nope\n" + hostile(),
    "no-header": hostile().split(b"\n", 1)[1],
    "message-first-then-header": hostile().split(b"\n", 1)[1] + hostile().split(b"\n", 1)[0] + b"\n",
    "v1-header": hostile().replace(b'"version":3,', b"", 1),
    "v2-header": hostile().replace(b'"version":3', b'"version":2', 1),
    "version-true": hostile().replace(b'"version":3', b'"version":true', 1),
    "long-line": hostile(_user("x1", "a1", note="y" * 300_000)),
}


@pytest.mark.parametrize("name", sorted(SHAPES))
def test_every_file_shape_gives_the_same_document(tmp_path, name):
    path = tmp_path / "s.jsonl"
    path.write_bytes(SHAPES[name])
    check_same(path)


@pytest.mark.parametrize("seed,branches", [(208, None), (3, 40)])
def test_a_synthetic_session_gives_the_same_document(tmp_path, lean, seed, branches):
    """(bench/show_json.py's kind of file, smaller: branches, labels, compactions, tool turns)"""
    header, items = samplegen.synthetic_session(n_entries=3_000, seed=seed, branches=branches)
    path = tmp_path / "s.jsonl"
    samplegen.write_jsonl(path, header, items)
    new = outline_bytes(path)
    assert new == _bytes(tree_outline(Session.open(path)))  # (the module's name is the fixture's; this one is not)
    doc = orjson.loads(new)
    assert len(doc["entries"]) == len(items) and len(doc["leaves"]) > 1


def _check_every_structure_and_a_synthetic_session(tmp_path):
    for name, lines in STRUCTURES.items():
        path = tmp_path / f"{name}.jsonl"
        path.write_bytes(hostile(*[any_json(line) for line in lines]))
        check_same(path)
    header, items = samplegen.synthetic_session(n_entries=300, seed=208)
    samplegen.write_jsonl(tmp_path / "s.jsonl", header, items)
    check_same(tmp_path / "s.jsonl")


@pytest.mark.parametrize("batch", [1, 2, 3, 7])
def test_rows_in_batches_of_any_size_give_the_same_document(tmp_path, monkeypatch, batch):
    """(A batch that starts or ends at an odd row, or holds none: every structure, a synthetic session.)"""
    monkeypatch.setattr(outline, "ROWS_BATCH", batch)
    _check_every_structure_and_a_synthetic_session(tmp_path)


@pytest.mark.parametrize("size", [1, 100, 1000])
def test_the_file_read_in_pieces_of_any_size_gives_the_same_document(tmp_path, monkeypatch, size):
    """(A line, and a turn's results, split over pieces: every structure, a synthetic session.)"""
    monkeypatch.setattr(columns, "READ_SIZE", size)
    _check_every_structure_and_a_synthetic_session(tmp_path)


def test_a_turn_answered_by_the_results_after_it_keeps_no_call_id(tmp_path):
    lines = [_calls("t1", "a1", "k1"), _result("t2", "t1", "k1"), _calls("t3", "t2", "k2", "k3"),
             _result("t4", "t3", "k2"), _result("t5", "t4", "k3"), _calls("t6", "t5", "k4", "k5"),
             _result("t7", "t6", "k4"), _user("t8", "t7")]
    path = tmp_path / "s.jsonl"
    path.write_bytes(hostile(*[any_json(line) for line in lines]))
    log = ColumnLog(path)
    with open(path, "rb") as file:
        log.read(file)
    at = {entry_id: i for i, entry_id in enumerate(log.id_of)}
    assert log.calls == {at["t6"]: ("k4", "k5")} and log.results == {at["t7"]: "k4"}  # (only the turn checked in full)
    assert list(log.result_at) == [at[r] for r in ("t2", "t4", "t5", "t7")]


def test_show_json_is_what_the_full_read_gives(tmp_path, capsys, monkeypatch):
    """`show --json` reads the file its own way (tests/core/test_show_outline.py); its output is
    the document of the tree of a full read."""
    path = tmp_path / "s.jsonl"
    path.write_bytes(FILES["control-characters"] + b'{"type":"message","id":"b\xff"}\n' + tool_call_line(b'{"n":1e400}') + b"\n")
    code, out, _ = run(capsys, "show", path, "--json", monkeypatch=monkeypatch)
    assert code == 0
    assert json.loads(out) == {"path": str(path), **json.loads(orjson.dumps(tree_outline(Session.open(path))))}
    assert [b["line"] for b in json.loads(out)["badLines"]] == [6, 7]


@pytest.mark.parametrize("name", ["no-header-cycle-orphan", "control-characters", "newline-name", "not-utf8-and-torn"])
def test_show_prints_the_document_as_the_tree_says_it(tmp_path, capsys, monkeypatch, name):
    """(`show` prints the columns' facts: what it printed from the tree, line for line.)"""
    path = tmp_path / "s.jsonl"
    path.write_bytes(FILES[name])
    code, out, _ = run(capsys, "show", path, monkeypatch=monkeypatch)
    assert code == 0 and out.splitlines() == [escape_controls(line) for line in tree_text(Session.open(path).tree)]


def test_show_json_prints_the_document(tmp_path, capsys, monkeypatch):
    path = tmp_path / "s.jsonl"
    path.write_bytes(FILES["no-header-cycle-orphan"])
    code, out, _ = run(capsys, "show", path, "--json", monkeypatch=monkeypatch)
    expected = orjson.dumps({"path": str(path), **tree_outline(Session.open(path))},
                            option=orjson.OPT_INDENT_2 | orjson.OPT_APPEND_NEWLINE)
    assert code == 0 and out.encode() == expected
    assert orjson.loads(out)["problems"]


_IDS = ["f1", "f2", "f3", "f4", "a1", "u0"]
LINE = st.one_of(ENTRY.map(any_json),
                 st.tuples(st.sampled_from(_IDS), st.sampled_from([*_IDS, "", None])).map(lambda t: any_json(_user(*t))))


@settings(max_examples=150, deadline=None, derandomize=True, phases=[Phase.explicit, Phase.reuse, Phase.generate],
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])
@given(lines=st.lists(LINE, min_size=1, max_size=10), cut=st.integers(0, 400), junk=st.binary(max_size=3))
def test_fuzzed_files_give_the_same_document(tmp_path_factory, lines, cut, junk):
    """The hostile-file fuzzer's entries (any JSON in any field) among usual message lines, their
    ids and parents among a few (so that they repeat, loop and dangle), the last line damaged."""
    damaged = lines[-1]
    lines[-1] = damaged[:cut] + junk + damaged[cut + len(junk):]
    path = tmp_path_factory.mktemp("lines") / "f.jsonl"
    path.write_bytes(hostile(*lines))
    check_same(path)
