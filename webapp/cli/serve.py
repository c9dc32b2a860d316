"""`session-tree serve [ROOT]`: the web app on the sessions under ROOT, else under the agents'
usual folders of the home folder; and `session-tree demo`: the web app on a fresh copy of the
bundled sample sessions (what `serve` does too where there are no agents' folders), so that what
a visitor writes never lands in the package's own files."""

from __future__ import annotations

import os
from pathlib import Path

from ..bundled import demo_copy
from ..web.app import serve
from .args import whole_number
from .corpus import parquet_folder
from .places import agent_folders


def cmd_serve(args) -> int:
    if args.corpus is not None:
        os.environ["SESSION_TREE_CORPUS"] = str(parquet_folder(args.corpus).resolve())
    if args.root is not None or os.environ.get("SESSION_TREE_ROOT"):
        return _serve(args, args.root, (), args.db)
    found = agent_folders(args)
    if found is None:
        return cmd_demo(args)
    return _serve(args, *found, args.db)


def cmd_demo(args) -> int:
    with demo_copy() as (sessions, index):
        return _serve(args, sessions, (), getattr(args, "db", None) or index)


def _serve(args, root: Path | None, within, db: Path | None) -> int:
    return serve(root, host=args.host, port=args.port, open_browser=args.open,
                 models=tuple(args.model), api_base=args.api_base, allow_hosts=tuple(args.allow_host),
                 within=tuple(within), read_only=args.read_only, corpus_db=db, no_auth=args.no_auth,
                 allow_sandbox=args.allow_sandbox, allow_bash=args.allow_bash)


def _server_options(sp) -> None:
    """The options of a command that starts the web app."""
    sp.add_argument("--host", default="127.0.0.1")
    sp.add_argument("--port", type=whole_number(1, 65535), default=8000)
    sp.add_argument("--open", action="store_true", help="open a browser on the app")
    sp.add_argument("--allow-host", action="append", default=[], metavar="NAME",
                    help="another host name the app may be reached by (for --host 0.0.0.0); repeatable")
    sp.add_argument("--model", action="append", default=[], metavar="M",
                    help="a litellm model the pages may call (the first is the default for replies and summaries, "
                         "else $SESSION_TREE_MODEL); repeatable: a form may pick only among these")
    sp.add_argument("--api-base", help="an OpenAI-compatible server for those models (else $SESSION_TREE_API_BASE)")
    sp.add_argument("--allow-sandbox", action="store_true",
                    help="let a replay run pi's file tools on a throwaway copy of a session's folder (off by default)")
    sp.add_argument("--allow-bash", action="store_true",
                    help="let a sandbox replay run bash too (implies --allow-sandbox; refused where bubblewrap cannot "
                         "isolate it)")
    sp.add_argument("--read-only", action="store_true",
                    help="write nothing: hide every write control and refuse every writing route (403)")


def _no_auth_option(sp) -> None:
    sp.add_argument("--no-auth", action="store_true",
                    help="ask nobody who they are: every account on this machine may then read and change what it "
                         "serves (by default the address printed carries a token; see session-tree password)")


def register(command) -> None:
    sp = command("serve", cmd_serve, file=False)
    sp.add_argument("root", metavar="ROOT", nargs="?", type=Path)
    _server_options(sp)
    sp.add_argument("--db", metavar="PATH", type=Path,
                    help="the corpus index it builds and reads (default: $XDG_CACHE_HOME/session-tree/corpus.duckdb; "
                         "one process at a time may write an index)")
    _no_auth_option(sp)
    sp.add_argument("--corpus", metavar="DIR", type=Path,
                    help="the corpus page and its SQL box read the Parquet tables of DIR")

    sp = command("demo", cmd_demo, file=False)
    _server_options(sp)
    _no_auth_option(sp)
