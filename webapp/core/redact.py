"""Finding secrets in a session before it leaves the machine, and replacing them consistently.

Detection is detect-secrets' plugins (provider keys and tokens, private keys, passwords in URLs,
`KEY=value` assignments, high-entropy strings), not regexes of our own; the optional rules (home
paths, user names, e-mail addresses, a person's own patterns) are ours because they are not
secrets but what a person may still not want to share. Every string of every line is scanned,
in the session file and in the files read with it (sub-agent transcripts), so messages, tool
arguments and results, summaries, labels and the raw JSON are all covered.

A scan gives a `Review`: each distinct value once, with its tag (`[REDACTED:aws-key#1]`: the same
value always gets the same tag), the rule that found it and where it occurs. A person may keep
some values; `write_redacted` then writes a copy of the session (and its sub-agent files) with
the rest replaced, which is read and rendered like any session: nothing downstream has to know.
"""

from __future__ import annotations

import getpass
import json
import re
import tempfile
from collections import Counter
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

import orjson
from detect_secrets.filters.heuristic import (
    is_indirect_reference,
    is_potential_uuid,
    is_sequential_string,
    is_templated_secret,
)
from detect_secrets.plugins.artifactory import ArtifactoryDetector
from detect_secrets.plugins.aws import AWSKeyDetector
from detect_secrets.plugins.azure_storage_key import AzureStorageKeyDetector
from detect_secrets.plugins.basic_auth import BasicAuthDetector
from detect_secrets.plugins.cloudant import CloudantDetector
from detect_secrets.plugins.discord import DiscordBotTokenDetector
from detect_secrets.plugins.github_token import GitHubTokenDetector
from detect_secrets.plugins.gitlab_token import GitLabTokenDetector
from detect_secrets.plugins.high_entropy_strings import Base64HighEntropyString, HexHighEntropyString
from detect_secrets.plugins.ibm_cloud_iam import IbmCloudIamDetector
from detect_secrets.plugins.ibm_cos_hmac import IbmCosHmacDetector
from detect_secrets.plugins.jwt import JwtTokenDetector
from detect_secrets.plugins.keyword import DENYLIST as KEYWORD_DENYLIST
from detect_secrets.plugins.keyword import KeywordDetector
from detect_secrets.plugins.mailchimp import MailchimpDetector
from detect_secrets.plugins.npm import NpmDetector
from detect_secrets.plugins.openai import OpenAIDetector
from detect_secrets.plugins.private_key import PrivateKeyDetector
from detect_secrets.plugins.pypi_token import PypiTokenDetector
from detect_secrets.plugins.sendgrid import SendGridDetector
from detect_secrets.plugins.slack import SlackDetector
from detect_secrets.plugins.softlayer import SoftlayerDetector
from detect_secrets.plugins.square_oauth import SquareOAuthDetector
from detect_secrets.plugins.stripe import StripeDetector
from detect_secrets.plugins.telegram_token import TelegramBotTokenDetector
from detect_secrets.plugins.twilio import TwilioKeyDetector
from detect_secrets.util.code_snippet import get_code_snippet

from .patterns import PatternError, compile_outside
from .storage import sidecar_files

# detect-secrets' pattern plugins, each with the rule name its tags carry.
_PATTERN_PLUGINS = (
    (AWSKeyDetector, "aws-key"), (ArtifactoryDetector, "artifactory-token"), (AzureStorageKeyDetector, "azure-key"),
    (CloudantDetector, "cloudant-key"), (DiscordBotTokenDetector, "discord-token"), (GitHubTokenDetector, "github-token"),
    (GitLabTokenDetector, "gitlab-token"), (IbmCloudIamDetector, "ibm-key"), (IbmCosHmacDetector, "ibm-key"),
    (JwtTokenDetector, "jwt"), (MailchimpDetector, "mailchimp-key"), (NpmDetector, "npm-token"),
    (OpenAIDetector, "openai-key"), (PypiTokenDetector, "pypi-token"), (SendGridDetector, "sendgrid-key"),
    (SlackDetector, "slack-token"), (SoftlayerDetector, "softlayer-key"), (SquareOAuthDetector, "square-token"),
    (StripeDetector, "stripe-key"), (TelegramBotTokenDetector, "telegram-token"), (TwilioKeyDetector, "twilio-key"),
)
SECRET_RULES = ("private-key", "url-password", *dict.fromkeys(r for _, r in _PATTERN_PLUGINS), "secret-assignment",
                "high-entropy", "hex-entropy")
OPTIONAL_RULES = {
    "home": "home paths (/home/NAME, /Users/NAME, C:\\Users\\NAME)",
    "user": "user names (those of the home paths and this machine's login)",
    "email": "e-mail addresses",
}

# Runs of characters a token is made of; detect-secrets' entropy plugins only look inside quotes,
# but a token pasted in prose or printed by a tool has none.
_BASE64_RUN = re.compile(r"[A-Za-z0-9+/_\-]{20,}")
_HEX_RUN = re.compile(r"(?<![A-Za-z0-9])[0-9a-fA-F]{32,}(?![A-Za-z0-9])")
# What precedes a git object name: `git log`'s and `git cat-file`'s words, an objects/ path.
_GIT_OBJECT = re.compile(r"(?:\b(?:commit|tree|parent|object|Merge:)\s+|\.git/objects/[0-9a-f]{2}/)$")
_TOKEN_TAIL = re.compile(r"[A-Za-z0-9_.+/=-]*")
_UUID = re.compile(r"[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}")
_PRIVATE_BLOCK = re.compile(r"-----BEGIN[A-Z ]*PRIVATE KEY( BLOCK)?-----.*?(?:-----END[A-Z ]*PRIVATE KEY( BLOCK)?-----|\Z)", re.S)
_HOME = re.compile(r"(?:/home/|/Users/|[A-Za-z]:\\{1,2}Users\\{1,2})([A-Za-z0-9._-]+)")
_EMAIL = re.compile(r"[A-Za-z0-9._%+-]+@[A-Za-z0-9-]+(?:\.[A-Za-z0-9-]+)*\.[A-Za-z]{2,}")
_ENTROPY_LIMIT, _HEX_LIMIT = 4.5, 3.0  # detect-secrets' own defaults (bits per character)
# Keys whose values are the file's structure (ids, links, times), never shown as text.
_STRUCTURAL = frozenset({"id", "parentId", "uuid", "parentUuid", "leafUuid", "sessionId", "timestamp", "type",
                         "firstKeptEntryId", "targetId", "fromId", "toolCallId", "tool_use_id", "requestId",
                         "promptId", "messageId", "agentId", "call_id", "turn_id",
                         # a model's opaque signatures of its reasoning: no one's secret, and never text
                         "signature", "thinkingSignature", "encrypted_content"})
# The lines a slow plugin can match at all, told by a word each of its matches holds: those
# plugins' patterns try every position of a string (a third of the scan, before this).
_CREDENTIAL_WORD = re.compile(r"key|pw|pass|token", re.I)
_GATES = {"cloudant-key": _CREDENTIAL_WORD, "ibm-key": _CREDENTIAL_WORD, "softlayer-key": _CREDENTIAL_WORD,
          "artifactory-token": re.compile(r"AKC|AP"), "mailchimp-key": re.compile(r"-us\d")}
_KEYWORDS = re.compile("|".join(KEYWORD_DENYLIST), re.I)  # the names the keyword plugin looks for
_KEYWORD_FILE = "session.yaml"  # the keyword plugin's unquoted `KEY=value` / `key: value` forms


@dataclass
class Finding:
    """One distinct value to redact: its tag, the rule that found it, and where it occurs."""

    value: str
    rule: str
    tag: str
    places: list[str] = field(default_factory=list)

    @property
    def preview(self) -> str:
        """The first characters, enough for a person to recognise the value, not to use it."""
        text = " ".join(self.value.split())
        return text[:4] + "…" if len(text) > 4 else text


@dataclass
class Review:
    """What a scan found, in the order first found, and the rules it ran."""

    findings: list[Finding]
    rules: list[str]
    patterns: list[str] = field(default_factory=list)

    def by_tag(self) -> dict[str, Finding]:
        return {f.tag: f for f in self.findings}

    def counts(self, keep: frozenset[str] = frozenset()) -> Counter:
        return Counter(f.rule for f in self.findings if f.tag not in keep)


class Scanner:
    """Finds the values to redact in strings, remembering each value's tag across strings."""

    def __init__(self, rules: frozenset[str] = frozenset(), patterns: tuple[str, ...] = ()) -> None:
        unknown = set(rules) - set(OPTIONAL_RULES)
        if unknown:
            raise ValueError(f"unknown redaction rule {', '.join(sorted(unknown))}: the rules are {', '.join(OPTIONAL_RULES)}")
        self.rules = rules
        self.patterns = []
        for p in patterns:  # (a person's patterns run in RE2, never in `re`: patterns.py)
            try:
                self.patterns.append(compile_outside(p))
            except PatternError as exc:
                raise ValueError(f"redaction pattern: {exc}") from None
        self._plugins = [(cls(), rule) for cls, rule in _PATTERN_PLUGINS]
        self._basic_auth = BasicAuthDetector()
        self._private_key = PrivateKeyDetector()
        self._keyword = KeywordDetector()
        self._base64, self._hex = Base64HighEntropyString(), HexHighEntropyString()
        self._users = {getpass.getuser()} if "user" in rules else set()
        self.found: dict[str, Finding] = {}
        self._per_rule: Counter = Counter()
        self._seen: dict[str, list[tuple[str, str]]] = {}  # a string's hits, once per distinct string

    def rule_names(self) -> list[str]:
        return ["detect-secrets", *sorted(self.rules), *(["patterns"] if self.patterns else [])]

    def scan(self, text: str, where: str) -> None:
        for value, rule in self._hits(text):
            self._add(value, rule, where)

    def _add(self, value: str, rule: str, where: str) -> None:
        f = self.found.get(value)
        if f is None:
            self._per_rule[rule] += 1
            f = self.found[value] = Finding(value, rule, f"[REDACTED:{rule}#{self._per_rule[rule]}]")
        if len(f.places) < 20 and where not in f.places:
            f.places.append(where)

    def _hits(self, text: str) -> list[tuple[str, str]]:
        out: list[tuple[str, str]] = []
        if "PRIVATE KEY" in text:
            for line in text.splitlines():
                if any(True for _ in self._private_key.analyze_string(line)):
                    out.extend((m.group(), "private-key") for m in _PRIVATE_BLOCK.finditer(text))
                    break
        hits = self._seen.get(text)
        if hits is None:
            hits = self._text_hits(text)
            if len(self._seen) < 100_000:  # (bounded: a huge session's strings are mostly distinct)
                self._seen[text] = hits
        out.extend(hits)
        if "home" in self.rules or "user" in self.rules:
            for m in _HOME.finditer(text):
                if "home" in self.rules:
                    out.append((m.group(), "home"))
                if "user" in self.rules:
                    self._users.add(m.group(1))
        if self._users:
            out.extend((u, "user") for u in self._users if len(u) > 2 and re.search(rf"\b{re.escape(u)}\b", text))
        if "email" in self.rules:
            out.extend((m.group(), "email") for m in _EMAIL.finditer(text))
        for p in self.patterns:
            out.extend((m.group(), "pattern") for m in p.finditer(text) if m.group())
        return out

    def _text_hits(self, text: str) -> list[tuple[str, str]]:
        """The detectors' hits in one string: the pattern plugins and the entropy rules read it
        whole (their patterns hold no line break), the keyword plugin only its lines that name
        a keyword (it reads line by line, and its patterns cost most)."""
        out: list[tuple[str, str]] = []
        if "://" in text:
            out.extend((v, "url-password") for v in self._basic_auth.analyze_string(text))
        lines = text.splitlines()
        for plugin, rule in self._plugins:
            gate = _GATES.get(rule)
            part = text if gate is None else "\n".join(x for x in lines if gate.search(x))
            if not part:
                continue
            for regex in plugin.denylist:
                for m in regex.finditer(part):
                    value = _secret_of(m)
                    if rule == "jwt":  # the plugin's pattern stops before the signature: take it too
                        value += _TOKEN_TAIL.match(part, m.end()).group()
                    out.append((value, rule))
        if _KEYWORDS.search(text):
            for line in lines:
                if not _KEYWORDS.search(line):
                    continue
                context = get_code_snippet([line], 1)
                for s in self._keyword.analyze_line(filename=_KEYWORD_FILE, line=line, line_number=1, context=context):
                    value = s.secret_value or ""
                    if len(value) >= 6 and _literal(value) and not is_indirect_reference(line):
                        out.append((value, "secret-assignment"))
        out.extend(self._entropy_hits(text, {v for v, _ in out}))
        return out

    def _entropy_hits(self, text: str, known: set[str]) -> list[tuple[str, str]]:
        out: list[tuple[str, str]] = []
        for token in (seg.strip("-_") for m in _BASE64_RUN.finditer(text) for seg in m.group().split("/")):
            if (token not in known and not any(token in v or v in token for v in known) and len(token) >= 20
                    and _mixed(token) and self._base64.calculate_shannon_entropy(token) > _ENTROPY_LIMIT
                    and not _UUID.search(token)):
                out.append((token, "high-entropy"))
        for m in _HEX_RUN.finditer(text):
            token = m.group()
            if (token not in known and not _GIT_OBJECT.search(text, max(0, m.start() - 24), m.start())
                    and self._hex.calculate_shannon_entropy(token) > _HEX_LIMIT and not _UUID.search(token)):
                out.append((token, "hex-entropy"))
        return out

    def review(self) -> Review:
        return Review(list(self.found.values()), self.rule_names(), [p.pattern for p in self.patterns])


def _secret_of(m: re.Match) -> str:
    """The secret in a pattern's match: its long capture group (an AWS secret after its key's
    name), else the whole match (a group as short as `ghp` is the token's kind, not the token)."""
    groups = [g for g in m.groups() if g]
    longest = max(groups, key=len, default="")
    return longest if len(longest) >= 16 else m.group()


def _literal(value: str) -> bool:
    """A value assigned as it is, not code computing one (`key = get_key(model);`), a template
    (`${KEY}`, `<your key>`) or a placeholder (`sk-...`)."""
    return (not is_templated_secret(value) and not any(c in value for c in " ();`")
            and not value.endswith(("...", "…")) and not value.startswith(("$", "[REDACTED", "process.", "os."))
            and not is_potential_uuid(value) and not is_sequential_string(value))


def _mixed(token: str) -> bool:
    """Letters and digits both: a long word or identifier of one kind is text, not a token."""
    return any(c.isdigit() for c in token) and any(c.isalpha() for c in token)


def _walk(obj, where: str, scanner: Scanner, key: str | None = None) -> None:
    if isinstance(obj, str):
        if key not in _STRUCTURAL and len(obj) >= 3:
            scanner.scan(obj, where + (f" ({key})" if key else ""))
    elif isinstance(obj, dict):
        for k, v in obj.items():
            _walk(v, where, scanner, k)
    elif isinstance(obj, list):
        for v in obj:
            _walk(v, where, scanner, key)


def files_of(path: Path) -> list[Path]:
    """The session file and the files read with it."""
    return [path, *sidecar_files(path)]


def scan_session(path: Path, rules: frozenset[str] = frozenset(), patterns: tuple[str, ...] = ()) -> Review:
    """Every value to redact in the session at `path` (and its sub-agent files)."""
    scanner = Scanner(rules, patterns)
    scan_into(scanner, path, path.name)
    return scanner.review()


def scan_sessions(sessions: list[tuple[Path, str]], rules: frozenset[str] = frozenset(),
                  patterns: tuple[str, ...] = ()) -> tuple[Review, dict[str, str]]:
    """Every value to redact in all of `sessions` ((path, name) pairs), each value with one tag
    across them; and the names of the files that could not be read, with why."""
    scanner = Scanner(rules, patterns)
    unread: dict[str, str] = {}
    for path, name in sessions:
        try:
            scan_into(scanner, path, name)
        except OSError as exc:
            unread[name] = exc.strerror or str(exc)
    return scanner.review(), unread


def scan_into(scanner: Scanner, path: Path, name: str) -> None:
    """Scan the session at `path` (and its sub-agent files) with `scanner`, its places named
    after `name`: one scanner over many sessions gives each value one tag in all of them. An
    unreadable file is an OSError (nothing of it is scanned)."""
    stem = name[:-len(".jsonl")] if name.endswith(".jsonl") else name
    for f in files_of(path):
        where = name if f == path else f"{stem}/subagents/{f.name}" if "/" in name else f"subagents/{f.name}"
        for n, raw in enumerate(f.read_bytes().splitlines(), 1):
            try:
                obj = orjson.loads(raw)
            except orjson.JSONDecodeError:
                obj = raw.decode("utf-8", errors="replace")
            _walk(obj, f"{where} line {n}", scanner)


class Replacer:
    """Replaces the values of the findings not kept with their tags, longest value first (a
    value inside a longer one is replaced as part of it)."""

    def __init__(self, review: Review, keep: frozenset[str] = frozenset()) -> None:
        chosen = sorted((f for f in review.findings if f.tag not in keep), key=lambda f: -len(f.value))
        self._tags = {f.value: f.tag for f in chosen}
        self._re = re.compile("|".join(re.escape(f.value) for f in chosen)) if chosen else None

    def text(self, s: str) -> str:
        return self._re.sub(lambda m: self._tags[m.group()], s) if self._re is not None else s

    def obj(self, obj):
        if isinstance(obj, str):
            return self.text(obj)
        if isinstance(obj, dict):
            return {self.text(k): self.obj(v) for k, v in obj.items()}
        if isinstance(obj, list):
            return [self.obj(v) for v in obj]
        return obj

    def line(self, raw: bytes) -> bytes:
        if self._re is None:
            return raw
        try:
            obj = orjson.loads(raw)
        except orjson.JSONDecodeError:  # kept as it is read, so its text is replaced as it is written
            text = raw.decode("utf-8", errors="replace")
            for value, tag in self._tags.items():
                text = text.replace(json.dumps(value)[1:-1], tag)
            return self.text(text).encode()
        return orjson.dumps(self.obj(obj))


def write_redacted(path: Path, review: Review, out_dir: Path, keep: frozenset[str] = frozenset()) -> Path:
    """A copy of the session at `path` (and its sub-agent files) in `out_dir`, laid out as the
    original, with every finding not in `keep` replaced by its tag; returns the copy's path."""
    return copy_redacted(path, Replacer(review, keep), out_dir)


def copy_redacted(path: Path, replace: Replacer, out_dir: Path) -> Path:
    """`write_redacted` with the replacer made once (for the many sessions of one review)."""
    copy = out_dir / path.name
    for f in files_of(path):
        target = copy if f == path else copy.with_suffix("") / "subagents" / f.name
        target.parent.mkdir(parents=True, exist_ok=True)
        data = f.read_bytes()
        lines = data.splitlines()
        body = b"\n".join(replace.line(raw) if raw.strip() else raw for raw in lines)
        target.write_bytes(body + (b"\n" if data.endswith(b"\n") else b""))
    return copy


@dataclass(frozen=True)
class Choice:
    """What a person asked for: which optional rules, their own patterns, the tags to keep."""

    rules: frozenset[str] = frozenset()
    patterns: tuple[str, ...] = ()
    keep: frozenset[str] = frozenset()


@contextmanager
def redacted(path: Path, choice: Choice) -> Iterator[tuple[Path, Review]]:
    """The session at `path` scanned and copied with its findings replaced, in a temporary
    folder that is removed afterwards: (the copy's path, the review)."""
    review = scan_session(path, choice.rules, choice.patterns)
    with tempfile.TemporaryDirectory(prefix="session-tree-redacted-") as tmp:
        yield write_redacted(path, review, Path(tmp), choice.keep), review


def summary(review: Review, keep: frozenset[str] = frozenset()) -> str:
    """One line for the file's first screen: how many values, of which kinds, by which rules."""
    counts = review.counts(keep)
    n = sum(counts.values())
    kinds = ", ".join(f"{rule} ×{c}" for rule, c in sorted(counts.items()))
    kept = len(review.findings) - n
    return (f"Redacted: {n} value{'' if n == 1 else 's'}{' (' + kinds + ')' if kinds else ''}, found by "
            f"{', '.join(review.rules)}{f'; {kept} kept as they were by choice' if kept else ''}.")



def redact_object(obj, rules: frozenset[str] = frozenset()) -> tuple[object, Review]:
    """`obj` (JSON-like: a report) with every value the scan finds in its strings replaced by its
    tag, and the review that says what was found."""
    scanner = Scanner(rules)
    _walk(obj, "report", scanner)
    review = scanner.review()
    return Replacer(review).obj(obj), review
