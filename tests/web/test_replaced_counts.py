"""One count of "entries replaced" for a compaction, in every view that gives one: the inspector,
the Lost tab, the node panel, the graph's band, the before/after view, and (before it is written)
the compaction preview."""

from __future__ import annotations

import re
import shutil
from html import unescape
from pathlib import Path

import orjson
import pytest

from tests.conftest import Builder
from webapp.core.context_diff import replaced_entries
from webapp.core.session import Session
from webapp.core.storage import JsonlStorage
from webapp.web.app import create_app
from webapp.web.views import compaction_plan

SAMPLES = Path(__file__).resolve().parents[2] / "sample_sessions"
HX = {"HX-Request": "true"}


def counts(client, rel: str, cid: str) -> dict[str, int]:
    def panel(tab):
        return unescape(client.get(f"/s/{rel}/-/panel/{tab}?node={cid}", headers=HX).get_data(as_text=True))

    context, audit, node = panel("context"), panel("audit"), panel("node")
    overlay = orjson.loads(re.search(r'<script type="application/json" id="overlay">(.*?)</script>', context, re.S).group(1))
    band = overlay["context"]["bands"][-1]["summaryLabels"][0]
    page = unescape(client.get(f"/s/{rel}/context/compaction/{cid}").get_data(as_text=True))
    return {
        "inspector": int(re.search(r"<strong>(\d+) entries it replaced</strong>", context).group(1)),
        "lost tab": int(re.search(r"of the (\d+) entries it replaced", audit).group(1)),
        "node panel": int(re.search(r'<dd class="replaced-count">(\d+) entries', node).group(1)),
        "band": int(re.search(r"· (\d+) entr(?:y|ies) ·", band).group(1)),
        "before/after": int(re.search(r"(\d+) entr(?:y|ies) \(\d+ messages\) left the context", page).group(1)),
    }


@pytest.mark.parametrize("name", ["2026-03-02", "2026-02-16"])
def test_every_view_gives_the_same_count_on_the_samples(tmp_path, name):
    shutil.copytree(SAMPLES, tmp_path / "s")
    client = create_app(tmp_path / "s").test_client()
    path = next((tmp_path / "s").glob(f"*/{name}*.jsonl"))
    rel = path.relative_to(tmp_path / "s").as_posix()
    tree = Session(JsonlStorage(path)).tree
    compactions = [e.id for e in tree.entries if e.type == "compaction"]
    assert len(compactions) >= 2
    for cid in compactions:
        expected = len(replaced_entries(tree, cid))
        assert set(counts(client, rel, cid).values()) == {expected}, cid


def test_the_preview_count_is_the_count_once_written(tmp_path):
    b = Builder()
    for n in range(4):
        b.user(f"step {n}: " + "words " * 30, id=f"u{n}")
        b.add("thinking_level_change", id=f"h{n}", thinkingLevel="low")  # holds no message
        b.assistant(f"done {n}: " + "more " * 30, usage=100 + n, id=f"a{n}")
    b.add("compaction", id="k0", summary="earlier steps", firstKeptEntryId="u2")
    for n in range(4, 7):
        b.user(f"step {n}: " + "words " * 30, id=f"u{n}")
        b.assistant(f"done {n}: " + "more " * 30, usage=200 + n, id=f"a{n}")
    root = tmp_path / "s"
    (root / "--home-ana-proj--").mkdir(parents=True)
    file = b.write(root / "--home-ana-proj--" / "p.jsonl")
    rel = "--home-ana-proj--/p.jsonl"
    client = create_app(root).test_client()
    page = unescape(client.get(f"/s/{rel}/-/panel/compact?node=a6&keep_recent_tokens=60", headers=HX).get_data(as_text=True))
    shown = int(re.search(r'<dd class="replaced-count">(\d+) entries', page).group(1))
    plan = compaction_plan(Session(JsonlStorage(file)).tree, "a6", "60")
    assert plan.can_compact and plan.context.compaction.id == "k0"
    b.add("compaction", id="k1", summary="all steps", firstKeptEntryId=plan.first_kept_entry_id, parent="a6")
    b.write(file)
    written = counts(create_app(root).test_client(), rel, "k1")
    assert set(written.values()) == {shown}
    assert shown == len(plan.entries_to_summarize()) + 1  # the previous summary counts as one


def test_the_fork_form_says_it_counts_since_the_last_compaction(tmp_path):
    b = Builder()
    b.user("first " * 20, id="u1")
    b.assistant("one " * 20, id="a1")
    b.add("compaction", id="k1", summary="the start", firstKeptEntryId="u1")
    b.user("second", id="u2")
    b.assistant("two", id="a2")
    root = tmp_path / "s"
    (root / "--home-ana-proj--").mkdir(parents=True)
    b.write(root / "--home-ana-proj--" / "f.jsonl")
    client = create_app(root).test_client()
    page = unescape(client.get("/s/--home-ana-proj--/f.jsonl/-/fork-form?node=a1&position=at", headers=HX).get_data(as_text=True))
    legend = " ".join(re.search(r"<legend>(.*?)</legend>", page, re.S).group(1).split())
    assert legend.startswith("The branch you are leaving: 2 entries since the last compaction (")
    assert "k1" in legend
