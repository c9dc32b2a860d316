"""What the readers of other agents' formats share: they keep every line read and build the
entries again from all of them when the file grows (their entries depend on later lines: a split
message, a summary line consumed by its compaction, usage reported after a message), and they
never write."""

from __future__ import annotations

from dataclasses import dataclass, field

from ..entries import Entry
from .base import Problem


@dataclass
class Built:
    header: dict
    entries: list[Entry]
    active_leaf: str | None
    problems: list[Problem] = field(default_factory=list)
    metadata: list[tuple[int, dict]] = field(default_factory=list)


class ReadOnlyReader:
    name = ""

    def __init__(self, log) -> None:
        self.log = log
        self._items: list[tuple[int, dict]] = []
        self._tail: tuple[int, dict] | None = None
        self._built: tuple | None = None  # (lines, with a tail, files beside) of the last build

    def line(self, obj: dict, line: int) -> None:
        self._items.append((line, obj))

    def tail(self, obj: dict, line: int) -> None:
        self._tail = (line, obj)

    def finish(self) -> None:
        state = (len(self._items), self._tail is not None, self.beside())
        if state == self._built and self._tail is None:
            return
        items = self._items + [self._tail] if self._tail else self._items
        built = self.build(items)
        log = self.log
        log.header = built.header
        log.entries = built.entries
        log.ids = {e.id: e for e in built.entries}
        log._active = built.active_leaf
        log.problems = built.problems
        log.metadata = built.metadata
        log.tail_entry = None  # the tail's entry, if any, is among the entries
        self._tail = None  # read again with the next bytes
        self._built = state

    def beside(self) -> tuple:
        """What the files read with this one look like (a change builds the entries again)."""
        return ()

    def build(self, items: list[tuple[int, dict]]) -> Built:
        raise NotImplementedError
