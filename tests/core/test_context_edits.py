"""Context edits (pi 1.6): written as pi's appendContextEdit writes them (its checks, refusals and
normalisation), reported by validation when a file holds one pi would refuse, and applied to the
context as pi applies them (the oracle's trees check this on every leaf; these name each rule)."""

import json
import shutil
from pathlib import Path

import orjson
import pytest

from tests.conftest import Builder
from webapp.core.context import build_context
from webapp.core.errors import InvalidWrite
from webapp.core.session import Session

ORACLE = Path(__file__).resolve().parents[1] / "fixtures" / "pi-oracle"
REFUSALS = json.loads((ORACLE / "refusals.json").read_text())


@pytest.mark.parametrize("refusal", REFUSALS, ids=lambda r: f"{r['file']}-{r['what']}")
def test_every_edit_pi_refused_is_refused_in_pis_words_and_nothing_is_written(tmp_path, refusal):
    path = tmp_path / refusal["file"]
    shutil.copyfile(ORACLE / "1.6.0" / refusal["file"], path)
    before = path.read_bytes()
    session = Session.open(path)
    with pytest.raises(InvalidWrite) as typed:
        session.append_context_edit(refusal["targetId"], refusal["replacement"], parent=refusal["leafId"])
    with pytest.raises(InvalidWrite) as generic:
        session.append({"type": "context_edit", "targetId": refusal["targetId"], "replacement": refusal["replacement"]},
                       parent=refusal["leafId"])
    assert str(typed.value) == str(generic.value) == refusal["error"]
    assert path.read_bytes() == before


def session_with_turns(tmp_path) -> tuple[Session, dict]:
    b = Builder()
    ids = {"u": b.user("read it"),
           "a": b.assistant("", calls=[{"id": "c1", "name": "read", "arguments": {"path": "a.py"}}])}
    ids["t"] = b.tool_result("c1", "x" * 4000)
    ids["s"] = b.add("message", message={"role": "system", "content": "Be brief."})
    ids["a2"] = b.assistant("It is long.", usage=2000)
    return Session.open(b.write(tmp_path / "s.jsonl")), ids


def test_an_edit_is_written_as_pi_writes_it(tmp_path):
    session, ids = session_with_turns(tmp_path)
    short = session.append_context_edit(ids["t"], {"content": "(4,000 x's)"})
    assert short["replacement"] == {"content": [{"type": "text", "text": "(4,000 x's)"}]}  # a tool result's string
    user = session.append_context_edit(ids["u"], {"content": "read a.py"})
    assert user["replacement"] == {"content": "read a.py"}  # a user message keeps its string
    gone = session.append_context_edit(ids["a2"], None)
    assert gone["replacement"] is None and gone["parentId"] == user["id"] and gone["targetId"] == ids["a2"]
    ctx = build_context(session.tree, gone["id"])
    assert [(m["entryId"], m["content"]) for m in ctx.messages if m["role"] != "assistant"] == [
        (ids["u"], "read a.py"), (ids["t"], "(4,000 x's)"), (ids["s"], "Be brief.")]
    assert ids["a2"] not in ctx.entry_ids and ctx.edits[ids["t"]].id == short["id"]
    assert session.tree.all_problems() == []


def test_undo_is_another_edit_and_the_latest_one_wins(tmp_path):
    session, ids = session_with_turns(tmp_path)
    session.append_context_edit(ids["t"], None)
    assert ids["t"] not in build_context(session.tree, session.tree.active_leaf).entry_ids
    original = session.entry(ids["t"]).message["content"]
    session.append_context_edit(ids["t"], {"content": original})
    ctx = build_context(session.tree, session.tree.active_leaf)
    assert next(m["content"] for m in ctx.messages if m["entryId"] == ids["t"]) == "x" * 4000


def test_an_edit_on_another_branch_or_summarized_away_does_not_apply(tmp_path):
    b = Builder()
    u = b.user("first")
    a = b.assistant("answer")
    edit = b.add("context_edit", targetId=u, replacement={"content": "edited"})
    other = b.user("other branch", parent=a)
    comp = b.add("compaction", parent=edit, summary="sum", firstKeptEntryId="e99", tokensBefore=10)
    b.raw(b.lines.pop().replace(b'"e99"', b'"e5"'))  # retain none: firstKeptEntryId is its own id
    tree = Session.open(b.write(tmp_path / "s.jsonl")).tree
    assert [m["content"] for m in build_context(tree, edit).messages][0] == "edited"
    assert [m["content"] for m in build_context(tree, other).messages][0] == "first"
    after = build_context(tree, comp)
    assert after.edits == {} and [m["entryId"] for m in after.messages] == [comp]
    assert tree.all_problems() == []


@pytest.mark.parametrize("replacement, target, reason", [
    ("oops", "u", "Context edit replacement must be null or contain string/array content"),
    ({"content": 42}, "u", "Context edit replacement must be null or contain string/array content"),
    (None, "nope", "Entry nope not found"),
    (None, "s", "Entry s does not contribute editable model content"),
    (None, "v", "Entry v is not on the active branch"),
])
def test_validation_reports_an_edit_pi_would_refuse(replacement, target, reason):
    b = Builder()
    b.user("q", id="u")
    b.add("message", id="s", message={"role": "system", "content": "x"})
    b.user("elsewhere", id="v", parent="u")
    b.add("context_edit", id="x", parent="s", targetId=target, replacement=replacement)
    session = Session.in_memory(b.data())
    problems = [(p.kind, p.message, p.entry_id) for p in session.tree.all_problems()]
    assert problems == [("bad-context-edit", f"pi refuses this context edit: {reason}", "x")]


def test_a_batch_refuses_a_bad_edit_and_writes_none_of_it(tmp_path):
    session, ids = session_with_turns(tmp_path)
    size = session.storage.path.stat().st_size
    with pytest.raises(InvalidWrite, match=r"entry 2: Entry .* does not contribute editable model content"):
        session.append_entries([{"type": "context_edit", "targetId": ids["u"], "replacement": None},
                                {"type": "context_edit", "targetId": ids["s"], "replacement": None}])
    assert session.storage.path.stat().st_size == size
    assert orjson.loads(session.storage.path.read_bytes().splitlines()[-1])["id"] == ids["a2"]


def test_a_read_only_file_gets_a_continuation_only_for_an_edit_pi_accepts(tmp_path):
    from webapp.core.edit_writes import write_context_edit

    b = Builder(version=None)  # pi v1: read-only (SPEC §5c)
    b.raw({"type": "message", "timestamp": "2025-01-01T00:00:01Z", "message": {"role": "user", "content": "hi"}})
    b.raw({"type": "message", "timestamp": "2025-01-01T00:00:02Z",
           "message": {"role": "assistant", "content": [{"type": "text", "text": "hello"}]}})
    path = b.write(tmp_path / "old.jsonl")
    session = Session.open(path)
    leaf = session.tree.active_leaf
    user, assistant = [e.id for e in session.tree.path(leaf)]
    with pytest.raises(InvalidWrite, match="Context edit replacement must be null"):
        write_context_edit(session, leaf, user, {"content": 42})
    assert sorted(p.name for p in tmp_path.iterdir()) == ["old.jsonl"]
    written, continued = write_context_edit(session, leaf, assistant, {"content": "hi there"})
    assert continued.parent == tmp_path and path.read_bytes() == b.data()
    copy = Session.open(continued).tree
    assert written["replacement"] == {"content": [{"type": "text", "text": "hi there"}]}
    assert [m["content"] for m in build_context(copy, written["id"]).messages] == ["hi", "hi there"]


def test_an_edit_of_an_entry_a_compaction_summarized_is_not_shown_as_in_force():
    from webapp.core.edit_preview import edited_entries

    b = Builder()
    u = b.user("old question")
    b.assistant("old answer")
    kept = b.user("new question")
    b.add("compaction", summary="s", firstKeptEntryId=kept, tokensBefore=10)
    late = b.add("context_edit", targetId=u, replacement=None)  # pi writes it: u is on the branch
    early = b.add("context_edit", parent=kept, targetId=u, replacement=None)
    tree = Session.in_memory(b.data()).tree
    assert [x.target.id for x in edited_entries(build_context(tree, early))] == [u]
    ctx = build_context(tree, late)
    assert u in ctx.edits and edited_entries(ctx) == []  # summarized: the edit changes nothing
