"""How often redaction flags ordinary text: every session file under the folders given (default
sample_sessions/ and tests/fixtures/, which hold no secrets, so every value flagged is a false
positive), against the distinct look-alike strings in them (git hashes, UUIDs, other tokens of
20 or more letters and digits), and how long the scan takes.

    .venv/bin/python bench/redact_fp.py [FOLDER ...]
"""

from __future__ import annotations

import re
import sys
import time
from collections import Counter
from pathlib import Path

from webapp.core.redact import scan_session

HEX = re.compile(r"(?<![0-9A-Za-z])[0-9a-f]{7,64}(?![0-9A-Za-z])")
UUID = re.compile(r"[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}")
TOKEN = re.compile(r"[A-Za-z0-9+/_\-]{20,}")


def main(folders: list[str]) -> None:
    for folder in folders:
        files = sorted(p for p in Path(folder).rglob("*.jsonl") if "subagents" not in p.parts)
        size = sum(p.stat().st_size for p in files)
        looks: dict[str, set[str]] = {"git hashes / hex": set(), "UUIDs": set(), "other tokens": set()}
        flagged: Counter = Counter()
        start = time.perf_counter()
        for p in files:
            text = p.read_text(errors="replace")
            uuids = set(UUID.findall(text))
            looks["UUIDs"] |= uuids
            looks["git hashes / hex"] |= {h for h in HEX.findall(text) if any(c.isalpha() for c in h) and any(c.isdigit() for c in h)}
            looks["other tokens"] |= {t for t in TOKEN.findall(text) if any(c.isdigit() for c in t)} - uuids
            for f in scan_session(p).findings:
                flagged[f.rule] += 1
        took = time.perf_counter() - start
        n = sum(len(v) for v in looks.values())
        total = sum(flagged.values())
        print(f"{folder}: {len(files)} files, {size / 1e6:.1f} MB, scanned in {took:.1f} s")
        print("  look-alikes: " + ", ".join(f"{len(v):,} {k}" for k, v in looks.items()))
        print(f"  flagged: {total} ({', '.join(f'{r} {c}' for r, c in flagged.most_common()) or 'none'})"
              f" = {100 * total / max(n, 1):.3f}% of {n:,} distinct look-alike strings")


if __name__ == "__main__":
    main(sys.argv[1:] or ["sample_sessions", "tests/fixtures"])
