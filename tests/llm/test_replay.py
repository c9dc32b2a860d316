"""Replaying a branch on another model, against the strict fake server: the user messages after
the start are sent in order, the model's tool calls are answered by the recording or by a sandbox
on a copy of the session's folder, budgets stop it and say so, and every request passes the
server's strict checks."""

from __future__ import annotations

import hashlib
from datetime import datetime
from pathlib import Path

import orjson
import pytest

from tests.conftest import Builder, lines_of
from tests.llm.conftest import MODEL, TEST_MODEL, run
from webapp.core.errors import InvalidWrite
from webapp.core.outcome import outcome
from webapp.core.replay_plan import plan_replay, replay_info
from webapp.core.session import Session
from webapp.model.errors import ModelError
from webapp.model.replay import Budget, prepare
from webapp.model.replay import run as run_replay

APP = "def add(a, b):\n    return a - b\n"
FIXED = "def add(a, b):\n    return a + b\n"
EDIT = {"path": "src/app.py", "oldText": "a - b", "newText": "a + b"}


def project(tmp_path: Path) -> Path:
    """The small folder the recorded session worked in."""
    root = tmp_path / "proj"
    (root / "src").mkdir(parents=True)
    (root / "src" / "app.py").write_text(APP)
    (root / "README.md").write_text("# proj\n")
    (tmp_path / "outside.txt").write_text("not the project's\n")
    return root


def digests(folder: Path) -> dict[str, str]:
    return {str(p.relative_to(folder)): hashlib.sha256(p.read_bytes()).hexdigest()
            for p in sorted(folder.rglob("*")) if p.is_file()}


def recorded_session(tmp_path: Path) -> tuple[Path, Path]:
    """u1 (fix add) a2 read → t3, a4 edit → t5, a6 answer; u7 (docstring) a8 answer. cwd: proj."""
    root = project(tmp_path)
    b = Builder(cwd=str(root))
    b.user("Fix the add function in src/app.py.", id="u1")
    b.assistant("", id="a2", calls=[{"id": "c1", "name": "read", "arguments": {"path": "src/app.py"}}], **TEST_MODEL)
    b.tool_result("c1", APP, id="t3")
    b.assistant("", id="a4", calls=[{"id": "c2", "name": "edit", "arguments": EDIT}], **TEST_MODEL)
    b.tool_result("c2", "Edited src/app.py.", name="edit", id="t5")
    b.assistant("Fixed: add now adds.", id="a6", **TEST_MODEL)
    b.user("Now add a docstring.", id="u7")
    b.assistant("Added a docstring.", id="a8", **TEST_MODEL)
    return b.write(tmp_path / "s.jsonl"), root


def script(llm_server, *steps):
    """The fake model's replies, one per request, in order (tool calls as (name, arguments))."""
    left = list(steps)
    llm_server.behave("script", script=lambda body: left.pop(0) if left else {"text": "All done."})


def other_config(config):
    from dataclasses import replace

    return replace(config, model="openai/other-model")


def tool_results(session: Session, ids: list[str]) -> list[dict]:
    return [session.entry(i).message for i in ids if session.entry(i).role == "toolResult"]


def test_a_recorded_replay_sends_the_user_messages_in_order_and_counts_hits_and_misses(tmp_path, llm_server, config):
    path, root = recorded_session(tmp_path)
    before = digests(root)
    script(llm_server,
           {"calls": [("read", {"path": "src/app.py"}), ("read", {"path": "notes.txt"})]},
           {"calls": [("edit", {"newText": "a + b", "oldText": "a - b", "path": "src/app.py"})]},  # keys in another order
           {"text": "The add function adds now."},
           {"text": "Docstring written."})
    session = Session.open(path)
    replay = run_replay(prepare(session, other_config(config), "a8", "u1"))
    assert llm_server.refused == [] and len(llm_server.requests) == 4
    assert replay.finished and replay.counts() == {"hits": 2, "misses": 1}
    # The second prompt is the branch's second user message, after the model's first answer.
    last = llm_server.requests[3]["messages"]
    assert last[-1] == {"role": "user", "content": "Now add a docstring."}
    assert last[-2] == {"role": "assistant", "content": "The add function adds now."}
    assert [t["function"]["name"] for t in llm_server.requests[0]["tools"]][:4] == ["read", "bash", "edit", "write"]
    written = [session.entry(i) for i in replay.written]
    assert written[0].type == "model_change" and written[0].parent_id == "u1"
    first = session.entry(replay.first_reply)
    assert first.get("details") == {"replayOf": "a8", "replayFrom": "u1", "tools": "recorded"}
    results = tool_results(session, replay.written)
    assert results[0]["content"][0]["text"] == APP and not results[0]["isError"]
    assert "Not available in a recorded replay" in results[1]["content"][0]["text"] and results[1]["isError"]
    assert results[2]["content"][0]["text"] == "Edited src/app.py."
    assert [r["details"]["replay"] for r in results] == ["recorded", "not recorded", "recorded"]
    assert [session.entry(i).role for i in replay.written].count("user") == 1  # u7 again; u1 was the start
    info = replay_info(session.tree, replay.leaf)
    assert (info.hits, info.misses, info.stop) == (2, 1, None)
    assert info.summary().startswith("replay of leaf a8 from u1 on other-model, recorded tools: 2 hits, 1 miss")
    assert info.unfair  # one call in three was not in the recording
    assert outcome(session.tree.path(replay.leaf)).status == "answered"
    assert digests(root) == before  # nothing ran: a recorded replay touches no file


def test_a_sandbox_replay_edits_a_copy_and_leaves_the_folder_byte_identical(tmp_path, llm_server, config):
    path, root = recorded_session(tmp_path)
    before = digests(root)
    script(llm_server,
           {"calls": [("read", {"path": str(root / "src" / "app.py")})]},  # absolute, as the session saw it
           {"calls": [("edit", EDIT), ("write", {"path": "notes/new.txt", "content": "hello"})]},
           {"calls": [("read", {"path": "src/app.py"}), ("ls", {"path": "."}), ("grep", {"pattern": "a \\+ b"}),
                      ("find", {"pattern": "**/*.txt"})]},
           {"calls": [("read", {"path": "../outside.txt"}), ("read", {"path": str(tmp_path / "outside.txt")}),
                      ("bash", {"command": "touch bashed"})]},
           {"text": "Fixed in the copy."},
           {"text": "Docstring too."})
    session = Session.open(path)
    replay = run_replay(prepare(session, other_config(config), "a8", "u1", tools="sandbox"))
    assert llm_server.refused == [] and replay.finished
    assert [t["function"]["name"] for t in llm_server.requests[0]["tools"]] == \
        ["read", "ls", "grep", "find", "edit", "write"]  # no bash unless allowed
    texts = [r["content"][0]["text"] for r in tool_results(session, replay.written)]
    assert texts[0] == APP
    assert texts[1].startswith("Edited src/app.py") and texts[2].startswith("Wrote 5 bytes")
    assert texts[3] == FIXED  # the edit landed in the copy...
    assert texts[4] == "README.md\nnotes/\nsrc/"
    assert texts[5] == "src/app.py:2:     return a + b"
    assert texts[6] == "notes/new.txt"
    assert texts[7].startswith("Refused:") and "outside the sandbox" in texts[7]
    assert texts[8].startswith("Refused:") and "outside the session's working directory" in texts[8]
    assert texts[9] == "Refused: bash is not allowed in this sandbox replay (start it with --allow-bash to allow it)"
    assert digests(root) == before and not (root / "notes").exists() and not (root / "bashed").exists()  # ...only
    assert replay.counts() == {"ran": 7, "refused": 3}
    info = replay_info(session.tree, replay.leaf)
    assert info.tools == "sandbox" and info.summary().endswith("sandbox tools: 7 calls run, 3 refused")
    assert not Path(replay.tools.root).exists()  # the copy is gone once the replay ends


def test_bash_runs_in_the_copy_only_when_allowed(tmp_path, llm_server, config):
    path, root = recorded_session(tmp_path)
    before = digests(root)
    script(llm_server, {"calls": [("bash", {"command": "echo hi > bashed.txt && cat bashed.txt && pwd"})]},
           {"calls": [("bash", {"command": "exit 3"})]}, {"text": "ok"})
    session = Session.open(path)
    replay = run_replay(prepare(session, other_config(config), "a6", "u1", tools="sandbox", allow_bash=True))
    assert "bash" in [t["function"]["name"] for t in llm_server.requests[0]["tools"]]
    results = tool_results(session, replay.written)
    out = results[0]["content"][0]["text"]
    # The copy is where the session's folder was (in bubblewrap's view), so its absolute paths work.
    assert out == f"hi\n{root}\n"
    assert results[1]["isError"] and "Command exited with code 3" in results[1]["content"][0]["text"]
    assert digests(root) == before and not (root / "bashed.txt").exists()
    assert llm_server.refused == []


def test_a_tool_argument_of_the_wrong_type_gets_an_error_result_and_the_replay_goes_on(tmp_path, llm_server,
                                                                                        config, monkeypatch):
    path, root = recorded_session(tmp_path)
    script(llm_server, {"calls": [("read", {"path": "src/app.py", "limit": [1]}), ("grep", {"pattern": 5}),
                                  ("read", {"path": "src/app.py"})]},
           {"calls": [("ls", {})]}, {"text": "Done."})
    session = Session.open(path)
    replay = prepare(session, other_config(config), "a6", "u1", tools="sandbox")

    def broken(*_):
        raise RuntimeError("the runner broke")
    ran = replay.tools.run
    calls = iter([ran, ran, ran, broken])
    monkeypatch.setattr(replay.tools, "run", lambda *a: next(calls)(*a))
    run_replay(replay)
    assert replay.finished and llm_server.refused == []
    results = tool_results(session, replay.written)
    assert [r["isError"] for r in results] == [True, True, False, True]
    assert "read's argument limit must be a whole number, not list [1]" in results[0]["content"][0]["text"]
    assert "grep's argument pattern must be a string, not int 5" in results[1]["content"][0]["text"]
    assert results[2]["content"][0]["text"] == APP
    assert results[3]["content"][0]["text"] == "Error: the tool call could not be answered: RuntimeError: the runner broke"
    # Every call has its result, so the next request is one a strict server accepts.
    assert len(llm_server.requests) == 3


def test_a_step_limit_stops_the_replay_and_writes_why(tmp_path, llm_server, config):
    path, _ = recorded_session(tmp_path)
    llm_server.behave("script", script=lambda body: {"calls": [("read", {"path": "src/app.py"})]})
    session = Session.open(path)
    replay = run_replay(prepare(session, other_config(config), "a8", "u1", budget=Budget(max_steps=3)))
    assert len(llm_server.requests) == 3 and llm_server.refused == []
    assert replay.stopped == "step limit 3 reached" and not replay.finished
    stop = lines_of(path.read_bytes())[-1]
    assert stop["type"] == "custom" and stop["customType"] == "session-tree.replay-stop"
    assert stop["data"]["reason"] == "step limit 3 reached" and stop["data"]["steps"] == 3
    assert stop["data"]["tokens"] == 51 and stop["data"]["cost"] is None  # no price known: unknown, not $0
    ended = outcome(session.tree.path(stop["id"]))
    assert (ended.status, ended.status_text, ended.detail) == ("replay_stopped", "replay stopped", "step limit 3 reached")
    assert replay_info(session.tree, stop["id"]).summary().endswith("; stopped: step limit 3 reached")


def test_a_token_budget_stops_the_replay(tmp_path, llm_server, config):
    path, _ = recorded_session(tmp_path)
    llm_server.behave("script", script=lambda body: {"calls": [("read", {"path": "x"})]})
    replay = run_replay(prepare(Session.open(path), other_config(config), "a8", "u1", budget=Budget(max_tokens=30)))
    assert replay.steps == 2 and replay.stopped == "token budget 30 reached (34 used)"


def test_a_cost_budget_stops_the_replay(tmp_path, llm_server, config):
    from dataclasses import replace

    path, _ = recorded_session(tmp_path)
    llm_server.behave("script", script=lambda body: {"calls": [("read", {"path": "x"})]},
                      usage={"prompt_tokens": 100000, "completion_tokens": 1000, "total_tokens": 101000})
    priced = replace(config, model="openai/gpt-4o-mini")  # litellm's table prices it
    replay = run_replay(prepare(Session.open(path), priced, "a8", "u1", budget=Budget(max_cost=0.02)))
    assert replay.steps == 2 and replay.stopped.startswith("cost budget $0.02 reached ($0.03")


def test_a_first_call_that_fails_writes_nothing(tmp_path, llm_server, config):
    path, _ = recorded_session(tmp_path)
    before = path.read_bytes()
    llm_server.behave("500")
    with pytest.raises(ModelError):
        run_replay(prepare(Session.open(path), other_config(config), "a8", "u1"))
    assert path.read_bytes() == before


def test_a_later_failure_stops_the_replay_with_what_it_wrote(tmp_path, llm_server, config):
    path, _ = recorded_session(tmp_path)

    def first_then_fail(body):
        llm_server.behave("500")  # (from the next request on)
        return {"text": "First answer."}
    llm_server.behave("script", script=first_then_fail)
    session = Session.open(path)
    replay = run_replay(prepare(session, other_config(config), "a8", "u1"))
    assert replay.stopped.startswith("the model failed: The model server failed (500)")
    assert [session.entry(i).type for i in replay.written] == ["model_change", "message", "custom"]
    assert outcome(session.tree.path(replay.leaf)).status == "replay_stopped"


def test_a_replay_from_a_node_not_on_the_branch_or_with_nothing_after_it_is_refused(tmp_path):
    path, _ = recorded_session(tmp_path)
    b = Builder()
    b.user("q", id="u1")
    b.assistant("a", id="a2")
    b.assistant("other", id="a3", parent="u1")
    tree = Session.open(b.write(tmp_path / "two.jsonl")).tree
    with pytest.raises(InvalidWrite, match="not on the branch"):
        plan_replay(tree, "a3", "a2")
    with pytest.raises(InvalidWrite, match="nothing to replay"):
        plan_replay(tree, "a3", "a3")
    plan = plan_replay(Session.open(path).tree, "a8", "a6")
    assert [p.id for p in plan.prompts] == ["u7"] and not plan.answers_start


def test_a_sandbox_refuses_a_missing_or_too_big_folder(tmp_path, config):
    path, root = recorded_session(tmp_path)
    (root / "big.bin").write_bytes(b"x" * 2 * 1024 * 1024)
    with pytest.raises(InvalidWrite, match="holds more than 1 MB; pass --max-copy-mb"):
        prepare(Session.open(path), config, "a8", "u1", tools="sandbox", max_copy_mb=1)
    b = Builder(cwd=str(tmp_path / "gone"))
    b.user("q", id="u1")
    with pytest.raises(InvalidWrite, match="does not exist here"):
        prepare(Session.open(b.write(tmp_path / "g.jsonl")), config, "u1", "u1", tools="sandbox")


def test_the_cli_replays_and_a_read_only_file_stays_byte_identical(tmp_path, llm_server, model_env, capsys):
    path, _ = recorded_session(tmp_path)
    script(llm_server, {"calls": [("read", {"path": "src/app.py"})]}, {"calls": [("read", {"path": "src/app.py"})]})
    code, out, err = run(capsys, "replay", path, "--leaf", "a8", "--from", "u1", *model_env, "--max-steps", "2")
    assert code == 1 and err == ""
    assert "replaying a8 from u1 on openai/test-model (1 user message to send, recorded tools)" in out
    assert "stopped: step limit 2 reached" in out and "recorded tools: 2 hits, 0 misses" in out
    assert "tokens, cost unknown;" in out  # no price table names openai/test-model: not $0.0000
    code, out, _ = run(capsys, "replay", path, "--leaf", "a8", "--from", "a6", *model_env, "--json")
    data = orjson.loads(out)
    assert code == 0 and data["stopped"] is None and data["hits"] == 0 and data["tools"] == "recorded"
    assert data["cost"] is None
    assert llm_server.refused == []
    old = Builder(version=1)
    old.user("q")
    old.assistant("a")
    v1 = old.write(tmp_path / "v1.jsonl")
    before = v1.read_bytes()
    code, out, err = run(capsys, "replay", v1, "--leaf", "e2", "--from", "e1", *model_env)
    assert code == 2 and "pi v1 session" in err and "Traceback" not in err and v1.read_bytes() == before
    code, _, err = run(capsys, "replay", path, "--leaf", "a8", "--from", "u1", *model_env, "--allow-bash")
    assert code == 2 and "bash runs only in a sandbox replay" in err


def test_a_replay_on_the_same_model_still_begins_with_its_model_change(tmp_path, llm_server, config):
    path, _ = recorded_session(tmp_path)
    script(llm_server, {"text": "Again."})
    session = Session.open(path)
    assert MODEL == config.model
    replay = run_replay(prepare(session, config, "a8", "a6"))
    written = [session.entry(i) for i in replay.written]
    assert [(e.type, e.role) for e in written] == [("model_change", None), ("message", "user"), ("message", "assistant")]
    assert written[0].parent_id == "a6" and written[0].get("modelId") == "test-model"
    assert replay_info(session.tree, replay.leaf).replay_from == "a6"


def test_a_cancel_stops_the_replay_and_before_its_first_reply_writes_nothing(tmp_path, llm_server, config):
    path, _ = recorded_session(tmp_path)
    before = path.read_bytes()
    session = Session.open(path)
    early = prepare(session, other_config(config), "a8", "u1")
    early.cancel.set()
    assert run_replay(early).error == "Cancelled before the first reply: nothing was written."
    assert path.read_bytes() == before and llm_server.requests == []
    job = prepare(session, other_config(config), "a8", "u1")

    def answer_then_cancel(body):
        job.cancel.set()  # (the person presses Cancel while the first reply streams)
        return {"text": "Fixed."}
    llm_server.behave("script", script=answer_then_cancel)
    with pytest.raises(ModelError):
        run_replay(job)
    assert path.read_bytes() == before  # the reply was not whole when cancelled: nothing written
    job = prepare(session, other_config(config), "a8", "u1")
    llm_server.behave("script", script=lambda body: {"text": "Fixed."})
    job.budget = Budget(max_steps=5)
    done = run_replay(job, lambda event, data: job.cancel.set() if event == "reply" else None)
    assert done.stopped == "cancelled" and lines_of(path.read_bytes())[-1]["data"]["reason"] == "cancelled"


@pytest.mark.parametrize("limit", ["inf", "nan"])
def test_a_copy_limit_that_is_no_number_is_refused_in_one_line(tmp_path, llm_server, model_env, capsys, limit):
    path, _ = recorded_session(tmp_path)
    before = path.read_bytes()
    code, out, err = run(capsys, "replay", path, "--leaf", "a8", "--from", "u1", *model_env, "--tools", "sandbox",
                         "--max-copy-mb", limit)
    assert code == 2 and err == f"session-tree: error: the copy limit must be a number of MB above 0, not {limit}\n"
    assert path.read_bytes() == before and llm_server.requests == []


def test_a_replay_on_another_model_differs_in_its_answer_not_its_prompt_and_is_stamped_as_it_ran(
        tmp_path, llm_server, config):
    """The replayed branch opens with its model change; compared with the branch it replays, the
    same prompt lines up with the same prompt (the answers differ), and each entry carries the
    time it happened: the model change when the replay began, the user message when it was sent,
    the reply when it came back."""
    from webapp.core.compare import compare

    path, _ = recorded_session(tmp_path)
    llm_server.behave("reply", pieces=["Another", " docstring."], delay=0.3)
    session = Session.open(path)
    replay = run_replay(prepare(session, other_config(config), "a8", "a6"))
    tree = Session.open(path).tree
    cmp = compare(tree, ["a8", replay.leaf])
    assert cmp.divergence_kind == "answer"
    change, user, reply = (tree.by_id[i] for i in replay.written)
    assert (change.type, user.role, reply.role) == ("model_change", "user", "assistant")
    assert change.timestamp <= user.timestamp < reply.timestamp  # the reply came 0.6 s after its prompt was sent
    assert user.message["timestamp"] < int(datetime.fromisoformat(reply.timestamp.replace("Z", "+00:00")).timestamp() * 1000)


def test_a_replay_declares_the_tools_the_sessions_system_messages_leave_in_force_as_continue_does(
        tmp_path, llm_server, config):
    """pi 1.6 declares its tools in system messages: a replay asks the model with those (their own
    descriptions and parameters), as `continue` at that node would, not only the runner's."""
    from webapp.core.context import build_context
    from webapp.core.request import build_request

    read = {"name": "read", "description": "Read a file (the session's own words)",
            "parameters": {"type": "object", "properties": {"path": {"type": "string"}}, "required": ["path"]}}
    lookup = {"name": "lookup", "description": "Look a word up", "parameters": {"type": "object", "properties": {}}}
    b = Builder()
    b.add("message", id="s1", message={"role": "system", "content": "You are pi.", "toolsAdded": [read, lookup]})
    b.user("Read the notes.", id="u1")
    b.assistant("", id="a2", calls=[{"id": "c1", "name": "read", "arguments": {"path": "notes.txt"}}], **TEST_MODEL)
    b.tool_result("c1", "the notes", id="t3")
    b.assistant("They say: the notes.", id="a4", **TEST_MODEL)
    session = Session.open(b.write(tmp_path / "s.jsonl"))
    declared = build_request(build_context(session.tree, "u1")).tools
    assert [t["function"]["name"] for t in declared] == ["read", "lookup"]
    script(llm_server, {"calls": [("read", {"path": "notes.txt"})]}, {"text": "Done."})
    replay = run_replay(prepare(session, other_config(config), "a4", "u1"))
    assert replay.finished and llm_server.refused == [] and len(llm_server.requests) == 2
    for sent in llm_server.requests:
        assert sent["tools"][:2] == declared  # the session's declarations, as continue sends them
        assert [t["function"]["name"] for t in sent["tools"]].count("read") == 1
