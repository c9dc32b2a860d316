"""The three users' walks, end to end, in Chromium at 1280x720 against the local model server: a
researcher comparing branches, an engineer debugging a compaction, a person demoing a session.
Each reads what a person reads (names, figures, words, the contrast of every control pressed)
and takes a screenshot of every step (walk_helpers.Shots; $WALK_SHOTS keeps them)."""

from __future__ import annotations

import json
import re
import shutil

import pytest
from playwright.sync_api import expect

from samplegen import many_branches_session
from samplegen.builder import write_jsonl
from tests.browser.walk_helpers import Shots, faint_fields, faint_graph_words, low_contrast, low_contrast_text
from tests.conftest import FIXTURES
from webapp.core.branch_names import branch_name
from webapp.core.session import Session
from webapp.core.verdicts import give_verdict
from webapp.web.graph import build_layout, dom_id

RICH = "019cadd3-8025-7970-85d9-5954058b4714"  # invoice-api: 101 entries, 4 branches
LARGE = "019c6579-1ae3-78f7-9da1-494c73cf256d"  # data-pipeline: 3,000 entries, 7 branches, 3 compactions
JUDGE = "openai/judge-model"
PROMPT = "Should the VAT apply before or after the discount?"


@pytest.fixture(autouse=True)
def data_home(tmp_path, monkeypatch):
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "xdg-data"))


@pytest.fixture
def at_720(page):
    page.set_viewport_size({"width": 1280, "height": 720})
    return page


def judge_answer(body: dict) -> str:
    """The judge model: the outcome that names the discount first is the better one."""
    prompt = body["messages"][-1]["content"]
    a, b = prompt.split("--- Outcome A ---")[1].split("--- Outcome B ---")
    better = "A" if "after the discount" in a else "B" if "after the discount" in b else "tie"
    return json.dumps({"better": better, "reasons": "it says where the discount goes"})


def inside(box: dict, pane: dict) -> bool:
    return (box["x"] >= pane["x"] - 1 and box["y"] >= pane["y"] - 1 and box["x"] + box["width"] <= pane["x"] + pane["width"] + 1
            and box["y"] + box["height"] <= pane["y"] + pane["height"] + 1)


def fit(page) -> None:
    page.locator('[data-action="fit"]').click()
    expect(page.locator("#graph svg")).to_be_visible()


# -- the researcher ---------------------------------------------------------------------------------


def test_the_researcher_asks_two_models_tells_their_branches_apart_judges_and_prices_the_corpus(
        sessions_root, llm_server, model_server, at_720, tmp_path):
    page, shot = at_720, Shots(tmp_path, "researcher")
    llm_server.per_model("model-a", "reply", pieces=["The VAT applies", " after the discount."])
    llm_server.per_model("model-b", "reply", pieces=["Apply the VAT first, then the discount?", " I would ask."])
    llm_server.per_model("judge-model", "reply", answer=judge_answer)
    server = model_server(sessions_root, "openai/model-a", models=("openai/model-b", JUDGE))  # (serve --model ×3)
    rel, file = server.rel(RICH), next(server.root.rglob(f"*{RICH}.jsonl"))
    tree = Session.open(file).tree
    leaf = tree.conversation_leaf(tree.active_leaf)

    # Ask two models the same question at the active leaf.
    page.goto(f"{server.url}{rel}?node={leaf}")
    assert faint_fields(page) == []  # (the session's search box: its edge at 3:1)
    page.get_by_role("link", name="Ask several models…").click()
    page.get_by_role("textbox", name="Message").fill(PROMPT)
    page.get_by_label("openai/model-b", exact=True).check()
    expect(page.locator(".ask-estimates tbody tr")).to_have_count(2)
    assert low_contrast(page) == []
    page.get_by_role("button", name="Send to these models").click()
    columns = page.locator(".ask-column")
    expect(columns.nth(0).locator(".ask-text")).to_have_text("The VAT applies after the discount.")
    expect(columns.nth(1).locator(".ask-text")).to_contain_text("I would ask.")
    shot(page, "ask-two-models")
    page.get_by_role("link", name="Compare these 2 branches").click()

    # The comparison names each branch by what tells it apart: the same prompt, two models.
    heads = page.locator(".cmp-branch-head .cmp-title")
    expect(heads).to_have_count(2)
    titles = heads.all_inner_texts()
    assert titles[0].startswith(PROMPT[:30]) and titles[0].endswith("model-a")
    assert titles[1].startswith(PROMPT[:30]) and titles[1].endswith("model-b")
    tips = [page.locator(".cmp-branch-head").nth(i).get_attribute("data-tip") for i in range(2)]
    assert low_contrast(page) == []
    shot(page, "compare-headers")

    # A person's verdict says better than what; the judge's stands beside it.
    head = page.locator(".cmp-branch-head").nth(0)
    head.get_by_text("Verdict…").click()
    expect(head.get_by_label("winner")).to_be_visible()
    assert "better than the others" in head.locator(".verdict-form").inner_text()
    head.get_by_label("winner").check()
    head.get_by_role("button", name="Save verdict").click()
    expect(page.locator(".cmp-branch-head").nth(0).locator(".verdict[data-by='person']")).to_have_text("winner")
    page.locator(".cmp-branch-head").nth(1).get_by_text("Verdict…").click()
    page.locator(".cmp-branch-head").nth(1).get_by_label("worse").check()
    page.locator(".cmp-branch-head").nth(1).get_by_role("button", name="Save verdict").click()
    expect(page.locator(".cmp-branch-head").nth(1).locator(".verdict[data-by='person']")).to_have_text("worse than the others")
    page.get_by_text("Judge…").click()
    page.get_by_label("Judge model").select_option(JUDGE)
    page.get_by_role("button", name="Judge", exact=True).click()
    judged = page.locator(".cmp-branch-head").nth(0).locator(f".verdict[data-by='judge:{JUDGE}']")
    expect(judged).to_contain_text("better than the others")
    shot(page, "verdicts-and-judge")

    # The same names in the Branches tab, the every-branch table and the replay choices.
    page.goto(f"{server.url}{rel}?tab=branches")
    for tip, model in zip(tips, ("model-a", "model-b")):
        row = page.locator("tr.branch-row", has=page.locator(f"input[value='{tip}']"))
        expect(row.locator("td").nth(1).locator("a").first).to_contain_text(f"· {model}")
    winner_row = page.locator("tr.branch-row", has=page.locator(f"input[value='{tips[0]}']"))
    expect(winner_row.locator(".verdict[data-by='person']")).to_have_text("winner")
    assert low_contrast(page) == [] and low_contrast_text(page) == []
    shot(page, "branches-tab")
    page.goto(f"{server.url}{rel}/compare/all?sort=verdict")
    expect(page.locator("tr.branch-row").first).to_have_attribute("data-leaf", tips[0])
    expect(page.locator("tr.branch-row").first.locator("td").nth(1)).to_contain_text("· model-a")
    assert low_contrast_text(page) == []  # (the table's head and the inherited tags on grey)
    shot(page, "every-branch")
    page.goto(f"{server.url}{rel}/replay?leaf={tips[1]}")
    options = page.locator("#replay-leaf option").all_inner_texts()
    assert any(o.endswith("· model-a") for o in options) and any(o.endswith("· model-b") for o in options)
    assert len(set(options)) == len(options)  # no two branches read alike
    shot(page, "replay-choices")

    # The overview at Fit draws the winner.
    page.goto(f"{server.url}{rel}")
    fit(page)
    winner = page.locator(f"#graph svg g.node[id='{dom_id(tips[0])}']")
    expect(winner).to_be_visible()
    shot(page, "overview-at-fit")
    assert inside(winner.locator("text").first.bounding_box(), page.locator("#graph .graph-svg").bounding_box())

    # The corpus: every agent's cost, said recorded or computed; scores against a whole bar.
    page.goto(f"{server.url}/corpus")
    expect(page.locator("svg.chart")).to_have_count(8)
    said = page.locator("#cost-sources").inner_text()
    assert "recorded" in said and "computed" in said and "litellm" in said and "price table" in said
    scores = page.locator("figure", has_text="lowest audit scores").locator("svg.chart a")
    for i in range(scores.count()):
        pct = int(re.match(r"(\d+)%", scores.nth(i).locator("text.chart-value").text_content()).group(1))
        width = float(scores.nth(i).locator("rect").get_attribute("width"))
        assert width == pytest.approx(200 * pct / 100, abs=1.1)  # (BAR_W: 200)
    shot(page, "corpus", full_page=True)
    with page.expect_popup() as popup:
        page.get_by_role("link", name=re.compile("the corpus tables")).click()
    doc = popup.value
    expect(doc.locator("h1")).to_contain_text("The corpus tables")
    expect(doc.locator("table").first).to_be_visible()
    doc.set_viewport_size({"width": 1280, "height": 720})
    shot(doc, "corpus-tables-doc")
    doc.close()
    assert llm_server.refused == []


# -- the engineer -----------------------------------------------------------------------------------


def test_the_engineer_reads_the_context_diffs_two_nodes_by_clicking_and_previews_a_compaction(
        sessions_root, live_server, at_720, tmp_path):
    page, shot = at_720, Shots(tmp_path, "engineer")
    rel = live_server.rel(LARGE)
    page.goto(f"{live_server.url}{rel}")
    page.get_by_role("tab", name="Context").click()
    badges = page.locator("#graph svg text.replaced-by")
    expect(badges.first).to_be_visible()
    fit(page)
    # Every "summarized by" badge lies within what Fit shows (the drawing and what it adds).
    out = page.evaluate("""() => { const G = window.SessionTreeGraph, svg = document.querySelector('#graph svg');
      const [x, y, w, h] = G.full; const out = [];
      for (const t of svg.querySelectorAll('text.replaced-by')) {
        const b = t.getBBox(), m = svg.getScreenCTM().inverse().multiply(t.getScreenCTM());
        const x0 = m.a * b.x + m.e, x1 = m.a * (b.x + b.width) + m.e, y0 = m.d * b.y + m.f, y1 = m.d * (b.y + b.height) + m.f;
        if (x0 < x - 0.5 || x1 > x + w + 0.5 || y0 < y - 0.5 || y1 > y + h + 0.5) out.push(t.textContent);
      } return out; }""")
    assert out == []
    # No bracket covers a node.
    hits = page.evaluate("""() => { const svg = document.querySelector('#graph svg'); const out = [];
      const nodes = [...svg.querySelectorAll('g.node')].map(g => [g.id, g.querySelector('polygon, path').getBoundingClientRect()]);
      for (const r of svg.querySelectorAll('g.band rect.band-bg')) { const a = r.getBoundingClientRect();
        for (const [id, b] of nodes) if (a.left < b.right - 1 && b.left < a.right - 1 && a.top < b.bottom - 1 && b.top < a.bottom - 1) out.push(id); }
      return out; }""")
    assert hits == []
    assert low_contrast(page) == []
    # The badges and the bands' labels read at AA, however faded the nodes and bands they name.
    assert faint_graph_words(page) == []
    shot(page, "context-tab")

    # Diff two contexts by clicking: the button, then a node of another branch on the graph.
    tree = Session.open(next(live_server.root.rglob(f"*{LARGE}.jsonl"))).tree
    active = tree.conversation_leaf(tree.active_leaf)
    other = next(x for x in tree.leaves() if x != active and page.locator(f"#graph svg g.node[id='{dom_id(x)}']").count())
    page.get_by_role("button", name="Diff with a node you click…").click()
    expect(page.locator(".cx-diff-pick")).to_have_attribute("aria-pressed", "true")
    expect(page.locator(".cx-diff-pick")).to_have_text("Click a node to diff with… (Esc cancels)")
    shot(page, "diff-pick")
    page.locator(f"#graph svg g.node[id='{dom_id(other)}'] a").first.click()
    expect(page).to_have_url(re.compile(r"/context/diff\?a=.*&b="))
    expect(page.locator(".cx-intro").first).to_contain_text("messages in both")
    assert f"b={other}" in page.url and f"a={active}" in page.url
    shot(page, "context-diff")

    # Before and after the compaction in force, and its buttons at AA contrast.
    page.go_back()
    page.locator("#before-after-link").click()
    expect(page.get_by_role("link", name="As a diff")).to_be_visible()
    expect(page.get_by_role("link", name="Lost in compaction")).to_be_visible()
    assert low_contrast(page) == []
    shot(page, "before-after")

    # The compaction preview keeps the compactions already there whole, and its cut is red.
    page.goto(f"{live_server.url}{rel}?tab=compact")
    expect(page.locator("#graph svg.compact-mode")).to_be_visible()
    expect(page.locator("#graph svg g.node.cp-cut").first).to_be_attached()
    compactions = page.locator("#graph svg g.node.t-compaction")
    assert compactions.count() == 3
    for i in range(3):
        assert compactions.nth(i).evaluate("g => getComputedStyle(g).opacity") == "1"
    cut = page.locator("#graph svg g.node.cp-cut").first.locator("polygon, path").first
    assert cut.evaluate("p => getComputedStyle(p).stroke") == "rgb(220, 38, 38)"
    expect(page.locator("#panel")).to_contain_text("red is the cut point")
    shot(page, "compaction-preview")

    # Another agent's session: its types read as words on the graph.
    folder = sessions_root / "-home-ana-claude"
    folder.mkdir()
    shutil.copy(FIXTURES / "claude-code" / "agent-sessions_claude_small.jsonl", folder / "small.jsonl")
    page.goto(f"{live_server.url}/s/-home-ana-claude/small.jsonl?collapse=off")
    expect(page.locator("#graph svg")).to_be_visible()
    words = " ".join(page.locator("#graph svg g.node text").all_text_contents())
    assert "stop hook summary" in words
    assert "custom:" not in words and "claude-code/" not in words and "stop_hook" not in words
    shot(page, "readable-types")


# -- the demo ---------------------------------------------------------------------------------------


def test_the_demo_shows_the_winner_first_presents_prints_and_exports_it(sessions_root, live_server, at_720, tmp_path):
    page, shot = at_720, Shots(tmp_path, "demo")
    rel = live_server.rel(LARGE)
    file = next(live_server.root.rglob(f"*{LARGE}.jsonl"))
    tree = Session.open(file).tree
    drawn = {e.id for e in build_layout(tree, "skeleton").nodes}
    winner = next(x for x in tree.leaves() if x not in drawn)  # a branch the skeleton would group away
    give_verdict(Session.open(file), winner, "winner", "the one to show")
    name = branch_name(Session.open(file).tree, winner, 80)  # (what every view calls it)

    # The overview draws it at Fit.
    page.goto(f"{live_server.url}{rel}")
    fit(page)
    node = page.locator(f"#graph svg g.node[id='{dom_id(winner)}']")
    expect(node).to_be_visible()
    expect(node.locator("text.winner-badge")).to_have_text("★ winner")  # the drawing says which it is
    shot(page, "overview-winner")
    assert inside(node.locator("text").first.bounding_box(), page.locator("#graph .graph-svg").bounding_box())

    # Its transcript, then the presenter: the branch drawn whole, text from afar, no node cut.
    page.goto(f"{live_server.url}{rel}?node={winner}&tab=transcript")
    page.get_by_role("link", name="Present").click()
    expect(page.locator(".present-pos")).to_contain_text("Turn 1 of")
    expect(page.locator(".present-graph g.node.here").first).to_be_visible()
    seen = page.evaluate("""() => { const pane = document.querySelector('.present-graph').getBoundingClientRect();
      const px = [...document.querySelectorAll('.present-graph svg g.node text')].map(t => parseFloat(getComputedStyle(t).fontSize) * t.getScreenCTM().a);
      const cut = [...document.querySelectorAll('.present-graph g.node')].filter(g => getComputedStyle(g).visibility !== 'hidden')
        .map(g => g.getBoundingClientRect()).filter(b => (b.left < pane.left && b.right > pane.left) || (b.left < pane.right && b.right > pane.right)
          || (b.top < pane.top && b.bottom > pane.top) || (b.top < pane.bottom && b.bottom > pane.bottom));
      return {smallest: Math.min(...px), cut: cut.length, ids: [...document.querySelectorAll('.present-graph g.node')].map(g => g.id)}; }""")
    assert seen["smallest"] >= 13.99 and seen["cut"] == 0 and dom_id(winner) in seen["ids"]
    assert low_contrast(page, ".present-controls a.button") == []
    shot(page, "presenter")
    page.keyboard.press("ArrowRight")
    expect(page.locator(".present-pos")).to_contain_text("Turn 2 of")
    shot(page, "presenter-turn-2")

    # Print: every fold printed open, the verdict in the title block, no fields of the machinery.
    page.goto(f"{live_server.url}{rel}?node={winner}&tab=transcript")
    page.get_by_role("link", name="Print").click()
    page.get_by_role("button", name="Open the print view").click()  # (after the redaction review: paper is shared too)
    page.emulate_media(media="print")
    title = page.locator(".print-title")
    expect(title.locator(".verdict-winner")).to_have_text("winner")
    expect(title).to_contain_text("the one to show")
    results = page.locator(".t-result")
    assert results.count() > 10
    for i in (0, results.count() // 2, results.count() - 1):
        expect(results.nth(i).locator("pre").first).to_be_visible()  # (folded on screen, open on paper)
    expect(page.locator("details.thinking pre, details.thinking .markdown").first).to_be_visible()
    shot(page, "print")
    page.emulate_media(media="screen")
    page.goto(f"{live_server.url}{live_server.rel(RICH)}/print?reviewed=1")
    page.emulate_media(media="print")
    internal = page.locator(".fields.internal")
    assert internal.count() >= 1  # (the sample's custom message, with its type and display flag)
    expect(internal.first).to_be_hidden()
    text = page.locator("main").inner_text()
    assert "custom type" not in text and "(folded)" not in text
    page.emulate_media(media="screen")

    # The export opens on the winner, with its verdict.
    page.goto(f"{live_server.url}{rel}?node={winner}&tab=transcript")
    page.get_by_role("link", name="Export session").click()
    with page.expect_download() as got:
        page.get_by_role("button", name="Download the export").click()
    saved = tmp_path / "export.html"
    got.value.save_as(saved)
    page.goto(saved.as_uri())
    first = page.locator("section.branch#b-0")
    expect(first).to_contain_text(f"ends at {winner[-8:]}")
    expect(first.locator(".verdict-winner").first).to_have_text("winner")
    expect(first.locator("h2").first).to_have_text(f"Branch 1: {name}")
    shot(page, "export")

    # A session too big for one drawing: the banner counts what is left out, above the drawing.
    header, entries = many_branches_session(700, trunk=600, seed=16)
    write_jsonl(sessions_root / "--home-ana-projects-big--" / "big.jsonl", header, entries)
    big = Session.open(sessions_root / "--home-ana-projects-big--" / "big.jsonl").tree
    page.goto(f"{live_server.url}/s/--home-ana-projects-big--/big.jsonl?collapse=auto")
    banner = page.locator(".graph-banner")
    expect(banner).to_contain_text("side branches are left out")
    box = banner.bounding_box()
    overlapped = page.evaluate("""(b) => [...document.querySelectorAll('#graph svg g.node')].map(g => g.getBoundingClientRect())
      .filter(r => r.left < b.x + b.width && b.x < r.right && r.top < b.y + b.height && b.y < r.bottom).length""", box)
    assert overlapped == 0
    expect(page.locator("#stats")).to_contain_text(f"{len(big.leaves()):,} branches")
    shot(page, "big-session-banner")
