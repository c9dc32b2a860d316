"""SPEC §5c: files we must not write (pi v1, Claude Code, Codex) are refused, and continued in a
new pi v3 file instead (`session-tree fork FILE --from ID --new-file`)."""

from __future__ import annotations

import hashlib
import shutil
from pathlib import Path

import orjson
import pytest

from tests.conftest import FIXTURES, Builder, lines_of
from tests.test_cli import run
from webapp.core.context import build_context
from webapp.core.continuation import continue_in_new_session, is_uuid
from webapp.core.errors import ReadOnlySession
from webapp.core.session import Session
from webapp.core.tree import WARNING_KINDS

V1_LINES = [
    {"type": "session", "id": "v1-session", "timestamp": "2025-01-01T00:00:00.000Z", "cwd": "/home/ana/old"},
    {"type": "message", "timestamp": "2025-01-01T00:00:01.000Z", "message": {"role": "user", "content": "hello"}},
    {"type": "message", "timestamp": "2025-01-01T00:00:02.000Z",
     "message": {"role": "assistant", "content": [{"type": "text", "text": "hi there"}]}},
    {"type": "message", "timestamp": "2025-01-01T00:00:03.000Z", "message": {"role": "user", "content": "again"}},
]


def _v1(folder: Path) -> Path:
    path = folder / "v1.jsonl"
    path.write_bytes(b"".join(orjson.dumps(line) + b"\n" for line in V1_LINES))
    return path


@pytest.fixture(params=["pi-v1", "claude-code", "codex"])
def read_only_file(request, tmp_path) -> Path:
    folder = tmp_path / "--home-ana-proj--"
    folder.mkdir()
    if request.param == "pi-v1":
        return _v1(folder)
    source = {"claude-code": FIXTURES / "claude-code" / "daaain_dag_compact_after_rewind.jsonl",
              "codex": FIXTURES / "codex" / "agent-sessions_codex_small.jsonl"}[request.param]
    return Path(shutil.copy(source, folder / source.name))


def sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def test_every_write_method_refuses_and_says_why(read_only_file):
    session = Session.open(read_only_file)
    before = sha256(read_only_file)
    reason = session.read_only_reason
    assert reason and "\n" not in reason and "session-tree fork FILE --from ID --new-file" in reason
    leaf = session.tree.active_leaf
    writes = [
        lambda: session.append_message({"role": "user", "content": "x"}),
        lambda: session.append_entry({"type": "custom", "customType": "x"}),
        lambda: session.append_model_change("p", "m"),
        lambda: session.append_thinking_level_change("high"),
        lambda: session.append_custom_message("x", "y"),
        lambda: session.set_name("n"),
        lambda: session.set_label(leaf, "x"),
        lambda: session.fork(leaf),
        lambda: session.fork_with_summary(leaf, "at", "summary", from_id=leaf),
        lambda: session.append_compaction("s", leaf, 1),
    ]
    for write in writes:
        with pytest.raises(ReadOnlySession) as exc:
            write()
        assert str(exc.value) == reason
    assert sha256(read_only_file) == before


def test_a_v3_file_is_writable():
    assert Session.in_memory(Builder().data()).read_only_reason is None


def test_the_cli_refuses_every_write_and_leaves_the_file_byte_identical(read_only_file, capsys, monkeypatch, tmp_path):
    leaf = Session.open(read_only_file).tree.active_leaf
    summary = tmp_path / "summary.md"
    summary.write_text("a summary")
    before = sha256(read_only_file)
    commands = [
        ["label", read_only_file, leaf, "x"],
        ["fork", read_only_file, "--from", leaf],
        ["fork", read_only_file, "--from", leaf, "--summarize"],
        ["compact", read_only_file, "--summary-file", summary, "--keep-recent-tokens", "0"],
        ["continue", read_only_file, "--message", "hi", "--model", "openai/x", "--api-base", "http://127.0.0.1:9"],
        ["regenerate", read_only_file, leaf, "--model", "openai/x", "--api-base", "http://127.0.0.1:9"],
    ]
    for argv in commands:
        code, out, err = run(capsys, *argv)
        assert code == 2, argv
        assert err.count("\n") == 1 and "--new-file" in err and read_only_file.name in err, err
    code, _, err = run(capsys, "append", read_only_file, stdin=b'{"type": "custom", "customType": "x"}',
                       monkeypatch=monkeypatch)
    assert code == 2 and "--new-file" in err
    assert sha256(read_only_file) == before


def _context(path: Path, leaf: str | None) -> list[dict]:
    tree = Session.open(path).tree
    return [{k: v for k, v in m.items() if k != "entryId"} for m in build_context(tree, leaf).messages]


def test_fork_new_file_continues_in_a_new_v3_file_with_the_same_context(read_only_file, capsys):
    source = Session.open(read_only_file)
    leaf = source.tree.conversation_leaf(source.tree.active_leaf)
    before = sha256(read_only_file)
    code, out, err = run(capsys, "fork", read_only_file, "--from", leaf, "--new-file")
    assert code == 0, err
    new = Path(out.strip())
    assert new.parent == read_only_file.parent and new != read_only_file
    assert sha256(read_only_file) == before
    copy = Session.open(new)
    assert copy.log.format == "pi-v3" and copy.read_only_reason is None
    assert copy.tree.header["parentSession"] == str(read_only_file.resolve())
    # No damage; a warning the source has on its path (a result read far from its call) comes along.
    assert [p.kind for p in copy.tree.all_problems() if p.kind not in WARNING_KINDS] == []
    warned = {p.kind for p in source.tree.all_problems() if p.kind in WARNING_KINDS}
    assert {p.kind for p in copy.tree.all_problems()} <= warned
    assert _context(new, copy.tree.conversation_leaf(copy.tree.active_leaf)) == _context(read_only_file, leaf)
    assert all(is_uuid(e.id) for e in copy.tree.entries)
    # and the copy takes writes
    copy.append_message({"role": "user", "content": "more"})
    assert [p.kind for p in Session.open(new).tree.all_problems() if p.kind not in WARNING_KINDS] == []


def test_the_copy_keeps_uuid_ids_renumbers_others_and_follows_every_reference(tmp_path):
    b = Builder()
    keep = "0193c0de-1111-7000-8000-000000000001"
    b.user("one", id=keep)
    b.assistant("a1", id="a1")
    b.user("two", id="u2")
    b.assistant("a2", id="a2")
    b.add("label", id="lab", parent="a2", targetId="u2", label="second")
    b.add("compaction", id="c1", parent="a2", summary="so far", firstKeptEntryId="u2", tokensBefore=10)
    b.user("three", id="u3")
    b.add("branch_summary", id="bs", parent="u3", fromId="u2", summary="left")
    b.assistant("a3", id="a3")
    path = b.write(tmp_path / "s.jsonl")
    source = Session.open(path)
    new = continue_in_new_session(source, "a3")
    lines = lines_of(new.read_bytes())
    ids = [line["id"] for line in lines[1:]]
    assert ids[0] == keep and all(is_uuid(i) for i in ids) and not {"a1", "u2", "c1"} & set(ids)
    by_type = {line["type"]: line for line in lines[1:]}
    assert by_type["compaction"]["firstKeptEntryId"] == ids[2]  # u2's new id
    assert by_type["branch_summary"]["fromId"] == ids[2]
    assert [line["parentId"] for line in lines[1:]] == [None, *ids[:-1]]
    copy = Session.open(new)
    assert copy.tree.labels == {ids[2]: "second"}
    # No damage; a warning the source has on its path (a result read far from its call) comes along.
    assert [p.kind for p in copy.tree.all_problems() if p.kind not in WARNING_KINDS] == []
    warned = {p.kind for p in source.tree.all_problems() if p.kind in WARNING_KINDS}
    assert {p.kind for p in copy.tree.all_problems()} <= warned
    assert _context(new, copy.tree.conversation_leaf(copy.tree.active_leaf)) == _context(path, "a3")
    assert path.read_bytes() == b.data()
