"""Search across every session from the index page: ranked hits, filters, escaped snippets."""

from __future__ import annotations

import re
from html import unescape

import orjson

from webapp.web.app import create_app


def session(folder, name, cwd, messages, model="model-a", ts="2026-03-04T05:06:07.000Z"):
    folder.mkdir(parents=True, exist_ok=True)
    lines = [{"type": "session", "version": 3, "id": name, "timestamp": ts, "cwd": cwd}]
    parent = None
    for i, (role, text) in enumerate(messages):
        msg = {"role": role, "content": [{"type": "text", "text": text}]}
        if role == "assistant":
            msg.update(model=model, provider="p", stopReason="stop")
        if role == "toolResult":
            msg.update(toolCallId="c1", toolName="bash", isError=False)
        lines.append({"type": "message", "id": f"{name}-{i}", "parentId": parent, "timestamp": ts, "message": msg})
        parent = f"{name}-{i}"
    (folder / f"{name}.jsonl").write_bytes(b"".join(orjson.dumps(x) + b"\n" for x in lines))


def hits(html: str) -> list[str]:
    return [unescape(h) for h in re.findall(r'<a class="hit-open" href="([^"]+)"', html)]


def make_app(tmp_path):
    root = tmp_path / "root"
    filler = " ".join(f"word{i}" for i in range(300))
    session(root / "a", "often", "/work/alpha", [("user", "wombat wombat wombat"), ("assistant", "fine")])
    session(root / "a", "once", "/work/alpha", [("user", f"{filler} wombat {filler}"), ("assistant", "ok")])
    session(root / "b", "tool", "/work/beta", [("user", "run it"), ("toolResult", "wombat in the output <b>x</b>")],
            ts="2025-01-01T00:00:00.000Z")
    session(root / "b", "other", "/work/beta", [("user", "nothing here"), ("assistant", "a wombat answer")],
            model="model-b")
    return create_app(root, CORPUS_DB=tmp_path / "c.duckdb")


def test_hits_are_ranked_and_open_the_entry_in_its_session(tmp_path):
    client = make_app(tmp_path).test_client()
    page = client.get("/?q=wombat").text
    found = hits(page)
    assert len(found) == 4
    assert found[0] == "/s/a/often.jsonl?node=often-0"  # three mentions in a short text rank first
    assert found.index("/s/a/once.jsonl?node=once-0") == 3  # one mention in a long text ranks last
    opened = client.get(found[0])
    assert opened.status_code == 200 and "often-0" in opened.text
    assert "<mark>wombat</mark>" in page


def test_the_snippet_is_escaped(tmp_path):
    page = make_app(tmp_path).test_client().get("/?q=output").text
    assert "&lt;b&gt;x&lt;/b&gt;" in page and "<b>x</b>" not in page


def test_filters_narrow_the_hits(tmp_path):
    client = make_app(tmp_path).test_client()

    def found(**args):
        return sorted(h.split("?")[0] for h in hits(client.get("/", query_string={"q": "wombat", **args}).text))

    assert found(output="only") == ["/s/b/tool.jsonl"]
    assert found(output="none", project="beta") == ["/s/b/other.jsonl"]
    assert found(model="model-b") == ["/s/b/other.jsonl"]
    assert found(role="assistant") == ["/s/b/other.jsonl"]
    assert found(until="2025-06-01") == ["/s/b/tool.jsonl"]
    assert found(since="2026-01-01", role="user") == ["/s/a/often.jsonl", "/s/a/once.jsonl"]
    assert found(agent="codex") == []
    assert client.get("/?q=wombat&since=yesterday").status_code == 400


def test_words_are_never_search_syntax(tmp_path):
    client = make_app(tmp_path).test_client()
    for q in ('wombat"', "wombat*", "(wombat", "-wombat", "wombat:"):
        r = client.get("/", query_string={"q": q})
        assert r.status_code == 200 and len(hits(r.text)) == 4, q
    for q in ("wombat AND", "NOT wombat", "wombat OR"):  # words like any other: every one must appear
        r = client.get("/", query_string={"q": q})
        assert r.status_code == 200 and "could not run" not in r.text and hits(r.text) == [], q


def test_too_many_matches_to_rank_are_the_latest_first_and_say_so(tmp_path, monkeypatch):
    monkeypatch.setattr("webapp.corpus.search.RANKED", 2)
    page = make_app(tmp_path).test_client().get("/?q=wombat").text
    assert "4 entries hold every word: too many to rank" in page
    assert len(hits(page)) == 4


def test_a_word_asked_again_is_asked_once_and_past_32_words_the_page_says_what_was_left_out(tmp_path):
    from webapp.corpus.text import MAX_TERMS, match_query

    # (one common word typed 5,000 times held a page for 40 s: every repeat read its every entry)
    assert match_query("wombat " * 5000) == '"wombat"'
    assert match_query('wombat "in the" Wombat "In the" x') == '"wombat" AND "in the" AND "x"'
    client = make_app(tmp_path).test_client()
    filler = [f"word{i}" for i in range(MAX_TERMS + 5)]  # each in "once"'s first message
    page = client.get("/", query_string={"q": " ".join(["wombat", *filler[:MAX_TERMS - 1]])}).text
    assert hits(page) == ["/s/a/once.jsonl?node=once-0"] and "Only the first" not in page
    page = client.get("/", query_string={"q": " ".join(["wombat", *filler, "nowhere"])}).text
    assert hits(page) == ["/s/a/once.jsonl?node=once-0"]  # the words past the first 32 are not asked for
    assert "Only the first 32 words are searched: 7 words after them are left out." in page
    said = re.search(r"<h2>Entries mentioning “([^”]*)”", page).group(1)  # (a long query, shortened)
    assert said.startswith("wombat word0 word1") and said.endswith("…") and len(said) <= 81
