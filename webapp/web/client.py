"""Whether anyone still waits for a piece of work, so that work done only for a client (a `dot`
run) stops when the client leaves.

A request's client is gone when its socket reads as closed: with nothing sent while it waits for
the answer, a readable socket that peeks no byte is a client that hung up. Under a server that
does not give the socket to the app (the test client, a proxy's pool) a client always looks
connected, so nothing is stopped that should not be.
"""

from __future__ import annotations

import contextlib
import contextvars
import select
import socket
from typing import Callable

from flask import has_request_context, request


class ClientGone(RuntimeError):
    """Every client that wanted this work has left; the work was stopped."""


def _connected(sock) -> bool:
    try:
        readable, _, _ = select.select([sock], [], [], 0)
        return not readable or sock.recv(1, socket.MSG_PEEK) != b""
    except (ConnectionError, TimeoutError):
        return False
    except (OSError, ValueError):  # a closed or TLS socket: cannot tell, so still wanted
        return True


def request_check() -> Callable[[], bool]:
    """A check, callable from any thread, of whether the current request's client is connected."""
    sock = request.environ.get("werkzeug.socket") if has_request_context() else None
    if sock is None:
        return lambda: True
    return lambda: _connected(sock)


_wanted: contextvars.ContextVar[Callable[[], bool] | None] = contextvars.ContextVar("wanted", default=None)


@contextlib.contextmanager
def wanted_while(check: Callable[[], bool]):
    """Work done in this block is wanted as long as `check()` holds (e.g. one of several waiting
    requests is still connected)."""
    token = _wanted.set(check)
    try:
        yield
    finally:
        _wanted.reset(token)


def still_wanted() -> bool:
    """Whether the work under way is still wanted: by the block's check, else by the current
    request's client."""
    check = _wanted.get()
    if check is None:
        check = request_check()
    return check()
