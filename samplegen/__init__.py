"""Deterministic synthetic session files: the bundled `sample_sessions/` and benchmark inputs.

Real sessions are private, so the viewer, the tests and the benchmarks run on generated ones that
look like what the pi coding agent writes (SPEC §1-§2): user prompts, assistant turns with thinking,
text and tool calls, tool results with code, test output and tracebacks, usage that grows along a
path and drops after a compaction. Everything comes from one seeded `random.Random` and a synthetic
clock, so a run reproduces the same bytes: `python -m samplegen [OUTDIR]`.

Outside the product package (`webapp` never imports it): `builder` holds the parts and the
builder, `rich` the hand-written rich sample, `synthetic` sessions of any size, `edge_cases` the
torn and the old pi v1 file; `__main__` writes them all. The generators the tests and the
benchmarks call are named here.
"""

from .builder import SessionBuilder, write_jsonl
from .edge_cases import damaged_session, pi_v1_session
from .rich import rich_session
from .synthetic import large_session, many_branches_session, retry_session, synthetic_session

__all__ = ["SessionBuilder", "damaged_session", "large_session", "many_branches_session", "pi_v1_session",
           "retry_session", "rich_session", "synthetic_session", "write_jsonl"]
