"""The files the package carries besides its code: the web app's templates and static files, the
sample sessions that `session-tree demo` serves a copy of, and the docs a page links to.

They are found through `importlib.resources`, inside the package, never by a path above it: an
installed wheel holds copies of them (pyproject.toml's package-data), and a checkout holds
symlinks in webapp/ to its top-level `templates/`, `static/`, `sample_sessions/` and `docs/`.
"""

from __future__ import annotations

import shutil
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from importlib.resources import files
from pathlib import Path

TEMPLATES = "templates"
STATIC = "static"
SAMPLES = "sample_sessions"
DOCS = "docs"  # (its Markdown files only)


def bundled_folder(name: str) -> Path:
    """The package's folder `name` (TEMPLATES, STATIC, SAMPLES or DOCS) on disk."""
    folder = Path(str(files(__package__) / name))
    if not folder.is_dir():  # (a package imported from a zip file: Flask needs real folders)
        raise FileNotFoundError(f"{folder}: the package's {name} folder is missing; reinstall session-tree")
    return folder


@contextmanager
def demo_copy() -> Iterator[tuple[Path, Path]]:
    """A fresh copy of the sample sessions in a new temporary folder, and the path of an index of
    its own beside it (the user's index never lists a demo); both are removed at the end. The
    bundled samples themselves are never written."""
    with tempfile.TemporaryDirectory(prefix="session-tree-demo-") as tmp:
        sessions = Path(tmp) / "sessions"
        shutil.copytree(bundled_folder(SAMPLES), sessions)
        yield sessions, Path(tmp) / "index" / "corpus.duckdb"
