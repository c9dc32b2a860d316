"""Synthetic sessions of any size for the large sample and the benchmarks: projects, tasks,
tool outputs and answers drawn from one seeded generator, with branches and compactions where
asked (`synthetic_session`), or with many short side branches (`many_branches_session`).
"""

from __future__ import annotations

from .builder import DEEP_PATH_ENTRIES, DEFAULT_MODEL, MODELS, SessionBuilder, fill, iso_to_ms


PROJECTS = {
    "data-pipeline": dict(
        pkg="pipeline", cmd="pipeline",
        modules=["extract", "transform", "load", "schema", "dedupe"],
        functions=["parse_rows", "normalize_dates", "dedupe_orders", "load_batch",
                   "read_manifest", "coerce_amount"],
        docs=["README.md", "docs/operations.md"],
        flags=["--dry-run", "--since", "--batch-size", "--limit"],
        goal="Keep the nightly CSV import of `pipeline` correct and fast.",
        constraints=["Python 3.12, no new dependencies", "Public functions keep their signatures",
                     "Every change comes with a test"]),
    "legacy-cli": dict(
        pkg="legacy", cmd="legacy",
        modules=["commands", "report", "export", "config"],
        functions=["parse_rows", "render_table", "read_report", "coerce_amount"],
        docs=["README.md"],
        flags=["--json", "--verbose", "--output"],
        goal="Modernize `legacy`, the old CSV reporting tool, without breaking its users.",
        constraints=["Output format must not change", "Keep Python 3.9 support"]),
}

# prompt, tool steps (one tuple per assistant message, its calls run in parallel), answer, module
TASKS = [
    ("`tests/test_{module}.py::test_{fn}_skips_rows_without_id` fails on CI with "
     "`KeyError: 'customer_id'`. Find out why and fix it without changing the public API.",
     [("test_fail",), ("read_module", "read_test"), ("edit",), ("test_pass",)], "fix", None),
    ("Add a `{flag}` option to `{cmd} run` and cover it with a test.",
     [("read_module",), ("edit",), ("write_test",), ("test_pass",), ("run_cli",)], "flag", "cli"),
    ("Refactor `{pkg}/{module}.py`: `{fn}` has grown too long. Split it into smaller functions; "
     "behaviour must stay identical.",
     [("read_module",), ("grep",), ("edit",), ("edit",), ("test_pass",)], "refactor", None),
    ("Write a section in `{doc}` that explains what `{fn}` does with empty or missing values.",
     [("read_doc", "read_module"), ("edit_doc",)], "docs", None),
    ("`{cmd} run` takes 40 minutes on the March export. Profile it and fix the slowest part.",
     [("profile",), ("read_module",), ("edit",), ("test_pass",), ("profile",)], "perf", None),
    ("`{cmd} run --since 2026-03-01` crashes with `KeyError: 'customer_id'`. Fix it and add a "
     "regression test.",
     [("crash",), ("read_module",), ("edit",), ("edit_test",), ("test_pass",)], "crash", None),
    ("Add type hints to `{pkg}/{module}.py` and make `mypy --strict` pass for that file.",
     [("mypy",), ("read_module",), ("edit",), ("mypy_ok",)], "types", None),
]
CHECK_PROMPT = "Run the tests and ruff once more before I push."
SUMMARY_PROMPT = "Give me a two-line summary of today's changes for the changelog."

ANSWERS = {
    "fix": "## Fixed `{fn}`\n\nThe test builds a row without `customer_id`; `{fn}` indexed "
           "`row[\"customer_id\"]` directly and raised `KeyError`.\n\n- rows without "
           "`customer_id` are skipped and logged, like rows without `id`\n- the signature is "
           "unchanged, so callers are unaffected\n\n```python\nkey = row.get(\"customer_id\")\n"
           "if key is None:\n    log.warning(\"line %d: no customer_id, skipped\", lineno)\n"
           "    continue\n```\n\n`python -m pytest -q`: {n} passed.",
    "flag": "## `{flag}` added\n\n`{cmd} run {flag}` is wired through:\n\n1. the option is "
            "defined in `{pkg}/cli.py`\n2. `load_batch` honours it\n3. "
            "`tests/test_cli_{fn}.py` covers it\n\n```console\n$ {cmd} run --since 2026-03-01 "
            "{flag}\n```",
    "refactor": "## Refactored `{fn}`\n\n`{fn}` is now three small steps with the same "
                "behaviour:\n\n| step | function |\n|---|---|\n| parse | `_parse_row` |\n"
                "| validate | `_valid` |\n| convert | `_to_record` |\n\nAll {n} tests pass; "
                "both call sites are unchanged.",
    "docs": "Added a section to `{doc}`:\n\n> Empty input returns an empty list; a missing "
            "amount counts as `0.0` and is logged.\n\nIt sits under the `{fn}` heading, so the "
            "table of contents picks it up.",
    "perf": "## Where the time went\n\nThe profile showed `{fn}` parsing every field again per "
            "row, and `load_batch` committing **per row**.\n\n- numbers are parsed once per row\n"
            "- commits happen every 5,000 rows (`batched(..., size=5_000)`)\n\nThe same run now "
            "takes **{secs} s** in the profile. Tests: {n} passed.",
    "crash": "### Root cause\n\nThe March export has rows without `customer_id`, and `{fn}` "
             "assumed the column is always set.\n\n### Fix\n\n- `{fn}` skips such rows and logs "
             "their line number\n- `test_{fn}_missing_customer` reproduces the crash\n\n"
             "{n} tests pass.",
    "types": "`mypy --strict {pkg}/{module}.py` is clean now.\n\n- return types on every "
             "function\n- rows are `Mapping[str, str]`, records a `TypedDict` named `Record`\n"
             "- no `Any` left in `{fn}`",
    "check": "All green:\n\n- `python -m pytest -q`: {n} passed\n- `ruff check`: no issues",
    "summary": "- `{fn}` skips malformed rows instead of crashing\n- `{cmd} run` got faster and "
               "learned `{flag}`",
}

THINKING = [
    "The user wants a change around `{fn}`. Look at `{pkg}/{module}.py` first and check how "
    "`{fn}` is called before changing anything.",
    "Get the failing output before editing. Running only `tests/test_{module}.py` keeps it fast.",
    "`{fn}` is used by the CLI and the tests, so its signature must stay. Smallest safe change "
    "first, then the full suite.",
]

STEP_TEXT = {
    "test_fail": "Let me reproduce the failure first.",
    "crash": "Reproducing the crash.",
    "read_module": "Reading `{pkg}/{module}.py`.",
    "edit": "Making the change in `{fn}`.",
    "edit_miss": "Updating the loop in `{fn}`.",
    "test_pass": "Running the full suite.",
    "profile": "Profiling the run.",
    "grep": "Checking the call sites of `{fn}`.",
    "mypy": "Let's see what mypy complains about.",
}

CODE_HEAD = '''"""{pkg}.{module}: the {module} step of `{cmd} run`."""
from __future__ import annotations

import csv
import logging
from pathlib import Path

log = logging.getLogger(__name__)
'''

CODE_BLOCKS = [
    '''

def {fn}(rows: list[dict[str, str]]) -> list[dict[str, object]]:
    """Normalise raw rows; rows without an id are logged and skipped."""
    out = []
    for lineno, row in enumerate(rows, start=2):
        if not row.get("id"):
            log.warning("line %d: no id, skipped", lineno)
            continue
        key = row["customer_id"]
        out.append({"id": int(row["id"]), "customer": key, "amount": float(row["amount"] or 0)})
    return out
''',
    '''

def read_{fn}_file(path: Path, delimiter: str = ";") -> list[dict[str, str]]:
    with path.open(newline="", encoding="utf-8") as fh:
        return list(csv.DictReader(fh, delimiter=delimiter))
''',
    '''

def {fn}_batched(items: list, size: int = 500):
    for start in range(0, len(items), size):
        yield items[start:start + size]
''',
    '''

class {fn}_error(RuntimeError):
    """Raised when {fn} cannot continue; the message names the input line."""

    def __init__(self, lineno: int, reason: str) -> None:
        super().__init__(f"line {lineno}: {reason}")
        self.lineno = lineno
''',
]

TEST_HEAD = "import pytest\n\nfrom {pkg}.{module} import {fn}\n"

TEST_BLOCK = '''

def test_{fn}_skips_rows_without_id(caplog):
    rows = [{"id": "", "customer_id": "C1", "amount": "3.50"}, {"id": "7", "amount": "1"}]
    assert [r["id"] for r in {fn}(rows)] == [7]
    assert "no id" in caplog.text


def test_{fn}_empty():
    assert {fn}([]) == []
'''

DOC_BLOCK = '''
## `{fn}`

`{fn}` reads the rows produced by `{pkg}.{module}` and returns normalised records. Rows
without an `id` are skipped and logged at WARNING level; amounts are parsed as floats.

```console
$ {cmd} run --since 2026-03-01 --dry-run
```
'''

EDITS = [
    ('        key = row["customer_id"]',
     '        key = row.get("customer_id")\n        if key is None:\n'
     '            log.warning("line %d: no customer_id, skipped", lineno)\n            continue'),
    ("def {fn}(rows: list[dict[str, str]]) -> list[dict[str, object]]:",
     "def {fn}(rows: Iterable[Mapping[str, str]]) -> list[Record]:"),
    ('    with path.open(newline="", encoding="utf-8") as fh:',
     '    with path.open(newline="", encoding="utf-8-sig") as fh:'),
    ("def {fn}_batched(items: list, size: int = 500):",
     "def {fn}_batched(items: Sequence[T], size: int = 5_000) -> Iterator[Sequence[T]]:"),
]

OUTPUTS = {
    "test_fail": '''.....F....
=================================== FAILURES ===================================
_______________________ test_{fn}_skips_rows_without_id ________________________

    def test_{fn}_skips_rows_without_id(caplog):
        rows = [{"id": "", "customer_id": "C1", "amount": "3.50"}, {"id": "7", "amount": "1"}]
>       assert [r["id"] for r in {fn}(rows)] == [7]

tests/test_{module}.py:7:
_ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _
{pkg}/{module}.py:19: in {fn}
    key = row["customer_id"]
E   KeyError: 'customer_id'
=========================== short test summary info ============================
FAILED tests/test_{module}.py::test_{fn}_skips_rows_without_id - KeyError: 'customer_id'
1 failed, 9 passed in {secs}s''',
    "crash": '''2026-03-04 02:00:01 INFO  {pkg}.extract: reading exports/2026-03-01.csv (412,881 rows)
Traceback (most recent call last):
  File "<frozen runpy>", line 198, in _run_module_as_main
  File "<frozen runpy>", line 88, in _run_code
  File "{cwd}/{pkg}/cli.py", line 61, in <module>
    sys.exit(main())
             ^^^^^^
  File "{cwd}/{pkg}/cli.py", line 54, in main
    records = {fn}(rows)
              ^^^^^^^^^^
  File "{cwd}/{pkg}/{module}.py", line 19, in {fn}
    key = row["customer_id"]
          ~~~^^^^^^^^^^^^^^^
KeyError: 'customer_id\'''',
    "profile": '''         48213377 function calls (48213102 primitive calls) in {secs} seconds

   Ordered by: cumulative time

   ncalls  tottime  percall  cumtime  percall filename:lineno(function)
        1    0.000    0.000   {secs}   {secs} cli.py:40(main)
   412881    9.412    0.000   31.207    0.000 {module}.py:11({fn})
  1238643   14.905    0.000   14.905    0.000 {built-in method builtins.float}
   412881    6.390    0.000    6.390    0.000 load.py:52(load_batch)''',
    "run_cli": '''2026-03-04 09:12:44 INFO  {pkg}.extract: reading exports/2026-03-01.csv (412,881 rows)
2026-03-04 09:12:51 INFO  {pkg}.{module}: {fn}: 412,530 records, 351 skipped
2026-03-04 09:12:51 INFO  {pkg}.load: {flag} given, nothing written''',
    "mypy": '''{pkg}/{module}.py:11: error: Function is missing a return type annotation  [no-untyped-def]
{pkg}/{module}.py:27: error: Missing type parameters for generic type "list"  [type-arg]
Found 2 errors in 1 file (checked 1 source file)''',
    "mypy_ok": "Success: no issues found in 1 source file",
    "lint": "All checks passed!",
    "grep": '''{pkg}/{module}.py:11:def {fn}(rows: list[dict[str, str]]) -> list[dict[str, object]]:
{pkg}/cli.py:54:    records = {fn}(rows)
tests/test_{module}.py:3:from {pkg}.{module} import {fn}''',
}

COMMANDS = {
    "test_fail": "python -m pytest tests/test_{module}.py -q",
    "crash": "python -m {pkg}.cli run --since 2026-03-01",
    "profile": "python -m cProfile -s cumtime -m {pkg}.cli run --limit 500000 | head -12",
    "run_cli": "python -m {pkg}.cli run --since 2026-03-01 {flag}",
    "mypy": "mypy --strict {pkg}/{module}.py",
    "mypy_ok": "mypy --strict {pkg}/{module}.py",
    "lint": "ruff check {pkg} tests",
    "grep": 'grep -rn "{fn}" {pkg} tests',
    "test_pass": "python -m pytest -q",
}
FAILING = {"test_fail", "crash", "mypy"}
PYTEST_PASS = "." * 72 + " [ 60%]\n" + "." * 48 + " [100%]\n{n} passed in {secs}s"

DECISIONS = [
    "**Skip, don't crash**: malformed rows are logged and skipped so one bad line cannot stop "
    "the nightly run",
    "**Commit in batches of 5,000**: per-row commits dominated the runtime",
    "**No new dependencies**: `csv` from the standard library is fast enough",
    "**Signatures stay**: `{fn}` is imported by the reporting job",
]
BRANCH_LABELS = ["dead end", "regression", "keep for later", "slower"]


def _headline(text: str) -> str:
    """First sentence of a prompt, short enough for a summary bullet."""
    first = text.split(". ")[0].rstrip(".")
    return first if len(first) <= 110 else first[:107] + "..."


def _prompts(entries) -> list[str]:
    return [e["message"]["content"][0]["text"] for e in entries
            if e["type"] == "message" and e["message"]["role"] == "user"]


def _done(prompts: list[str]) -> list[str]:
    """Summary bullets for finished prompts: distinct, the latest nine, older ones counted."""
    done = list(dict.fromkeys(_headline(p) for p in prompts))
    if len(done) > 10:
        done = [f"{len(done) - 9} earlier tasks (see the files below)"] + done[-9:]
    return done


class _Synth:
    """Writes task-shaped turns into a builder and tracks where branches and compactions go."""

    def __init__(self, b: SessionBuilder, project: str, sizes: tuple[int, int], name: str | None):
        self.b, self.rng, self.v = b, b.rng, PROJECTS[project]
        self.sizes, self.name = sizes, name
        self.users: list[str] = []        # every user message: branches fork before one
        self.trunk_users: list[str] = []  # trunk prompts since the last compaction
        self.trunk_count = 0
        self.due: list[int] = []          # trunk sizes at which to compact

    def _words(self, module: str | None) -> dict[str, str]:
        v, rng = self.v, self.rng
        return {"pkg": v["pkg"], "cmd": v["cmd"], "cwd": self.b.cwd,
                "module": module or rng.choice(v["modules"]), "fn": rng.choice(v["functions"]),
                "doc": rng.choice(v["docs"]), "flag": rng.choice(v["flags"]),
                "n": str(rng.randint(60, 180)), "secs": f"{rng.uniform(0.4, 48):.2f}"}

    def plan(self):
        prompt, groups, answer, module = self.rng.choice(TASKS)
        groups = list(groups)
        if ("edit",) in groups and self.rng.random() < 0.15:  # an edit that misses, then a re-read
            i = groups.index(("edit",))
            groups[i:i] = [("edit_miss",), ("read_module",)]
        thinking = self.rng.choice(THINKING) if self.rng.random() < 0.3 else None
        return prompt, groups, ANSWERS[answer], self._words(module), thinking

    @staticmethod
    def size(plan) -> int:
        return 2 + sum(1 + len(g) for g in plan[1])

    def _sized(self, head: str, block: str, words: dict) -> str:
        """A file of log-uniform size in `self.sizes`: `head`, then `block` for several names."""
        lo, hi = self.sizes
        size = int(lo * (hi / lo) ** self.rng.random())
        parts, total, fns = [fill(head, words)], 0, self.v["functions"]
        while total < size:
            parts.append(fill(block, {**words, "fn": fns[len(parts) % len(fns)]}))
            total += len(parts[-1])
        text = "".join(parts)
        return text if len(text) <= size else text[:text.rfind("\n", 0, size) + 1]

    def call(self, kind: str, w: dict) -> tuple:
        b = self.b
        module_path = f"{w['pkg']}/{w['module']}.py"
        if kind == "read_module":
            return b.read(module_path, self._sized(CODE_HEAD, self.rng.choice(CODE_BLOCKS), w))
        if kind == "read_test":
            return b.read(f"tests/test_{w['module']}.py", self._sized(TEST_HEAD, TEST_BLOCK, w))
        if kind == "read_doc":
            return b.read(w["doc"], self._sized("# {cmd}\n", DOC_BLOCK, w))
        if kind in ("edit", "edit_miss"):
            old, new = (fill(t, w) for t in self.rng.choice(EDITS))
            return b.edit(module_path, old, new, applied=kind == "edit")
        if kind == "edit_test":
            old = fill("def test_{fn}_empty():", w)
            new = fill('def test_{fn}_missing_customer(caplog):\n    assert {fn}([{"id": "1", '
                        '"amount": "2"}]) == []\n    assert "no customer_id" in caplog.text\n\n\n',
                        w) + old
            return b.edit(f"tests/test_{w['module']}.py", old, new)
        if kind == "edit_doc":
            old = fill("## `{fn}`\n", w)
            return b.edit(w["doc"], old, old + "\nEmpty input returns an empty list; a missing "
                                              "amount counts as `0.0` and is logged.\n")
        if kind == "write_test":
            return b.write(fill("tests/test_cli_{fn}.py", w), fill(TEST_HEAD + TEST_BLOCK, w))
        if kind == "test_pass":
            return b.bash(COMMANDS[kind], fill(PYTEST_PASS, w))
        return b.bash(fill(COMMANDS[kind], w), fill(OUTPUTS[kind], w), int(kind in FAILING))

    def turn(self, plan, trunk: bool) -> None:
        prompt, groups, answer, w, thinking = plan
        start = len(self.b.entries)
        uid = self.b.user(fill(prompt, w))
        self.users.append(uid)
        for i, group in enumerate(groups):
            text = STEP_TEXT.get(group[0]) if self.rng.random() < 0.5 else None
            self.b.step([self.call(kind, w) for kind in group], text and fill(text, w),
                        fill(thinking, w) if thinking and i == 0 else None)
        self.b.answer(fill(answer, w))
        if trunk:
            self.trunk_users.append(uid)
            self.trunk_count += len(self.b.entries) - start
            if self.due and self.trunk_count >= self.due[0]:
                self.due.pop(0)
                self.compact()

    def turns(self, target: int, trunk: bool) -> None:
        """Whole turns while they fit below `target` entries (+1 for a compaction)."""
        while True:
            plan = self.plan()
            if len(self.b.entries) + self.size(plan) + 1 > target:
                return
            self.turn(plan, trunk)

    def compact(self) -> None:
        keep = self.trunk_users[-2 if len(self.trunk_users) > 2 else -1]  # the latest turn or two
        prompts = _prompts(self.b.path(self.b.tip))
        w = self._words(None)
        self.b.compaction(
            keep, goal=self.name or self.v["goal"], constraints=self.v["constraints"],
            done=_done(prompts[:-1]),
            in_progress=[_headline(prompts[-1])],
            decisions=[fill(d, w) for d in self.rng.sample(DECISIONS, 2)],
            next_steps=["Finish the task in progress",
                        "Run `python -m pytest -q` and `ruff check`"],
            critical=[fill("Tests run with `python -m pytest -q` ({n} passing at last run)", w),
                      f"Package `{self.v['pkg']}` lives in `{self.b.cwd}/{self.v['pkg']}`"])
        self.trunk_users = []

    def branch(self, index: int, target: int) -> None:
        """Edit an earlier prompt (fork before it), work there, then go back to the trunk tip."""
        b, rng = self.b, self.rng
        back = b.tip
        b.fork(b.by_id[rng.choice(self.users)]["parentId"])
        if rng.random() < 0.3:
            b.model_change(rng.choice([m for m in MODELS if m != b.model]))
        start = len(b.entries)
        self.turn(self.plan(), trunk=False)
        self.turns(target - 2, trunk=False)
        tip = b.tip
        if index % 2:  # labelled at its tip, so no conversation continues after the label
            b.label(tip, rng.choice(BRANCH_LABELS))
        if rng.random() < 0.5:
            prompts = _prompts(b.entries[start:])
            b.branch_summary(
                tip, back, goal=_headline(prompts[0]), done=_done(prompts),
                decisions=["**Went back**: this attempt was set aside, the main line continues"],
                next_steps=["Continue on the main line"])
        else:
            b.fork(back)

    def finish(self, remaining: int) -> None:
        """A last turn of exactly `remaining` (>= 2) entries, so the session size is exact: a
        one-call step adds 2 entries, a two-call step 3."""
        if remaining == 3:
            self.b.thinking_level("low")
            remaining = 2
        steps = remaining - 2
        pairs = steps % 2
        groups = [("test_pass", "lint")] * pairs
        groups += [(("lint",), ("test_pass",))[i % 2] for i in range((steps - 3 * pairs) // 2)]
        prompt, answer = (CHECK_PROMPT, "check") if steps else (SUMMARY_PROMPT, "summary")
        self.turn((prompt, groups, ANSWERS[answer], self._words(None), None), trunk=False)


def synthetic_session(n_entries: int, seed: int = 0, *, branches: int | None = None,
                      compactions: int | None = None,
                      tool_result_sizes: tuple[int, int] = (120, 4000), deep: bool = False,
                      project: str = "data-pipeline", name: str | None = None,
                      start_ms: int | None = None) -> tuple[dict, list[dict]]:
    """A session of exactly `n_entries` entries for tests and benchmarks.

    The active path (the "trunk") holds the compactions; `branches` side branches each fork
    before an earlier prompt and return to the trunk with a `leaf` entry or a branch summary.
    The trunk is short (<= 2,000 entries) unless `deep`, when it holds ~DEEP_PATH_ENTRIES
    entries, for context-building benchmarks. `tool_result_sizes` bounds the size in characters
    of `read` results. Defaults: one branch per ~300 entries, one compaction per 2,000 trunk
    entries.
    """
    if n_entries < 10:
        raise ValueError("n_entries must be at least 10")
    b = SessionBuilder(f"/home/ana/projects/{project}", seed,
                       iso_to_ms("2026-02-16T08:02:41.507+00:00") if start_ms is None else start_ms)
    s = _Synth(b, project, tool_result_sizes, name)
    b.model_change(DEFAULT_MODEL)
    b.thinking_level("medium")
    if name:
        b.session_info(name)
    if branches == 0:
        trunk = n_entries
    else:
        trunk = min(DEEP_PATH_ENTRIES, n_entries * 9 // 10) if deep else min(n_entries // 2, 2_000)
    if branches is None:
        branches = max(2, (n_entries - trunk) // 300)
    if compactions is None:
        compactions = max(1, trunk // 2_000)
    branch_len = (n_entries - trunk) // branches if branches else 0
    if branches and branch_len < 24:
        raise ValueError(f"{branches} branches do not fit in {n_entries} entries")
    s.due = [trunk * (k + 1) // (compactions + 1) for k in range(compactions)]
    if branches:
        s.turn(s.plan(), trunk=True)  # the first branch needs a prompt to fork before
    chunk = trunk / (branches + 1)
    for i in range(branches + 1):
        if i:
            s.branch(i, round(i * chunk + i * branch_len))
        s.turns(round((i + 1) * chunk + i * branch_len) if i < branches else n_entries - 2,
                trunk=True)
    if n_entries - len(b.entries) < 2:
        raise ValueError(f"{branches} branches do not fit in {n_entries} entries")
    s.finish(n_entries - len(b.entries))
    return b.header, b.entries



def many_branches_session(branches: int, trunk: int = 2_000, seed: int = 13) -> tuple[dict, list[dict]]:
    """A session with many short side branches: a `trunk` of turns, then `branches` retries that
    each fork from a random user prompt of it (a new prompt and its answer, about 3 entries):
    the shape that makes a drawing wide rather than long (the graph's node cap is tested on it)."""
    header, entries = synthetic_session(trunk, seed, branches=0, compactions=0)
    b = SessionBuilder(header["cwd"], seed + 1, iso_to_ms(entries[-1]["timestamp"]) + 1000)
    b.header = header
    b.entries = entries
    b.by_id = {e["id"]: e for e in entries}
    prompts = [e["id"] for e in entries if e["type"] == "message" and e["message"]["role"] == "user"]
    for i in range(branches):
        b.tip = b.by_id[b.rng.choice(prompts)]["parentId"]
        b.user(f"Retry {i}: try another approach to this step.")
        if i % 3:
            b.answer(f"Tried approach {i}; it works the same.")
        else:
            b.step([b.bash(f"pytest -q -k case{i}", "1 passed")])
    return b.header, b.entries

def large_session(n_entries: int = 3000, seed: int = 11) -> tuple[dict, list[dict]]:
    """The big bundled sample: enough entries to exercise the tree view's layout and paging."""
    return synthetic_session(n_entries, seed, branches=6, compactions=3,
                             name="Speed up the nightly CSV import")


def retry_session(turns: int = 10_000, seed: int = 23) -> tuple[dict, list[dict]]:
    """A session where the user retried often: a trunk of `turns` turns (a prompt, three tool
    steps and an answer: 8 entries), and before each trunk prompt a one-turn retry (a prompt and
    its answer) forking from the same entry, written first so the trunk stays the active path:
    `turns` fork points along one path, `turns + 1` leaves, 10 entries a turn. The shape that
    makes a drawing long rather than wide (the skeleton folds its fork points)."""
    b = SessionBuilder("/home/ana/projects/data-pipeline", seed, iso_to_ms("2026-02-16T08:02:41.507+00:00"))
    b.model_change(DEFAULT_MODEL)
    fns = PROJECTS["data-pipeline"]["functions"]
    for t in range(turns):
        fn = fns[t % len(fns)]
        fork = b.tip
        b.user(f"Turn {t + 1}: make `{fn}` handle rows without an id.")
        b.answer(f"`{fn}` would need a new argument for that; shall I add one?")
        b.tip = fork
        b.user(f"Turn {t + 1}: make `{fn}` skip rows without an id, logging each one.")
        b.step([b.bash(f"pytest -q -k {fn}", "1 failed: KeyError 'id'")])
        b.step([b.read(f"pipeline/{fn}.py", f"def {fn}(rows): return [r['id'] for r in rows]")])
        b.step([b.edit(f"pipeline/{fn}.py", "r['id']", "r.get('id')")])
        b.answer(f"`{fn}` skips rows without an id now and logs their line; the test passes.")
    return b.header, b.entries
