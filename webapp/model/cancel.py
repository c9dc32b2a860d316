"""A cancel that closes what is open: the connection to the model server, at once.

A `threading.Event` alone is only seen when the thread that reads the model's answer looks at
it, which is after the next piece arrives; a model still reading a long prompt sends nothing for
seconds and keeps both cores busy generating for no one. `Cancel.set()` also runs the closers
registered with `on_cancel` (the open stream's `close`), so the server sees its client go away
and stops generating.
"""

from __future__ import annotations

import threading
from typing import Callable


class Cancel(threading.Event):
    """A threading.Event whose `set` also closes what was registered with `on_cancel`."""

    def __init__(self) -> None:
        super().__init__()
        self._closers: list[Callable[[], None]] = []
        self._guard = threading.Lock()

    def on_cancel(self, close: Callable[[], None]) -> Callable[[], None]:
        """Run `close` when this is set (now, if it already is); returns what unregisters it."""
        with self._guard:
            if not self.is_set():
                self._closers.append(close)
                return lambda: self._forget(close)
        _quietly(close)
        return lambda: None

    def _forget(self, close: Callable[[], None]) -> None:
        with self._guard:
            if close in self._closers:
                self._closers.remove(close)

    def set(self) -> None:
        with self._guard:
            super().set()
            closers, self._closers = self._closers, []
        for close in closers:
            _quietly(close)


def _quietly(close: Callable[[], None]) -> None:
    try:
        close()
    except Exception:  # closing what already broke is not a second failure
        pass
