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


def test_a_word_written_with_combining_accents_is_one_word_found_and_marked(tmp_path):
    """macOS writes names with their accents as combining marks (NFD): FTS5 reads "nai\u0308ve" as
    one word, `naive`, so a search for it, typed either way, finds both spellings' entries, and
    each snippet marks the whole word as written."""
    root = tmp_path / "root"
    session(root / "a", "composed", "/work/a", [("user", "the naïve plan"), ("assistant", "ok")])
    session(root / "a", "decomposed", "/work/a", [("user", "the nai\u0308ve plan"), ("assistant", "ok")])
    client = create_app(root, CORPUS_DB=tmp_path / "c.duckdb").test_client()
    for typed in ("naïve", "nai\u0308ve", "NAIVE"):
        page = client.get("/", query_string={"q": typed}).text
        assert sorted(h.split("?")[0] for h in hits(page)) == ["/s/a/composed.jsonl", "/s/a/decomposed.jsonl"], typed
        assert "<mark>naïve</mark>" in page and "<mark>nai\u0308ve</mark>" in page, typed


def test_each_hit_shows_its_own_entrys_text_in_a_session_read_with_its_sub_agents(tmp_path):
    """A Claude Code session is read with its sub-agents' transcripts, whose lines are numbered in
    their own files: the session's first line and its sub-agent's first line are both line 1 of
    the session's rows, and each hit's snippet is its own entry's text, not the other's."""
    import shutil

    from tests.conftest import FIXTURES

    root = tmp_path / "root"
    shop = root / "-home-ana-projects-shop"
    shop.mkdir(parents=True)
    session_id = "aaaaaaaa-0000-4000-8000-000000000001"
    source = FIXTURES / "conversations" / "claude-code" / "-home-ana-projects-shop"
    shutil.copyfile(source / f"{session_id}.jsonl", shop / f"{session_id}.jsonl")
    shutil.copytree(source / session_id, shop / session_id)
    page = create_app(root, CORPUS_DB=tmp_path / "c.duckdb").test_client().get("/?q=empty+carts").text
    shown = {unescape(link).split("node=")[1]: re.sub(r"<[^>]+>", "", unescape(text)) for link, text in re.findall(
        r'<a class="hit-open" href="([^"]+)".*?<div class="snippet">(.*?)</div>', page, re.S)}
    assert shown["0000000a-0000-4000-8000-000000000001"] == "Why does checkout fail for empty carts?"  # the session's line 1
    assert shown["000000af-0000-4000-8000-000000000001"] == "Check that total() handles empty carts"  # its sub-agent's line 1


def _pi_file(path, sid, entries, parent_session=None):
    """A pi session file of `entries` ((id, parent, role, text) each, at one time apiece), forked
    from `parent_session` when given (pi's `/fork`: the entries it goes on from copied with their
    ids, parents and times)."""
    header = {"type": "session", "version": 3, "id": sid, "timestamp": "2026-03-04T05:06:07.000Z", "cwd": "/work/fork"}
    if parent_session:
        header["parentSession"] = str(parent_session)
    lines = [header]
    for n, (eid, parent, role, text) in enumerate(entries):
        msg = {"role": role, "content": [{"type": "text", "text": text}]}
        if role == "assistant":
            msg.update(model="m", provider="p", stopReason="stop")
        lines.append({"type": "message", "id": eid, "parentId": parent, "message": msg,
                      "timestamp": f"2026-03-04T05:{n:02d}:00.000Z"})
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(b"".join(orjson.dumps(x) + b"\n" for x in lines))


def _forked(tmp_path):
    """A conversation over three files (an original and two forks of it, each copying the first
    two entries) beside an unrelated session whose entry has the same id and time as the first."""
    root = tmp_path / "root"
    said = [("e0", None, "user", "wombat one"), ("e1", "e0", "assistant", "wombat two")]
    first = root / "p" / "2026-03-04T05-00-00-000Z_a.jsonl"
    _pi_file(first, "a", [*said, ("e2", "e1", "user", "wombat three in the first")])
    _pi_file(root / "p" / "2026-03-04T06-00-00-000Z_b.jsonl", "b", [*said, ("f2", "e1", "user", "wombat in a fork")],
             parent_session=first)
    _pi_file(root / "p" / "2026-03-04T07-00-00-000Z_c.jsonl", "c", [*said, ("g2", "e1", "user", "another fork")],
             parent_session=first)
    _pi_file(root / "q" / "other.jsonl", "o", [("e0", None, "user", "a wombat elsewhere")])
    return root


def test_an_entry_forks_copied_is_one_hit_that_names_the_other_files_of_its_conversation(tmp_path):
    root = _forked(tmp_path)
    client = create_app(root, CORPUS_DB=tmp_path / "c.duckdb").test_client()
    page = client.get("/?q=wombat").text
    found = hits(page)
    # each entry once: e0 and e1 from the file they were first written in, not again from each fork
    assert sorted(found) == ["/s/p/2026-03-04T05-00-00-000Z_a.jsonl?node=e0",
                             "/s/p/2026-03-04T05-00-00-000Z_a.jsonl?node=e1",
                             "/s/p/2026-03-04T05-00-00-000Z_a.jsonl?node=e2",
                             "/s/p/2026-03-04T06-00-00-000Z_b.jsonl?node=f2",
                             "/s/q/other.jsonl?node=e0"]  # (the same id and time in another conversation)
    assert page.count("Also in 2 other files of this conversation") == 2
    also = re.findall(r'<p class="also-in">.*?</p>', page, re.S)
    assert all(re.findall(r'href="([^"]+)"', a) == [f"/s/p/2026-03-04T06-00-00-000Z_b.jsonl?node={e}",
                                                   f"/s/p/2026-03-04T07-00-00-000Z_c.jsonl?node={e}"]
               for a, e in zip(also, ("e0", "e1")) if f"node={e}" in a) and len(also) == 2
    for link in also:  # each names a copy that opens on that entry
        for href in re.findall(r'href="([^"]+)"', link):
            assert client.get(unescape(href)).status_code == 200


def test_pages_of_hits_list_each_entry_of_a_conversation_once(tmp_path, monkeypatch):
    from webapp.corpus.db import Index
    from webapp.corpus.search import RANKED, search
    from webapp.corpus.text import text_path

    root = _forked(tmp_path)
    index = Index(tmp_path / "c.duckdb")
    index.build([root])
    for ranked in (True, False):  # ranked; too many to rank (the latest first)
        monkeypatch.setattr("webapp.corpus.search.RANKED", RANKED if ranked else 0)
        seen, offset = [], 0
        while True:  # two hits a page
            got = search(text_path(index.path), index.cursor(), "wombat", limit=2, offset=offset)
            assert got.ranked is ranked and got.matches == 9  # (the entries of every file, copies included)
            seen += [(h.file.rsplit("/", 1)[-1], h.entry_id, len(h.also_in)) for h in got.hits]
            offset += 2
            if not got.more:
                break
        ids = sorted((f == "other.jsonl", e, also) for f, e, also in seen)
        assert ids == [(False, "e0", 2), (False, "e1", 2), (False, "e2", 0), (False, "f2", 0), (True, "e0", 0)], ranked
        if ranked:  # (copies rank as equals: the one written first comes first)
            assert {f for f, e, _ in seen if e in ("e0", "e1")} == {"2026-03-04T05-00-00-000Z_a.jsonl", "other.jsonl"}
    index.close()


def test_search_on_the_command_line_names_the_copies_too(tmp_path, capsys):
    from webapp.cli import main

    root = _forked(tmp_path)
    assert main(["search", "wombat", str(root), "--db", str(tmp_path / "c.duckdb"), "--json"]) == 0
    rows = orjson.loads(capsys.readouterr().out)
    by = {(r["path"].rsplit("/", 1)[-1], r["entryId"]): r["alsoIn"] for r in rows}
    assert by == {("2026-03-04T05-00-00-000Z_a.jsonl", "e0"): [str(root / "p" / "2026-03-04T06-00-00-000Z_b.jsonl"),
                                                               str(root / "p" / "2026-03-04T07-00-00-000Z_c.jsonl")],
                  ("2026-03-04T05-00-00-000Z_a.jsonl", "e1"): [str(root / "p" / "2026-03-04T06-00-00-000Z_b.jsonl"),
                                                               str(root / "p" / "2026-03-04T07-00-00-000Z_c.jsonl")],
                  ("2026-03-04T05-00-00-000Z_a.jsonl", "e2"): [], ("2026-03-04T06-00-00-000Z_b.jsonl", "f2"): [],
                  ("other.jsonl", "e0"): []}
    assert main(["search", "wombat", str(root), "--db", str(tmp_path / "c.duckdb")]) == 0
    assert capsys.readouterr().out.count("also in 2 other files of this conversation: ") == 2
