"""The bundled files a reader must cope with: a session as a crash leaves it (a torn line, an
entry whose parent exists nowhere) and an old pi v1 file (no ids, a compaction by line index).
"""

from __future__ import annotations

import orjson

from webapp.core.agents.pi.reader import as_v1

from .builder import DEFAULT_MODEL, SessionBuilder, iso_to_ms, uuid7_at
from .synthetic import synthetic_session


def damaged_session() -> tuple[dict, list[str]]:
    """A small session as a crash leaves it: one torn line in the middle, and one entry whose
    parent exists nowhere. Returned as raw lines, since one of them is not JSON."""
    b = SessionBuilder("/home/ana/projects/invoice-api", seed=303,
                       start_ms=iso_to_ms("2026-03-03T16:40:12.034+00:00"))
    b.model_change("claude-sonnet-4-5")
    b.thinking_level("off")
    b.user("Add a `__repr__` to `Invoice` that shows the number and the customer.")
    models_py = ('from dataclasses import dataclass, field\nfrom decimal import Decimal\n\n\n'
                 '@dataclass\nclass Line:\n    description: str\n    quantity: int\n'
                 '    unit_price: Decimal\n\n\n@dataclass\nclass Invoice:\n    number: str\n'
                 '    customer: str\n    lines: list[Line] = field(default_factory=list)\n'
                 '    discount: str | None = None\n    note: str = ""\n')
    b.step([b.read("invoice_api/models.py", models_py)])
    b.step([b.edit("invoice_api/models.py", '    note: str = ""\n',
                   '    note: str = ""\n\n    def __repr__(self) -> str:\n'
                   '        return f"Invoice({self.number!r}, {self.customer!r})"\n')])
    answered = b.answer("Done: `repr(invoice)` now reads `Invoice('2026-0042', 'Acme GmbH')`.")
    b.user("Now make `Line` frozen so lines can go into sets.")
    torn = len(b.entries) - 1
    b.tip = answered  # the torn prompt was lost; the session went on from the last answer
    b.user("Make `Line` a frozen dataclass.")
    b.step([b.edit("invoice_api/models.py", "@dataclass\nclass Line:",
                   "@dataclass(frozen=True)\nclass Line:")])
    b.answer("`Line` is frozen now; assigning to a field raises `FrozenInstanceError`.")
    b.tip = uuid7_at(b.ms, b.rng)  # a parent that was never written
    b.user("Also run ruff on the package.")
    b.step([b.bash("ruff check invoice_api", "All checks passed!")])
    b.answer("`ruff check invoice_api`: no issues.")
    lines = [orjson.dumps(e).decode() for e in b.entries]
    lines[torn] = lines[torn][: lines[torn].index('"text":"') + 24]  # cut inside the prompt
    return b.header, lines


def pi_v1_session() -> tuple[dict, list[dict]]:
    """An old pi file: no `version`, no ids (entries chain in file order), the model in the
    header, and a compaction that points at its first kept entry by line index."""
    header, entries = synthetic_session(30, seed=1118, branches=0, compactions=1,
                                        project="legacy-cli",
                                        start_ms=iso_to_ms("2025-11-18T10:05:33.910+00:00"))
    _, v1 = as_v1(header, entries)
    header = {"type": "session", "id": header["id"], "timestamp": header["timestamp"],
              "cwd": header["cwd"], "provider": "anthropic", "modelId": DEFAULT_MODEL,
              "thinkingLevel": "medium"}
    return header, v1
