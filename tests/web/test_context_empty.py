"""The Context tab says what an empty message is instead of showing an empty box."""

import re

from tests.conftest import Builder
from webapp.web.app import create_app


def test_an_aborted_empty_assistant_message_says_so_in_the_context_tab(tmp_path):
    b = Builder()
    b.user("release it")
    aborted = b.assistant("", stop="aborted")
    b.raw(b.lines.pop().replace(b'"stopReason":"aborted"', b'"stopReason":"aborted","errorMessage":"Request was aborted"'))
    b.user("go on")
    b.assistant("Released.")
    (tmp_path / "p").mkdir()
    b.write(tmp_path / "p" / "s.jsonl")
    html = create_app(tmp_path).test_client().get("/s/p/s.jsonl?tab=context").get_data(as_text=True)
    item = re.search(rf'<li class="cm role-assistant[^"]*"[^>]*>(?:(?!</li>).)*?{aborted}(?:(?!</li>).)*</li>', html, re.S)
    assert item is not None
    text = re.sub(r"<[^>]+>", " ", item.group(0))
    assert "(empty: the turn was aborted, “Request was aborted”)" in " ".join(text.split())
    assert html.count("cm-empty") == 1  # the reply with text is not called empty
