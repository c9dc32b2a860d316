"""An export renders its first screens on the server and holds every entry once as data for its
script: what the server leaves out is said, the data cannot end its block, and redaction reaches
the data too."""

from __future__ import annotations

import re
from html import escape

import orjson

from tests.conftest import Builder
from tests.export_fixture import HOSTILE, HOSTILE_ID, write_long_hostile_session
from tests.redaction_fixture import SECRETS, leaked, write_secret_session
from webapp.core.session import Session
from webapp.web import export
from webapp.web.app import create_app, export_session


def data_of(html: str) -> dict:
    block = re.search(r'<script type="application/json" id="export-data">(.*?)</script>', html, re.S)
    return orjson.loads(block.group(1))


def test_the_first_screens_are_html_and_every_entry_is_data_once(tmp_path):
    path = tmp_path / "long.jsonl"
    ids = write_long_hostile_session(path)
    html = export_session(path)
    tree = Session.open(path).tree
    data = data_of(html)
    assert sorted(data["ids"]) == sorted(e.id for e in tree.entries)
    assert len(set(data["ids"])) == len(data["ids"])  # one copy of each
    part = data["blocks"][0]
    assert part["shown"] == export.SERVER_ITEMS and len(part["entries"]) == len(data["ids"])
    page = html.split("<main")[1].split('id="export-data"')[0]  # (the drawing and the text tree name every entry)
    assert page.count('<li class="t-item') == 60  # the model change, then 30 questions and 29 answers
    assert "Filler question 30" in page and "Filler answer 30" not in page
    for entry_id in ids.values():  # the hostile entries come only as data
        assert not re.search(r'<li [^>]*data-entry="' + re.escape(escape(entry_id)) + '"', page), entry_id
    # with scripts off the page says what it leaves out
    assert re.search(r'id="export-partial" role="note">Without scripts this page shows its first 60 entries; '
                     r"the other 47 are held in this file", html)
    more = re.search(r'<p class="export-more muted" data-block="b-0">((?:<span id="[^"]+"></span>)*)47 more entries of this part: '
                     r"they need scripts", html)
    assert f'<span id="t-e-{ids["last"]}"></span>' in more.group(1)  # where the text tree's link to it lands
    # no text of the session ends the data block or opens a tag in it
    raw = html.split('id="export-data">')[1].split("</script>")[0]
    assert "<" not in raw and "\\u003c/script" in raw
    entries = {i: e for i, e in zip(data["ids"], data["entries"])}
    assert entries[HOSTILE_ID]["message"]["content"] == HOSTILE["user"]  # and it reads back exactly
    assert data["dom"][str(data["ids"].index(HOSTILE_ID))].startswith("x-")  # an id unfit for HTML gets a made one
    assert data["labels"][ids["link"]] == HOSTILE["label"]


def test_a_small_session_is_rendered_whole_on_the_server(tmp_path):
    path = tmp_path / "short.jsonl"
    write_secret_session(path)
    html = export_session(path)
    assert 'id="export-partial"' not in html and "export-more" not in html.split("<main")[1].split("<script")[0]
    assert data_of(html)["blocks"][0]["shown"] == len(data_of(html)["blocks"][0]["entries"])


def test_redaction_reaches_the_entries_held_as_data(tmp_path, monkeypatch):
    monkeypatch.setattr(export, "SERVER_ITEMS", 0)  # every entry only as data
    root = tmp_path / "sessions"
    (root / "--proj--").mkdir(parents=True)
    write_secret_session(root / "--proj--" / "s.jsonl")
    r = create_app(root).test_client().get("/s/--proj--/s.jsonl/export?redact=1&reviewed=1")
    assert r.status_code == 200 and '<li class="t-item' not in r.text.split('id="export-data"')[0]
    assert leaked(r.data) == []
    data = orjson.dumps(data_of(r.text)["entries"]).decode()
    assert "[REDACTED:aws-key#1]" in data and "[REDACTED:github-token#1]" in data and "[REDACTED:private-key#1]" in data
    plain = create_app(root).test_client().get("/s/--proj--/s.jsonl/export?reviewed=1")
    assert SECRETS["aws-key"] in orjson.dumps(data_of(plain.text)["entries"]).decode()  # (unredacted, it is there)


def test_the_branches_after_the_first_screens_are_left_to_the_script_whole(tmp_path):
    b = Builder()
    fork = b.user("Where the branches part")
    for n in range(40):
        b.assistant("", calls=[{"id": f"c{n}", "name": "bash", "arguments": {"command": f"step {n}"}}])
        b.tool_result(f"c{n}", f"output {n}", name="bash")
    for way in ("Another way", "A third way"):  # (the last one written is the active branch: the page's first)
        b.add("message", parent=fork, message={"role": "assistant", "content": [{"type": "text", "text": way}]})
        b.user(f"And on from {way}")
    data = data_of(export_session(b.write(tmp_path / "forked.jsonl")))
    active, long, side = data["blocks"]
    assert active["shown"] == len(active["entries"]) == 3
    assert long["shown"] == 58 and data["kinds"][long["entries"][57]] == "tool"  # (the server's cut never parts a call from its result)
    assert side["shown"] == 0 and len(side["entries"]) == 2  # the first screens spent: all of it left to the script


def test_text_that_looks_like_the_data_slot_stays_text(tmp_path):
    b = Builder()
    b.user("before \x00export-data\x00 after")  # (what the page puts where the data goes)
    b.assistant("ok")
    html = export_session(b.write(tmp_path / "slot.jsonl"))
    assert data_of(html)["entries"][0]["message"]["content"] == "before \x00export-data\x00 after"
    assert "before \x00export-data\x00 after" in html.split("<main")[1].split('id="export-data"')[0]
