"""Redaction: planted secrets of many kinds in every field are all found, each value gets one
tag everywhere, the copy written holds none of them, and ordinary text is left alone."""

from __future__ import annotations

import re

import pytest

from tests.redaction_fixture import ORDINARY, SECRETS, leaked, write_secret_session
from webapp.core.redact import Choice, Scanner, redacted, scan_session, summary
from webapp.core.session import Session


@pytest.fixture
def secret_file(tmp_path):
    path = tmp_path / "s.jsonl"
    write_secret_session(path)
    return path


def test_every_planted_secret_is_found_with_a_rule_and_a_preview(secret_file):
    review = scan_session(secret_file)
    values = {f.value for f in review.findings}
    for kind, value in SECRETS.items():
        assert any(value == v or value in v for v in values), kind
    rules = {f.value: f.rule for f in review.findings}
    assert rules[SECRETS["aws-key"]] == "aws-key" and rules[SECRETS["github-token"]] == "github-token"
    assert rules[SECRETS["url-password"]] == "url-password" and rules[SECRETS["private-key"]] == "private-key"
    assert rules[SECRETS["env-password"]] == "secret-assignment"
    assert rules[SECRETS["high-entropy"]] == "secret-assignment"  # ("Random token: …": a value named a token)
    f = review.by_tag()["[REDACTED:aws-key#1]"]
    assert f.preview == "AKIA…" and any(p.startswith("s.jsonl line ") for p in f.places)
    assert len(f.places) >= 2  # the tool result's .env dump and the raw field of an assistant entry


def test_ordinary_text_is_not_flagged(secret_file):
    review = scan_session(secret_file)
    for f in review.findings:
        assert f.value not in ORDINARY, f  # the git hash, the UUID, the path, the e-mail (no e-mail rule)


def test_the_copy_holds_no_secret_and_the_same_value_has_the_same_tag_everywhere(secret_file):
    with redacted(secret_file, Choice()) as (copy, review):
        data = copy.read_bytes()
        assert leaked(data) == []
        tag = review.by_tag()
        github = next(t for t, f in tag.items() if f.value == SECRETS["github-token"])
        assert data.count(github.encode()) == 3  # user message, compaction summary, label
        tree = Session.open(copy).tree
        assert tree.name == f"Deploy {next(t for t, f in tag.items() if f.value == SECRETS['stripe-key'])}"
        assert len(tree.entries) == len(Session.open(secret_file).tree.entries)  # the tree is intact
        assert "3f2a1b4c5d6e7f8091a2b3c4d5e6f708192a3b4c" in data.decode()  # ordinary text stays
    assert not copy.exists()  # the temporary copy is removed


def test_kept_values_stay_and_the_summary_says_so(secret_file):
    review = scan_session(secret_file)
    keep = frozenset({"[REDACTED:aws-key#1]"})
    with redacted(secret_file, Choice(keep=keep)) as (copy, _):
        assert leaked(copy.read_bytes()) == ["aws-key"]
    line = summary(review, keep)
    assert line.startswith(f"Redacted: {len(review.findings) - 1} values (") and "1 kept as they were by choice" in line
    assert "detect-secrets" in line


def test_optional_rules_and_own_patterns(secret_file):
    plain = {f.rule for f in scan_session(secret_file).findings}
    assert not plain & {"home", "user", "email", "pattern"}
    review = scan_session(secret_file, frozenset({"home", "user", "email"}), (r"db\.internal",))
    by_value = {f.value: f.rule for f in review.findings}
    assert by_value["/home/ana"] == "home" and by_value["ana"] == "user"
    assert by_value["ana@example.com"] == "email" and by_value["db.internal"] == "pattern"
    assert review.rules == ["detect-secrets", "context rules", "email", "home", "user", "patterns"]
    with redacted(secret_file, Choice(frozenset({"home", "user"}))) as (copy, _):
        text = copy.read_text()
        assert "/home/ana" not in text and not re.search(r"\bana\b", text)


def test_bad_rules_and_patterns_say_which():
    with pytest.raises(ValueError, match="unknown redaction rule bogus"):
        Scanner(frozenset({"bogus"}))
    with pytest.raises(ValueError, match=r"'\(' is not a valid regular expression"):
        Scanner(patterns=("(",))


def test_a_line_that_is_not_json_is_redacted_too(tmp_path):
    path = tmp_path / "s.jsonl"
    write_secret_session(path)
    with path.open("ab") as f:
        f.write(f'{{"broken": "{SECRETS["stripe-key"]}\n'.encode())
    with redacted(path, Choice()) as (copy, _):
        assert leaked(copy.read_bytes()) == []
