"""A sub-agent's conversation is reached from the Task call that started it, in the app's
transcript and in the export, and is not offered as a branch of the session."""

from __future__ import annotations

import re
from html import unescape

from tests.core.test_formats_claude import _session_with_a_subagent
from webapp.web.app import create_app, export_session


def test_the_transcript_links_the_task_call_to_its_sub_agent(tmp_path):
    main, _, _ = _session_with_a_subagent(tmp_path)
    client = create_app(tmp_path).test_client()
    html = unescape(client.get("/s/p/s1.jsonl?tab=transcript&node=a2").get_data(as_text=True))
    item = html[html.index('id="t-e-a"'):html.index('id="t-e-a2"')]
    link = re.search(r'<div class="t-subagents">Sub-agent conversation it started:\s*<a href="([^"]+)"[^>]*>([^<]+)</a>', item)
    assert link and link.group(2) == "Explore the repo (with the agent's preamble)"
    assert "other branch" not in item  # a sub-agent's run is no branch
    sub = unescape(client.get(link.group(1)).get_data(as_text=True))  # the link opens the sub-agent's transcript
    assert 'data-entry="s-a"' in sub and "two modules" in sub


def test_the_export_holds_each_sub_agent_linked_from_its_task_call(tmp_path):
    main, _, _ = _session_with_a_subagent(tmp_path)
    html = unescape(export_session(main))
    assert html.count('<section class="branch"') == 1  # the session's one branch; the sub-agent is no branch
    section = html[html.index('<section class="branch subagent" id="sub-0">'):]
    assert "Sub-agent 1: Explore the repo" in section and 'started by <a href="#t-e-a">' in section
    assert 'id="t-e-s-u"' in section and 'id="t-e-s-a"' in section and "two modules" in section
    call = html[html.index('id="t-e-a"'):html.index('id="t-e-a2"')]
    assert '<div class="t-subagents">Sub-agent conversation it started:\n    <a href="#t-e-s-u"' in call
    assert '<a href="#sub-0">Explore the repo' in html  # listed in the sidebar beside the branches
