"""`python -m samplegen [OUTDIR]`: write every bundled sample (default: the repository's
`sample_sessions/`), byte for byte the same at each run."""

from __future__ import annotations

import sys
from pathlib import Path

from .builder import session_path, write_jsonl
from .conversations import demo_conversation
from .edge_cases import damaged_session, pi_v1_session
from .rich import rich_session
from .synthetic import large_session

DEFAULT_OUT = Path(__file__).resolve().parent.parent / "sample_sessions"

SAMPLES = (rich_session, large_session, damaged_session, pi_v1_session)


def main(argv: list[str] | None = None) -> int:
    """Regenerate every sample under OUTDIR; stale `.jsonl` files in the folders it writes are
    removed, so a changed generator leaves no old copies behind."""
    args = sys.argv[1:] if argv is None else argv
    out = Path(args[0]) if args else DEFAULT_OUT
    written = []
    made = [make() for make in SAMPLES]
    made += demo_conversation()  # a conversation across files: a session, its fork, a fork of that
    for header, entries in made:
        path = out / session_path(header)
        write_jsonl(path, header, entries)
        written.append(path)
        print(f"{path}  ({len(entries)} entries)")
    for stale in {p for w in written for p in w.parent.glob("*.jsonl")} - set(written):
        stale.unlink()
    return 0


if __name__ == "__main__":
    sys.exit(main())
