"""Routine commands weigh little in a summary's score, those the work depended on much."""

import pytest

from tests.conftest import Builder
from webapp.core.audit import audit_entry
from webapp.core.command_weight import KEY, OTHER, ROUTINE, command_kind
from webapp.core.reader import parse_bytes
from webapp.core.tree import SessionTree


@pytest.mark.parametrize("command, details, kind", [
    ("cd src && ls -la", [], ROUTINE),
    ("git status", ["exit 0"], ROUTINE),
    ("git log --oneline | head", [], ROUTINE),
    ("grep -rn VAT_RATE --include=*.py .", ["exit 0"], ROUTINE),
    ("sed -n 1,40p app.py", [], ROUTINE),
    ("ls missing/", ["exit 2"], KEY),  # a failure is something the work depended on
    ("python -m pytest -q", ["exit 0"], KEY),
    ("cd api && npm install", [], KEY),
    ("FLASK_ENV=dev python manage.py migrate", [], KEY),
    ("make build", [], KEY),
    ("git commit -m 'fix'", [], OTHER),
    ("git add -A", [], OTHER),
    ("sed -i s/a/b/ f.py", [], OTHER),
    ("python scripts/fill.py", [], OTHER),
])
def test_command_kinds(command, details, kind):
    assert command_kind(command, details) == kind


def session_builder(summary: str) -> Builder:
    b = Builder()
    b.user("look around, then run the tests", id="u1")
    calls = [{"id": f"c{i}", "name": "bash", "arguments": {"command": cmd}}
             for i, cmd in enumerate(["cd src", "ls", "git status", "pytest -q"])]
    b.assistant("", calls=calls, id="a1")
    for i, out in enumerate(["", "a.py", "clean", "1 failed"]):
        b.tool_result(f"c{i}", out + ("\nCommand exited with code 1" if i == 3 else ""), name="bash", id=f"t{i}")
    b.user("next", id="u2")
    b.assistant("ok", id="a2")
    b.add("compaction", id="k", summary=summary, firstKeptEntryId="u2")
    return b


def session(summary: str) -> SessionTree:
    return SessionTree(parse_bytes(session_builder(summary).data()))


def test_losing_routine_commands_costs_less_than_losing_the_failing_test_run():
    lost_routine = audit_entry(session("Ran `pytest -q`: 1 failed."), "k").score("commands")
    lost_tests = audit_entry(session("Ran `cd src`, `ls` and `git status`."), "k").score("commands")
    # three routine commands weigh 0.25 each, the failing test run 2: 2 / 2.75 and 0.75 / 2.75
    assert (lost_routine, lost_tests) == (72, 27)


def test_the_lost_tab_groups_lost_commands_by_kind(tmp_path):
    import re
    from html import unescape

    from webapp.web.app import create_app

    (tmp_path / "--home-ana-proj--").mkdir()
    session_builder("Nothing about commands.").write(tmp_path / "--home-ana-proj--" / "c.jsonl")
    page = unescape(create_app(tmp_path).test_client().get(
        "/s/--home-ana-proj--/c.jsonl/-/panel/audit?node=k", headers={"HX-Request": "true"}).get_data(as_text=True))
    groups = re.findall(r'<p class="fact-group" data-kind="(\w+)">(\d+) lost', page)
    assert groups == [("key", "1"), ("routine", "3")]
    key = page.split('<ul class="facts missing" data-kind="key">')[1].split("</ul>")[0]
    assert 'data-fact="pytest -q"' in key and "each weighs 2.0 in the score" in page

