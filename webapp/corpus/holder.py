"""The server that holds an index. DuckDB lets one process write a database and no other read it
meanwhile, so `session-tree sql`, `index` and `ls --index` cannot open the index of a running server:
`serve` writes where it answers beside the database while it runs, and they ask it instead.

The file is the user's alone (0600): it holds the server's token (the one `serve` prints), which
the commands send in their `Authorization` header. A command trusts the file only if it, its
folder and the server's process are all the user's, and nobody else may read or write the file:
another account could otherwise point the commands at a server of its own, which would read
their questions and answer what it likes."""

from __future__ import annotations

import json
import os
import sys
import urllib.error
import urllib.parse
import urllib.request
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from ..core.private import open_private, owned_alone, private_stat, process_owner
from .sql import QueryError


class UntrustedHolder(QueryError):
    """A file beside the index that may not be this user's server's: not asked."""


@dataclass(frozen=True)
class Holder:
    pid: int
    url: str  # the server's, ending in /
    token: str


def holder_path(db: Path) -> Path:
    return db.with_name(db.name + ".server.json")


@contextmanager
def announced(db: Path, url: str, token: str):
    """Say, while the block runs, that this process (serving at `url`) holds the index `db`."""
    path = holder_path(db)
    try:
        fd = open_private(path)
        with os.fdopen(fd, "w") as f:
            json.dump({"pid": os.getpid(), "url": url, "token": token}, f)
    except OSError as exc:  # the server serves all the same; the commands then say who holds the index
        print(f"session-tree: {path}: not written ({exc.strerror or exc}): `session-tree sql`, `index` and "
              "`ls --index` cannot ask this server", file=sys.stderr)
    try:
        yield
    finally:
        still = _said(path)[0]
        if still is not None and still.pid == os.getpid():  # (another server's since, if not ours: left alone)
            path.unlink(missing_ok=True)


def _said(path: Path) -> tuple[Holder | None, os.stat_result | None]:
    """What the file says, and the stat of the very file read (not of what the name points to a
    moment later)."""
    try:
        with open(path, "rb") as f:
            st = os.fstat(f.fileno())
            got = json.loads(f.read(65536))
        return Holder(int(got["pid"]), str(got["url"]), str(got["token"])), st
    except (OSError, ValueError, KeyError, TypeError):
        return None, None


def holder_of(db: Path, pid: int) -> Holder | None:
    """The server that said it holds `db`, if it is process `pid` (one that stopped without
    taking its file away is another process, or none); UntrustedHolder if the file, its folder
    or that process is not this user's, or others may read or write the file."""
    path = holder_path(db)
    holder, st = _said(path)
    if holder is None or holder.pid != pid:
        return None
    said = "not trusted, so the server it names is not asked"
    file_why, folder_why = private_stat(st), owned_alone(path.parent, mode=False)
    if file_why or folder_why:
        raise UntrustedHolder(f"{path if file_why else path.parent}: {said}: {file_why or folder_why}")
    runner = process_owner(pid)
    if runner != os.getuid():
        why = "gone" if runner is None else f"run by another user (uid {runner})"
        raise UntrustedHolder(f"{path}: {said}: its process (PID {pid}) is {why}")
    return holder


def ask(holder: Holder, query: str, how: str, limit: int, seconds: float) -> tuple[str, bool, bool]:
    """(what `sql` prints, whether rows were left out, whether the byte cap left them out) for
    `query`, answered by `holder`."""
    got = get(holder, "sql", {"sql": query, "how": how, "limit": limit, "seconds": seconds}, seconds + 30)
    return got["output"], bool(got["truncated"]), bool(got.get("over_bytes"))


def listed(holder: Holder, root: Path) -> list[dict]:
    """`ls --index`'s rows of the sessions under `root` (a path under the server's root), from
    the server's index once it is up to date."""
    return get(holder, "ls", {"root": str(root)}, None)["rows"]


def searched(holder: Holder, root: Path, query: str, limit: int) -> dict:
    """`search`'s hits (`Hit.as_dict()`, at most `limit`) for `query` in the sessions under `root`
    (a path under the server's root), from the server's index once it is up to date, with how
    many entries match in all."""
    return get(holder, "search", {"root": str(root), "q": query, "limit": limit}, None)


def indexed(holder: Holder, roots: list[Path]) -> dict:
    """`index`'s figures (`db.built`) of a refresh of `holder`'s index that started with the
    question, which covers `roots` (folders under the server's)."""
    return get(holder, "index", {"root": [str(r) for r in roots]}, None)


def get(holder: Holder, route: str, args: dict, timeout: float | None) -> dict:
    """The JSON the holder answers on its `/-/corpus/<route>` for `args` (an error it says, raised)."""
    request = urllib.request.Request(f"{holder.url}-/corpus/{route}?{urllib.parse.urlencode(args, doseq=True)}",
                                     headers={"Authorization": f"token {holder.token}"})
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
