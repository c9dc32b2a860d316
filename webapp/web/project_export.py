"""A folder of sessions (or an agent's project folder) as one offline site: `index.html` listing
the sessions with their figures, one page per session (the single-file export, linked to its
styles and script in `static/` rather than holding them), relative links only, so the folder
reads from disk, from a zip or from any static host.

One redaction covers the whole site: the sessions are scanned by one scanner before anything is
written (the same secret gets the same tag in every page), each is rendered from its redacted
copy in a temporary folder, and the index says that it was redacted and by which rules. The
sessions themselves are only read. A file that cannot be read gets a page saying why, a file
that reads with damage gets its page with the problems listed, and neither stops the rest.
"""

from __future__ import annotations

import os
import re
import shutil
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

from flask import Flask

from ..core.agents import titles
from ..core.catalog import SessionSummary, summarize_session
from ..core.errors import SessionError
from ..core.redact import Replacer, copy_redacted
from ..core.session import Session
from ..core.storage import write_new_file
from ..core.tokens import entry_cost
from ..core.verdicts import for_a_redacted_copy, verdicts
from .export import SiteLinks, export_html, session_title, site_assets

GENERATOR = "session-tree project export"  # what marks a folder as one of ours (it may be written again)
PAGES = "sessions"
LINKS = SiteLinks(static="../static/", index="../index.html")
DOT_TIMEOUT = 120.0  # seconds a page's drawing may take: a site is written unattended, and a page without its drawing is a loss


@dataclass(frozen=True)
class Row:
    """One session of the index: its page and figures, or (`error`) why it could not be read."""

    page: str  # relative to the index
    file: str  # the session file's name, as the index shows it
    project: str
    summary: SessionSummary | None = None
    title: str = ""
    cost: float = 0.0
    error: str | None = None

    @property
    def when(self) -> str:
        """The sort key of "by time": when the session started, else when its file last changed."""
        s = self.summary
        return (s.created or s.modified) if s else ""


@dataclass(frozen=True)
class Redaction:
    """The redaction a whole export applies: one replacer, and the line the pages say it in."""

    replace: Replacer
    note: str


def check_output(out: Path, sessions_folders: list[Path]) -> None:
    """Refuse (SessionError, saying why) a folder that is not ours to fill: one inside a sessions
    folder (another tool's), or one that holds files and is not an earlier export of ours."""
    target = out.resolve()
    for folder in sessions_folders:
        if target.is_relative_to(folder.resolve()):
            raise SessionError(f"{out}: inside the sessions folder {folder}; write the export somewhere else")
    if target.exists() and not target.is_dir():
        raise SessionError(f"{out}: not a folder")
    if target.is_dir() and any(target.iterdir()) and not _ours(target):
        raise SessionError(f"{out}: the folder holds files and is no session-tree export; name a new or empty folder")


def _ours(folder: Path) -> bool:
    """An earlier export: its index says so, or (one stopped before its index was written) it
    holds nothing but what an export writes, with our script in its static folder."""
    try:
        if GENERATOR in (folder / "index.html").read_text(errors="replace")[:2000]:
            return True
    except OSError:
        pass
    return {p.name for p in folder.iterdir()} <= {"index.html", PAGES, "static"} \
        and (folder / "static" / "project-export.js").is_file()


def page_name(index: int, path: Path) -> str:
    """The page of the `index`-th session: numbered (unique), then its file's name made safe."""
    stem = re.sub(r"[^A-Za-z0-9._-]+", "-", path.stem).strip("-.")[:60] or "session"
    return f"{PAGES}/{index + 1:03d}-{stem}.html"


def export_project(app: Flask, root: Path, files: list[Path], out: Path, redaction: Redaction | None,
                   progress: Callable[[str], None]) -> list[Row]:
    """Write the site for the session `files` (found under `root`) into `out`; the rows of its
    index, in the index's order. `progress` is told about each session as it is done."""
    out.mkdir(parents=True, exist_ok=True)
    pages = out / PAGES
    if pages.is_dir():  # an earlier export of ours: its pages go, so none is left that the index no longer lists
        for old in pages.glob("*.html"):
            old.unlink()
    pages.mkdir(exist_ok=True)
    static = out / "static"
    static.mkdir(exist_ok=True)
    for name, data in site_assets().items():
        write_new_file(static / name, data, replace=True)
    rows = []
    with tempfile.TemporaryDirectory(prefix="session-tree-project-") as tmp:
        for i, path in enumerate(files):
            started = time.perf_counter()
            shown = Path(redaction.replace.text(path.name)) if redaction else path  # (a page's name shows the file's)
            row, html = _session_page(app, root, path, page_name(i, shown), redaction, Path(tmp) / str(i))
            shutil.rmtree(Path(tmp) / str(i), ignore_errors=True)  # (a redacted copy: a project's worth of them would fill the disk)
            write_new_file(out / row.page, html.encode("utf-8"), replace=True)
            rows.append(row)
            took = time.perf_counter() - started
            said = f"not read: {row.error}" if row.error else f"{row.summary.entries:,} entries"
            progress(f"[{i + 1}/{len(files)}] {_shown(root, path)}: {said} ({took:.2f} s) -> {row.page}")
    rows.sort(key=lambda r: r.when, reverse=True)
    name = root.resolve().name or str(root)
    index = render_index(app, redaction.replace.text(name) if redaction else name, rows, redaction.note if redaction else None)
    write_new_file(out / "index.html", index.encode("utf-8"), replace=True)
    return rows


def _shown(root: Path, path: Path) -> str:
    try:
        return path.relative_to(root).as_posix()
    except ValueError:
        return str(path)


def _session_page(app: Flask, root: Path, path: Path, page: str, redaction: Redaction | None, tmp: Path) -> tuple[Row, str]:
    """The row and page of one session; a file that cannot be read (or rendered) gives a page
    saying so instead, so the rest of the site is still written."""
    hide = redaction.replace.text if redaction else (lambda s: s)
    file = hide(path.name)
    folder = hide(path.parent.name) if path.parent != root else ""
    try:
        source = copy_redacted(path, redaction.replace, tmp) if redaction else path
        session = Session.open(source)
        tree = session.tree
        summary = summarize_session(path, session)  # (the file's own size and times, the copy's text)
        title = session_title(tree, file)
        html = export_html(app, tree, title, None, redaction.note if redaction else None, LINKS, DOT_TIMEOUT,
                           given=for_a_redacted_copy(verdicts(session)) if redaction else verdicts(session))
    except (OSError, SessionError, ValueError, UnicodeError, RecursionError) as exc:
        error = getattr(exc, "strerror", None) or str(exc) or type(exc).__name__
        row = Row(page, file, folder, error=hide(error))
        return row, render_failed(app, row, redaction.note if redaction else None)
    row = Row(page, file, summary.cwd or folder, summary, title, sum(entry_cost(e) for e in tree.entries))
    return row, html


def render_index(app: Flask, root_name: str, rows: list[Row], redaction: str | None) -> str:
    with app.app_context():
        return app.jinja_env.get_template("project_export_index.html").render(
            rows=rows, redaction=redaction, generator=GENERATOR, root=root_name,
            agents=titles(), made=time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
            damaged=sum(1 for r in rows if r.error or (r.summary and r.summary.problems)),
        )


def render_failed(app: Flask, row: Row, redaction: str | None) -> str:
    with app.app_context():
        return app.jinja_env.get_template("project_export_failed.html").render(
            row=row, site=LINKS, redaction=redaction, generator=GENERATOR,
        )


def site_note(out: Path) -> str:
    """What the command prints at the end: the site's folder and what each part of it takes (the
    index page's own bytes, the pages', the assets'), and the whole."""
    def sizes(paths) -> list[int]:
        return [p.stat().st_size for p in paths if p.is_file()]

    index = (out / "index.html").stat().st_size
    pages, assets = sizes((out / PAGES).glob("*.html")), sizes((out / "static").iterdir())
    return (f"{out}{os.sep} ({index + sum(pages) + sum(assets):,} bytes): index.html {index:,} bytes, "
            f"{len(pages)} pages in {PAGES}{os.sep} {sum(pages):,} bytes, "
            f"{len(assets)} assets in static{os.sep} {sum(assets):,} bytes")
