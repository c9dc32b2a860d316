"""A batch of session files as one Arrow table of their lines, for DuckDB to read in one query.

Python reads each file's bytes once and finds its newlines (numpy, at memory speed); the table's
`raw` column points into those bytes (no copy), one value per line with its newline, numbered as
the core numbers them (`SessionLog`: every `\\n` ends a line, blank lines included). The bytes
stay held, so that the few bodies the rows need whole (a branch's last turn, the first user
message) are parsed from them by line (`HeldBodies`), never read again."""

from __future__ import annotations

import os
from dataclasses import dataclass

import numpy as np
import orjson
import pyarrow as pa

from ..core.bodies import Bodies


@dataclass
class FileLines:
    """One file of a batch: its bytes and where each line starts (line n is
    `data[starts[n-1]:starts[n]]`, its newline included)."""

    path: str
    data: bytes
    starts: np.ndarray  # int64, one more than the complete lines
    stat: os.stat_result

    @property
    def lines(self) -> int:
        """Complete lines (ending in a newline)."""
        return len(self.starts) - 1

    @property
    def torn(self) -> bool:
        """Whether bytes follow the last newline (a line being written, read as the core reads a tail)."""
        return int(self.starts[-1]) < len(self.data)

    def line(self, n: int) -> bytes:
        return self.data[int(self.starts[n - 1]):int(self.starts[n])]


def read_file(path: str) -> FileLines:
    with open(path, "rb") as f:
        st = os.fstat(f.fileno())
        data = f.read()
    newlines = np.flatnonzero(np.frombuffer(data, np.uint8) == 10)
    starts = np.empty(len(newlines) + 1, np.int64)
    starts[0] = 0
    starts[1:] = newlines + 1
    return FileLines(path, data, starts, st)


def lines_table(files: list[FileLines]) -> pa.Table:
    """(fileno, line, raw) of every complete line of `files` (fileno: the index in `files`), one
    chunk per file, each `raw` a view of the file's bytes."""
    chunks = []
    for n, f in enumerate(files):
        count = f.lines
        raw = pa.LargeBinaryArray.from_buffers(pa.large_binary(), count, [None, pa.py_buffer(f.starts),
                                                                          pa.py_buffer(f.data)])
        chunks.append(pa.record_batch([pa.array(np.full(count, n, np.int32)),
                                       pa.array(np.arange(1, count + 1, dtype=np.int32)), raw],
                                      names=["fileno", "line", "raw"]))
    if not chunks:
        return pa.table({"fileno": pa.array([], pa.int32()), "line": pa.array([], pa.int32()),
                         "raw": pa.array([], pa.large_binary())})
    return pa.Table.from_batches(chunks)


class HeldBodies(Bodies):
    """The bodies of a file whose bytes are held, each parsed from its line when first read (the
    rows read a few: a branch's last turn, the name, the first user message, labels)."""

    def __init__(self, held: FileLines) -> None:
        super().__init__(None)
        self.held = held
        self.parsed: dict[int, dict] = {}
        self.path = held.path

    def body(self, entry) -> dict:
        line = entry.line
        obj = self.parsed.get(line)
        if obj is None:
            obj = self.parsed[line] = orjson.loads(self.held.line(line))
        return obj
