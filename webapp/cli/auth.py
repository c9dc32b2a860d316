"""`session-tree password`: the password the web app accepts besides the token `serve` prints
(for a browser that lost the printed address, or a server started from a script). Kept as a
salted hash in the config folder (webapp/core/password.py); `--remove` forgets it."""

from __future__ import annotations

import getpass
import sys

from ..core.errors import SessionError
from ..core.password import MIN_LENGTH, remove_password, set_password
from .inputs import read_capped


def _typed() -> str:
    """The new password: asked twice without echo at a terminal, else the first line of stdin
    (a script's, or a password manager's)."""
    if sys.stdin.isatty():
        first = getpass.getpass("New password: ")
        if getpass.getpass("Again: ") != first:
            raise SessionError("the two passwords differ; nothing was changed")
        return first
    data = read_capped(sys.stdin.buffer, 4096, "stdin")
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise SessionError(f"stdin: not UTF-8 text (byte {exc.start}); nothing was changed") from None
    return text.splitlines()[0] if text.strip() else ""


def cmd_password(args) -> int:
    if args.remove:
        had = remove_password()
        print("session-tree: the password is removed" if had else "session-tree: no password was set")
        return 0
    path = set_password(_typed())
    print(f"session-tree: the password is set (its hash is in {path}); a running server asks for it from now on")
    return 0


def register(command) -> None:
    sp = command("password", cmd_password, file=False)
    sp.add_argument("--remove", action="store_true", help="forget the password (the token alone then logs in)")
    sp.epilog = f"At least {MIN_LENGTH} characters, read twice at a terminal, else the first line of stdin."
