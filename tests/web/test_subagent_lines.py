"""Claude Code sub-agents read from `<sessionId>/subagents/*.jsonl`: every line number shown of
their entries names their file (pages and CLI), and where a sub-agent's run ends is no branch of
the session."""

from __future__ import annotations

from html import unescape

import orjson
import pytest

from tests.core.test_formats_claude import _session_with_a_subagent
from tests.test_cli import run, run_json
from webapp.web.app import create_app


@pytest.fixture
def served(tmp_path):
    main, agent, sub = _session_with_a_subagent(tmp_path)
    sub.user("s-a", "s-u", "the same uuid again", isSidechain=True, agentId="ab12")  # a duplicate: line 3
    with open(agent, "ab") as f:
        f.write(orjson.dumps(sub.lines[-1]) + b"\n")
    client = create_app(tmp_path).test_client()
    return client, "/s/" + main.relative_to(tmp_path).as_posix()


def page(client, url: str) -> str:
    r = client.get(url)
    assert r.status_code == 200
    return unescape(r.get_data(as_text=True))


def test_the_node_panel_and_the_raw_page_name_the_subagent_file(served):
    client, url = served
    html = page(client, f"{url}?node=s-a")
    assert "<dt>line</dt><dd>2 <span class=\"muted\">of agent-ab12.jsonl</span></dd>" in html
    assert "<dt>line</dt><dd>2</dd>" in page(client, f"{url}?node=a")  # the session's own line: no file named
    assert "agent-ab12.jsonl line 2: s-a" in page(client, f"{url}/-/raw?id=s-a")
    assert "<strong>line 2: a</strong>" in page(client, f"{url}/-/raw?id=a")


def test_a_problem_in_a_subagent_file_names_it(served):
    client, url = served
    html = page(client, f"{url}?tab=problems")
    assert '<span class="line">agent-ab12.jsonl line 3</span> <span class="problem-kind">duplicate-id</span>' in html


def test_subagent_tips_are_not_listed_as_branches(served):
    client, url = served
    listed = page(client, f"{url}?tab=branches")
    assert 'name="id" value="a2"' in listed and 'value="s-a"' not in listed
    every = page(client, f"{url}/compare/all")
    assert 'data-leaf="a2"' in every and 'data-leaf="s-a"' not in every


def test_the_cli_names_the_subagent_file_of_a_line(tmp_path, capsys):
    main, agent, sub = _session_with_a_subagent(tmp_path)
    sub.user("s-a", "s-u", "the same uuid again", isSidechain=True, agentId="ab12")
    with open(agent, "ab") as f:
        f.write(orjson.dumps(sub.lines[-1]) + b"\n")
    code, out, _ = run(capsys, "validate", str(main))
    assert f"{main}: agent-ab12.jsonl line 3: duplicate-id" in out
    info = run_json(capsys, "show", str(main), "--json")
    by_id = {e["id"]: e for e in info["entries"]}
    assert by_id["s-a"]["file"] == "agent-ab12.jsonl" and "file" not in by_id["a"]
    assert info["leaves"] == ["a2"]
