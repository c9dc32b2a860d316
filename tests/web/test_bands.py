"""The compaction bands sent with the context overlay: per compaction on the path, what it
summarized and kept (as drawn nodes, folded ones standing for their members) and where it cut."""

from __future__ import annotations

import re

import orjson

from tests.conftest import Builder
from webapp.core.compaction import plan_compaction
from webapp.core.session import Session
from webapp.core.storage import MemoryStorage
from webapp.web import graph
from webapp.web.app import create_app
from webapp.web.bands import compaction_bands, preview_band


def two_compactions():
    """u1 a2 u3 a4 C5(keeps u3) u6 a7 C8(keeps u6) u9 a10, then C11 whose kept entry is elsewhere."""
    b = Builder()
    u1, a2, u3, a4 = b.user("one"), b.assistant("two"), b.user("three"), b.assistant("four")
    c5 = b.add("compaction", summary="s1", firstKeptEntryId=u3, tokensBefore=900)
    u6, a7 = b.user("six"), b.assistant("seven")
    c8 = b.add("compaction", summary="s2", firstKeptEntryId=u6, tokensBefore=800)
    u9, a10 = b.user("nine"), b.assistant("ten")
    return b, dict(u1=u1, a2=a2, u3=u3, a4=a4, c5=c5, u6=u6, a7=a7, c8=c8, u9=u9, a10=a10)


def bands_at(b: Builder, leaf: str, collapse: str = "off"):
    tree = Session(MemoryStorage(b.data())).tree
    layout = graph.build_layout(tree, collapse=collapse)
    return tree, layout, compaction_bands(tree, tree.path(leaf), layout)


def test_each_compaction_on_the_path_gets_its_summarized_and_kept_span_and_its_cut():
    b, e = two_compactions()
    _, _, bands = bands_at(b, e["a10"])
    first, second = bands
    d = graph.dom_id
    assert first["summarized"] == [d(e["u1"]), d(e["a2"])]
    assert first["kept"] == [d(e["u3"]), d(e["a4"])]
    assert first["cut"] == d(e["u3"]) and first["key"] == d(e["c5"])
    # The second one summarizes what the context held before its cut: the first one's kept part
    # and the first summary (an entry whose message leaves, as the Lost tab counts it), up to u6.
    assert second["summarized"] == [d(e["u3"]), d(e["a4"]), d(e["c5"])]
    assert second["kept"] == [d(e["u6"]), d(e["a7"])]
    assert second["cut"] == d(e["u6"])
    assert first["summaryLabels"][0].startswith("summarized by compaction") and "· 2 entries ·" in first["summaryLabels"][0]
    assert "· 3 entries ·" in second["summaryLabels"][0]
    assert first["keptLabels"][0] == "kept · 2 entries"
    assert second.get("latest") and not first.get("latest")


def test_a_path_that_stops_before_a_compaction_has_no_band_for_it():
    b, e = two_compactions()
    _, _, bands = bands_at(b, e["a7"])
    assert [x["key"] for x in bands] == [graph.dom_id(e["c5"])]
    _, _, bands = bands_at(b, e["a2"])
    assert bands == []


def test_a_compaction_that_keeps_nothing_on_the_path_summarizes_all_before_it():
    b = Builder()
    u1, a2 = b.user("one"), b.assistant("two")
    c3 = b.add("compaction", summary="s", firstKeptEntryId="gone", tokensBefore=10)
    u4 = b.user("four")
    _, _, (band,) = bands_at(b, u4)
    assert band["summarized"] == [graph.dom_id(u1), graph.dom_id(a2)]
    assert band["kept"] == [] and band["cut"] is None and band["key"] == graph.dom_id(c3)


def test_a_folded_span_names_the_turn_node_once_and_counts_its_members():
    b = Builder()
    u1 = b.user("go")
    work = [b.assistant(f"step {i}") for i in range(6)]
    u2 = b.user("next")
    b.assistant("done")
    c = b.add("compaction", summary="s", firstKeptEntryId=u2, tokensBefore=10)
    leaf = b.user("after")
    tree, layout, (band,) = bands_at(b, leaf, collapse="on")
    seg = layout.dom_for(work[0])
    assert seg.startswith("seg-") and all(layout.dom_for(w) == seg for w in work)
    assert band["summarized"] == [graph.dom_id(u1), seg]
    assert "· 7 entries ·" in band["summaryLabels"][0]
    assert band["cut"] == graph.dom_id(u2) and band["key"] == graph.dom_id(c)


def test_the_preview_band_runs_from_what_would_be_summarized_to_the_leaf():
    b = Builder()
    ids = []
    for i in range(6):
        ids.append(b.user(f"question {i} " + "words " * 200))
        ids.append(b.assistant(f"answer {i} " + "words " * 200))
    tree = Session(MemoryStorage(b.data())).tree
    layout = graph.build_layout(tree, collapse="off")
    plan = plan_compaction(tree, ids[-1], keep_recent_tokens=500)
    band = preview_band(plan, layout)
    cut = plan.first_kept_entry_id
    assert band["cut"] == graph.dom_id(cut)
    assert band["summarized"][0] == graph.dom_id(ids[0])
    assert band["kept"][0] == graph.dom_id(cut) and band["kept"][-1] == graph.dom_id(ids[-1])
    assert band["summaryLabels"][0].startswith("would be summarized")
    assert preview_band(plan_compaction(tree, ids[-1], keep_recent_tokens=10**6), layout) is None


def test_the_context_panel_sends_the_bands_of_hostile_ids_as_data(tmp_path):
    b = Builder()
    u1 = b.user("one")
    b.assistant("two")
    kept = b.user("three", id='k"</script><b>')
    b.add("compaction", id="</script><img src=x>", summary="s", firstKeptEntryId=kept, tokensBefore=10)
    leaf = b.user("after")
    (tmp_path / "--p--").mkdir()
    b.write(tmp_path / "--p--" / "s.jsonl")
    r = create_app(tmp_path).test_client().get(f"/s/--p--/s.jsonl/-/panel/context?node={leaf}", headers={"HX-Request": "true"})
    assert r.status_code == 200
    text = r.get_data(as_text=True)
    assert "<img src=x>" not in text and "</script><b>" not in text
    data = orjson.loads(re.search(r'<script type="application/json" id="overlay">(.*?)</script>', text, re.S).group(1))
    (band,) = data["context"]["bands"]
    assert band["summarized"][0] == graph.dom_id(u1) and band["cut"] == graph.dom_id(kept)
    assert band["kept"] == [graph.dom_id(kept)]
