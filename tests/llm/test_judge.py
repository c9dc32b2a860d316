"""A model judges branches against the strict local server: pairwise, blind, both orders (a
disagreement is a tie), recorded as the judge's verdict beside a person's; CLI and web."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from tests.llm.conftest import PATIENT, run
from webapp.core.session import Session
from webapp.core.verdicts import PERSON, give_verdict, verdicts
from webapp.model.errors import ModelError
from webapp.model.judge import judge
from webapp.model.llm import ModelConfig
from webapp.model.table import priced
from webapp.web.app import create_app

RICH = next((Path(__file__).resolve().parents[2] / "sample_sessions").rglob("*019cadd3-8025-7970-85d9-5954058b4714.jsonl"))
JUDGE = "openai/judge-model"
BY = f"judge:{JUDGE}"


@pytest.fixture(autouse=True)
def data_home(tmp_path, monkeypatch):
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "xdg-data"))


@pytest.fixture
def rich(tmp_path) -> Path:
    folder = tmp_path / "sessions" / "--home-ana-projects-invoice-api--"
    folder.mkdir(parents=True)
    return Path(shutil.copy(RICH, folder / RICH.name))


def prompt_of(body: dict) -> str:
    return body["messages"][-1]["content"]


def fair(body: dict) -> str:
    """A judge that reads the outcomes: the one that stops to ask ("revert?") is worse."""
    a, b = prompt_of(body).split("--- Outcome B ---")
    better = "B" if "revert?" in a else "A" if "revert?" in b else "tie"
    return json.dumps({"better": better, "reasons": "the other one stopped to ask"})


@pytest.fixture
def config(llm_server) -> ModelConfig:
    return ModelConfig(JUDGE, api_base=llm_server.api_base, api_key="dummy", timeout=PATIENT)


def test_a_pair_is_judged_blind_in_both_orders_and_recorded_beside_a_persons(rich, config, llm_server):
    session = Session.open(rich)
    tips = [session.tree.leaves()[0], session.tree.leaves()[2]]  # the regression branch, the --currency one
    give_verdict(session, tips[0], "winner", "I liked that it asked")
    llm_server.per_model("judge-model", "reply", answer=fair)
    got = judge(session, config, tips)
    assert len(llm_server.requests) == 2 and llm_server.refused == []
    first, second = (prompt_of(r) for r in llm_server.requests)
    a1 = first.split("--- Outcome A ---")[1].split("--- Task B ---")[0].strip()
    b2 = second.split("--- Outcome B ---")[1].strip()
    assert a1 == b2  # the same outcome, in the other position
    for text in (first, second):  # blind: no ids, no labels, no models
        assert not any(t in text or t[-8:] in text for t in tips)
        assert "regression" not in text and "claude-sonnet" not in text
    # The two branches were asked different things: each outcome is judged against its own task.
    assert first.startswith("The two attempts were given different tasks")
    assert first.split("--- Task A ---")[1].strip().startswith("Run the tests and fix whatever fails")
    assert first.split("--- Task B ---")[1].strip().startswith("The test `tests/test_totals.py")
    assert second.split("--- Task A ---")[1].strip().startswith("The test `tests/test_totals.py")
    assert got.task == "each branch's own prompt"
    assert [p.winner for p in got.pairs] == [1] and got.pairs[0].agreed
    stand = verdicts(Session.open(rich))
    assert stand[tips[1]][BY].verdict == "better" and stand[tips[0]][BY].verdict == "worse"
    assert stand[tips[0]][PERSON].verdict == "winner"  # a person's stands beside, not replaced
    assert stand[tips[1]][BY].reasons == ("the other one stopped to ask",) * 2


def test_a_judge_that_prefers_a_position_gives_a_tie(rich, config, llm_server):
    session = Session.open(rich)
    tips = session.tree.leaves()[:2]
    llm_server.per_model("judge-model", "reply", text='{"better": "A", "reasons": "the first is fine"}')
    got = judge(session, config, tips)
    assert [p.agreed for p in got.pairs] == [False] and got.pairs[0].winner is None
    assert {v.verdict for v in got.verdicts} == {"tie"}


def test_three_branches_give_a_winner(rich, config, llm_server):
    session = Session.open(rich)
    tips = session.tree.leaves()[:3]

    def by_length(body):  # a consistent judge: the longer final answer wins
        a, b = prompt_of(body).split("--- Outcome B ---")
        return json.dumps({"better": "A" if len(a) > len(b) + 20 else "B", "reasons": "more complete"})

    llm_server.per_model("judge-model", "reply", answer=by_length)
    got = judge(session, config, tips)
    assert len(llm_server.requests) == 6  # three pairs, both orders
    assert sorted(v.verdict for v in got.verdicts).count("winner") == 1


def test_an_answer_that_is_no_verdict_is_asked_again_then_shown_and_nothing_is_written(rich, config, llm_server):
    session = Session.open(rich)
    before = rich.read_bytes()
    llm_server.per_model("judge-model", "reply", text="I think both are good!")
    with pytest.raises(ModelError, match="no verdict was written") as failed:
        judge(session, config, session.tree.leaves()[:2])
    assert "even when asked again" in str(failed.value) and "“I think both are good!”" in str(failed.value)
    assert len(llm_server.requests) == 2  # asked once more, the format restated, then given up
    again = llm_server.requests[1]["messages"]
    assert again[-2] == {"role": "assistant", "content": "I think both are good!"}
    assert '{"better": "A" or "B" or "tie"' in again[-1]["content"]
    assert all(r["max_tokens"] <= 512 for r in llm_server.requests)  # a judge's answer is small
    assert rich.read_bytes() == before


def test_a_judge_that_answers_in_the_format_when_asked_again_is_recorded(rich, config, llm_server):
    session = Session.open(rich)
    answers = iter(["Both look fine to me."] + ['{"better": "tie", "reasons": "both stopped"}'] * 3)
    llm_server.per_model("judge-model", "reply", answer=lambda body: next(answers))
    got = judge(session, config, session.tree.leaves()[:2])
    assert len(llm_server.requests) == 3 and {v.verdict for v in got.verdicts} == {"tie"}


def test_a_judgment_cut_at_its_bound_is_no_verdict(rich, config, llm_server):
    session = Session.open(rich)
    before = rich.read_bytes()
    llm_server.per_model("judge-model", "generate", words=[' {"better": "A"', ","])  # never ends its object
    with pytest.raises(ModelError, match="no verdict was written"):
        judge(session, config, session.tree.leaves()[:2])
    assert len(llm_server.requests) == 2 and rich.read_bytes() == before


def test_cli_judge(capsys, rich, llm_server, monkeypatch):
    monkeypatch.setenv("SESSION_TREE_API_KEY", "dummy")
    llm_server.per_model("judge-model", "reply", answer=fair)
    tips = Session.open(rich).tree.leaves()
    code, out, err = run(capsys, "judge", rich, tips[0][-8:], tips[2][-8:], "--model", JUDGE,
                         "--api-base", llm_server.api_base, "--rubric", "Which fix is ready to merge?")
    assert code == 0, err
    assert out.startswith(f"judged by {JUDGE} against: Which fix is ready to merge?")
    assert f"{tips[0][-8:]} vs {tips[2][-8:]}: {tips[2][-8:]} better" in out
    assert "Which fix is ready to merge?" in prompt_of(llm_server.requests[0])
    assert out.endswith("\ncost unknown\n")  # no price table names the judge: not $0.0000
    code, out, _ = run(capsys, "judge", rich, tips[0][-8:], tips[2][-8:], "--model", JUDGE,
                       "--api-base", llm_server.api_base, "--json")
    assert code == 0 and json.loads(out)["cost"] is None
    assert priced("openai/gpt-4o-mini") and not priced(JUDGE)


def test_the_judge_button_records_and_the_comparison_shows_both(rich, config, llm_server):
    llm_server.per_model("judge-model", "reply", answer=fair)
    root = rich.parent.parent
    app = create_app(root)
    app.config["MODEL_CONFIG"] = ModelConfig("openai/other", api_base=llm_server.api_base, api_key="dummy", timeout=PATIENT)
    app.config["MODELS"] = (JUDGE,)  # (as `serve --model openai/other --model JUDGE` offers it)
    client = app.test_client()
    url = "/s/" + rich.relative_to(root).as_posix()
    tips = Session.open(rich).tree.leaves()
    page = f"{url}/compare?ids={tips[0]},{tips[2]}"
    assert 'class="judge-form"' in client.get(page).get_data(as_text=True)
    give_verdict(Session.open(rich), tips[2], "better")
    r = client.post(f"{url}/-/judge", data={"csrf_token": app.config["CSRF_TOKEN"], "ids": f"{tips[0]},{tips[2]}",
                                             "model": JUDGE, "next": page})
    assert r.status_code == 303
    html = client.get(page).get_data(as_text=True)
    assert f'data-by="{BY}"' in html and 'data-by="person"' in html
    assert llm_server.refused == []


def test_a_failed_judge_keeps_the_comparison_with_the_reason_and_the_models_words(rich, llm_server):
    llm_server.per_model("judge-model", "reply", text="Both are lovely, honestly.")
    root = rich.parent.parent
    app = create_app(root)
    app.config["MODEL_CONFIG"] = ModelConfig(JUDGE, api_base=llm_server.api_base, api_key="dummy", timeout=PATIENT)
    client = app.test_client()
    url = "/s/" + rich.relative_to(root).as_posix()
    tips = Session.open(rich).tree.leaves()
    before = rich.read_bytes()
    page = f"{url}/compare?ids={tips[0]},{tips[2]}"
    r = client.post(f"{url}/-/judge", data={"csrf_token": app.config["CSRF_TOKEN"], "ids": f"{tips[0]},{tips[2]}",
                                             "model": JUDGE, "rubric": "Ready to merge?", "next": page})
    html = r.get_data(as_text=True)
    assert r.status_code == 200 and 'class="cmp-matrix"' in html  # the comparison, not an error page
    assert 'class="problem judge-failure"' in html and "even when asked again" in html
    assert "Both are lovely, honestly." in html and 'value="Ready to merge?"' in html
    assert rich.read_bytes() == before


def test_the_judges_reasons_are_text_on_the_comparison(rich, config, llm_server):
    llm_server.per_model("judge-model", "reply", answer=fair)
    tips = Session.open(rich).tree.leaves()
    judge(Session.open(rich), config, [tips[0], tips[2]])
    root = rich.parent.parent
    app = create_app(root)
    html = app.test_client().get(f"/s/{rich.relative_to(root).as_posix()}/compare?ids={tips[0]},{tips[2]}").get_data(as_text=True)
    assert html.count(f'<p class="verdict-reasons" data-by="{BY}">') == 2
    assert "the other one stopped to ask</p>" in html
