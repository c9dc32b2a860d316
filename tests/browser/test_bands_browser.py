"""Compaction bands as a person sees them at 1280x720: beside the selected path, a bracket over
what each compaction summarized, one over what it kept, a dashed line across the path at its
cut; covering no node, no label, no badge; redrawn on a selection change without a new layout."""

from __future__ import annotations

import re
import shutil
from pathlib import Path

import pytest
from playwright.sync_api import expect

from tests.browser.conftest import overlapping_marks
from webapp.core.entries import COMPACTION, short_id
from webapp.core.messages import entry_messages
from webapp.core.reader import first_kept_id
from webapp.core.session import Session

RICH = "019cadd3-8025-7970-85d9-5954058b4714"
ONE_COMPACTION_LEAF = "019cadee-2dfc-787f-b0bc-3fe317eec43c"  # the branch that has only the first one
PI_TWO = Path(__file__).resolve().parents[1] / "fixtures" / "pi" / "pi-mono_before-compaction.jsonl"

# Per band the overlay names: is it drawn, its labels, and whether its brackets span their
# nodes along the path and its cut line lies between the last summarized node and the first
# kept one, across the whole width of that node.
_BANDS = """(lr) => {
  const o = JSON.parse(document.getElementById('overlay').textContent);
  const spec = (o.context || o.compact || {}).bands || [];
  const box = (id) => document.getElementById(id).querySelector('polygon, path, ellipse').getBoundingClientRect();
  const [A0, A1, C0, C1] = lr ? ['left', 'right', 'top', 'bottom'] : ['top', 'bottom', 'left', 'right'];
  const lo = (bs) => Math.min(...bs.map((b) => b[A0])), hi = (bs) => Math.max(...bs.map((b) => b[A1]));
  return spec.map((b) => {
    const g = document.querySelector(`#graph g.band[data-band="${b.key}"]`);
    if (!g) return { key: b.key, drawn: false };
    const out = { key: b.key, drawn: true, latest: g.classList.contains('latest'),
                  labels: [...g.querySelectorAll('text')].map((t) => t.textContent) };
    const S = b.summarized.map(box), K = b.kept.map(box);
    const sum = g.querySelector('.band-sum .band-bg'), kept = g.querySelector('.band-kept .band-bg');
    if (S.length) { const r = sum.getBoundingClientRect(); out.sumSpans = r[A0] <= lo(S) + 1 && r[A1] >= hi(S) - 1; }
    if (K.length) { const r = kept.getBoundingClientRect(); out.keptSpans = r[A0] <= lo(K) + 1 && r[A1] >= hi(K) - 1; }
    const line = g.querySelector('.band-cut line');
    if (line && b.cut) {
      const l = line.getBoundingClientRect(), c = box(b.cut), at = l[A0];
      out.cutBetween = at <= c[A0] && (!S.length || at >= hi(S));
      out.cutAcross = l[C0] <= c[C0] && l[C1] >= c[C1];
    }
    return out;
  });
}"""


def bands(page, lr: bool = False) -> list[dict]:
    return page.evaluate(_BANDS, lr)


def tree_of(live_server, name):
    return Session.open(live_server.root / live_server.rel(name)[3:]).tree


def expected_labels(tree, leaf) -> list[tuple[str, str]]:
    """(summarized, kept) label starts per compaction on the path to `leaf`, counted here from
    the path: a compaction summarizes from the previous one's kept entry to its own; the entries
    counted are those whose messages leave the context (an earlier compaction's summary is one,
    a settings entry none)."""
    path = tree.path(leaf)
    at = {e.id: i for i, e in enumerate(path)}
    out, start = [], 0
    for i, e in enumerate(path):
        if e.type == COMPACTION:
            k = at[first_kept_id(e)]
            summarized = sum(1 for x in path[start:k] if x.type == COMPACTION or entry_messages(x))
            kept = sum(1 for x in path[k:i] if x.type != COMPACTION and entry_messages(x))
            out.append((f"summarized by compaction {short_id(e.id)} · {summarized} entries", f"kept · {kept} entries"))
            start = k
    return out


def assert_reads(page, found: list[dict]) -> None:
    for b in found:
        assert b["drawn"], b
        assert all(b.get(k, True) for k in ("sumSpans", "keptSpans", "cutBetween", "cutAcross")), b
    assert overlapping_marks(page) == []


@pytest.mark.parametrize("direction", ["TB", "LR"])
def test_two_compactions_on_the_path_get_two_bands_that_cover_nothing(live_server, page, console, direction):
    page.set_viewport_size({"width": 1280, "height": 720})
    page.goto(live_server.url + live_server.rel(RICH) + f"?collapse=auto&tab=context&dir={direction}")  # by turns
    expect(page.locator("#graph g.band")).to_have_count(2)
    found = bands(page, direction == "LR")
    assert_reads(page, found)
    assert [b["latest"] for b in found] == [False, True]
    tree = tree_of(live_server, RICH)
    for b, (summarized, kept) in zip(found, expected_labels(tree, tree.conversation_leaf(tree.active_leaf))):
        assert any(t.startswith(summarized) for t in b["labels"]), (summarized, b["labels"])
        assert kept in b["labels"]
    assert page.locator("#graph .band-cut line").count() == 2
    page.locator(".legend-box summary").click()  # the legend opens on demand
    for chip in ("summarized span", "kept span", "cut"):
        expect(page.locator(".legend .lg.band", has_text=chip)).to_be_visible()


def test_bands_on_a_folded_path_count_the_entries_its_turns_hold(live_server, page, console):
    folder = live_server.root / "--pi-mono--"
    folder.mkdir()
    shutil.copy(PI_TWO, folder / PI_TWO.name)
    page.set_viewport_size({"width": 1280, "height": 720})
    page.goto(live_server.url + live_server.rel("pi-mono_before") + "?collapse=auto&tab=context")  # by turns
    expect(page.locator("#graph g.band")).to_have_count(2)
    folded = page.evaluate("() => JSON.parse(document.getElementById('overlay').textContent).context.bands"
                           ".flatMap((b) => b.summarized).filter((id) => id.startsWith('seg-')).length")
    assert folded > 0  # the spans run through folded turns
    found = bands(page)
    assert_reads(page, found)
    tree = tree_of(live_server, "pi-mono_before")
    for b, (summarized, _) in zip(found, expected_labels(tree, tree.conversation_leaf(tree.active_leaf))):
        assert any(t.startswith(summarized) for t in b["labels"]), (summarized, b["labels"])


def test_a_selection_change_redraws_the_bands_for_its_path_without_a_new_drawing(live_server, page, console):
    page.set_viewport_size({"width": 1280, "height": 720})
    page.goto(live_server.url + live_server.rel(RICH) + f"?collapse=auto&tab=context&node={ONE_COMPACTION_LEAF}")  # by turns
    expect(page.locator("#graph g.band")).to_have_count(1)
    assert_reads(page, bands(page))
    page.evaluate("() => { document.querySelector('#graph svg').dataset.probe = 'same drawing'; }")
    page.locator("#graph").focus()
    page.keyboard.press("Home")  # the root: before any compaction
    expect(page.locator("#context-panel")).to_have_attribute("data-entry", tree_of(live_server, RICH).roots[0])
    expect(page.locator("#graph g.band")).to_have_count(0)
    expect(page.locator(".legend .lg.band").first).to_be_hidden()
    page.keyboard.press("End")  # the active leaf, in the Node tab: no bands there
    expect(page.locator("#node-panel")).to_be_visible()
    expect(page.locator("#graph g.band")).to_have_count(0)
    page.locator("#panel .tabs a", has_text="Context").click()
    expect(page.locator("#graph g.band")).to_have_count(2)
    assert_reads(page, bands(page))
    assert page.evaluate("() => document.querySelector('#graph svg').dataset.probe") == "same drawing"


def test_the_compaction_preview_draws_the_band_it_would_make(live_server, page, console):
    page.set_viewport_size({"width": 1280, "height": 720})
    page.goto(live_server.url + live_server.rel(RICH) + "?collapse=auto&tab=compact&keep_recent_tokens=200")  # by turns
    band = page.locator('#graph g.band[data-band="preview"]')
    expect(band).to_have_count(1)
    expect(band.locator("text").first).to_have_text(re.compile(r"^would be summarized"))
    found = bands(page)
    assert_reads(page, found)
    # The dashed line crosses the node the preview marks as its cut point.
    cut = page.evaluate("() => JSON.parse(document.getElementById('overlay').textContent).compact.cut")
    expect(page.locator(f'#graph g.node[id="{cut}"]')).to_have_class(re.compile("cp-cut"))
    assert found[0]["cutAcross"] and found[0]["cutBetween"]


def test_the_three_compactions_of_the_large_sample_give_three_bands_that_cover_nothing(live_server, page, console):
    large = "019c6579-1ae3-78f7-9da1-494c73cf256d"
    page.set_viewport_size({"width": 1280, "height": 720})
    page.goto(live_server.url + live_server.rel(large) + "?collapse=auto&tab=context")  # by turns
    expect(page.locator("#graph g.band")).to_have_count(3)
    found = bands(page)
    assert_reads(page, found)
    assert [b["latest"] for b in found] == [False, False, True]
