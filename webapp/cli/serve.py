"""`session-tree serve [ROOT]`: the web app, on the sessions under ROOT, else under the agents'
usual folders of the home folder, else on the bundled samples."""

from __future__ import annotations

import os
from pathlib import Path

from ..core.catalog import usual_places
from ..web.app import serve
from .args import whole_number
from .corpus import parquet_folder
from .listing import agent_folders


def cmd_serve(args) -> int:
    if args.corpus is not None:
        os.environ["SESSION_TREE_CORPUS"] = str(parquet_folder(args.corpus).resolve())
    root, within = args.root, ()
    if root is None and not os.environ.get("SESSION_TREE_ROOT") and usual_places(Path.home()):
        root, within = agent_folders(args)  # the agents' folders, else the bundled samples
    return serve(root, host=args.host, port=args.port, open_browser=args.open,
                 model=args.model, api_base=args.api_base, allow_hosts=tuple(args.allow_host),
                 within=tuple(within), read_only=args.read_only, corpus_db=args.db)


def register(command) -> None:
    sp = command("serve", cmd_serve, file=False)
    sp.add_argument("root", metavar="ROOT", nargs="?", type=Path)
    sp.add_argument("--host", default="127.0.0.1")
    sp.add_argument("--port", type=whole_number(1, 65535), default=8000)
    sp.add_argument("--open", action="store_true", help="open a browser on the app")
    sp.add_argument("--allow-host", action="append", default=[], metavar="NAME",
                    help="another host name the app may be reached by (for --host 0.0.0.0); repeatable")
    sp.add_argument("--model", help="litellm model for replies and summaries (else $SESSION_TREE_MODEL)")
    sp.add_argument("--api-base", help="an OpenAI-compatible server for that model (else $SESSION_TREE_API_BASE)")
    sp.add_argument("--read-only", action="store_true",
                    help="write nothing: hide every write control and refuse every writing route (403)")
    sp.add_argument("--db", metavar="PATH", type=Path,
                    help="the corpus index it builds and reads (default: $XDG_CACHE_HOME/session-tree/corpus.duckdb; "
                         "one process at a time may write an index)")
    sp.add_argument("--corpus", metavar="DIR", type=Path,
                    help="the corpus page and its SQL box read the Parquet tables of DIR")
