"""A Claude Code `Task` call in the transcript reads as what it asks and opens the sub-agent's
own conversation (the d-kimuson fixture: real Claude Code 1.0.98, five inline sub-agents)."""

from __future__ import annotations

import re
import shutil
from html import unescape

from tests.conftest import FIXTURES
from webapp.core.session import Session
from webapp.core.subagents import subagent_runs
from webapp.web.app import create_app

KIMUSON = FIXTURES / "claude-code" / "d-kimuson_fe5e1c67-53e7-4862-81ae-d0e013e3270b.jsonl"


def test_a_task_call_links_to_its_sub_agent_run(tmp_path):
    root = tmp_path / "projects" / "-path-to-Demo"
    root.mkdir(parents=True)
    path = root / KIMUSON.name
    shutil.copyfile(KIMUSON, path)
    tree = Session.open(path).tree
    runs = subagent_runs(tree)
    assert len(runs) == 5 and all(tree.by_id[r.tip].sidechain for r in runs.values())
    call_id, run = next(iter(runs.items()))
    owner = next(e for e in tree.entries if any(b.get("id") == call_id for b in e.message.get("content", [])
                                                if isinstance(b, dict)) and e.role == "assistant")
    client = create_app(tmp_path / "projects").test_client()
    rel = path.relative_to(tmp_path / "projects").as_posix()
    html = client.get(f"/s/{rel}/-/panel/transcript?node={owner.id}", headers={"HX-Request": "true"}).get_data(as_text=True)
    card = re.search(r'<div class="tool-call task-call">.*?</div>\s*(?:<p|<details|</div>)', html, re.S)
    assert card and '"prompt"' not in card.group(0)  # the prompt as text, not as raw JSON
    links = re.findall(r'<a class="subagent-link" href="([^"]+)"[^>]*>Open the sub-agent\'s conversation '
                       r'\(([\d,]+) entries\)', html)
    shown = {unescape(href): int(n.replace(",", "")) for href, n in links}
    assert shown[f"?tab=transcript&node={run.tip}"] == run.entries
    sub = client.get(f"/s/{rel}?tab=transcript&node={run.tip}")
    assert sub.status_code == 200
