"""The compaction lab against the strict fake server: every request a candidate's summary, a
test's continuation or the judge sends, message for message; the budget counted from what the
server reported; a run interrupted and resumed; what is written and where."""

from __future__ import annotations

import json

import orjson
import pytest

from tests.lab_session import EDITED_A1, EDITED_T4, SUMMARY, SYSTEM, TURNS, lab_session
from tests.llm.conftest import MODEL, PATIENT
from webapp.core.lab_store import RunFile
from webapp.core.messages import COMPACTION_PREFIX
from webapp.core.session import Session
from webapp.model import judge as judging
from webapp.model.cancel import Cancel
from webapp.model.lab import Lab, LabSettings
from webapp.model.lab_prompts import PI_INITIAL, PI_SYSTEM
from webapp.model.llm import ModelConfig
from webapp.model.summarize import SYSTEM as OUR_SYSTEM

MODEL_SUMMARY = "## Goal\nA CSV importer in src/importer.py; never use global state in the importer."
JUDGED = '{"better": "tie", "reasons": "Both ran the tests and documented the flag."}'


def kind_of(body: dict) -> str:
    first = body["messages"][0]
    if first["role"] == "system" and first["content"] == judging.SYSTEM:
        return "judge"
    if first["role"] == "system" and first["content"] in (PI_SYSTEM, OUR_SYSTEM):
        return "summary"
    return "test"


def script(body: dict) -> dict:
    """A model that summarizes, continues the three turns (the first with a recorded tool call)
    and judges, each as its request asks."""
    kind = kind_of(body)
    if kind == "judge":
        return {"text": JUDGED}
    if kind == "summary":
        return {"text": MODEL_SUMMARY}
    last = body["messages"][-1]
    if last["role"] == "user" and last["content"] == TURNS[0]:
        return {"calls": [("bash", {"command": "pytest -q"})]}
    return {"text": f"Done: {str(last.get('content'))[:40]}"}


@pytest.fixture
def session(tmp_path) -> Session:
    return Session.open(lab_session().write(tmp_path / "s.jsonl"))


def run_lab(session: Session, config: ModelConfig, name: str = "r1", cancel: Cancel | None = None, on_event=None,
            **settings) -> tuple[RunFile, Lab, str]:
    chosen = LabSettings(**{"models": [MODEL], "prompts": ["pi", "ours"], "concurrency": 1, **settings})
    run = RunFile.create(name, {"settings": chosen.as_dict()}) if not _exists(name) else RunFile.open(name)
    lab = Lab(run, chosen, config, on_event=on_event, cancel=cancel)
    return run, lab, lab.run([(session, str(session.storage.path), "k1")])


def _exists(name: str) -> bool:
    from webapp.core.lab_store import run_path

    return run_path(name).is_file()


def transcript_with_edits() -> str:
    """What pi's serializer makes of the summarized part: the system message left out, the first
    reply as its context edit made it (its tool call went with its content), the calls as pi
    writes them."""
    return "\n\n".join([
        "[User]: Build a CSV importer in src/importer.py. Never use global state in the importer.",
        f"[Assistant]: {EDITED_A1}",
        "[Tool result]: Columns: id, name, amount",
        '[Assistant tool calls]: bash(command="pytest -q")',
        "[Tool result]: FAILED tests/test_importer.py::test_load - KeyError: 'amount'\nCommand exited with code 1",
        "[Assistant]: The test fails in `parse_row`; fixing it.",
        '[Assistant tool calls]: edit(path="src/importer.py",oldText="a",newText="b")'.replace(",", ", "),
        "[Tool result]: edited src/importer.py",
        "[Assistant]: Fixed: the amount is parsed as a Decimal.",
        "[User]: Keep the public API unchanged.",
        "[Assistant]: Understood: `load_csv` keeps its signature.",
    ])


def kept_part(summary: str, system: bool) -> list[dict]:
    """The context after a compaction at e2 keeping from u3 (SPEC §5): its system message (the
    prompt in force, when the compaction carries it), its summary, the kept entries with the
    context edit of t4 applied, then the first turn of the test."""
    head = [{"role": "system", "content": f"{SYSTEM}\n\nUse read, edit, bash."}] if system else []
    return head + [
        {"role": "user", "content": f"{COMPACTION_PREFIX}\n\n<summary>\n{summary}\n</summary>"},
        {"role": "user", "content": "Now add a --strict flag."},
        {"role": "assistant", "content": "", "tool_calls": [{"id": "c4", "type": "function", "function": {
            "name": "edit", "arguments": '{"path":"src/cli.py","oldText":"x","newText":"y"}'}}]},
        {"role": "tool", "tool_call_id": "c4", "content": EDITED_T4},
        {"role": "assistant", "content": "Added --strict to the CLI."},
        {"role": "user", "content": TURNS[0]},
    ]


def test_every_request_is_the_context_spec_5_makes_after_each_candidates_compaction(session, config, llm_server):
    llm_server.behave("script", script=script)
    run, lab, reason = run_lab(session, config)
    assert reason == "finished"
    assert llm_server.refused == []
    summaries = [r["messages"] for r in llm_server.requests if kind_of(r) == "summary"]
    pi = [m for m in summaries if m[0]["content"] == PI_SYSTEM]
    assert pi == [[{"role": "system", "content": PI_SYSTEM},
                   {"role": "user", "content": f"<conversation>\n{transcript_with_edits()}\n</conversation>\n\n{PI_INITIAL}"}]]
    ours = [m for m in summaries if m[0]["content"] == OUR_SYSTEM]
    assert len(ours) == 1 and EDITED_A1 in ours[0][1]["content"] and "I will read the spec first" not in ours[0][1]["content"]

    firsts = [r["messages"] for r in llm_server.requests if kind_of(r) == "test" and r["messages"][-1].get("content") == TURNS[0]]
    written = MODEL_SUMMARY + "\n\n<read-files>\ndocs/spec.md\n</read-files>\n\n<modified-files>\nsrc/importer.py\n</modified-files>"
    # each model candidate (pi's, ours): its compaction carries the system prompt the path holds
    assert firsts.count(kept_part(written, system=True)) == 2
    # the recorded compaction was written without one: its continuation goes without it, as pi's would
    assert firsts.count(kept_part(SUMMARY, system=False)) == 1
    # the reference: the uncompacted context, the edits applied, the orphaned tool result of a1 not sent
    reference = [m for m in firsts if not any(COMPACTION_PREFIX in str(x.get("content")) for x in m)]
    assert len(reference) == 1
    assert reference[0][0] == {"role": "system", "content": f"{SYSTEM}\n\nUse read, edit, bash."}
    assert {"role": "assistant", "content": EDITED_A1} in reference[0]
    assert not any(x.get("content") == "Columns: id, name, amount" for x in reference[0])
    assert len(firsts) == 4

    # the recorded tool answered the first turn's call, and the turns went on in order
    state = run.state()
    tests = state.tests
    assert len(tests) == 4
    for test in tests.values():
        assert [t["prompt"] for t in test["turns"]] == list(TURNS)
        assert test["hits"] == 1 and test["misses"] == 0
        assert [t["reply"] for t in test["turns"]] == ["Done: 3 passed", f"Done: {TURNS[1][:40]}", f"Done: {TURNS[2]}"]
    # the judge saw no candidate's name, and was asked each pair in both orders
    judged = [r["messages"][1]["content"] for r in llm_server.requests if kind_of(r) == "judge"]
    assert len(judged) == 2 * 3
    assert not any("pi" in j.split("--- Outcome A ---")[1].split("\n")[0] or MODEL in j for j in judged)
    assert {j["verdict"] for j in state.judgments.values()} == {"as well"}


def test_the_candidates_rows_hold_their_audit_figures_and_the_table_ranks_them(session, config, llm_server):
    llm_server.behave("script", script=script)
    run, _, _ = run_lab(session, config, models=[MODEL, "extractive"], prompts=["pi"], turns=0)
    from webapp.core.lab_keep import report

    table = report(run.state())["targets"][0]["table"]
    names = [r["name"] for r in table]
    assert len(table) == 3 and any(n.startswith("recorded") for n in names)
    model_row = next(r for r in table if r["model"] == MODEL)
    assert model_row["instructions_kept"] == 1  # "never use global state" carried by the model's summary
    assert model_row["cost"] is None and model_row["tokens_after"] > 0  # (no price for the test model: unknown)
    # untested (turns 0): no request but the summary's
    assert all(kind_of(r) == "summary" for r in llm_server.requests)


def test_a_token_budget_is_never_exceeded_by_what_the_server_counted(session, llm_server):
    reported = []

    def costly(body):
        got = script(body)
        prompt = len(json.dumps(body["messages"])) // 3  # a server that counts more than the estimate
        completion = min(40, body.get("max_tokens") or 40)
        reported.append(prompt + completion)
        return {**got, "usage": {"prompt_tokens": prompt, "completion_tokens": completion,
                                 "total_tokens": prompt + completion}}

    llm_server.behave("script", script=costly)
    config = ModelConfig(MODEL, api_base=llm_server.api_base, api_key="dummy", timeout=PATIENT)
    budget = 6000
    run, lab, reason = run_lab(session, config, max_tokens=budget, concurrency=3)
    assert reason.startswith("budget reached")
    assert sum(reported) <= budget
    assert lab.ledger.spent_tokens == sum(reported) == run.state().spent_tokens
    assert all(r.get("max_tokens") for r in llm_server.requests)  # every call carried its bound


def test_a_dollar_budget_is_never_exceeded_and_needs_a_priced_model(session, llm_server):
    spent = []

    def priced(body):  # the worst server there is: a token for every byte sent, answers as long as allowed
        got = script(body)
        usage = {"prompt_tokens": len(orjson.dumps(body["messages"])) + len(orjson.dumps(body.get("tools") or [])),
                 "completion_tokens": min(2000, body.get("max_tokens") or 2000)}
        usage["total_tokens"] = usage["prompt_tokens"] + usage["completion_tokens"]
        spent.append(usage)
        return {**got, "usage": usage}

    llm_server.behave("script", script=priced)
    config = ModelConfig("openai/gpt-4o-mini", api_base=llm_server.api_base, api_key="dummy", timeout=PATIENT)
    run, lab, reason = run_lab(session, config, models=["openai/gpt-4o-mini"], prompts=["pi"], max_usd=0.005)
    cost = sum(u["prompt_tokens"] * 0.15e-6 + u["completion_tokens"] * 0.6e-6 for u in spent)  # its list prices
    assert len(spent) >= 3 and cost <= 0.005
    assert lab.ledger.spent_cost == pytest.approx(cost)
    assert reason.startswith("budget reached")
    with pytest.raises(Exception, match="needs a price"):
        run_lab(session, ModelConfig(MODEL, api_base=llm_server.api_base, api_key="dummy"), name="r2", max_usd=1.0)


def test_an_interrupted_run_resumes_where_it_stopped_and_keeps_counting_its_spending(session, config, llm_server):
    llm_server.behave("script", script=script)
    cancel = Cancel()

    def stop_after_the_first_candidate(event, data):
        if event == "candidate" and data.get("model") == MODEL:
            cancel.set()

    run, first, reason = run_lab(session, config, cancel=cancel, on_event=stop_after_the_first_candidate)
    assert reason == "cancelled"
    done = run.state()
    finished = [c for c in done.candidates.values() if not c.get("error")]
    assert any(c["model"] == MODEL for c in finished)
    asked_before = len(llm_server.requests)
    spent_before = done.spent_tokens
    assert spent_before > 0

    again, second, reason = run_lab(session, config)  # the same name: resumed
    assert reason == "finished"
    resumed_summaries = [r for r in llm_server.requests[asked_before:] if kind_of(r) == "summary"]
    made = {c["prompt"] for c in finished if c["model"] == MODEL}
    asked = {"pi" if r["messages"][0]["content"] == PI_SYSTEM else "ours" for r in resumed_summaries}
    assert not made & asked  # what was done is not asked again
    state = again.state()
    assert len([c for c in state.candidates.values() if not c.get("error")]) == 3
    assert len(state.judgments) == 3
    assert second.ledger.spent_tokens == state.spent_tokens > spent_before


def test_a_failed_summary_is_its_cards_error_and_the_others_go_on(session, config, llm_server):
    def failing_pi(body):
        if body["messages"][0]["content"] == PI_SYSTEM:
            return {"text": ""}  # neither text nor tool calls: no reply
        return script(body)

    llm_server.behave("script", script=failing_pi)
    run, _, reason = run_lab(session, config, turns=1)
    assert reason == "finished"
    rows = {c["prompt"]: c for c in run.state().candidates.values()}
    assert "neither text nor tool calls" in rows["pi"]["error"]
    assert rows["ours"].get("error") is None
    assert (str(session.storage.path), "k1", rows["ours"]["id"]) in run.state().judgments


def test_a_lab_in_the_middle_of_a_turn_first_lets_the_model_go_on(tmp_path, config, llm_server):
    """At a tool result (where pi compacts when a turn overflows), each test first asks the model
    to go on from it, with no user message of its own, then sends the turns after."""
    llm_server.behave("script", script=script)
    session = Session.open(lab_session(compacted=False).write(tmp_path / "s.jsonl"))
    chosen = LabSettings(models=["extractive"], prompts=["ours"], keeps=[60], turns=2, concurrency=1)
    run = RunFile.create("mid", {"settings": chosen.as_dict()})
    assert Lab(run, chosen, config).run([(session, str(session.storage.path), "t5")]) == "finished"
    firsts = [r["messages"] for r in llm_server.requests
              if kind_of(r) == "test" and r["messages"][-1].get("tool_call_id") == "c5"]
    assert len(firsts) == 2  # the reference, the extractive candidate
    for messages in firsts:
        assert messages[-2]["tool_calls"][0]["function"]["name"] == "bash"
        assert messages[-1] == {"role": "tool", "tool_call_id": "c5", "content": "3 passed"}
    for test in run.state().tests.values():
        assert [t["prompt"] for t in test["turns"]] == [None, TURNS[1]]
