"""The one way a model's work reaches the page: a worker thread, an event queue, server-sent
events, and a cancel that follows the browser.

A reply, a summary (the compaction preview, a regenerate, a fork's branch summary), an ask and
a replay all stream through `event_stream`: the work runs in a thread and calls `send(event,
data)` as it goes (a model's text arrives piece by piece); each event is framed here as SSE.
A browser that stops reading — its Cancel aborts the fetch, or the person leaves the page — is
noticed at the next write, and a comment line is written after each second of silence so that
it is noticed while the model is still quiet too. Then the work's `Cancel` is set, which shuts
the model server's connection at once (model/cancel.py): the server stops generating, and the
work writes nothing of what it was given up on.
"""

from __future__ import annotations

import json
import queue
import threading
from typing import Callable, Iterable, Iterator

from flask import Response, stream_with_context

from ..model.cancel import Cancel

SILENCE_CHECK = 1.0  # seconds without an event after which the browser is checked for (a comment line)
HEADERS = {"Cache-Control": "no-cache", "X-Accel-Buffering": "no"}

Send = Callable[[str, dict], None]
Shape = Callable[[str, dict], tuple[str, dict]]


def sse(event: str, data: dict) -> str:
    """One server-sent event."""
    return f"event: {event}\ndata: {json.dumps(data)}\n\n"


def event_response(frames: Iterable[str]) -> Response:
    """A text/event-stream response of `frames` (already framed by `sse`)."""
    return Response(stream_with_context(frames), mimetype="text/event-stream", headers=HEADERS)


def event_stream(work: Callable[[Send], None], cancel: Cancel, first: Iterable[tuple[str, dict]] = (),
                 shape: Shape | None = None, failed: Callable[[Exception], tuple[str, dict]] | None = None) -> Response:
    """Run `work(send)` in a thread and stream what it sends: the `first` events, then each of
    the work's (through `shape`, which runs in the request's context, so it may render a
    template). A browser gone sets `cancel`. An exception the work lets out is said, as
    `failed(exc)` makes it (by default an `error` event), not lost in a log."""
    return event_response(_frames(work, cancel, list(first), shape, failed or _error_event))


def _error_event(exc: Exception) -> tuple[str, dict]:
    return "error", {"message": f"{type(exc).__name__}: {exc}", "kind": "server"}


def _frames(work, cancel: Cancel, first, shape: Shape | None, failed) -> Iterator[str]:
    events: queue.Queue = queue.Queue()
    finished = threading.Event()

    def run() -> None:
        try:
            work(lambda event, data: events.put((event, data)))
        except Exception as exc:  # whatever else breaks is said in the page
            events.put(failed(exc))
        finally:
            finished.set()
            events.put(None)

    threading.Thread(target=run, name="model-stream", daemon=True).start()
    try:
        for event, data in first:
            yield sse(event, data)
        while True:
            try:
                item = events.get(timeout=SILENCE_CHECK)
            except queue.Empty:
                yield ": still working\n\n"  # a write that fails once the browser has gone
                continue
            if item is None:
                return
            yield sse(*(shape(*item) if shape else item))
    finally:  # the end of the work, or the browser gone (the server closes this generator)
        if not finished.is_set():
            cancel.set()
