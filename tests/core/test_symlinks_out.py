"""A symbolic link never makes a file outside the sessions folder readable: a Claude Code
sub-agent file (or its `subagents` folder) that links out of the session's folder is not read,
and a `*.jsonl` link out of the folders listed (ROOT, or the agents' own folders) is not listed
nor served."""

from __future__ import annotations

import shutil

import orjson

from tests.core.test_formats_claude import _session_with_a_subagent
from tests.test_cli import run
from webapp.core.session import Session
from webapp.core.agents.places import discover
from webapp.web.app import create_app

SECRET = "the user's private notes"


def _outside(tmp_path):
    """A sub-agent-like file outside the root, holding text that must not be shown."""
    outside = tmp_path / "outside"
    outside.mkdir()
    line = {"type": "user", "sessionId": "s1", "uuid": "x-u", "parentUuid": None, "isSidechain": True,
            "agentId": "ab12", "timestamp": "2026-01-02T03:04:05Z", "message": {"role": "user", "content": SECRET}}
    (outside / "agent-ab12.jsonl").write_bytes(orjson.dumps(line) + b"\n")
    return outside


def test_a_subagent_file_linked_out_of_the_session_folder_is_not_read(tmp_path):
    root = tmp_path / "root"
    main, agent, _ = _session_with_a_subagent(root)
    outside = _outside(tmp_path)
    agent.unlink()
    agent.symlink_to(outside / "agent-ab12.jsonl")
    tree = Session.open(main).tree
    assert "x-u" not in tree.by_id
    html = create_app(root).test_client().get("/s/p/s1.jsonl?tab=transcript").get_data(as_text=True)
    assert SECRET not in html


def test_a_subagents_folder_linked_out_is_not_read(tmp_path):
    root = tmp_path / "root"
    main, agent, _ = _session_with_a_subagent(root)
    outside = _outside(tmp_path)
    shutil.rmtree(agent.parent)
    agent.parent.symlink_to(outside, target_is_directory=True)
    assert "x-u" not in Session.open(main).tree.by_id


def test_a_subagent_file_linked_inside_its_session_folder_is_still_read(tmp_path):
    main, agent, _ = _session_with_a_subagent(tmp_path)
    real = agent.with_name("kept.jsonl.bak")
    agent.rename(real)
    agent.symlink_to(real)
    assert "s-a" in Session.open(main).tree.by_id


def test_a_session_link_out_of_the_agents_folders_is_not_listed_nor_served(tmp_path, capsys, monkeypatch):
    home = tmp_path / "home"
    folder = home / ".pi" / "agent" / "sessions" / "--p--"
    folder.mkdir(parents=True)
    notes = home / "notes.jsonl"  # under the home folder, but in no agent's folder
    notes.write_text('{"private": "' + SECRET + '"}\n')
    (folder / "link.jsonl").symlink_to(notes)
    monkeypatch.setenv("HOME", str(home))
    assert discover(home, [".pi/agent/sessions"]) == []
    code, out, err = run(capsys, "ls")
    assert "link.jsonl" not in out and SECRET not in out
    client = create_app(home, within=(".pi/agent/sessions",)).test_client()
    assert "link.jsonl" not in client.get("/").get_data(as_text=True)
    assert client.get("/s/.pi/agent/sessions/--p--/link.jsonl?tab=problems").status_code == 404


def test_a_session_link_within_the_root_is_listed(tmp_path):
    (tmp_path / "real.jsonl").write_text('{"type":"session","version":3,"id":"s","timestamp":"2026-01-02T03:04:05Z","cwd":"/"}\n')
    (tmp_path / "sub").mkdir()
    (tmp_path / "sub" / "link.jsonl").symlink_to(tmp_path / "real.jsonl")
    assert sorted(p.name for p in discover(tmp_path)) == ["link.jsonl", "real.jsonl"]
