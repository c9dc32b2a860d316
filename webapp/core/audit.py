"""What a summary lost: the facts of the span it replaced, and whether its text still carries each.

A compaction summarizes the context messages before its cut plus the previous summary (SPEC §6);
a branch summary, the abandoned branch back to the common ancestor (SPEC §4). Both spans come
from the plans in compaction.py. The facts are collected without a model: files touched or
named, commands run and how they ended, errors, identifiers in code spans, URLs, version numbers
and the user's instructions, each with the entries it came from. A fact is covered when the
summary's text carries it (see `Fact.found_in`); an optional judge adds a model's opinion on the
missing ones, kept apart from the score.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, field
from typing import Callable

from .compaction import (
    CompactionPlan,
    context_sources,
    plan_branch_summary,
    summarized_at_cut,
    with_file_lists,
)
from .entries import BRANCH_SUMMARY, COMPACTION, CUSTOM_MESSAGE, MESSAGE, Entry, as_key, content_blocks, tool_calls
from .command_weight import command_weight
from .context import build_context
from .agents.tools import tool_action
from .reader import first_kept_id
from .tree import SessionTree

CATEGORIES = ("files", "commands", "errors", "identifiers", "urls", "versions", "instructions")
CATEGORY_TITLES = {
    "files": "Files", "commands": "Commands run", "errors": "Errors", "identifiers": "Identifiers",
    "urls": "URLs", "versions": "Versions", "instructions": "User instructions",
}
KEY_WORD_SHARE = 2 / 3  # of an instruction's or error's key words, for the summary to carry it
_MAX_TEXT = 200  # a fact longer than this is shown cut (and matched on its key words)

_URL = re.compile(r"https?://[^\s<>()\[\]{}\"'`]+")
_VERSION = re.compile(r"(?<![\w.])v?\d+\.\d+\.\d+(?:-[0-9A-Za-z]+(?:\.[0-9A-Za-z]+)*)?(?![\w]|\.\d)|(?<![\w.])v\d+\.\d+(?![\w]|\.\d)")
_CODE_SPAN = re.compile(r"(?<!`)`([^`\n]{1,120})`(?!`)")
_FENCE = re.compile(r"```.*?(?:```|\Z)", re.S)
_IDENTIFIER = re.compile(r"(?:--?[A-Za-z][\w-]*|[A-Za-z_$][\w$]*(?:(?:\.|::)[A-Za-z_$][\w$]*)*)(?:\(\))?")
_FILE_EXT = (
    r"py|pyi|js|jsx|mjs|cjs|ts|tsx|json|jsonl|md|txt|toml|yaml|yml|ini|cfg|html|css|scss|sh|rs|go|"
    r"java|kt|c|h|cc|cpp|hpp|rb|php|sql|csv|lock|xml|svg|png|vue|svelte|swift|cs|env"
)
# A path starts only where no path character comes before it: were `@` or `+` allowed there, a
# run of them would be scanned again from each of its characters (quadratic on a crafted message).
_NAME_PATH_PATTERN = r"(?<![\w/.~@+-])[\w@+-][\w.@+-]*\.(?:" + _FILE_EXT + r")(?![\w/.])"
_PATH = re.compile(
    r"(?<![\w/.~@+-])(?:~?/|\./|\.\./)?(?:[\w.@+-]+/)+[\w.@+-]+\.(?:" + _FILE_EXT + r")(?![\w/])"
    r"|(?<![\w/.~@+-])(?:~|\.{1,2})?/(?:[\w.@+-]+/)+[\w.@+-]+/?(?![\w/])"
    r"|" + _NAME_PATH_PATTERN
)
# What `_PATH` finds in a text without a `/` (its first two forms hold one): a file's name alone.
_NAME_PATH = re.compile(_NAME_PATH_PATTERN)
_DIGIT_DOT_DIGIT = re.compile(r"\d\.\d")  # in every match of `_VERSION`
_EXIT = re.compile(r"(?:Command exited with code|exit code:?|exited with)\s*(-?\d+)", re.I)
_ERROR_LINE = re.compile(r"\b[A-Z]\w*Error:|^\s*FAILED\b|^E\s{2,}\S|\berror TS\d+:|^\s*error(?:\[\w+\])?:")
# What any line `_ERROR_LINE` finds holds: "Error:", "FAILED", "error", or an E and two spaces.
_ERROR_HINT = re.compile(r"Error:|FAILED|error|E\s\s")
_FAILURE_WORDS = re.compile(r"\berror\b|\bfailed\b|\bcannot\b|\bnot found\b|\baborted\b", re.I)
_POSITION = re.compile(r"\(\d+,\d+\)|:\d+(?::\d+)?(?=[:\s])")
MAX_ERRORS_PER_RESULT = 5  # a compiler's hundred lines are one failure, not a hundred facts
_TRACEBACK = "Traceback (most recent call last):"
_SENTENCE = re.compile(r"(?<=[.!?])\s+|\n+")
_INSTRUCTION = re.compile(
    r"^(?:please\s+|and\s+|also\s+|but\s+)?(?:do not|don't|dont|never|always|keep|avoid|make sure|ensure|"
    r"only|stop|remember|use|prefer|no need|leave|don't forget)\b"
    r"|\b(?:must|must not|mustn't|should not|shouldn't|do not|don't|never|always|under no circumstances)\b",
    re.I,
)
_WORD = re.compile(r"[A-Za-z][A-Za-z0-9_]+")
_STOPWORDS = frozenset(
    "the a an and or but if then else of to in on at by for with from into onto as is are be been was were "
    "it its this that these those there here do does did not don dont never always must should shouldn "
    "keep make sure ensure please also only just any all some use using can could would will you your we "
    "our us me my i they them their no yes so than too very more most less such what which who when where "
    "how why have has had get got let lets need want like way still even again one two new old mustn "
    "stop remember prefer avoid leave forget under circumstances".split()
)


def _stem(word: str) -> str:
    w = word.lower()
    for suffix in ("ies", "ing", "ed", "es", "s"):
        if len(w) > len(suffix) + 3 and w.endswith(suffix):
            return w[: -len(suffix)] + ("y" if suffix == "ies" else "")
    return w


def key_words(text: str) -> list[str]:
    """The words that carry a sentence's meaning, stemmed: what an instruction is matched on."""
    seen: dict[str, None] = {}
    for w in _WORD.findall(text):
        if w.lower() not in _STOPWORDS:
            seen.setdefault(_stem(w), None)
    return list(seen)


def _short(text: str) -> str:
    text = " ".join(text.split())
    return text if len(text) <= _MAX_TEXT else text[: _MAX_TEXT - 1] + "…"


@dataclass
class Fact:
    category: str
    text: str
    sources: list[str] = field(default_factory=list)  # entry ids, oldest first
    details: list[str] = field(default_factory=list)  # e.g. "read", "edited", "exit 2"
    covered: bool = False
    judge: str | None = None  # the model's opinion on a missing fact: "implied" / "not implied"
    judge_reason: str = ""

    def found_in(self, summary: "SummaryText") -> bool:
        """Whether the summary carries this fact (the normalised match of each category)."""
        c = self.category
        if c == "files":
            return summary.has_path(self.text)
        if c == "identifiers":
            return summary.has_token(self.text)
        if c == "urls":
            return self.text.rstrip("/") in summary.text
        if c == "versions":
            return summary.has_token(self.text.removeprefix("v")) or summary.has_token(self.text)
        if c == "commands":
            return summary.has_command(self.text)
        return summary.has_key_words(self.text)  # errors, instructions

    def as_dict(self) -> dict:
        d = {"category": self.category, "text": self.text, "details": self.details,
             "entryIds": self.sources, "covered": self.covered}
        if self.judge is not None:
            d["modelOpinion"] = {"verdict": self.judge, "reason": self.judge_reason}
        return d


class SummaryText:
    """A summary prepared once for the many matches against it."""

    def __init__(self, text: str):
        self.text = text
        self.squashed = " ".join(text.split())
        self.stems = {_stem(w) for w in _WORD.findall(text)}

    def has_token(self, token: str) -> bool:
        """`token` appears whole (not inside a longer name), case-sensitively. The plain substring
        test first: most facts are not in the summary, and each regex is compiled anew once the
        many distinct tokens of a corpus overflow `re`'s cache."""
        if token not in self.text:
            return False
        return re.search(r"(?<![\w$])" + re.escape(token) + r"(?![\w$])", self.text) is not None

    def has_path(self, path: str) -> bool:
        """The whole path, or its last components (its last one included: `src/app.py`, `app.py`)."""
        parts = [p for p in path.rstrip("/").split("/") if p not in ("", ".", "..", "~")]
        for k in range(len(parts), 0, -1):
            tail = "/".join(parts[-k:])
            if tail in self.text and re.search(r"(?<![\w.-])" + re.escape(tail) + r"(?![\w-]|\.\w)", self.text):
                return True
        return False

    def has_command(self, command: str) -> bool:
        """The command, or one of its parts joined by `&&`, `;` or `|` (a `cd` aside)."""
        if " ".join(command.split()) in self.squashed:
            return True
        for part in re.split(r"&&|\|\||;|\|", command):
            part = " ".join(part.split())
            if part and not part.startswith("cd ") and part in self.squashed:
                return True
        return False

    def has_key_words(self, text: str) -> bool:
        """At least two thirds of the sentence's key words (rounded up) appear in the summary;
        the words of paths and URLs do not count (a summary names those anyway)."""
        words = key_words(_PATH.sub(" ", _URL.sub(" ", text)))
        if not words:
            return text.strip() in self.text
        return sum(w in self.stems for w in words) >= math.ceil(len(words) * KEY_WORD_SHARE)


class _Collector:
    """Facts gathered in order, one per category and text, each remembering its entries."""

    def __init__(self):
        self.facts: dict[tuple[str, str], Fact] = {}

    def add(self, category: str, text: str, entry_id: str, detail: str | None = None) -> Fact:
        text = text.strip()
        fact = self.facts.get((category, text))
        if fact is None:
            fact = self.facts[(category, text)] = Fact(category, text)
        if entry_id not in fact.sources:
            fact.sources.append(entry_id)
        if detail and detail not in fact.details:
            fact.details.append(detail)
        return fact

    def text(self, text: str, entry_id: str, from_user: bool = False) -> None:
        """Facts named in prose: URLs, paths, versions, code-span identifiers, instructions."""
        if not text:
            return
        # (each pattern runs only on a text holding what any match of it holds: an audit reads
        # every message of a span, and most hold no fence, URL, code span or version)
        prose = _FENCE.sub(" ", text) if "```" in text else text
        if "://" in prose:
            for url in _URL.findall(prose):
                self.add("urls", url.rstrip(".,;:!?").rstrip("/") or url, entry_id)
            prose = _URL.sub(" ", prose)
        if "`" in prose:
            for span in _CODE_SPAN.findall(prose):
                span = span.strip()
                if _IDENTIFIER.fullmatch(span) and not _PATH.fullmatch(span) and len(span) > 1:
                    self.add("identifiers", span.removesuffix("()"), entry_id)
        for m in (_PATH if "/" in prose else _NAME_PATH).finditer(prose):
            path = m.group(0).rstrip("/").removeprefix("@")  # `@file` is how a user attaches one
            if re.search(r"[A-Za-z0-9]", path):
                self.add("files", path, entry_id, "mentioned")
        if _DIGIT_DOT_DIGIT.search(prose):
            for m in _VERSION.finditer(prose):
                self.add("versions", m.group(0), entry_id)
        if from_user:
            for sentence in _SENTENCE.split(prose):
                sentence = sentence.strip(" \t-*>#")
                if 8 <= len(sentence) <= 400 and _INSTRUCTION.search(sentence):
                    self.add("instructions", _short(sentence), entry_id)

    def errors(self, text: str, entry_id: str) -> int:
        """Error lines of a tool's output (the first few, without their line:column positions);
        a traceback counts once, by its last line. Returns how many were found."""
        if _TRACEBACK not in text and not _ERROR_HINT.search(text):
            return 0
        lines = text.splitlines()
        found = i = 0
        while i < len(lines) and found < MAX_ERRORS_PER_RESULT:
            line = lines[i]
            if line.strip() == _TRACEBACK:
                j = i + 1
                while j < len(lines) and (lines[j].startswith((" ", "\t")) or not lines[j].strip()):
                    j += 1
                if j < len(lines):
                    self.add("errors", _short(lines[j]), entry_id, "traceback")
                    found += 1
                i = j + 1
                continue
            if _ERROR_LINE.search(line):
                self.add("errors", _short(_POSITION.sub("", line)), entry_id)
                found += 1
            i += 1
        return found


_ACTION_DETAIL = {"read": "read", "edit": "edited", "write": "written"}


def _result_text(content) -> str:
    return "\n".join(b.get("text", "") for b in content_blocks(content) if b.get("type") == "text")


def collect_facts(entries: list[Entry], previous: Entry | None = None) -> list[Fact]:
    """The facts of a span: `entries` in order, after the summary `previous` they update."""
    out = _Collector()
    if previous is not None:
        _summary_facts(out, previous)
    commands: dict[str, Fact] = {}  # tool call id -> its command's fact, for the exit status
    for e in entries:
        if e.type == MESSAGE:
            msg, role = e.message, e.role
            if role in ("user", "custom"):
                out.text(_result_text(msg.get("content")), e.id, from_user=role == "user")
            elif role == "assistant":
                out.text(_result_text(msg.get("content")), e.id)
                for call in tool_calls(e):
                    action = tool_action(call)
                    if action.kind in _ACTION_DETAIL:
                        for path in action.paths:
                            out.add("files", path, e.id, _ACTION_DETAIL[action.kind])
                    if action.command:
                        commands[str(call.get("id"))] = out.add("commands", _short(action.command), e.id)
            elif role == "toolResult":
                _tool_result(out, e, commands.get(str(msg.get("toolCallId"))))
            elif role == "bashExecution" and isinstance(msg.get("command"), str):
                fact = out.add("commands", _short(msg["command"]), e.id)
                code = msg.get("exitCode")
                if msg.get("cancelled"):
                    _status(fact, "cancelled")
                elif isinstance(code, int):
                    _status(fact, f"exit {code}")
                out.errors(str(msg.get("output") or ""), e.id)
        elif e.type == CUSTOM_MESSAGE:
            out.text(_result_text(e.get("content")), e.id)
        elif e.type in (BRANCH_SUMMARY, COMPACTION):
            _summary_facts(out, e)
    order = {e.id: i for i, e in enumerate(([previous] if previous is not None else []) + entries)}
    facts = _merge_short_paths(list(out.facts.values()))
    for f in facts:
        f.sources.sort(key=lambda i: order.get(i, -1))
    return facts


def _merge_short_paths(facts: list[Fact]) -> list[Fact]:
    """A path named by its last components (`report.py`) is the same fact as the one longer path
    of the span that ends with them (`src/report.py`); with two such paths it stays apart."""
    files = sorted((f for f in facts if f.category == "files"), key=lambda f: -len(f.text))
    merged: set[int] = set()
    for short in files:
        longer = [f for f in files if id(f) not in merged and f is not short and f.text.endswith("/" + short.text)]
        if not longer:
            continue
        target = max(longer, key=lambda f: len(f.text))
        if all(target.text.endswith("/" + f.text) for f in longer if f is not target):
            target.sources += [i for i in short.sources if i not in target.sources]
            target.details += [d for d in short.details if d not in target.details]
            merged.add(id(short))
    return [f for f in facts if id(f) not in merged]


def _status(fact: Fact, status: str) -> None:
    if status not in fact.details:
        fact.details.append(status)


def _tool_result(out: _Collector, e: Entry, command: Fact | None) -> None:
    msg = e.message
    text = _result_text(msg.get("content"))
    if command is not None:
        if command.sources[-1] != e.id:
            command.sources.append(e.id)
        code = _EXIT.search(text)
        _status(command, f"exit {code.group(1)}" if code else "failed" if msg.get("isError") else "exit 0")
    if command is None and not msg.get("isError"):
        return  # a file read's text holds code, whose `Error:` lines are no error of this session
    if not out.errors(text, e.id) and msg.get("isError"):
        lines = [line for line in text.splitlines() if line.strip() and not _EXIT.search(line)]
        telling = next((line for line in lines if _FAILURE_WORDS.search(line)), lines[0] if lines else "(no output)")
        out.add("errors", _short(telling), e.id, f"{msg.get('toolName') or 'tool'} failed")


def _summary_facts(out: _Collector, e: Entry) -> None:
    """What an earlier summary carried: its text's facts and its file lists."""
    summary = e.get("summary")
    out.text(summary if isinstance(summary, str) else "", e.id)
    details = e.get("details")
    if isinstance(details, dict):
        for key, detail in (("readFiles", "read"), ("modifiedFiles", "edited")):
            files = details.get(key)
            for path in files if isinstance(files, list) else ():
                if isinstance(path, str) and path.strip():
                    out.add("files", path, e.id, detail)


def fact_weight(fact: Fact) -> float:
    """What a fact weighs in a score: a command by its kind (command_weight), anything else 1."""
    return command_weight(fact.text, fact.details) if fact.category == "commands" else 1.0


@dataclass
class Audit:
    """The facts of a summary's span, each marked covered or missing."""

    kind: str  # "compaction", "branch_summary" or "preview"
    summary_id: str | None
    summary: str
    span: list[str]  # ids of the entries summarized (a previous summary first)
    facts: list[Fact]
    problem: str | None = None  # why the span could not be told
    judged_by: str | None = None  # the model whose opinion the `judge` column holds

    def of(self, category: str) -> list[Fact]:
        return [f for f in self.facts if f.category == category]

    def missing(self, category: str | None = None) -> list[Fact]:
        return [f for f in self.facts if not f.covered and (category is None or f.category == category)]

    def covered(self, category: str | None = None) -> list[Fact]:
        return [f for f in self.facts if f.covered and (category is None or f.category == category)]

    def score(self, category: str | None = None) -> int | None:
        """Percent of the facts the summary carries, each fact weighed (`fact_weight`: a routine
        command little, one the work depended on much); None: there was nothing to carry."""
        facts = self.facts if category is None else self.of(category)
        if not facts:
            return None if category is not None else (None if self.problem else 100)
        weights = [fact_weight(f) for f in facts]
        return math.floor(100 * sum(w for f, w in zip(facts, weights) if f.covered) / sum(weights))

    def scores(self) -> dict[str, int | None]:
        return {c: self.score(c) for c in CATEGORIES}

    def missing_entry_ids(self) -> set[str]:
        return {i for f in self.facts if not f.covered for i in f.sources}

    def as_dict(self) -> dict:
        return {
            "kind": self.kind,
            "summaryId": self.summary_id,
            "problem": self.problem,
            "spanEntryIds": self.span,
            "score": self.score(),
            "scores": self.scores(),
            "judgedBy": self.judged_by,
            "facts": {c: [f.as_dict() for f in self.of(c)] for c in CATEGORIES},
        }


def audit_facts(kind: str, summary_id: str | None, summary: str, span: list[Entry], previous: Entry | None) -> Audit:
    facts = collect_facts(span, previous)
    text = SummaryText(summary)
    for f in facts:
        f.covered = f.found_in(text)
    ids = ([previous.id] if previous is not None else []) + [e.id for e in span]
    return Audit(kind, summary_id, summary, ids, facts)


def compaction_span(tree: SessionTree, compaction: Entry) -> tuple[list[Entry], Entry | None]:
    """(entries summarized, previous compaction) of a compaction entry in the tree: what a plan made
    again at its parent for its own cut point would summarize (`compaction.summarized_at_cut`)."""
    kept = first_kept_id(compaction)
    span, ctx = summarized_at_cut(tree, tree.parent.get(compaction.id), kept) if kept else (None, None)
    if span is not None:
        return span, ctx.compaction
    # A cut a new plan refuses still tells what was summarized: the context's entries before the
    # kept one (an old pi file may keep from a tool result or a settings entry), or all of them
    # when the kept one is not on the path (Claude Code and Codex keep nothing; SPEC §5).
    if ctx is None:
        ctx = build_context(tree, tree.parent.get(compaction.id))
    position = {e.id: i for i, e in enumerate(ctx.path)}
    entries = context_sources(ctx)
    span = [e for e in entries if kept not in position or position[e.id] < position[kept]]
    return span, ctx.compaction


def branch_span(tree: SessionTree, summary: Entry) -> tuple[list[Entry], Entry | None, str | None]:
    """(entries of the abandoned branch, the compaction its walk stopped at, problem)."""
    old = as_key(summary.get("fromId"))
    if old not in tree.by_id:
        return [], None, f"branch summary {summary.id} names a branch that is not in the file ({old!r})"
    plan = plan_branch_summary(tree, old, tree.parent.get(summary.id))
    before = tree.parent.get(plan.entries[0].id) if plan.entries else old
    stop = tree.by_id.get(before) if before and before != plan.common_ancestor else None
    return plan.entries, stop if stop is not None and stop.type == COMPACTION else None, None


def audit_entry(tree: SessionTree, entry_id: str) -> Audit:
    """The audit of a compaction or branch summary entry of `tree`."""
    entry = tree.by_id[entry_id]
    if entry.type == COMPACTION:
        (span, previous), problem = compaction_span(tree, entry), None
    elif entry.type == BRANCH_SUMMARY:
        span, previous, problem = branch_span(tree, entry)
    else:
        raise ValueError(f"entry {entry_id} is a {entry.type}, not a compaction or a branch summary")
    summary = entry.get("summary")
    audit = audit_facts(entry.type, entry.id, summary if isinstance(summary, str) else "", span, previous)
    audit.problem = problem
    return audit


def lost_by_compactions(tree: SessionTree, path: list[Entry], known: dict[str, int]) -> dict[str, int]:
    """How many facts each compaction on `path` lost (compaction id -> count). `known` carries
    the counts from call to call, so a compaction several paths share is audited once."""
    for e in path:
        if e.type == COMPACTION and e.id not in known:
            known[e.id] = len(audit_entry(tree, e.id).missing())
    return {e.id: known[e.id] for e in path if e.type == COMPACTION}


def audit_plan(plan: CompactionPlan, summary: str) -> Audit:
    """The audit of a summary being written for a compaction plan (nothing is written), with the
    file lists the write will append to it."""
    text = with_file_lists(summary, plan.read_files, plan.modified_files)
    return audit_facts("preview", None, text, plan.entries_to_summarize(), plan.context.compaction)


def summaries_on_path(tree: SessionTree, leaf_id: str | None) -> list[Entry]:
    """The compactions and branch summaries on the path to `leaf_id`, oldest first."""
    return [e for e in tree.path(leaf_id) if e.type in (COMPACTION, BRANCH_SUMMARY)]


JUDGE_PROMPT = (
    "A conversation was replaced by the summary below. Answer whether the summary implies the "
    "fact that follows, even in other words. Reply with 'yes' or 'no' on the first line, then one "
    "short sentence saying why.\n\n<summary>\n{summary}\n</summary>\n\nFact ({category}): {fact}"
)


def judge(audit: Audit, ask: Callable[[str], str], model: str) -> None:
    """Ask a model, per missing fact, whether the summary implies it; its answer is recorded as
    the model's opinion beside the fact and never changes the coverage or the score."""
    for f in audit.missing():
        answer = ask(JUDGE_PROMPT.format(summary=audit.summary, category=f.category, fact=f.text)).strip()
        first, _, rest = answer.partition("\n")
        verdict = first.strip().lower().lstrip("*").split()[:1]
        f.judge = "implied" if verdict and verdict[0].startswith("yes") else "not implied"
        f.judge_reason = _short(rest.strip() or first.strip())
    audit.judged_by = model
