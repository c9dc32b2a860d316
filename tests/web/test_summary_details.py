"""What a written summary records: what drafted it, whether a person edited it, what it cost;
and that the cost shows in the branch's figures."""

from __future__ import annotations

import html
import shutil
from pathlib import Path

import orjson
import pytest

from webapp.core.session import Session
from webapp.model.llm import ModelConfig
from webapp.web.app import create_app
from webapp.core.leaf_figures import leaf_figures

SAMPLES = Path(__file__).resolve().parents[2] / "sample_sessions"
RICH = "--home-ana-projects-invoice-api--/2026-03-02T09-14-05-221Z_019cadd3-8025-7970-85d9-5954058b4714.jsonl"
PRICED = {"prompt_tokens": 1000, "completion_tokens": 200, "total_tokens": 1200}


@pytest.fixture
def root(tmp_path):
    shutil.copytree(SAMPLES, tmp_path / "s")
    return tmp_path / "s"


def app_for(root, config=None):
    return create_app(root, **({"MODEL_CONFIG": config} if config else {}))


def form_of(page: str) -> dict:
    """The hidden fields and the textarea of a summary editor, as the browser would post them."""
    fields = {}
    for part in page.split('<input type="hidden" name="')[1:]:
        name, _, rest = part.partition('" value=')
        quote = rest[0]
        fields[name] = html.unescape(rest[1:].split(quote, 1)[0])
    fields["summary"] = html.unescape(page.split('name="summary" rows="16" required>')[1].split("</textarea>")[0])
    return fields


def draft_and_commit(app, root, edit=None) -> dict:
    client = app.test_client()
    token = app.config["CSRF_TOKEN"]
    page = client.get(f"/s/{RICH}?tab=compact&keep_recent_tokens=300").get_data(as_text=True)
    first_kept = page.split('name="first_kept" value="')[1].split('"')[0]
    r = client.post(f"/s/{RICH}/-/compact/summary", data={"csrf_token": token, "keep_recent_tokens": "300"})
    assert r.status_code == 200
    fields = form_of(r.get_data(as_text=True))
    if edit:
        fields["summary"] = edit(fields["summary"])
    fields["summary"] = fields["summary"].replace("\n", "\r\n")  # as a browser posts a textarea
    r = client.post(f"/s/{RICH}/-/compact", data={**fields, "csrf_token": token, "keep_recent_tokens": "300",
                                                   "first_kept": first_kept})
    assert r.status_code == 303, r.get_data(as_text=True)
    tree = Session.open(root / RICH).tree
    return tree.by_id[tree.active_leaf].raw


def test_an_extractive_draft_committed_as_it_is_says_so(root):
    entry = draft_and_commit(app_for(root), root)
    assert entry["details"]["summarizer"] == "extractive" and entry["details"]["label"] == "draft (no model)"


def test_an_edited_summary_records_edited_and_what_drafted_it(root, llm_server):
    llm_server.behave("reply", text="## Goal\nFix rounding.", usage=PRICED)
    config = ModelConfig("openai/gpt-4o-mini", api_base=llm_server.api_base, api_key="dummy")
    entry = draft_and_commit(app_for(root, config), root, edit=lambda t: t + "\nA person added this.")
    d = entry["details"]
    assert (d["summarizer"], d["draftedBy"], d["model"]) == ("edited", "model", "openai/gpt-4o-mini")
    u = entry["usage"]  # the summarizer call's, where pi keeps it
    assert u["input"] == 1000 and u["output"] == 200 and u["cost"]["total"] > 0 and "usage" not in d


def test_summary_usage_is_in_the_entry_and_in_the_branch_cost(root, llm_server):
    llm_server.behave("reply", text="## Goal\nFix rounding.", usage=PRICED)
    config = ModelConfig("openai/gpt-4o-mini", api_base=llm_server.api_base, api_key="dummy")
    tree = Session.open(root / RICH).tree
    leaf = tree.conversation_leaf(tree.active_leaf)
    cost_before = next(r.cost for r in leaf_figures(tree) if r.leaf.id == leaf)
    entry = draft_and_commit(app_for(root, config), root)
    d = entry["details"]
    assert d["summarizer"] == "model" and entry["usage"]["totalTokens"] == 1200
    paid = entry["usage"]["cost"]["total"]
    assert paid == pytest.approx(1000 * 0.15e-6 + 200 * 0.6e-6)  # litellm's gpt-4o-mini prices
    tree = Session.open(root / RICH).tree
    row = next(r for r in leaf_figures(tree) if r.leaf.id == entry["id"])
    assert row.cost == pytest.approx(cost_before + paid)
    page = app_for(root).test_client().get(f"/s/{RICH}?tab=summaries").get_data(as_text=True)
    assert "1.2k tokens (reported) · $0.0003" in html.unescape(page)
    assert orjson.loads((root / RICH).read_bytes().splitlines()[-1])["id"] == entry["id"]
