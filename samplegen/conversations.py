"""Conversations across files, made from the shapes of `shared/formats/conversations.md`: what
each agent writes when a conversation goes on in another file (a fork, a branch, a resumed copy,
a sub-agent), small enough to read whole. `python -m samplegen.conversations [OUTDIR]` writes
them (default: tests/fixtures/conversations/), byte for byte the same at each run.

- pi/: a session, its fork (`parentSession`, copies with their ids), a fork of that fork, and a
  fork whose source is gone;
- claude-code/: a session with a rewind, a sub-agent and a workflow run; its `/branch` (copies
  with their uuids and `forkedFrom`), an SDK fork (new uuids, `forkedFrom.messageUuid`), a
  `--resume --fork-session` copy (shared uuids only), a session compacted twice in one process
  (re-appended rows), and a branch whose source is gone;
- codex/: a paginated session, its legacy fork (the parent's lines copied), its paginated fork
  (`history_base`), the sub-agent it spawned (`parent_thread_id`), and a fork whose parent is gone.
"""

from __future__ import annotations

import sys
from pathlib import Path

import orjson

DEFAULT_OUT = Path(__file__).resolve().parent.parent / "tests" / "fixtures" / "conversations"


def _ts(day: int, minute: int, second: int = 0) -> str:
    return f"2026-05-{day:02d}T10:{minute:02d}:{second:02d}.000Z"


def _write(path: Path, lines: list[dict]) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(b"".join(orjson.dumps(line) + b"\n" for line in lines))
    return path


# -- pi ----------------------------------------------------------------------------------------------

PI_CWD = "/home/ana/projects/report"
PI_FOLDER = "--home-ana-projects-report--"
PI_HOME = "/home/ana/.pi/agent/sessions/" + PI_FOLDER  # where the forks said their source was


def _pi_name(header: dict) -> str:
    return header["timestamp"].replace(":", "-").replace(".", "-") + "_" + header["id"] + ".jsonl"


def _pi_header(sid: str, day: int, minute: int, parent: str | None = None) -> dict:
    h = {"type": "session", "version": 3, "id": sid, "timestamp": _ts(day, minute), "cwd": PI_CWD}
    if parent:
        h["parentSession"] = parent
    return h


def _pi_msg(eid: str, parent: str | None, ts: str, role: str, text: str | None = None, **more) -> dict:
    msg: dict = {"role": role}
    if text is not None:
        msg["content"] = [{"type": "text", "text": text}]
    msg.update(more)
    if role == "assistant":
        msg.setdefault("provider", "anthropic")
        msg.setdefault("model", "claude-sonnet-4-5")
        msg.setdefault("stopReason", "stop")
        msg.setdefault("usage", {"input": 900, "output": 60, "cacheRead": 0, "cacheWrite": 0, "totalTokens": 960})
    return {"type": "message", "id": eid, "parentId": parent, "timestamp": ts, "message": msg}


def pi_conversation() -> dict[str, list[dict]]:
    """A session, its fork at the fifth entry, a fork of that fork, and a fork of a file that is gone."""
    day = 1
    p_head = _pi_header("0196a1c0-0000-7000-8000-00000000000a", day, 0)
    trunk = [
        {"type": "model_change", "id": "p0000001", "parentId": None, "timestamp": _ts(day, 0, 1),
         "provider": "anthropic", "modelId": "claude-sonnet-4-5"},
        _pi_msg("p0000002", "p0000001", _ts(day, 0, 5), "user", "Add a CSV export to the report command"),
        _pi_msg("p0000003", "p0000002", _ts(day, 0, 9), "assistant", None,
                content=[{"type": "toolCall", "id": "call_p1", "name": "read", "arguments": {"path": "report.py"}}],
                stopReason="toolUse"),
        _pi_msg("p0000004", "p0000003", _ts(day, 0, 10), "toolResult", "def build_rows(data):\n    ...",
                toolCallId="call_p1", toolName="read", isError=False),
        _pi_msg("p0000005", "p0000004", _ts(day, 0, 20), "assistant",
                "The report builds its rows in build_rows(); the export goes there."),
    ]
    label = {"type": "label", "id": "p0000006", "parentId": "p0000005", "timestamp": _ts(day, 0, 25),
             "targetId": "p0000002", "label": "start"}
    own_p = [
        _pi_msg("p0000007", "p0000006", _ts(day, 1), "user", "Write it with the csv module"),
        _pi_msg("p0000008", "p0000007", _ts(day, 1, 30), "assistant", "Done: report --csv writes the rows with csv.writer."),
    ]
    parent = [p_head, *trunk, label, *own_p]

    c_head = _pi_header("0196a1c4-0000-7000-8000-00000000000c", day, 4, f"{PI_HOME}/{_pi_name(p_head)}")
    c_label = {**label, "id": "c0000006", "timestamp": _ts(day, 4, 1)}  # pi writes the labels again
    own_c = [
        _pi_msg("c0000007", "c0000006", _ts(day, 4, 10), "user", "Use pandas instead"),
        _pi_msg("c0000008", "c0000007", _ts(day, 4, 40), "assistant", "Done: report --csv writes a DataFrame with to_csv()."),
    ]
    child = [c_head, *trunk, c_label, *own_c]

    g_head = _pi_header("0196a1c8-0000-7000-8000-00000000000e", day, 8, f"{PI_HOME}/{_pi_name(c_head)}")
    g_label = {**label, "id": "g0000006", "timestamp": _ts(day, 8, 1)}
    own_g = [
        _pi_msg("g0000009", "g0000006", _ts(day, 8, 10), "user", "Also add --tsv"),
        _pi_msg("g0000010", "g0000009", _ts(day, 8, 30), "assistant", "Added --tsv: the same writer with sep='\\t'."),
    ]
    grandchild = [g_head, *trunk, c_label, *own_c, {**g_label, "parentId": "c0000008"}, *own_g]

    gone = f"{PI_HOME}/2026-04-30T09-00-00-000Z_0196a000-0000-7000-8000-000000000000.jsonl"
    m_head = _pi_header("0196a1d0-0000-7000-8000-000000000010", day, 16, gone)
    orphan = [
        m_head,
        _pi_msg("m0000001", None, _ts(day, 16, 1), "user", "Where did we leave the parser?"),
        _pi_msg("m0000002", "m0000001", _ts(day, 16, 9), "assistant", "In parse_args(), half done."),
        _pi_msg("m0000003", "m0000002", _ts(day, 16, 30), "user", "Finish it"),
        _pi_msg("m0000004", "m0000003", _ts(day, 16, 50), "assistant", "Finished parse_args()."),
    ]
    return {f"pi/{PI_FOLDER}/{_pi_name(lines[0])}": lines for lines in (parent, child, grandchild, orphan)}


# -- Claude Code -----------------------------------------------------------------------------------------

CC_CWD = "/home/ana/projects/shop"
CC_FOLDER = "claude-code/-home-ana-projects-shop"
CC_VERSION = "2.1.240"


def _uuid(tag: str, n: int) -> str:
    return f"{tag:0>8}-0000-4000-8000-{n:012d}"


def _cc(kind: str, uuid: str, parent: str | None, sid: str, ts: str, content, **more) -> dict:
    """A Claude Code row: `kind` user or assistant; content a string or blocks."""
    row = {"parentUuid": parent, "isSidechain": False, "userType": "external", "cwd": CC_CWD, "sessionId": sid,
           "version": CC_VERSION, "gitBranch": "main", "type": kind, "uuid": uuid, "timestamp": ts}
    if kind == "assistant":
        row["message"] = {"id": "msg_" + uuid[-6:], "type": "message", "role": "assistant",
                          "model": "claude-sonnet-4-5", "content": content, "stop_reason": "end_turn",
                          "usage": {"input_tokens": 1200, "output_tokens": 80, "cache_read_input_tokens": 0,
                                    "cache_creation_input_tokens": 0}}
        if any(isinstance(b, dict) and b.get("type") == "tool_use" for b in content):
            row["message"]["stop_reason"] = "tool_use"
    else:
        row["message"] = {"role": "user", "content": content}
    row.update(more)
    return row


def _text(text: str) -> list[dict]:
    return [{"type": "text", "text": text}]


def _result(call: str, text: str) -> list[dict]:
    return [{"type": "tool_result", "tool_use_id": call, "content": text}]


def claude_conversation() -> dict[str, list[dict] | bytes]:
    """The session A (with a rewind, a Task sub-agent and a Workflow run beside it), its `/branch`
    B, an SDK fork S, a `--resume --fork-session` copy R, a session D compacted twice in one
    process, and a branch Z of a session that is gone."""
    day = 2
    a_sid, b_sid, s_sid, r_sid = (f"{c * 8}-0000-4000-8000-00000000000{n}" for c, n in
                                  (("a", 1), ("b", 2), ("5", 3), ("e", 4)))
    u = lambda n: _uuid("a", n)  # noqa: E731
    a = [
        _cc("user", u(1), None, a_sid, _ts(day, 0), "Why does checkout fail for empty carts?"),
        _cc("assistant", u(2), u(1), a_sid, _ts(day, 0, 5),
            [{"type": "tool_use", "id": "toolu_01", "name": "Read", "input": {"file_path": "/home/ana/projects/shop/cart.py"}}]),
        _cc("user", u(3), u(2), a_sid, _ts(day, 0, 6), _result("toolu_01", "def total(items):\n    return sum(items) / len(items)"),
            toolUseResult={"type": "text", "file": {"filePath": "/home/ana/projects/shop/cart.py"}}),
        _cc("assistant", u(4), u(3), a_sid, _ts(day, 0, 15), _text("total() divides by len(items), which is 0 for an empty cart.")),
        _cc("user", u(5), u(4), a_sid, _ts(day, 1), "Fix it with a guard"),
        _cc("assistant", u(6), u(5), a_sid, _ts(day, 1, 20), _text("Added `if not items: return 0` to total().")),
        # a rewind to u(4): a second branch in the same file
        _cc("user", u(7), u(4), a_sid, _ts(day, 3), "Fix it by raising EmptyCart instead"),
        _cc("assistant", u(8), u(7), a_sid, _ts(day, 3, 20), _text("total() now raises EmptyCart for an empty cart.")),
    ]
    a_later = [  # written after R was forked from A
        _cc("assistant", u(9), u(8), a_sid, _ts(day, 9),
            [{"type": "tool_use", "id": "toolu_02", "name": "Task",
              "input": {"description": "Find callers", "subagent_type": "Explore", "prompt": "Find the callers of total()"}}]),
        _cc("user", u(10), u(9), a_sid, _ts(day, 9, 40), _result("toolu_02", "checkout.py, invoice.py and the tests call total()."),
            toolUseResult={"status": "completed", "agentId": "a1b2c3", "totalDurationMs": 38000}),
        _cc("assistant", u(11), u(10), a_sid, _ts(day, 9, 45), _text("total() has three callers; all catch EmptyCart now.")),
        _cc("user", u(12), u(11), a_sid, _ts(day, 10), "Run the verification workflow"),
        _cc("assistant", u(13), u(12), a_sid, _ts(day, 10, 5),
            [{"type": "tool_use", "id": "toolu_03", "name": "Workflow",
              "input": {"script": "export default async () => agent('Check that total() handles empty carts')"}}]),
        _cc("user", u(14), u(13), a_sid, _ts(day, 10, 6), _result("toolu_03", "Workflow wf_0001 started."),
            toolUseResult={"runId": "wf_0001", "taskId": "wkl0001", "status": "running"}),
        _cc("assistant", u(15), u(14), a_sid, _ts(day, 12), _text("The workflow verified the empty-cart case.")),
    ]
    sub = [
        _cc("user", _uuid("a5", 1), None, a_sid, _ts(day, 9, 1), "Find the callers of total()", isSidechain=True, agentId="a1b2c3"),
        _cc("assistant", _uuid("a5", 2), _uuid("a5", 1), a_sid, _ts(day, 9, 30),
            _text("checkout.py, invoice.py and the tests call total()."), isSidechain=True, agentId="a1b2c3"),
    ]
    flow = [
        _cc("user", _uuid("af", 1), None, a_sid, _ts(day, 10, 7), "Check that total() handles empty carts",
            isSidechain=True, agentId="wf1"),
        _cc("assistant", _uuid("af", 2), _uuid("af", 1), a_sid, _ts(day, 11),
            _text("Verified: total([]) raises EmptyCart and checkout shows the message."), isSidechain=True, agentId="wf1"),
    ]

    def copied(rows: list[dict], sid: str, ids=None, fork_of: str | None = None) -> list[dict]:
        """Rows copied into another session: the new session id, the parent chain rebuilt as one
        line, `forkedFrom` naming each original (`fork_of`), new uuids where `ids` maps them."""
        out, prev = [], None
        for row in rows:
            new = {**row, "sessionId": sid, "parentUuid": prev, "isSidechain": False}
            new["uuid"] = ids(row["uuid"]) if ids else row["uuid"]
            if fork_of:
                new["forkedFrom"] = {"sessionId": fork_of, "messageUuid": row["uuid"]}
            out.append(new)
            prev = new["uuid"]
        return out

    b = [
        *copied(a[:6], b_sid, fork_of=a_sid),
        {"type": "custom-title", "customTitle": "Why does checkout fail for empty carts? (Branch)", "sessionId": b_sid},
        _cc("user", _uuid("b", 7), u(6), b_sid, _ts(day, 5), "Now add a test for it"),
        _cc("assistant", _uuid("b", 8), _uuid("b", 7), b_sid, _ts(day, 5, 30), _text("Added test_total_empty().")),
    ]
    s = [
        *copied(a[:4], s_sid, ids=lambda x: _uuid("5", int(x[-12:])), fork_of=a_sid),
        {"type": "custom-title", "customTitle": "Why does checkout fail for empty carts? (fork)", "sessionId": s_sid},
        _cc("user", _uuid("5", 5), _uuid("5", 4), s_sid, _ts(day, 6), "Return 0.0 for an empty cart"),
        _cc("assistant", _uuid("5", 6), _uuid("5", 5), s_sid, _ts(day, 6, 30), _text("total() returns 0.0 for no items.")),
    ]
    r = [
        {"type": "mode", "mode": "normal", "sessionId": r_sid},
        *copied([a[0], a[1], a[2], a[3], a[6], a[7]], r_sid),
        _cc("user", _uuid("e", 9), u(8), r_sid, _ts(day, 8), "Log the error too"),
        _cc("assistant", _uuid("e", 10), _uuid("e", 9), r_sid, _ts(day, 8, 30), _text("EmptyCart is logged before it is raised.")),
    ]

    d_sid = "dddddddd-0000-4000-8000-000000000005"
    d = lambda n: _uuid("d", n)  # noqa: E731
    first = [
        _cc("user", d(1), None, d_sid, _ts(day, 20), "Plan the database migration"),
        _cc("assistant", d(2), d(1), d_sid, _ts(day, 20, 30), _text("Three steps: schema, data copy, indexes.")),
        _cc("user", d(3), d(2), d_sid, _ts(day, 21), "Start with the schema"),
        _cc("assistant", d(4), d(3), d_sid, _ts(day, 21, 30), _text("Wrote migrations/001_schema.sql.")),
        _cc("user", d(5), d(4), d_sid, _ts(day, 22), "Now the data copy"),
        _cc("assistant", d(6), d(5), d_sid, _ts(day, 22, 30), _text("Wrote migrations/002_copy.sql.")),
    ]

    def boundary(uuid: str, logical: str, ts: str, pre: int, head: str, tail: str, anchor: str) -> dict:
        return {"parentUuid": None, "logicalParentUuid": logical, "isSidechain": False, "userType": "external",
                "cwd": CC_CWD, "sessionId": d_sid, "version": CC_VERSION, "type": "system", "subtype": "compact_boundary",
                "content": "Conversation compacted", "isMeta": False, "timestamp": ts, "uuid": uuid, "level": "info",
                "compactMetadata": {"trigger": "manual", "preTokens": pre, "postTokens": 9000,
                                    "cumulativeDroppedTokens": pre - 9000, "durationMs": 21000,
                                    "preservedSegment": {"headUuid": head, "anchorUuid": anchor, "tailUuid": tail},
                                    "preservedMessages": {"anchorUuid": anchor, "uuids": [head, tail]}}}

    def summary(uuid: str, parent: str, ts: str, text: str) -> dict:
        return _cc("user", uuid, parent, d_sid, ts, "This session is being continued from a previous conversation. "
                   "Summary:\n" + text, isCompactSummary=True, isVisibleInTranscriptOnly=True)

    double = [
        *first,
        boundary(d(50), d(6), _ts(day, 23), 52000, d(5), d(6), d(51)),
        summary(d(51), d(50), _ts(day, 23), "1. The migration plan: schema (done), data copy (done), indexes."),
        _cc("user", d(7), d(51), d_sid, _ts(day, 24), "Next, the indexes"),
        _cc("assistant", d(8), d(7), d_sid, _ts(day, 24, 30), _text("Wrote migrations/003_indexes.sql.")),
        *first[:4],  # the second /compact appends these again, as they were
        {"parentUuid": d(4), "isSidechain": False, "userType": "external", "cwd": CC_CWD, "sessionId": d_sid,
         "version": CC_VERSION, "type": "system", "subtype": "stop_hook_summary", "hookCount": 1, "hookInfos": [],
         "hookErrors": [], "preventedContinuation": False, "stopReason": "", "hasOutput": False, "level": "suggestion",
         "timestamp": _ts(day, 24, 31), "uuid": d(60)},
        boundary(d(70), d(60), _ts(day, 25), 61000, d(8), d(60), d(71)),
        summary(d(71), d(70), _ts(day, 25), "1. The migration: schema, data copy and indexes written."),
        _cc("user", d(9), d(71), d_sid, _ts(day, 26), "Now the rollback plan"),
        _cc("assistant", d(10), d(9), d_sid, _ts(day, 26, 30), _text("Wrote migrations/rollback.md.")),
    ]

    z_sid = "ffffffff-0000-4000-8000-000000000006"
    gone = "99999999-0000-4000-8000-000000000009"
    z = [
        {**_cc("user", _uuid("f", 1), None, z_sid, _ts(day, 30), "Rename the cart module"),
         "forkedFrom": {"sessionId": gone, "messageUuid": _uuid("9", 1)}},
        {**_cc("assistant", _uuid("f", 2), _uuid("f", 1), z_sid, _ts(day, 30, 20), _text("Renamed cart.py to basket.py.")),
         "forkedFrom": {"sessionId": gone, "messageUuid": _uuid("9", 2)}},
        {"type": "custom-title", "customTitle": "Rename the cart module (Branch)", "sessionId": z_sid},
        _cc("user", _uuid("f", 3), _uuid("f", 2), z_sid, _ts(day, 31), "Update the imports"),
        _cc("assistant", _uuid("f", 4), _uuid("f", 3), z_sid, _ts(day, 31, 20), _text("Updated 4 imports.")),
    ]
    folder = CC_FOLDER
    flows = f"{folder}/{a_sid}/subagents/workflows/wf_0001"
    return {
        f"{folder}/{a_sid}.jsonl": [*a, *a_later],
        f"{folder}/{a_sid}/subagents/agent-a1b2c3.jsonl": sub,
        f"{flows}/agent-wf1.jsonl": flow,
        f"{flows}/agent-wf1.meta.json": orjson.dumps({"agentType": "workflow-subagent", "spawnDepth": 1}) + b"\n",
        f"{flows}/journal.jsonl": [{"type": "agent_started", "agentId": "wf1", "timestamp": _ts(day, 10, 7)},
                                   {"type": "agent_finished", "agentId": "wf1", "timestamp": _ts(day, 11)}],
        f"{folder}/{a_sid}/workflows/wf_0001.json": orjson.dumps({"runId": "wf_0001", "taskId": "wkl0001",
                                                                  "timestamp": _ts(day, 10, 6)}) + b"\n",
        f"{folder}/{b_sid}.jsonl": b,
        f"{folder}/{s_sid}.jsonl": s,
        f"{folder}/{r_sid}.jsonl": r,
        f"{folder}/{d_sid}.jsonl": double,
        f"{folder}/{z_sid}.jsonl": z,
    }


# -- Codex -------------------------------------------------------------------------------------------------

CODEX_CWD = "/home/ana/projects/cli"


def _cx(ts: str, kind: str, payload: dict, ordinal: int | None = None) -> dict:
    line = {"timestamp": ts, "type": kind, "payload": payload}
    if ordinal is not None:
        line["ordinal"] = ordinal
    return line


def _meta(tid: str, ts: str, **more) -> dict:
    return {"id": tid, "session_id": tid, "timestamp": ts, "cwd": CODEX_CWD, "originator": "codex_cli_rs",
            "cli_version": "0.151.0", "source": "cli", "model_provider": "openai", **more}


def _said(role: str, text: str) -> dict:
    kind = "input_text" if role in ("user", "developer") else "output_text"
    return {"type": "message", "role": role, "content": [{"type": kind, "text": text}]}


def _rollout(day: int, minute: int, tid: str) -> str:
    return f"codex/2026/05/{day:02d}/rollout-2026-05-{day:02d}T10-{minute:02d}-00-{tid}.jsonl"


def codex_conversation() -> dict[str, list[dict]]:
    """A paginated session P (every line numbered by `ordinal`) that spawns a sub-agent K; its
    legacy fork L (P's lines copied after L's own `session_meta`); its paginated fork G, which
    holds only its own lines and names where P's history ends; a fork X of a thread that is gone."""
    day = 6
    p_id, l_id, g_id, k_id, x_id = (f"0196b{c}00-0000-7000-8000-00000000000{n}" for c, n in
                                    (("0", 1), ("4", 2), ("8", 3), ("c", 4), ("f", 5)))
    t = lambda m, s=0: _ts(day, m, s)  # noqa: E731
    p_items = [
        ("session_meta", _meta(p_id, t(0), history_mode="paginated")),
        ("turn_context", {"cwd": CODEX_CWD, "model": "gpt-5.1-codex", "effort": "medium", "summary": "auto"}),
        ("response_item", _said("developer", "<permissions instructions>workspace-write</permissions instructions>")),
        ("response_item", _said("user", "Add a --verbose flag")),
        ("event_msg", {"type": "user_message", "message": "Add a --verbose flag"}),
        ("response_item", {"type": "reasoning", "summary": [{"type": "summary_text", "text": "Find the parser."}]}),
        ("response_item", {"type": "function_call", "name": "shell", "call_id": "call_1",
                           "arguments": "{\"command\":[\"rg\",\"argparse\"]}"}),
        ("response_item", {"type": "function_call_output", "call_id": "call_1", "output": "cli.py:3:import argparse"}),
        ("response_item", _said("assistant", "Added --verbose to cli.py.")),
        ("event_msg", {"type": "token_count", "info": {"last_token_usage": {
            "input_tokens": 2400, "cached_input_tokens": 0, "output_tokens": 90, "total_tokens": 2490}}}),
        ("response_item", _said("user", "Make it -v too")),
        ("response_item", _said("assistant", "Now -v and --verbose both work.")),
        ("response_item", {"type": "function_call", "name": "spawn_agent", "call_id": "call_2",
                           "arguments": "{\"message\":\"Write tests for -v\"}"}),
        ("response_item", {"type": "function_call_output", "call_id": "call_2", "output": f"{{\"agent_id\":\"{k_id}\"}}"}),
        ("response_item", _said("assistant", "A sub-agent is writing the tests.")),
    ]
    parent = [_cx(t(0, i * 2), kind, payload, i) for i, (kind, payload) in enumerate(p_items)]
    cut = 10  # the forks leave P before its line of ordinal 10 ("Make it -v too")

    legacy = [
        _cx(t(20), "session_meta", _meta(l_id, t(20), forked_from_id=p_id, history_mode="legacy")),
        # the parent's lines as they were (its session_meta re-timestamped), without their ordinals
        *({k: v for k, v in line.items() if k != "ordinal"} | ({"timestamp": t(20)} if i == 0 else {})
          for i, line in enumerate(parent[:cut])),
        _cx(t(21), "response_item", _said("user", "Print the flag in --help")),
        _cx(t(21, 30), "response_item", _said("assistant", "Documented -v in the help text.")),
    ]
    offset = sum(len(orjson.dumps(line)) + 1 for line in parent[:cut])
    paginated = [
        _cx(t(30), "session_meta", _meta(g_id, t(30), forked_from_id=p_id, forked_from_ordinal_exclusive=cut,
                                         history_mode="paginated",
                                         history_base={"thread_id": p_id, "end_ordinal_exclusive": cut,
                                                       "end_byte_offset": offset}), cut),
        _cx(t(30, 5), "turn_context", {"cwd": CODEX_CWD, "model": "gpt-5.1-codex", "effort": "medium"}, cut + 1),
        _cx(t(31), "response_item", _said("user", "Use -V for the version instead"), cut + 2),
        _cx(t(31, 30), "response_item", _said("assistant", "Moved the version to -V."), cut + 3),
    ]
    spawned = [
        _cx(t(1, 30), "session_meta", _meta(k_id, t(1, 30), parent_thread_id=p_id, history_mode="paginated",
                                            source={"subagent": {"thread_spawn": {"parent_thread_id": p_id, "depth": 1}}}), 0),
        _cx(t(1, 31), "turn_context", {"cwd": CODEX_CWD, "model": "gpt-5.1-codex", "effort": "low"}, 1),
        _cx(t(1, 32), "response_item", _said("user", "Write tests for -v"), 2),
        _cx(t(1, 40), "response_item", {"type": "function_call", "name": "apply_patch", "call_id": "call_k1",
                                        "arguments": "{\"input\":\"*** Add File: tests/test_cli.py\"}"}, 3),
        _cx(t(1, 41), "response_item", {"type": "function_call_output", "call_id": "call_k1", "output": "Done!"}, 4),
        _cx(t(1, 50), "response_item", _said("assistant", "Added tests/test_cli.py::test_verbose."), 5),
    ]
    gone = "0196a999-0000-7000-8000-000000000999"
    lost = [
        _cx(t(40), "session_meta", _meta(x_id, t(40), forked_from_id=gone, history_mode="paginated",
                                         history_base={"thread_id": gone, "end_ordinal_exclusive": 7,
                                                       "end_byte_offset": 4000}), 7),
        _cx(t(40, 30), "response_item", _said("user", "Carry on with the config loader"), 8),
        _cx(t(41), "response_item", _said("assistant", "The config loader reads TOML now."), 9),
    ]
    return {
        _rollout(day, 0, p_id): parent,
        _rollout(day, 20, l_id): legacy,
        _rollout(7, 30, g_id): paginated,  # a day later: another folder
        _rollout(day, 1, k_id): spawned,
        _rollout(day, 40, x_id): lost,
    }


def demo_conversation() -> list[tuple[dict, list[dict]]]:
    """The bundled samples' conversation across files: the pi session, its fork and the fork's
    fork of `pi_conversation` ((header, entries) each)."""
    made = list(pi_conversation().values())[:3]
    return [(lines[0], lines[1:]) for lines in made]


def write_all(out: Path) -> list[Path]:
    written = []
    for made in (pi_conversation(), claude_conversation(), codex_conversation()):
        for rel, content in made.items():
            path = out / rel
            if isinstance(content, bytes):
                path.parent.mkdir(parents=True, exist_ok=True)
                path.write_bytes(content)
            else:
                _write(path, content)
            written.append(path)
    return written


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    out = Path(args[0]) if args else DEFAULT_OUT
    for path in write_all(out):
        print(path)
    return 0


if __name__ == "__main__":
    sys.exit(main())
