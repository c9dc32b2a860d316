"""`session-tree edit-context FILE NODE --omit | --replace-file F`: pi 1.6's context edit from a
shell, as the Context tab writes it (core/edit_writes.py): the token figures first, then one
`context_edit` line at the active leaf; refused in pi's words where pi refuses; a read-only file
continued in a new file, never written."""

from __future__ import annotations

import orjson

from tests.conftest import Builder
from webapp.cli import main
from webapp.core.context import build_context
from webapp.core.session import Session


def session_file(tmp_path):
    b = Builder()
    ids = {"u": b.user("read it"),
           "a": b.assistant("", calls=[{"id": "c1", "name": "read", "arguments": {"path": "a.py"}}])}
    ids["t"] = b.tool_result("c1", "x" * 4000)
    ids["s"] = b.add("message", message={"role": "system", "content": "Be brief."})
    ids["a2"] = b.assistant("It is long.")
    return b.write(tmp_path / "s.jsonl"), ids


def last_line(path) -> dict:
    return orjson.loads(path.read_bytes().splitlines()[-1])


def test_omit_prints_the_figures_and_writes_one_edit_at_the_active_leaf(tmp_path, capsys):
    path, ids = session_file(tmp_path)
    assert main(["edit-context", str(path), ids["t"][:2], "--omit"]) == 0
    out = capsys.readouterr().out.splitlines()
    edit = last_line(path)
    assert (edit["type"], edit["targetId"], edit["replacement"], edit["parentId"]) == ("context_edit", ids["t"], None, ids["a2"])
    before, after = (int(n.replace(",", "")) for n in out[0].split("context ")[1].split(" tokens")[0].split(" → "))
    assert out[0].startswith(f"{ids['t']}: left out of the context") and after < before - 900  # 4,000 x's gone
    assert out[-1] == edit["id"]
    assert ids["t"] not in build_context(Session.open(path).tree, edit["id"]).entry_ids


def test_replace_file_sends_its_text_and_dry_run_writes_nothing(tmp_path, capsys):
    path, ids = session_file(tmp_path)
    (tmp_path / "short.txt").write_text("(4,000 x's)")
    size = path.stat().st_size
    assert main(["edit-context", str(path), ids["t"], "--replace-file", str(tmp_path / "short.txt"),
                 "--dry-run", "--json"]) == 0
    told = orjson.loads(capsys.readouterr().out)
    assert told["entryId"] is None and told["tokensAfter"] < told["tokensBefore"] and path.stat().st_size == size
    assert told["replacement"] == {"content": [{"type": "text", "text": "(4,000 x's)"}]}  # as pi normalises it
    assert main(["edit-context", str(path), ids["t"], "--replace-file", str(tmp_path / "short.txt")]) == 0
    ctx = build_context(Session.open(path).tree, last_line(path)["id"])
    assert [m["content"] for m in ctx.messages if m["entryId"] == ids["t"]] == ["(4,000 x's)"]


def test_an_edit_pi_refuses_is_refused_in_one_line_and_nothing_is_written(tmp_path, capsys):
    path, ids = session_file(tmp_path)
    before = path.read_bytes()
    assert main(["edit-context", str(path), ids["s"], "--omit"]) == 2  # a system message is no edit's target
    err = capsys.readouterr().err
    assert err.startswith("session-tree: error: ") and err.count("\n") == 1
    assert path.read_bytes() == before


def test_a_read_only_file_is_continued_in_a_new_file(tmp_path, capsys):
    b = Builder(version=None)  # pi v1: read-only (SPEC §5c)
    b.raw({"type": "message", "timestamp": "2025-01-01T00:00:01Z", "message": {"role": "user", "content": "hi"}})
    b.raw({"type": "message", "timestamp": "2025-01-01T00:00:02Z",
           "message": {"role": "assistant", "content": [{"type": "text", "text": "hello"}]}})
    path = b.write(tmp_path / "old.jsonl")
    assistant = Session.open(path).tree.active_leaf
    assert main(["edit-context", str(path), assistant, "--omit", "--json"]) == 0
    told = orjson.loads(capsys.readouterr().out)
    assert path.read_bytes() == b.data()
    copy = Session.open(told["continuedIn"]).tree
    assert [m["content"] for m in build_context(copy, told["entryId"]).messages] == ["hi"]
