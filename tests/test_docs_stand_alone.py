"""The README and docs/ read on their own: no path outside the project (a clone has no
`../shared`), every local link and picture leads to a file that is there (and a `#part` of it to
one of its headings), the README stays a short front page, and every page and picture of docs/
can be reached from it.

Links are read with markdown-it (the app's own Markdown parser), not a regular expression, so that
a link with a title, a reference-style link or an image inside a link is read as a reader's
Markdown viewer reads it, and text in code (`a](b)`) is not taken for a link."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Iterator
from urllib.parse import unquote

from markdown_it import MarkdownIt

ROOT = Path(__file__).resolve().parents[1]
README = ROOT / "README.md"
DOCS = [README, ROOT / "BENCHMARKS.md", *sorted((ROOT / "docs").glob("*.md"))]
README_MOST_LINES = 300  # issue 41's front page: what it is, the two commands, a picture, where to go next

_md = MarkdownIt("commonmark").enable("table")


def _tokens(doc: Path):
    """Every token of the document, inline children included."""
    for token in _md.parse(doc.read_text(encoding="utf-8")):
        yield token
        yield from token.children or ()


def targets(doc: Path) -> list[str]:
    """Every link's href and every image's src in the document, as written."""
    found = []
    for token in _tokens(doc):
        if token.type == "link_open":
            found.append(token.attrs["href"])
        elif token.type == "image":
            found.append(token.attrs["src"])
    return found


def slug(heading: str) -> str:
    """The anchor GitHub gives a heading: lower case, punctuation dropped, spaces as hyphens."""
    return re.sub(r"[^\w\- ]", "", heading.strip().lower()).replace(" ", "-")


def anchors(doc: Path) -> Iterator[str]:
    """The anchors of the document's headings (a repeated one gets -1, -2…, as GitHub does)."""
    tokens = list(_md.parse(doc.read_text(encoding="utf-8")))
    seen: dict[str, int] = {}
    for opening, inline in zip(tokens, tokens[1:]):
        if opening.type != "heading_open":
            continue
        base = slug("".join(child.content for child in inline.children or ()))
        n = seen.get(base, 0)
        seen[base] = n + 1
        yield base if n == 0 else f"{base}-{n}"


def local(doc: Path) -> list[tuple[str, Path, str]]:
    """(as written, the file it names, its #part) for every link and picture that stays in the project."""
    out = []
    for target in targets(doc):
        if re.match(r"[a-z][a-z0-9+.-]*:", target):  # https:, mailto:, …
            continue
        path, _, part = target.partition("#")
        out.append((target, (doc.parent / unquote(path)).resolve() if path else doc, part))
    return out


def test_no_doc_refers_to_a_path_outside_the_project():
    for doc in DOCS:
        text = doc.read_text()
        for bad in ("../shared", "shared/"):
            assert bad not in text, f"{doc.name} mentions {bad!r}"


def test_every_link_and_picture_leads_to_a_file_of_the_project_and_a_heading_in_it():
    assert (ROOT / "docs" / "session-format.md").is_file() and (ROOT / "docs" / "formats.md").is_file()
    checked = 0
    for doc in DOCS:
        for written, path, part in local(doc):
            assert path.is_relative_to(ROOT), f"{doc.name} links to {written}, outside the project"
            assert path.exists(), f"{doc.name} links to {written}, which is not there"
            if part and path.suffix == ".md":
                assert part in set(anchors(path)), f"{doc.name} links to {written}: {path.name} has no heading #{part}"
            checked += 1
    assert checked > 100  # the parser found the links (a parser that found none would pass the loop)


def test_the_checks_fail_on_a_broken_link_a_missing_picture_and_an_unknown_heading(tmp_path):
    (tmp_path / "there.md").write_text("# A heading: with `code`, punctuation & more\n\n## Twice\n\n## Twice\n")
    doc = tmp_path / "page.md"
    doc.write_text('[ok](there.md#a-heading-with-code-punctuation--more "title") [second](there.md#twice-1)\n'
                   "![gone](gone.png) [nowhere](there.md#nowhere) `[in code](not-a-link.md)`\n\n"
                   "[by reference][ref]\n\n[ref]: missing.md\n")
    found = {written: (path.exists(), not part or part in set(anchors(path))) for written, path, part in local(doc)}
    assert found == {"there.md#a-heading-with-code-punctuation--more": (True, True), "there.md#twice-1": (True, True),
                     "gone.png": (False, True), "there.md#nowhere": (True, False), "missing.md": (False, True)}


def test_the_readme_is_a_short_front_page_with_the_two_commands():
    text = README.read_text()
    assert len(text.splitlines()) <= README_MOST_LINES
    assert "    make serve\n" in text and "    make test\n" in text
    assert "pipx install ." in text and "uv tool install ." in text and "session-tree demo" in text
    assert any(Path(t).suffix == ".png" for t in targets(README))


def test_every_page_and_picture_of_docs_can_be_reached_from_the_readme():
    reached, todo = {README.resolve()}, [README]
    while todo:
        for _, path, _ in local(todo.pop()):
            if path not in reached:
                reached.add(path)
                if path.suffix == ".md":
                    todo.append(path)
    for item in sorted((ROOT / "docs").iterdir()):
        if item.suffix in (".md", ".png"):
            assert item.resolve() in reached, f"docs/{item.name} is linked from no page the README leads to"
