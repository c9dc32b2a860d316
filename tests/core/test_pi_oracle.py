"""Our reading of pi's sessions against pi's own, on trees pi's SessionManager wrote (1.6.0 and
0.73.1, tests/fixtures/pi-oracle/, made by tests/oracle/pi_oracle.py fixtures): the context at
every entry taken as the leaf (ids, order, roles, text, tool calls, system prompts and tools,
edited text) and the costs by model, as pi recorded them. No node is needed here."""

import json
from pathlib import Path

import pytest

from tests.conftest import Builder
from tests.oracle.agreement import compare_file
from webapp.core.costs import usage_breakdown
from webapp.core.reader import parse_bytes
from webapp.core.session import Session
from webapp.core.tree import SessionTree

ORACLE = Path(__file__).resolve().parents[1] / "fixtures" / "pi-oracle"
FILES = sorted(ORACLE.glob("*/*.jsonl"))


def record(path: Path) -> dict:
    return json.loads(path.with_suffix(".pi.json").read_text())


@pytest.mark.parametrize("path", FILES, ids=lambda p: p.name)
def test_every_leaf_and_every_cost_agree_with_pi(path):
    result = compare_file(path, record(path))
    assert result.differences == []
    assert result.agree == result.leaves == len(record(path)["leaves"]) + 1
    assert result.cost_total_agrees and result.breakdown_agrees


def test_the_trees_hold_every_kind_of_entry_pi_1_6_writes():
    """The set stays a test of each kind: a regenerated set that lost one fails here."""
    kinds = set()
    for path in ORACLE.glob("1.6.0/*.jsonl"):
        for line in path.read_text().splitlines()[1:]:
            e = json.loads(line)
            t = e["type"]
            if t == "message":
                kinds.add(f"message {e['message']['role']}")
                if e["message"]["role"] == "system":
                    kinds.update(f"system {k}" for k in ("sections", "toolsAdded", "toolsRemoved") if k in e["message"])
            elif t == "context_edit":
                r = e["replacement"]
                kinds.add("edit null" if r is None else f"edit {type(r['content']).__name__}")
            elif t == "compaction":
                kinds.add("compaction retain-none" if e["firstKeptEntryId"] == e["id"] else "compaction")
                kinds.update(f"compaction {k}" for k in ("systemMessage", "usage") if k in e)
            else:
                kinds.add(t)
    assert kinds >= {
        "message user", "message assistant", "message toolResult", "message bashExecution", "message system",
        "system sections", "system toolsAdded", "system toolsRemoved", "edit null", "edit str", "edit list",
        "compaction", "compaction retain-none", "compaction systemMessage", "compaction usage", "usage",
        "branch_summary", "custom_message", "custom", "label", "model_change", "thinking_level_change", "session_info",
    }


def test_a_usage_entry_is_counted_under_its_model_and_is_never_a_branch_tip():
    path = ORACLE / "1.6.0" / "1.6.0-00.jsonl"
    tree = Session.open(path).tree
    usages = [e for e in tree.entries if e.type == "usage"]
    assert usages
    assert not set(tree.leaves()) & {e.id for e in usages}
    keys = {row["key"] for row in usage_breakdown(tree.entries)}
    assert {f"{e.get('provider')}/{e.get('model')}" for e in usages} <= keys


def test_a_usage_entry_at_the_end_of_a_branch_leaves_its_parent_the_tip():
    b = Builder()
    u = b.user("q")
    a = b.assistant("a")
    b.add("usage", kind="cache_warm", provider="p1", model="m1",
          usage={"input": 10, "output": 0, "cacheRead": 0, "cacheWrite": 5, "totalTokens": 15, "cost": {"total": 0.5}})
    b.user("other", parent=u)
    tree = SessionTree(parse_bytes(b.data()))
    assert set(tree.leaves()) == {a, "e4"}
    assert sum(e.cost for e in tree.entries) == 0.5
    assert usage_breakdown(tree.entries) == [{"key": "p1/m1", "cost": 0.5, "tokens": 15}]


def test_the_files_we_wrote_for_pi_hold_every_kind_of_write():
    """pi 1.6.0 read these (test_every_leaf_and_every_cost_agree_with_pi checks its records):
    each kind of write session-tree makes is among them."""
    ours = set()
    for path in ORACLE.glob("ours/*.jsonl"):
        lines = [json.loads(line) for line in path.read_text().splitlines()]
        if lines[0].get("parentSession"):
            ours.add("continuation")
        for e in lines[1:]:
            if len(e["id"]) != 36:
                continue  # pi's own
            ours.add(e["type"])
            if e["type"] == "compaction":
                ours.update(f"compaction {k}" for k in ("systemMessage", "usage") if k in e)
            if e["type"] == "context_edit":
                ours.add("omit" if e["replacement"] is None else "replace")
    assert ours >= {"continuation", "label", "leaf", "message", "compaction", "compaction systemMessage",
                    "compaction usage", "branch_summary", "omit", "replace"}
