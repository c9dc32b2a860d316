"""Every pattern that reads session text costs in proportion to the text: a crafted message of
one repeated character must not make a view take a minute (each was quadratic or worse). Not a
timed assertion: each compares the same work on two sizes, ten times apart, in one run."""

from __future__ import annotations

import time

import orjson
import pytest

from tests.conftest import Builder
from webapp.core.audit import collect_facts
from webapp.core.catalog import summarize_session
from webapp.core.compaction import strip_file_lists, with_file_lists
from webapp.core.session import Session
from webapp.web import render
from webapp.web.held_html import HeldHtml

TEN_TIMES_COSTS_AT_MOST = 30  # linear: about 10; quadratic: 100


@pytest.fixture(autouse=True)
def nothing_held(monkeypatch):
    """Each run renders: the server holds HTML it made by its text (`held_html`), which would make
    every run after the first cost nothing."""
    monkeypatch.setattr(render.lexers, "_highlighted", HeldHtml(chars=0, shortest=0))
    monkeypatch.setattr(render, "_markdown_html", HeldHtml(chars=0, shortest=0))


def cost(work) -> float:
    """The least thread CPU time of three runs (a busy machine does not add to it)."""
    best = float("inf")
    for _ in range(3):
        start = time.thread_time()
        work()
        best = min(best, time.thread_time() - start)
    return max(best, 1e-4)


def assert_proportional(work_on, small: int) -> None:
    a, b = cost(lambda: work_on(small)), cost(lambda: work_on(10 * small))
    assert b < TEN_TIMES_COSTS_AT_MOST * a, f"{small} → {a:.4f}s, {10 * small} → {b:.4f}s"


def _user_entries(text: str):
    b = Builder()
    b.user(text, id="u1")
    return Session.in_memory(b.data()).tree.entries


def test_the_audit_path_pattern_is_linear_on_a_run_of_at_signs():
    for char in "@+":
        entries = {n: _user_entries(char * n) for n in (20_000, 200_000)}
        assert_proportional(lambda n: collect_facts(entries[n]), 20_000)


def test_the_audit_still_finds_paths_next_to_at_signs():
    facts = collect_facts(_user_entries("see @src/app.py and user@host.md and a+b/c.py"))
    paths = {f.text for f in facts if f.category == "files"}
    assert {"src/app.py", "user@host.md", "a+b/c.py"} <= paths, paths


def _claude_file(tmp_path, text: str, name: str):
    line = {"type": "user", "sessionId": "s1", "uuid": "u1", "parentUuid": None, "timestamp": "2026-01-02T03:04:05Z",
            "message": {"role": "user", "content": text}}
    path = tmp_path / name
    path.write_bytes(orjson.dumps(line) + b"\n")
    return path


def test_the_claude_title_of_unclosed_command_names_is_linear(tmp_path):
    files = {n: _claude_file(tmp_path, "<command-name>" * n, f"c{n}.jsonl") for n in (2_000, 20_000)}
    assert_proportional(lambda n: summarize_session(files[n]), 2_000)


def test_a_claude_session_started_by_a_slash_command_is_still_named_by_it(tmp_path):
    path = _claude_file(tmp_path, "<command-name>/review</command-name><command-args> the parser </command-args>", "c.jsonl")
    assert Session.open(path).tree.header["title"] == "/review the parser"


def test_stripping_file_lists_is_linear_on_lists_left_open():
    summaries = {n: "Goal\n" + "<read-files>\n" * n for n in (2_000, 20_000)}
    assert_proportional(lambda n: strip_file_lists(summaries[n]), 2_000)


def test_stripping_file_lists_removes_closed_lists_only():
    text = "Goal\n\n<read-files>\na.py\n</read-files>\n\n<modified-files>\nb.py\n</modified-files>\n<read-files>\nopen"
    assert strip_file_lists(text) == "Goal\n<read-files>\nopen"
    assert with_file_lists("Goal\n\n<read-files>\nold.py\n</read-files>", ["a.py"], []) == \
        "Goal\n\n<read-files>\na.py\n</read-files>"


def test_highlighting_with_a_cubic_lexer_is_bounded():
    """Pygments' systemd lexer is cubic on a line of spaces: chosen by a `.service` file name."""
    lexer = render.lexers.for_path("unit.service")
    assert_proportional(lambda n: render.highlight_lines(" " * n + "x", lexer), 1_500)


def test_linear_lexers_still_highlight_and_a_slow_one_highlights_in_pieces():
    py = render.lexers.for_path("a.py")
    assert render.lexers.piece_size(py) == float("inf")
    assert 'class="hl-k"' in "".join(render.highlight_lines("def f():\n    return 1\n", py))
    c = render.lexers.for_path("a.c")  # quadratic on lines of spaces: highlighted a piece at a time
    code = "int main(void) { return 0; }\n" * 400
    lines = render.highlight_lines(code, c)
    assert len(lines) == 400 and all('class="hl-kt"' in line for line in lines)
