"""The README and docs/ read on their own: no path outside the project (a clone has no
`../shared`), and every local link leads to a file that is there."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
DOCS = [ROOT / "README.md", ROOT / "BENCHMARKS.md", *sorted((ROOT / "docs").glob("*.md"))]


def test_no_doc_refers_to_a_path_outside_the_project():
    for doc in DOCS:
        text = doc.read_text()
        for bad in ("../shared", "shared/"):
            assert bad not in text, f"{doc.name} mentions {bad!r}"


def test_local_links_lead_to_files_of_the_project():
    assert (ROOT / "docs" / "session-format.md").is_file() and (ROOT / "docs" / "formats.md").is_file()
    for doc in DOCS:
        for target in re.findall(r"\]\(([^)#\s]+)(?:#[^)]*)?\)", doc.read_text()):
            if "://" in target:
                continue
            assert (doc.parent / target).exists(), f"{doc.name} links to {target}, which is not there"
