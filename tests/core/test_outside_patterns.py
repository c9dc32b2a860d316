"""Patterns from outside (a person's redaction patterns, the export review's `patterns=`) run in
RE2, never in Python's `re`: a pattern that backtracks exponentially in `re` costs time in
proportion to the text, lets other threads run while it matches, and what RE2 lacks is refused
in one clear line. Not timed assertions: the cost of two sizes in one run, and another thread's
progress while a match runs."""

from __future__ import annotations

import threading

import pytest

from tests.core.test_linear_patterns import assert_proportional
from webapp.core.patterns import MAX_PATTERN_CHARS, PatternError, compile_outside
from webapp.core.redact import Scanner


def test_a_pattern_that_backtracks_in_re_costs_in_proportion_to_the_text():
    # In `re`, `(=+)+!` on 30 `=` takes seconds and doubles with each one more.
    scanner = Scanner(patterns=("(=+)+!",))
    assert_proportional(lambda n: scanner._hits("=" * n), 20_000)
    assert Scanner(patterns=("(=+)+!",))._hits("a==!") == [("==!", "pattern")]


def test_other_threads_run_while_a_pattern_matches():
    rx = compile_outside(r"(x+x+)+y")
    text = "x" * 20_000_000
    done = threading.Event()

    def match():
        rx.search(text)
        done.set()

    threading.Thread(target=match).start()
    steps = 0
    while not done.is_set():
        steps += 1
    assert steps > 1000  # (with the interpreter held, this loop would not have run during the match)


@pytest.mark.parametrize("pattern,says", [
    (r"(a)\1", "invalid escape sequence"),
    (r"(?<=a)b", "invalid perl operator"),
    ("(", "missing )"),
    ("a{1000}{1000}", "bad repetition operator"),
])
def test_what_re2_lacks_is_refused_in_one_line(pattern, says):
    with pytest.raises(PatternError, match="is not a valid regular expression here") as caught:
        compile_outside(pattern)
    assert says in str(caught.value) and "\n" not in str(caught.value)
    with pytest.raises(ValueError, match="redaction pattern"):
        Scanner(patterns=(pattern,))


def test_a_literal_or_a_case_blind_pattern_and_the_length_limit():
    assert compile_outside("a.b", literal=True).search("axb") is None
    assert compile_outside("a.b", literal=True).search("a.b").group() == "a.b"
    assert compile_outside("SECRET", ignore_case=True).search("my secret").group() == "secret"
    with pytest.raises(PatternError, match="too long"):
        compile_outside("a" * (MAX_PATTERN_CHARS + 1))
