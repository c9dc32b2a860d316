"""`session-tree export ROOT -o DIR`: a folder of sessions as an offline site (an index with each
session's figures, a page per session, the styles and scripts once in static/, relative links),
one redaction over all of it, damaged and unreadable files given their own pages, the sources
left byte-identical."""

from __future__ import annotations

import hashlib
import re
import shutil
from html import unescape
from pathlib import Path

import orjson

from tests.core.test_formats_claude import _session_with_a_subagent
from tests.redaction_fixture import SECRETS, write_secret_session
from tests.test_cli import run
from webapp.core.catalog import summarize_session
from webapp.core.agents.places import discover
from webapp.web import project_export

SAMPLES = Path(__file__).resolve().parents[1] / "sample_sessions"
FIXTURES = Path(__file__).resolve().parent / "fixtures"


def _digests(folder: Path) -> dict[str, str]:
    return {p.relative_to(folder).as_posix(): hashlib.sha256(p.read_bytes()).hexdigest()
            for p in sorted(folder.rglob("*")) if p.is_file()}


def _rows(index: str) -> list[str]:
    return re.findall(r'<tr class="session-row[^"]*">.*?</tr>', index, re.S)


def _links(html: str) -> list[str]:
    return re.findall(r'(?:href|src)="([^"]*)"', html)


def test_the_samples_become_an_index_and_a_linked_page_per_session(capsys, tmp_path):
    root = tmp_path / "samples"
    shutil.copytree(SAMPLES, root)
    before = _digests(root)
    out = tmp_path / "site"
    code, stdout, err = run(capsys, "export", root, "-o", out)
    assert code == 0, err
    files = discover(root)
    assert len(files) == 7
    assert f"[1/7] " in err and f"[7/7] " in err  # progress, one line a session, on stderr
    assert "wrote" in stdout and "7 pages" in stdout
    index = (out / "index.html").read_text()
    rows = _rows(index)
    assert len(rows) == 7
    summaries = sorted((summarize_session(f) for f in files), key=lambda s: s.created, reverse=True)
    for row, s in zip(rows, summaries):  # newest first, each with its figures
        text = unescape(row)
        assert s.title[:40] in text and f">{s.entries:,}<" in row and f">{s.leaves}<" in row
        page = re.search(r'<a href="(sessions/[^"]+\.html)">', row).group(1)
        html = (out / page).read_text()
        assert f"<h1>{s.title[:40]}" in unescape(html)
        assert '<a href="../index.html" id="to-index">All sessions</a>' in html
        assert "<style>" not in html and '<link rel="stylesheet" href="../static/export.css">' in html
        assert '<script src="../static/export.js"></script>' in html
        for link in _links(html):  # relative links only, to files the site holds or within the page
            assert not re.match(r"[a-z]+:|/", link), link
            target = link.split("#")[0]
            assert not target or (out / "sessions" / target).resolve().is_file(), link
    assert "$19.98" in index  # the cost column (the data-pipeline session's)
    for link in _links(index):
        assert not re.match(r"[a-z]+:|/", link) and (out / link.split("#")[0]).is_file(), link
    assert sorted(p.name for p in (out / "static").iterdir()) == sorted(project_export.site_assets())
    assert _digests(root) == before  # the sessions were only read


def test_one_redaction_over_the_project_gives_a_secret_the_same_tag_on_every_page(capsys, tmp_path):
    root = tmp_path / "project"
    root.mkdir()
    write_secret_session(root / "one.jsonl")
    write_secret_session(root / "two.jsonl")
    (root / "three.jsonl").write_bytes((root / "two.jsonl").read_bytes().replace(
        SECRETS["github-token"].encode(), SECRETS["github-token"][:-1].encode() + b"z"))  # another token, in a session otherwise the same
    before = _digests(root)
    out = tmp_path / "site"
    code, _, err = run(capsys, "export", root, "-o", out, "--redact")
    assert code == 0, err
    assert "scanning 3 sessions for secrets" in err and "[REDACTED:github-token#1]" in err  # the review, first
    written = b"".join(p.read_bytes() for p in out.rglob("*") if p.is_file())
    for kind, value in SECRETS.items():
        for part in value.splitlines():
            assert part.encode() not in written, kind  # in no page, nor the index
    pages = [(out / p).read_text() for p in re.findall(r'href="(sessions/[^"]+)"', (out / "index.html").read_text())]
    assert len(pages) == 3
    assert all("Redacted:" in html for html in pages)  # each page says so on its first screen
    tags = [set(re.findall(r"\[REDACTED:github-token#\d+\]", h)) for h in pages]
    assert sorted(map(sorted, tags)) == [["[REDACTED:github-token#1]"]] * 2 + [["[REDACTED:github-token#2]"]]
    index = (out / "index.html").read_text()
    assert "was redacted with one set of tags" in index and "found by detect-secrets" in index
    assert _digests(root) == before


def test_review_of_a_project_lists_every_redaction_and_writes_nothing(capsys, tmp_path):
    root = tmp_path / "project"
    (root / "sub").mkdir(parents=True)
    write_secret_session(root / "a.jsonl")
    write_secret_session(root / "sub" / "b.jsonl")
    code, out, err = run(capsys, "export", root, "--review")
    assert code == 0, err
    line = next(x for x in out.splitlines() if x.startswith("[REDACTED:aws-key#1]"))
    assert "a.jsonl line" in line and "sub/b.jsonl line" in out  # where, in which file of the project
    assert not any(tmp_path.glob("site*")) and sorted(p.name for p in root.rglob("*.jsonl")) == ["a.jsonl", "b.jsonl"]


def test_a_damaged_file_gets_its_page_with_its_problems_and_the_rest_are_written(capsys, tmp_path, monkeypatch):
    root = tmp_path / "project"
    root.mkdir()
    shutil.copyfile(next(SAMPLES.rglob("*019cb492*.jsonl")), root / "good.jsonl")
    lines = (root / "good.jsonl").read_bytes().splitlines()
    (root / "damaged.jsonl").write_bytes(b"\n".join([lines[0], b"{this is not json", *lines[1:]]) + b"\n")
    (root / "gone.jsonl").write_bytes(lines[0] + b"\n")
    real_open = project_export.Session.open

    def open_as_unreadable(path, *a, **k):
        if Path(path).name == "gone.jsonl":
            raise PermissionError(13, "Permission denied")
        return real_open(path, *a, **k)

    monkeypatch.setattr(project_export.Session, "open", staticmethod(open_as_unreadable))
    out = tmp_path / "site"
    code, stdout, err = run(capsys, "export", root, "-o", out)
    assert code == 0, err
    assert "gone.jsonl: not read: Permission denied" in err and "[3/3]" in err
    assert "1 could not be read" in stdout and "with problems" in stdout
    index = (out / "index.html").read_text()
    rows = _rows(index)
    assert len(rows) == 3
    damaged = next(r for r in rows if "damaged.jsonl" in r)
    page = re.search(r'href="(sessions/[^"#]+\.html)#problems">\d+ problem', damaged).group(1)
    html = (out / page).read_text()
    problems = html[html.index('<section class="export-problems" id="problems"'):]
    assert "line 2" in problems and "bad-line" in problems  # where, and what
    assert 'class="t-item' in html  # and the rest of the session, as it was read
    gone = next(r for r in rows if "gone.jsonl" in r)
    assert "not read: Permission denied" in gone
    failed = (out / re.search(r'href="(sessions/[^"]+)"', gone).group(1)).read_text()
    assert "could not be read" in failed and "Permission denied" in failed and 'href="../index.html"' in failed


def test_claude_code_sessions_keep_their_sub_agents_linked_and_their_files_untouched(capsys, tmp_path):
    main, agent, _ = _session_with_a_subagent(tmp_path)
    root = main.parent
    shutil.copyfile(FIXTURES / "claude-code" / "d-kimuson_fe5e1c67-53e7-4862-81ae-d0e013e3270b.jsonl", root / "fe5e1c67.jsonl")
    before = _digests(root)
    out = tmp_path / "site"
    code, _, err = run(capsys, "export", root, "-o", out)
    assert code == 0, err
    rows = _rows((out / "index.html").read_text())
    assert len(rows) == 2  # the sub-agent's file is read with its session, not listed as one
    page = (out / re.search(r'href="(sessions/[^"]+s1\.html)"', "".join(rows)).group(1)).read_text()
    call = unescape(page[page.index('id="t-e-a"'):page.index('id="t-e-a2"')])
    assert '<div class="t-subagents">Sub-agent conversation it started:\n    <a href="#t-e-s-u"' in call
    assert '<section class="branch subagent" id="sub-0">' in page
    assert _digests(root) == before


def test_the_output_folder_must_be_new_empty_or_an_earlier_export(capsys, tmp_path):
    root = tmp_path / "project"
    root.mkdir()
    shutil.copyfile(next(SAMPLES.rglob("*019cb492*.jsonl")), root / "a.jsonl")
    theirs = tmp_path / "theirs"
    theirs.mkdir()
    (theirs / "notes.txt").write_text("mine")
    code, _, err = run(capsys, "export", root, "-o", theirs)
    assert code != 0 and "no session-tree export" in err and "Traceback" not in err
    assert [p.name for p in theirs.iterdir()] == ["notes.txt"]
    code, _, err = run(capsys, "export", root, "-o", root / "site")
    assert code != 0 and "inside the sessions folder" in err and not (root / "site").exists()
    code, _, err = run(capsys, "export", root)
    assert code != 0 and "-o DIR" in err
    code, _, err = run(capsys, "export", root, "-o", tmp_path / "x", "--leaf", "abc")
    assert code != 0 and "--leaf" in err and not (tmp_path / "x").exists()
    out = tmp_path / "site"
    assert run(capsys, "export", root, "-o", out)[0] == 0
    (out / "index.html").unlink()  # as an export stopped before its index leaves it: still ours
    (out / "sessions" / "999-old.html").write_text("a page an earlier export wrote")
    shutil.copyfile(root / "a.jsonl", root / "b.jsonl")
    code, _, err = run(capsys, "export", root, "-o", out)  # written again: ours, so allowed, and the stale page goes
    assert code == 0, err
    assert sorted(p.name for p in (out / "sessions").iterdir()) == ["001-a.html", "002-b.html"]


def test_a_home_folder_is_exported_as_its_agents_folders(capsys, tmp_path):
    home = tmp_path / "home"
    pi = home / ".pi" / "agent" / "sessions" / "--work--"
    pi.mkdir(parents=True)
    shutil.copyfile(next(SAMPLES.rglob("*019cb492*.jsonl")), pi / "s.jsonl")
    (home / "stray.jsonl").write_bytes(orjson.dumps({"type": "session"}) + b"\n")  # not in an agent's folder
    out = tmp_path / "site"
    code, _, err = run(capsys, "export", home, "-o", out)
    assert code == 0, err
    assert len(_rows((out / "index.html").read_text())) == 1
