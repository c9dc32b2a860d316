"""The MCP server (`webapp.mcp`) over streamable HTTP at `/mcp`, inside the web app: the same
tools as `session-tree mcp`, on the sessions this server serves, with its index.

It answers only to the server's token in the `Authorization` header (`token_only`, auth.py):
an agent is configured with it, and no page of another site can send that header, so the form
token of the CSRF check is not asked for. The write tools are offered only when the server
writes (`serve --read-only` offers none).

The SDK gives an ASGI app; the server is WSGI (werkzeug, threaded). a2wsgi runs the ASGI app on
an event loop of its own thread and answers each request through it (a well-used adapter rather
than a bridge of our own); the SDK's session manager runs on that loop for the life of the app.
The transport is stateless with JSON answers: each POST is one request and its answer, so no
stream stays open between requests and nothing is kept per client."""

from __future__ import annotations

import asyncio
import concurrent.futures
import threading

from flask import Blueprint, current_app

from .auth import token_only
from .guard import own_write_rule

bp = Blueprint("mcp", __name__)
_making = threading.Lock()
START_SECONDS = 30  # for the SDK's session manager to start on its loop


def _endpoint(app):
    """The WSGI app that answers MCP for `app`, made on first use (a server nobody asks over MCP
    starts no loop)."""
    with _making:
        if "mcp_endpoint" not in app.extensions:
            app.extensions["mcp_endpoint"] = _start(app)
        return app.extensions["mcp_endpoint"]


def _start(app):
    from a2wsgi import ASGIMiddleware
    from mcp.server.transport_security import TransportSecuritySettings

    from ..mcp.server import build_server
    from ..mcp.sources import Sources

    server = build_server(Sources.of_app(app))
    asgi = server.streamable_http_app(
        streamable_http_path="/mcp", json_response=True, stateless_http=True,
        # (the app's own check_host refuses a DNS-rebinding page's host first, --allow-host included)
        transport_security=TransportSecuritySettings(enable_dns_rebinding_protection=False))
    wsgi = ASGIMiddleware(asgi)
    started: concurrent.futures.Future = concurrent.futures.Future()

    async def hold() -> None:
        async with server.session_manager.run():
            started.set_result(None)
            await asyncio.Event().wait()  # for as long as the process serves

    asyncio.run_coroutine_threadsafe(hold(), wsgi.loop)
    started.result(timeout=START_SECONDS)
    return wsgi


@bp.post("/mcp")  # (stateless: no stream to GET, no session to DELETE; a GET is answered 405, as MCP asks)
@token_only(refusal="this MCP endpoint answers only with the server's token: send it in an Authorization header "
                    "(`Authorization: Bearer TOKEN`, the token `session-tree serve` printed and wrote beside its index)")
@own_write_rule
def mcp():
    """MCP's streamable HTTP transport, answered by the SDK."""
    return _endpoint(current_app._get_current_object())
