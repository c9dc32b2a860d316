"""Byte budgets: a 20 MB message and 10 MB of garbage lines never make a big response;
what is cut is reachable through "N more" links that page through the rest."""

from __future__ import annotations

import re
from html import unescape

import pytest

from tests.conftest import Builder
from webapp.web.app import create_app

BIG = 20_000_000
LIMIT = 3_000_000  # bytes: every response of these files stays under this


@pytest.fixture(scope="module")
def big(tmp_path_factory):
    root = tmp_path_factory.mktemp("budgets")
    b = Builder()
    b.user("start")
    # one 20 MB user message with many lines, and a tool result of 20 MB on one line
    b.user("".join(f"line {i:07d} of the long message\n" for i in range(BIG // 32)), id="huge")
    b.assistant("", calls=[{"id": "c1", "name": "bash", "arguments": {"command": "cat big"}}], id="call")
    b.tool_result("c1", "x" * BIG, name="bash", id="out")
    b.assistant("done", id="last")
    b.write(root / "big.jsonl")
    g = Builder()
    g.user("hello", id="u1")
    g.lines += [b"garbage " + str(i).encode() + b" " + b"#" * 90 for i in range(100_000)]  # 10 MB
    g.lines.append(b"{" + b"z" * 200_000)  # one bad line longer than a page
    g.write(root / "garbage.jsonl")
    client = create_app(root).test_client()
    return client


HX = {"HX-Request": "true"}


def get(client, url, fragment=False):
    r = client.get(url, headers=HX if fragment else {})
    assert r.status_code == 200, (url, r.status_code)
    assert len(r.data) < LIMIT, (url, len(r.data))
    return r.get_data(as_text=True)


@pytest.mark.parametrize("url,fragment", [
    ("/s/big.jsonl?node=huge", False),
    ("/s/big.jsonl?node=out", False),
    ("/s/big.jsonl/-/panel/node?node=huge", True),
    ("/s/big.jsonl/-/panel/context?node=last", True),
    ("/s/big.jsonl?node=last&tab=context", False),
    ("/s/big.jsonl/-/raw?id=huge", True),
    ("/s/big.jsonl/-/raw?id=out", False),
    ("/s/big.jsonl/compare/turn?tip=last&start=huge", True),
    ("/s/big.jsonl/compare?ids=last,huge", False),
    ("/s/big.jsonl/compare/export?reviewed=1&ids=last,huge", False),
    ("/s/garbage.jsonl?tab=problems", False),
    ("/s/garbage.jsonl/-/panel/problems", True),
])
def test_every_view_of_a_huge_file_stays_within_its_budget(big, url, fragment):
    get(big, url, fragment)


def more_links(html: str) -> list[str]:
    return [unescape(u) for u in re.findall(r'class="more-link" href="([^"]+)"', html)]


def test_the_context_panel_pages_through_a_20_mb_message(big):
    html = get(big, "/s/big.jsonl/-/panel/context?node=last", fragment=True)
    # the first screenful is the short first message; the 20 MB one is on the next page
    assert "/-/more/context" not in html and "line 0000000" not in html
    html = get(big, [u for u in more_links(html) if "/-/more/messages" in u][0], fragment=True)
    assert len(html) < LIMIT
    links = [u for u in more_links(html) if "/-/more/context" in u]
    assert links and "more characters" in html
    page = get(big, links[0], fragment=True)  # the next page, with the link after it
    assert page.startswith("30 of the long message\nline 0003031")  # lines of 33 characters
    assert "/-/more/context" in page and "more characters" in page
    # the same URL without htmx is a page of its own
    assert "Characters 100,000 to 200,000 of" in get(big, links[0])


def test_the_raw_view_pages_through_an_entry(big):
    html = get(big, "/s/big.jsonl/-/raw?id=out", fragment=True)
    (link,) = [u for u in more_links(html) if "/-/more/raw" in u]
    nxt = get(big, link, fragment=True)
    assert set(nxt[:1000]) == {"x"}
    pages, url = 1, link
    while url and pages < 3:  # the last page has no link
        url = next(iter(more_links(get(big, url, fragment=True))), None)
        pages += 1
    assert url is not None  # 20 MB is 200 pages: there is still more after three


def test_the_problems_tab_lists_the_first_problems_and_links_to_the_rest(big):
    html = get(big, "/s/garbage.jsonl/-/panel/problems", fragment=True)
    assert "100,001 problems" in html  # every garbage line and the long one
    assert html.count('class="problem-item') == 200
    (link,) = [u for u in more_links(html) if "/-/more/problems" in u]
    assert "99,801 more problems" in html
    nxt = get(big, link, fragment=True)
    assert nxt.count('class="problem-item') == 200 and "99,601 more problems" in nxt
    assert 'line 203</span>' in nxt and 'line 202</span>' not in nxt  # bad lines start on line 3


def test_a_bad_line_longer_than_its_excerpt_pages_too(big):
    html = get(big, "/s/garbage.jsonl/-/panel/problems", fragment=True)
    assert html.count('class="bad-line"') == 20
    line = get(big, "/s/garbage.jsonl/-/more/line?line=100003&offset=0")
    assert "Characters 0 to 100,000 of 200,001" in line


@pytest.fixture(scope="module")
def chatty(tmp_path_factory):
    root = tmp_path_factory.mktemp("chatty")
    b = Builder()
    for i in range(60):
        b.user(f"question {i:02d} " + "q" * 1000, id=f"u{i}")
        b.assistant(f"answer {i:02d} " + "a" * 1000, id=f"a{i}")
    b.write(root / "chatty.jsonl")
    return create_app(root).test_client()


def test_the_context_panel_sends_a_first_screenful_and_the_rest_when_asked(chatty):
    html = get(chatty, "/s/chatty.jsonl/-/panel/context?node=a59", fragment=True)
    shown = re.findall(r"(question|answer) (\d\d) ", html)
    assert shown[0] == ("question", "00") and 4 <= len(shown) < 60  # the first messages, not all 120
    links = [u for u in more_links(html) if "/-/more/messages" in u]
    assert len(links) == 1 and f"{120 - len(shown):,} more messages" in html
    assert re.search(r'hx-trigger="click, intersect once"', html)  # loaded when scrolled to, or clicked
    rest = get(chatty, links[0], fragment=True)
    following = re.findall(r"(question|answer) (\d\d) ", rest)
    assert shown + following == [(k, f"{i:02d}") for i in range(60) for k in ("question", "answer")]
    assert "more messages" not in rest
    # without htmx the link is a page of the rest
    page = get(chatty, links[0])
    assert "<html" in page and "answer 59 " in page and "messages, from" in page
