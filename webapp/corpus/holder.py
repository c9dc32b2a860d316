"""The server that holds an index. DuckDB lets one process write a database and no other read it
meanwhile, so `session-tree sql`, `index` and `ls --index` cannot open the index of a running server:
`serve` writes where it answers beside the database while it runs, and they ask it instead.

The file is the user's alone (0600): its token is what lets a query run with the CLI's own row
cap and time limit, which a web page the browser opens could not send."""

from __future__ import annotations

import json
import os
import secrets
import sys
import urllib.error
import urllib.parse
import urllib.request
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from .sql import QueryError

TOKEN_HEADER = "X-Session-Tree-Token"


@dataclass(frozen=True)
class Holder:
    pid: int
    url: str  # the server's, ending in /
    token: str


def holder_path(db: Path) -> Path:
    return db.with_name(db.name + ".server.json")


def new_token() -> str:
    return secrets.token_urlsafe(24)


@contextmanager
def announced(db: Path, url: str, token: str):
    """Say, while the block runs, that this process (serving at `url`) holds the index `db`."""
    path = holder_path(db)
    try:
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        with os.fdopen(fd, "w") as f:
            json.dump({"pid": os.getpid(), "url": url, "token": token}, f)
    except OSError as exc:  # the server serves all the same; the commands then say who holds the index
        print(f"session-tree: {path}: not written ({exc.strerror or exc}): `session-tree sql`, `index` and "
              "`ls --index` cannot ask this server", file=sys.stderr)
    try:
        yield
    finally:
        if holder_of(db, os.getpid()) is not None:  # (another server's since, if not ours: left alone)
            path.unlink(missing_ok=True)


def holder_of(db: Path, pid: int) -> Holder | None:
    """The server that said it holds `db`, if it is process `pid` (one that stopped without
    taking its file away is another process, or none)."""
    try:
        got = json.loads(holder_path(db).read_text())
        holder = Holder(int(got["pid"]), str(got["url"]), str(got["token"]))
    except (OSError, ValueError, KeyError, TypeError):
        return None
    return holder if holder.pid == pid else None


def ask(holder: Holder, query: str, how: str, limit: int, seconds: float) -> tuple[str, bool]:
    """(what `sql` prints, whether rows were left out) for `query`, answered by `holder`."""
    got = get(holder, "sql", {"sql": query, "how": how, "limit": limit, "seconds": seconds}, seconds + 30)
    return got["output"], bool(got["truncated"])


def listed(holder: Holder, root: Path) -> list[dict]:
    """`ls --index`'s rows of the sessions under `root` (a path under the server's root), from
    the server's index once it is up to date."""
    return get(holder, "ls", {"root": str(root)}, None)["rows"]


def indexed(holder: Holder, roots: list[Path]) -> dict:
    """`index`'s figures (`db.built`) of a refresh of `holder`'s index that started with the
    question, which covers `roots` (folders under the server's)."""
    return get(holder, "index", {"root": [str(r) for r in roots]}, None)


def get(holder: Holder, route: str, args: dict, timeout: float | None) -> dict:
    """The JSON the holder answers on its `/-/corpus/<route>` for `args` (an error it says, raised)."""
    request = urllib.request.Request(f"{holder.url}-/corpus/{route}?{urllib.parse.urlencode(args, doseq=True)}",
                                     headers={TOKEN_HEADER: holder.token})
    try:
        with urllib.request.urlopen(request, timeout=timeout) as response:
            return json.load(response)
    except urllib.error.HTTPError as exc:
        try:
            said = json.load(exc)["error"]
        except (ValueError, KeyError, TypeError):
            said = f"the server at {holder.url} answered {exc.code} {exc.reason}"
        raise QueryError(said) from None
    except (OSError, ValueError) as exc:
        raise QueryError(f"the server at {holder.url} (PID {holder.pid}), which holds the index, "
                         f"did not answer ({exc})") from None
