"""Redaction measured four ways.

1. False positives: every session file under the folders given (default sample_sessions/ and
   tests/fixtures/, which hold no secrets, so every value flagged is a false positive), against
   the distinct look-alike strings in them (git hashes, UUIDs, other tokens of 20 or more
   letters and digits); each flagged value is listed with its rule and what precedes it.
2. Recall: the planted-secret corpus of the tests (tests/redaction_corpus.py), every value
   found and none left in the redacted copies.
3. Speed: the scan's CPU time per megabyte, best of three.
4. Hostile text: one megabyte of each string made to make a pattern read from every start of
   a long run (`://a:` repeated, `eyJ` repeated, a long line of spaces after a name...); every
   rule must stay linear, so each takes about as long as plain text does.

    PYTHONPATH=. .venv/bin/python bench/redact_fp.py [FOLDER ...]
"""

from __future__ import annotations

import re
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

from webapp.core.redact import Choice, Scanner, redacted, scan_session

HEX = re.compile(r"(?<![0-9A-Za-z])[0-9a-f]{7,64}(?![0-9A-Za-z])")
UUID = re.compile(r"[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}")
TOKEN = re.compile(r"[A-Za-z0-9+/_\-]{20,}")
MB = 1_000_000
HOSTILE = {
    "plain prose": "the quick brown fox jumps over the lazy dog. " * (MB // 45),
    "://a: repeated": "://a:" * (MB // 5),
    "eyJ repeated": "eyJ" * (MB // 3),
    "sk- repeated": "sk-" * (MB // 3),
    "cookie: then a run": "cookie:" + "a" * MB,
    "clkey then spaces": "clkey" + " " * MB,
    "BEGIN PRIVATE KEY repeated": "-----BEGIN PRIVATE KEY-----" * (MB // 27),
    '"password": " repeated': '"password": "' * (MB // 14),
    "password: x lines": "password: x\n" * (MB // 12),
    "api_key words": "api_key " * (MB // 8),
    "base64 run": "AbCd0123+/" * (MB // 10),
    "64-char base64 lines": ("A1b2" * 16 + "\n") * (MB // 65),
    "\\u escapes": "\\u0041" * (MB // 6),
    "?token=x& repeated": "https://x/?" + "token=abcd&" * (MB // 11),
    "//x/:_authToken= line": "//a/:_authToken=" * (MB // 16),
}


def false_positives(folders: list[str]) -> None:
    print("1. False positives (files that hold no secrets: every value flagged is one)")
    for folder in folders:
        files = sorted(p for p in Path(folder).rglob("*.jsonl") if "subagents" not in p.parts)
        size = sum(p.stat().st_size for p in files)
        looks: dict[str, set[str]] = {"git hashes / hex": set(), "UUIDs": set(), "other tokens": set()}
        flagged: Counter = Counter()
        listed: list[str] = []
        start = time.perf_counter()
        for p in files:
            text = p.read_text(errors="replace")
            uuids = set(UUID.findall(text))
            looks["UUIDs"] |= uuids
            looks["git hashes / hex"] |= {h for h in HEX.findall(text) if any(c.isalpha() for c in h) and any(c.isdigit() for c in h)}
            looks["other tokens"] |= {t for t in TOKEN.findall(text) if any(c.isdigit() for c in t)} - uuids
            for f in scan_session(p).findings:
                flagged[f.rule] += 1
                listed.append(f"    {p.name[:40]}: {f.rule} {f.preview!r} after {f.before!r}")
        took = time.perf_counter() - start
        n = sum(len(v) for v in looks.values())
        total = sum(flagged.values())
        print(f"  {folder}: {len(files)} files, {size / MB:.1f} MB, scanned in {took:.1f} s")
        print("    look-alikes: " + ", ".join(f"{len(v):,} {k}" for k, v in looks.items()))
        print(f"    flagged: {total} ({', '.join(f'{r} {c}' for r, c in flagged.most_common()) or 'none'})"
              f" = {100 * total / max(n, 1):.3f}% of {n:,} distinct look-alike strings")
        for line in listed:
            print(line)


def recall() -> None:
    from tests.redaction_corpus import PLANTED, leaked, write_corpus

    print("2. Recall on the planted-secret corpus")
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp) / "root"
        paths = write_corpus(root)
        left: set[str] = set()
        for path in paths.values():
            with redacted(path, Choice(), name=path.relative_to(root).as_posix()) as (copy, _):
                left |= set(leaked("\n".join(str(p) + "\n" + p.read_text(errors="replace")
                                             for p in copy.parent.rglob("*") if p.is_file())))
    print(f"  {len(PLANTED)} planted values, {len(PLANTED) - len(left)} redacted, {len(left)} left: {sorted(left) or 'none'}")


def speed(folders: list[str]) -> None:
    files = [p for folder in folders for p in sorted(Path(folder).rglob("*.jsonl"))]
    size = sum(p.stat().st_size for p in files)
    best = float("inf")
    for _ in range(3):
        start = time.process_time()
        for p in files:
            scan_session(p)
        best = min(best, time.process_time() - start)
    print(f"3. Speed: {size / MB:.1f} MB scanned in {best:.2f} s of CPU (best of 3) = {size / MB / best:.2f} MB/s")


def hostile() -> None:
    print("4. Hostile text, 1 MB each (seconds of CPU for one scan)")
    for name, text in HOSTILE.items():
        scanner = Scanner()
        start = time.process_time()
        scanner.scan(text, "bench")
        print(f"  {name:30} {time.process_time() - start:6.2f} s")


def main(folders: list[str]) -> None:
    false_positives(folders)
    recall()
    speed(folders)
    hostile()


if __name__ == "__main__":
    main(sys.argv[1:] or ["sample_sessions", "tests/fixtures"])
