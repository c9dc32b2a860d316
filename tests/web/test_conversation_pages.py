"""A conversation across files on the web (SPEC §5e): the page of any of its files draws the whole
conversation, each file's part boxed and named; every node opens; the context, compare and export
read across the files; writes go only to the file shown, and continuing from another file's
entry makes a new file that names it; the index page lists one row per conversation."""

from __future__ import annotations

import re
import shutil
from pathlib import Path

import orjson
import pytest

from tests.conftest import FIXTURES
from webapp.web.app import create_app

CONV = FIXTURES / "conversations"
P, C, G, M = ("--home-ana-projects-report--/2026-05-01T10-00-00-000Z_0196a1c0-0000-7000-8000-00000000000a.jsonl",
              "--home-ana-projects-report--/2026-05-01T10-04-00-000Z_0196a1c4-0000-7000-8000-00000000000c.jsonl",
              "--home-ana-projects-report--/2026-05-01T10-08-00-000Z_0196a1c8-0000-7000-8000-00000000000e.jsonl",
              "--home-ana-projects-report--/2026-05-01T10-16-00-000Z_0196a1d0-0000-7000-8000-000000000010.jsonl")


def served(tmp_path: Path, agent: str):
    root = tmp_path / agent
    shutil.copytree(CONV / agent, root)
    app = create_app(root, NO_AUTH=True, CORPUS_DB=str(tmp_path / "index.duckdb"))
    app.extensions["corpus"] = None  # the files beside the page tell its conversation (see test_index_* below)
    return app.test_client(), root


def post(client, url: str, form: dict):
    return client.post(url, data={"csrf_token": client.application.config["CSRF_TOKEN"], **form})


def fragment(client, url: str) -> str:
    return client.get(url, headers={"HX-Request": "true"}).get_data(as_text=True)


def test_each_files_page_draws_the_whole_conversation_each_part_boxed_and_named(tmp_path):
    client, _ = served(tmp_path, "pi")
    for shown in (P, C, G):
        html = client.get(f"/s/{shown}").get_data(as_text=True)
        svg = html[html.index("<svg"):html.index("</svg>")]
        assert svg.count('class="cluster"') == 3 and all(f'id="part-{i}"' in svg for i in range(3))
        for node in ("p0000002", "p0000008", "c0000008", "g0000010"):  # every file's entries, once each
            assert svg.count(f'id="e-{node}"') == 1, (shown, node)
        assert "this file" in svg and svg.count("fork ·") + svg.count("(fork) ·") == 2
        bar = re.search(r'<nav class="conversation-bar".*?</nav>', html, re.S).group(0)
        assert "One conversation, 3 files" in bar
        others = {x for x in (P, C, G) if x != shown}
        assert {f"/s/{x}" for x in others} <= set(re.findall(r'href="([^"]+)"', bar))


def test_a_node_of_another_file_opens_and_offers_a_new_file_not_a_write_to_it(tmp_path):
    client, root = served(tmp_path, "pi")
    before = {p: p.read_bytes() for p in root.rglob("*.jsonl")}
    panel = fragment(client, f"/s/{C}/-/panel/node?node=p0000007")
    assert "Write it with the csv module" in panel
    assert f'href="/s/{P}"' in panel and "continue-new" in panel and "Fork here" not in panel
    for route, form in (("fork", {"node": "p0000007"}), ("label", {"node": "p0000007", "label": "x"})):
        r = post(client, f"/s/{C}/-/{route}", form)
        assert r.status_code == 409 and "is an entry of 2026-05-01T10-00-00-000Z" in r.get_data(as_text=True)
    assert {p: p.read_bytes() for p in root.rglob("*.jsonl")} == before  # nothing written anywhere

    r = post(client, f"/s/{C}/-/continue-new", {"node": "p0000007"})
    assert r.status_code == 303
    made = [p for p in root.rglob("*.jsonl") if p not in before]
    assert len(made) == 1 and {p: p.read_bytes() for p in before} == before
    lines = [orjson.loads(x) for x in made[0].read_bytes().splitlines()]
    assert lines[0]["parentSession"] == str(root / P)  # the file the entry is in, not the page's
    said = [x["message"]["content"][0].get("text") for x in lines[1:] if x.get("type") == "message"
            and x["message"]["content"] and x["message"]["content"][0].get("type") == "text"]
    assert said[-1] == "Write it with the csv module" and "Use pandas instead" not in said
    page = client.get(r.headers["Location"]).get_data(as_text=True)
    assert "One conversation, 4 files" in page  # the new file joins the conversation it left
    again = client.get(f"/s/{C}").get_data(as_text=True)  # a page read before the new file says it at once
    assert "One conversation, 4 files" in again


def test_a_fork_from_an_entry_the_file_holds_a_copy_of_is_written_to_that_file(tmp_path):
    client, root = served(tmp_path, "pi")
    parent = (root / P).read_bytes()
    r = post(client, f"/s/{C}/-/fork", {"node": "p0000005"})
    assert r.status_code == 303
    assert (root / P).read_bytes() == parent
    last = orjson.loads((root / C).read_bytes().splitlines()[-1])
    assert (last["type"], last["targetId"]) == ("leaf", "p0000005")


def test_the_context_at_a_paginated_codex_forks_leaf_reads_its_parent_up_to_history_base(tmp_path):
    client, _ = served(tmp_path, "codex")
    fork = "2026/05/07/rollout-2026-05-07T10-30-00-0196b800-0000-7000-8000-000000000003.jsonl"
    html = fragment(client, f"/s/{fork}/-/panel/context?node=L4")
    for said in ("Add a --verbose flag", "cli.py:3:import argparse", "Added --verbose to cli.py.",
                 "Use -V for the version instead", "Moved the version to -V."):
        assert said in html
    assert "Make it -v too" not in html and "A sub-agent is writing" not in html and 'class="problem"' not in html


def test_the_context_of_a_paginated_fork_whose_parent_is_gone_says_what_it_lacks(tmp_path):
    client, _ = served(tmp_path, "codex")
    orphan = "2026/05/06/rollout-2026-05-06T10-40-00-0196bf00-0000-7000-8000-000000000005.jsonl"
    html = fragment(client, f"/s/{orphan}/-/panel/context?node=L3")
    assert "Carry on with the config loader" in html
    assert re.search(r'<p class="problem">⚠ this file inherits the lines before ordinal 7 of forked_from_id '
                     r'0196a999-0000-7000-8000-000000000999, which is not here: the context lacks them</p>', html)


def test_compare_puts_a_branch_against_its_original_as_two_branches_of_one_tree(tmp_path):
    client, _ = served(tmp_path, "claude-code")
    branch = "-home-ana-projects-shop/bbbbbbbb-0000-4000-8000-000000000002.jsonl"
    a6, b8 = "0000000a-0000-4000-8000-000000000006", "0000000b-0000-4000-8000-000000000008"
    html = client.get(f"/s/{branch}/compare?ids={a6},{b8}").get_data(as_text=True)
    assert "Now add a test for it" in html and "Added `if not items: return 0`" in html.replace("&#96;", "`")
    assert {a6, b8} == set(re.findall(r'data-tip="([^"]+)"', html))
    assert re.findall(r'<div class="cmp-file muted"[^>]*>in ([^<]+)</div>', html) == ["aaaaaaaa…", "this file"]


def test_the_export_of_a_file_of_a_conversation_holds_every_files_branches(tmp_path):
    client, _ = served(tmp_path, "pi")
    html = client.get(f"/s/{C}/export?reviewed=1").get_data(as_text=True)
    for said in ("Write it with the csv module", "Use pandas instead", "Also add --tsv"):
        assert said in html


def test_the_index_lists_one_row_per_conversation_with_its_files_folded_and_a_missing_source_said(tmp_path):
    client, _ = served(tmp_path, "pi")
    html = client.get("/").get_data(as_text=True)
    assert "4 sessions in 2 conversations" in html
    rows = re.findall(r'<tr class="session-row[^"]*">.*?</tr>', html, re.S)
    assert len(rows) == 2 and "3 files" in rows[0]
    fold = re.search(r'<details class="conversation-files">.*?</details>', html, re.S).group(0)
    assert "2 more files of this conversation" in fold and f'href="/s/{C}"' in fold and f'href="/s/{G}"' in fold
    assert "Continues a file that is not here" in html and "2026-04-30T09-00-00-000Z_0196a000" in html


@pytest.mark.parametrize("agent, page, files", [
    ("claude-code", "-home-ana-projects-shop/eeeeeeee-0000-4000-8000-000000000004.jsonl", 4),
    ("codex", "2026/05/06/rollout-2026-05-06T10-01-00-0196bc00-0000-7000-8000-000000000004.jsonl", 4),
])
def test_the_index_tells_a_page_its_conversation_across_folders(tmp_path, agent, page, files):
    client, root = served(tmp_path, agent)
    client.application.extensions.pop("corpus")  # the index page opens the index and builds it
    assert client.get("/").status_code == 200
    client.application.extensions["corpus"].join()
    html = client.get(f"/s/{page}").get_data(as_text=True)
    assert f"One conversation, {files} files" in html


def test_a_second_compact_reads_as_one_line_on_its_page(tmp_path):
    client, _ = served(tmp_path, "claude-code")
    html = client.get("/s/-home-ana-projects-shop/dddddddd-0000-4000-8000-000000000005.jsonl").get_data(as_text=True)
    assert "no problems" in html and "conversation-bar" not in html
    assert re.search(r"\b1 branch\b", html)


@pytest.mark.parametrize("agent_file, prompt", [
    ("subagents/agent-a1b2c3.jsonl", "Find the callers of total()"),
    ("subagents/workflows/wf_0001/agent-wf1.jsonl", "Check that total() handles empty carts"),
])
def test_a_claude_code_sub_agents_page_whose_session_is_gone_says_the_session_it_names(tmp_path, agent_file, prompt):
    client, root = served(tmp_path, "claude-code")
    page = f"-home-ana-projects-shop/aaaaaaaa-0000-4000-8000-000000000001/{agent_file}"
    assert f'href="/s/{page}"' not in client.get("/").get_data(as_text=True)  # read with its session
    (root / "-home-ana-projects-shop" / "aaaaaaaa-0000-4000-8000-000000000001.jsonl").unlink()
    index = client.get("/").get_data(as_text=True)
    assert f'href="/s/{page}"' in index
    html = client.get(f"/s/{page}").get_data(as_text=True)
    assert prompt in html
    assert ('This file continues a file that is not here: <code>sessionId aaaaaaaa-0000-4000-8000-000000000001</code>'
            in html)


def test_the_context_at_a_sub_agents_entry_is_its_own_conversation_from_its_prompt(tmp_path):
    client, _ = served(tmp_path, "claude-code")
    page = "-home-ana-projects-shop/aaaaaaaa-0000-4000-8000-000000000001.jsonl"
    last = "000000a5-0000-4000-8000-000000000002"  # the Task's run (subagents/agent-a1b2c3.jsonl), its reply
    html = " ".join(fragment(client, f"/s/{page}/-/panel/context?node={last}").split())
    assert "the model sees every message from the sub-agent's prompt" in html
    assert "Find the callers of total()" in html  # its prompt
    assert "Why does checkout fail for empty carts?" not in html  # the calling session's first prompt
