"""`session-tree export`: a session as one HTML file, or a folder of sessions (an agent's project
folder, a sessions root, a home folder) as an offline site with one redaction over all of it
(`export ROOT -o DIR`); with --redact, the review is printed before anything is written."""

from __future__ import annotations

import sys
from pathlib import Path

from ..core.agents.places import agent_places, discover
from ..core.errors import SessionError
from ..core.redact import Replacer, scan_sessions, summary
from ..core.storage import write_new_file
from ..web.app import create_app, export_session
from ..web.project_export import Redaction, check_output, export_project, site_note
from .output import print_wrote
from .share import add_redaction_arguments, choice_of, print_review, shared_copy


def cmd_export(args) -> int:
    return export_folder(args) if args.file.is_dir() else export_file(args)


def export_file(args) -> int:
    """The session as one HTML file, redacted with --redact."""
    with shared_copy(args.file, args) as (path, redaction, shared):
        if path is None:
            return 0
        html = export_session(path, args.leaf and shared.replace.text(args.leaf) if shared else args.leaf, redaction)
    # never beside the session (its folder may be another agent's); a redacted file's name is its copy's
    out = args.output or Path((path.stem if shared else args.file.stem) + ".html")
    write_new_file(out, html.encode("utf-8"), replace=True)
    print_wrote(out, len(html.encode()))
    return 0


def _progress(line: str) -> None:
    print(f"session-tree: {line}", file=sys.stderr, flush=True)


def export_folder(args) -> int:
    """The site for the sessions under `args.file`, as `ls` finds them; with --redact, the review
    of all of them first (on stderr; --review prints it and writes nothing)."""
    root, out = args.file, args.output
    if args.leaf:
        raise ValueError("--leaf names an entry of one session; a folder is exported whole")
    if out is None and not args.review:
        raise SessionError(f"export {root}: a folder is written as a site; name its folder with -o DIR")
    within = agent_places(root)
    files = discover(root, within)
    if out is not None:
        check_output(out, [root / w for w in within] or [root])
    choice = choice_of(args)
    redaction = None
    if choice is not None:
        _progress(f"scanning {len(files)} session{'' if len(files) == 1 else 's'} for secrets")
        review, unread = scan_sessions([(p, p.relative_to(root).as_posix()) for p in files], choice.rules, choice.patterns)
        for name, why in unread.items():
            _progress(f"{name}: not scanned ({why}); its page will say it could not be read")
        unknown = sorted(choice.keep - set(review.by_tag()))
        if unknown:
            raise ValueError(f"--keep {unknown[0]}: no redaction has that tag (--review lists them)")
        print_review(review, choice.keep, sys.stdout if args.review else sys.stderr)
        if args.review:
            return 0
        redaction = Redaction(Replacer(review, choice.keep), summary(review, choice.keep))
    _progress(f"exporting {len(files)} session{'' if len(files) == 1 else 's'} from {root} into {out}")
    rows = export_project(create_app(root), root, files, out, redaction, _progress)
    unreadable = sum(1 for r in rows if r.error)
    damaged = sum(1 for r in rows if r.summary and r.summary.problems)
    print(f"session-tree: wrote {site_note(out)}"
          + (f"; {unreadable} could not be read" if unreadable else "")
          + (f"; {damaged} with problems (listed on their pages)" if damaged else ""))
    return 0


def register(command) -> None:
    sp = command("export", cmd_export, file=False)
    sp.add_argument("file", metavar="FILE|ROOT", type=Path,
                    help="a session .jsonl file, or a folder of sessions (an agent's project folder, a sessions root, a home folder)")
    sp.add_argument("-o", "--output", metavar="OUT.html|DIR", type=Path,
                    help="a session: default the file's name with .html, in the current folder; a folder: the site's folder (required)")
    sp.add_argument("--leaf", metavar="ID", help="only the path from the root to this entry (a session, not a folder)")
    add_redaction_arguments(sp)
