"""Finding secrets in a session before it leaves the machine, and replacing them consistently.

Detection is detect-secrets' plugins (provider keys and tokens, private keys, `KEY=value`
assignments, high-entropy strings) and our context rules beside them (`redact_rules`:
assignments whatever the value's characters, passwords and secret parameters of URLs, headers,
key bodies, the tokens the library has no plugin for, and JWTs and URL passwords, whose library
patterns read a hostile line in quadratic time); the optional rules (home paths, user names, e-mail
addresses, a person's own patterns) are what a person may still not want to share. Every string
of every line is scanned, keys and structural fields included, in the session file and in the
files read with it (sub-agent transcripts), and the file's name: messages, tool arguments and
results, summaries, labels and the raw JSON are all covered. A string is also read as a reader
sees it, escapes decoded and invisible characters dropped (`redact_walk.DecodedView`), and the
text blocks of one message are read joined, so a secret cut between two blocks is found and
both its parts are cut out.

A scan gives a `Review`: each distinct value once, with its tag (`[REDACTED:aws-key#1]`: the same
value always gets the same tag), the rule that found it and where it occurs. A person may keep
some values; `write_redacted` then writes a copy of the session (and its sub-agent files) with
the rest replaced, which is read and rendered like any session: nothing downstream has to know.
"""

from __future__ import annotations

import bisect
import getpass
import json
import re
import tempfile
import threading
from collections import Counter, OrderedDict
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

from detect_secrets.filters.heuristic import (
    is_indirect_reference,
    is_potential_uuid,
    is_sequential_string,
    is_templated_secret,
)
from detect_secrets.plugins.artifactory import ArtifactoryDetector
from detect_secrets.plugins.aws import AWSKeyDetector
from detect_secrets.plugins.azure_storage_key import AzureStorageKeyDetector
from detect_secrets.plugins.cloudant import CloudantDetector
from detect_secrets.plugins.discord import DiscordBotTokenDetector
from detect_secrets.plugins.github_token import GitHubTokenDetector
from detect_secrets.plugins.gitlab_token import GitLabTokenDetector
from detect_secrets.plugins.high_entropy_strings import Base64HighEntropyString, HexHighEntropyString
from detect_secrets.plugins.ibm_cloud_iam import IbmCloudIamDetector
from detect_secrets.plugins.ibm_cos_hmac import IbmCosHmacDetector
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
from .redact_rules import ASSIGNMENT, PROVIDER_TOKENS, context_hits, placeholder, secret_name
from .redact_walk import BOM, cut_in_place, decoded_view, dumps, occurrences, parse_line, replace_in_place, strings
from .storage import sidecar_files

# detect-secrets' pattern plugins, each with the rule name its tags carry.
_PATTERN_PLUGINS = (
    (AWSKeyDetector, "aws-key"), (ArtifactoryDetector, "artifactory-token"), (AzureStorageKeyDetector, "azure-key"),
    (CloudantDetector, "cloudant-key"), (DiscordBotTokenDetector, "discord-token"), (GitHubTokenDetector, "github-token"),
    (GitLabTokenDetector, "gitlab-token"), (IbmCloudIamDetector, "ibm-key"), (IbmCosHmacDetector, "ibm-key"),
    (MailchimpDetector, "mailchimp-key"), (NpmDetector, "npm-token"),
    (OpenAIDetector, "openai-key"), (PypiTokenDetector, "pypi-token"), (SendGridDetector, "sendgrid-key"),
    (SlackDetector, "slack-token"), (SoftlayerDetector, "softlayer-key"), (SquareOAuthDetector, "square-token"),
    (StripeDetector, "stripe-key"), (TelegramBotTokenDetector, "telegram-token"), (TwilioKeyDetector, "twilio-key"),
)
SECRET_RULES = tuple(dict.fromkeys((  # every rule a secret is found by: the library's plugins', then ours
    "private-key", *(r for _, r in _PATTERN_PLUGINS), "secret-assignment", "high-entropy", "hex-entropy",
    "private-key-body", "url-password", "url-secret", "auth-header", *(r for r, _ in PROVIDER_TOKENS), "aws-secret")))
# The optional rules a share uses unless told otherwise, on the web review (ticked on a first
# visit) and on the command line alike: a shared file that shows /home/NAME says who made it.
DEFAULT_RULES = frozenset({"home"})

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
_ALNUM_TAIL = re.compile(r"[A-Za-z0-9_-]*")
_UUID = re.compile(r"[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}")
_PRIVATE_BLOCK = re.compile(r"-----BEGIN[A-Z ]*PRIVATE KEY( BLOCK)?-----.*?(?:-----END[A-Z ]*PRIVATE KEY( BLOCK)?-----|\Z)", re.S)
_HOME = re.compile(r"(?:/home/|/Users/|[A-Za-z]:\\{1,2}Users\\{1,2})([A-Za-z0-9._-]+)")
# A home path as agents encode it in their folders' names (`-home-ana-projects-x`, `--home-ana-x--`).
_DASHED_HOME = re.compile(r"(?<![A-Za-z0-9])-{1,2}((?:home|Users)-([A-Za-z0-9._]+))(?=-)")
_EMAIL = re.compile(r"[A-Za-z0-9._%+-]+@[A-Za-z0-9-]+(?:\.[A-Za-z0-9-]+)*\.[A-Za-z]{2,}")
_ENTROPY_LIMIT, _HEX_LIMIT = 4.5, 3.0  # detect-secrets' own defaults (bits per character)
# Keys whose values are the file's structure (ids, links, times), never shown as text.
_STRUCTURAL = frozenset({"id", "parentId", "uuid", "parentUuid", "leafUuid", "sessionId", "timestamp", "type",
                         "firstKeptEntryId", "targetId", "fromId", "toolCallId", "tool_use_id", "requestId",
                         "promptId", "messageId", "agentId", "call_id", "turn_id",
                         # a model's opaque signatures of its reasoning: no one's secret, and never text
                         "signature", "thinkingSignature", "encrypted_content"})
# What the values of those keys are when they are what they say: a UUID, hex, a time, a word, a
# number, or an id of a provider's kind (`toolu_…`, `msg_…`, `call_…`). Anything else under them
# (a token where an id should be) is scanned, for secrets of a known shape.
_ID_SHAPE = re.compile(r"[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}|[0-9a-fA-F]{1,64}"
                       r"|\d{4}-\d\d-\d\d[T ][\d:.]+(?:Z|[+-]\d\d:?\d\d)?|[a-z_:./-]{1,40}|\d{1,20}"
                       r"|(?:msg|toolu|srvtoolu|req|call|resp|rs|fc|item|run|chatcmpl|ws|turn|evt|sess|agent)_[A-Za-z0-9]{6,60}")
# The lines a slow plugin can match at all, told by a word each of its matches holds: those
# plugins' patterns try every position of a string (a third of the scan, before this).
_CREDENTIAL_WORD = re.compile(r"key|pw|pass|token", re.I)
_GATES = {"cloudant-key": _CREDENTIAL_WORD, "ibm-key": _CREDENTIAL_WORD, "softlayer-key": _CREDENTIAL_WORD,
          "artifactory-token": re.compile(r"AKC|AP"), "mailchimp-key": re.compile(r"-us\d"),
          "npm-token": re.compile(r"_authToken"), "openai-key": re.compile(r"T3BlbkFJ")}
# The plugins whose patterns read from each possible start to the end of a line (`//.+/:`,
# `(?: *)(?:…| +)`): on a hostile line of a megabyte they take minutes. They read lines up to
# _LONGEST_LINE characters; on a longer line our bounded rules find what they would (the npm and
# OpenAI tokens by their prefixes, the assignments by their names).
_LINE_BOUND = frozenset({"npm-token", "cloudant-key", "ibm-key", "softlayer-key", "openai-key"})
_LONGEST_LINE = 4000
_KEYWORDS = re.compile("|".join(KEYWORD_DENYLIST), re.I)  # the names the keyword plugin looks for
_KEYWORD_FILE = "session.yaml"  # the keyword plugin's unquoted `KEY=value` / `key: value` forms
_OWN_CHOICE = frozenset({*OPTIONAL_RULES, "pattern"})  # rules a person asked for: each value stands on its own
_SHORTEST = 3  # a shorter value would be replaced in every word that holds it


@dataclass(frozen=True)
class Cut:
    """A part of a finding's value in one string of a line (the value was split across text
    blocks): text[start:end] of the string at `path` goes, the first part giving way to the tag."""

    path: tuple
    start: int
    end: int
    value: str
    first: bool


@dataclass
class Finding:
    """One distinct value to redact: its tag, the rule that found it, and where it occurs."""

    value: str
    rule: str
    tag: str
    places: list[str] = field(default_factory=list)
    aliases: list[str] = field(default_factory=list)  # the same value as written elsewhere (escaped, split by an invisible character)
    count: int = 0  # the strings it was found in
    before: str = ""  # what precedes its first place (other findings in it replaced by their tags)

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
    # The parts of values split across text blocks, by (file, line number): each cut out where it is.
    cuts: dict[tuple[str, int], list[Cut]] = field(default_factory=dict)

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
        self._private_key = PrivateKeyDetector()
        self._keyword = KeywordDetector()
        self._base64, self._hex = Base64HighEntropyString(), HexHighEntropyString()
        self._users = {getpass.getuser()} if "user" in rules else set()
        self.found: dict[str, Finding] = {}
        self.cuts: dict[tuple[str, int], list[Cut]] = {}
        self._per_rule: Counter = Counter()
        self._seen: dict[tuple[str, bool], list[tuple[str, str, tuple[str, ...]]]] = {}  # a string's hits, once per distinct string

    def rule_names(self) -> list[str]:
        return ["detect-secrets", "context rules", *sorted(self.rules), *(["patterns"] if self.patterns else [])]

    def scan(self, text: str, where: str, structural: bool = False) -> None:
        """Every value to redact in `text`; `structural`: a field of the file's structure (an id,
        a time, a signature), read for secrets of a known shape but not for randomness (every
        id is random)."""
        hits: dict[str, tuple[str, list[str]]] = {}  # value -> (its first rule, its other spellings): once a string
        for value, rule, *aliases in self._hits(text, structural):
            hits.setdefault(value, (rule, []))[1].extend(aliases[0] if aliases else ())
        # A secret inside a longer one of the same string goes with it (a key body in its block),
        # and one found as written that is another's escaped spelling is that one's.
        spellings = {a for _, aliases in hits.values() for a in aliases}
        kept: list[str] = []
        for value in sorted(hits, key=len, reverse=True):
            own = hits[value][0] in _OWN_CHOICE
            if own or (value not in spellings and not any(value in longer for longer in kept)):
                kept.append(value)
        for value in sorted(kept, key=list(hits).index):
            rule, aliases = hits[value]
            self._add(value, rule, where, aliases, text, hits)

    def scan_pair(self, key: str, value: str, where: str) -> None:
        """A JSON field whose name says secret (`"password": "a;b"`): its value, whatever it holds."""
        if secret_name(key) and not placeholder(value):
            self._add(value, ASSIGNMENT, where)

    def _add(self, value: str, rule: str, where: str, aliases=(), text: str = "", others=()) -> Finding:
        f = self.found.get(value)
        if f is None:
            self._per_rule[rule] += 1
            f = self.found[value] = Finding(value, rule, f"[REDACTED:{rule}#{self._per_rule[rule]}]")
            f.before = _before(text, value, others)
        f.count += 1
        for a in aliases:
            if a != value and a not in f.aliases and len(f.aliases) < 20:
                f.aliases.append(a)
        if len(f.places) < 20 and where not in f.places:
            f.places.append(where)
        return f

    def scan_run(self, blocks: list[tuple[str, int, tuple, str]], where: str) -> None:
        """The text blocks of one message read joined ((file, line, path, text) each): a value
        that runs across two of them is found, and each of its parts is cut where it stands."""
        joined = "".join(b[3] for b in blocks)
        starts = []
        at = 0
        for b in blocks:
            starts.append(at)
            at += len(b[3])
        for value, rule, *_ in self._detected(joined, False):
            for at in occurrences(joined, value):
                end = at + len(value)
                first, last = bisect.bisect_right(starts, at) - 1, bisect.bisect_right(starts, end - 1) - 1
                if first == last:
                    continue  # (inside one block: its own scan finds it)
                self._add(value, rule, f"{where} line {blocks[first][1]} (split across text blocks)")
                for k in range(first, last + 1):
                    file, line, path, text = blocks[k]
                    cut = Cut(path, max(at, starts[k]) - starts[k], min(end, starts[k] + len(text)) - starts[k], value, k == first)
                    self.cuts.setdefault((file, line), []).append(cut)

    def _hits(self, text: str, structural: bool = False) -> list[tuple]:
        out: list[tuple] = []
        if "PRIVATE KEY" in text:
            for line in text.splitlines():
                if any(True for _ in self._private_key.analyze_string(line)):
                    out.extend((m.group(), "private-key") for m in _PRIVATE_BLOCK.finditer(text))
                    break
        out.extend(self._detected(text, structural))
        if "home" in self.rules or "user" in self.rules:
            for m in _HOME.finditer(text):
                if "home" in self.rules:
                    out.append((m.group(), "home"))
                if "user" in self.rules:
                    self._users.add(m.group(1))
            for m in _DASHED_HOME.finditer(text):
                if "home" in self.rules:
                    out.append((m.group(1), "home"))
                if "user" in self.rules:
                    self._users.add(m.group(2))
        if self._users:
            out.extend((u, "user") for u in self._users if len(u) > 2 and re.search(rf"\b{re.escape(u)}\b", text))
        if "email" in self.rules:
            out.extend((m.group(), "email") for m in _EMAIL.finditer(text))
        for p in self.patterns:
            out.extend((m.group(), "pattern") for m in p.finditer(text) if m.group())
        return out

    def _detected(self, text: str, structural: bool) -> list[tuple[str, str, tuple[str, ...]]]:
        """The detectors' and context rules' hits in one string, as written and as read (each
        value found only in the decoded view with the raw spellings that stand for it); once
        per distinct string."""
        hits = self._seen.get((text, structural))
        if hits is not None:
            return hits
        hits = [(v, r, ()) for v, r in self._text_hits(text, not structural)]
        view = decoded_view(text)
        if view is not None:
            found = {v for v, _, _ in hits}
            for value, rule in self._text_hits(view.text, not structural):
                if value not in found:  # (a value read only as decoded: an escaped token, a line of JSON held as text)
                    spans = tuple(dict.fromkeys(view.raw_span(at, at + len(value)) for at in occurrences(view.text, value)))
                    hits.append((value, rule, tuple(s for s in spans if s != value)))
        if len(self._seen) < 100_000:  # (bounded: a huge session's strings are mostly distinct)
            self._seen[(text, structural)] = hits
        return hits

    def _text_hits(self, text: str, entropy: bool = True) -> list[tuple[str, str]]:
        """The detectors' hits in one string: the pattern plugins and the entropy rules read it
        whole (their patterns hold no line break), the keyword plugin only its lines that name
        a keyword (it reads line by line, and its patterns cost most); then our context rules."""
        out: list[tuple[str, str]] = []
        lines = text.splitlines()
        for plugin, rule in self._plugins:
            gate = _GATES.get(rule)
            if rule in _LINE_BOUND:
                part = "\n".join(x for x in lines if len(x) <= _LONGEST_LINE and (gate is None or gate.search(x)))
            else:
                part = text if gate is None else "\n".join(x for x in lines if gate.search(x))
            if not part:
                continue
            for regex in plugin.denylist:
                for m in regex.finditer(part):
                    value = _secret_of(m)
                    if value == m.group():  # a pattern that stops inside a token (a longer Stripe key): the rest goes too
                        value += _ALNUM_TAIL.match(part, m.end()).group()
                    out.append((value, rule))
        if _KEYWORDS.search(text):
            for line in lines:
                if len(line) > _LONGEST_LINE or not _KEYWORDS.search(line):  # (our assignment rules read the long ones)
                    continue
                context = get_code_snippet([line], 1)
                for s in self._keyword.analyze_line(filename=_KEYWORD_FILE, line=line, line_number=1, context=context):
                    value = s.secret_value or ""
                    if len(value) >= 6 and _literal(value) and not is_indirect_reference(line):
                        out.append((value, "secret-assignment"))
        out.extend(context_hits(text))
        out = [(v, rule) for v, rule in out if len(v) >= _SHORTEST]
        if entropy:
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
        found = list(self.found.values())
        # A place may hold a secret (a file name holding a token): it is shown with its tag. (A
        # home path or a name of the person's own choice stays: the review is theirs to read.)
        masked = Replacer(Review([f for f in found if f.rule not in _OWN_CHOICE], []))
        for f in found:
            f.places = [masked.text(p) for p in f.places]
        return Review(found, self.rule_names(), [p.pattern for p in self.patterns], self.cuts)


def _before(text: str, value: str, others) -> str:
    """The characters before the first place of `value` in `text`, on its line, with every
    other value found in the text that reaches into them shown as `[…]` (even a part of a
    secret is not shown)."""
    at = text.find(value)
    if at <= 0:
        return ""
    start = max(0, at - 24, text.rfind("\n", 0, at) + 1)
    hidden = [False] * (at - start)
    for other in others:
        if other == value:
            continue
        o = text.find(other, max(0, start - len(other)))
        while 0 <= o < at:
            for i in range(max(o, start), min(o + len(other), at)):
                hidden[i - start] = True
            o = text.find(other, o + 1)
    out, masked = [], False
    for i, c in enumerate(text[start:at]):
        if hidden[i]:
            if not masked:
                out.append("[…]")
            masked = True
        else:
            out.append(c)
            masked = False
    return "".join(out)


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


def _scan_line(scanner: Scanner, obj, where: str) -> list[list[tuple]]:
    """Every string of a parsed line (keys too, and each field whose name says secret); the
    runs of its text blocks, for `Scanner.scan_run`."""
    found, runs = strings(obj)
    for key, text, is_key in found:
        if len(text) < 3:
            continue
        if is_key:
            scanner.scan(text, f"{where} (a key)")
        elif key in _STRUCTURAL:
            if not _ID_SHAPE.fullmatch(text):  # (every entry has an id, a parent and a time: reading each is a third of a scan)
                scanner.scan(text, f"{where} ({key})", True)
        else:
            scanner.scan(text, where + (f" ({key})" if key else ""))
            if key is not None:
                scanner.scan_pair(key, text, where + f" ({key})")
    return runs


def _message_id(obj) -> str | None:
    """The id of the model's message a line holds a part of: Claude Code writes each content
    block of one message as a line of its own, under the message's id."""
    message = obj.get("message") if isinstance(obj, dict) else None
    value = message.get("id") if isinstance(message, dict) else None
    return value if isinstance(value, str) else None


def files_of(path: Path) -> list[Path]:
    """The session file and the files read with it."""
    return [path, *sidecar_files(path)]


def scan_session(path: Path, rules: frozenset[str] = frozenset(), patterns: tuple[str, ...] = (),
                 name: str | None = None, extra: list[tuple[str, str]] = ()) -> Review:
    """Every value to redact in the session at `path` (and its sub-agent files), in its `name`
    as the shared file shows it (default: the file's name), and in the `extra` texts a shared
    page shows beside it ((text, where) pairs: a verdict's note kept in the data folder). The
    same files and choices give the same scan, kept (`_SCANS`)."""
    key = (tuple((str(f), f.stat().st_size, f.stat().st_mtime_ns) for f in files_of(path)), rules, patterns, name, tuple(extra))
    with _SCANS_LOCK:
        if key in _SCANS:
            _SCANS.move_to_end(key)
            return _SCANS[key]
    scanner = Scanner(rules, patterns)
    scan_into(scanner, path, name or path.name, (name or path.name).rsplit("/", 1)[-1])  # (one session: its file's name says where)
    for text, where in extra:
        scanner.scan(text, where)
    review = scanner.review()
    with _SCANS_LOCK:
        _SCANS[key] = review
        while len(_SCANS) > _SCANS_KEPT:
            _SCANS.popitem(last=False)
    return review


# The last scans, by the files' sizes and times and the choices: the review scans a session, the
# download that follows it (or a print, a comparison) uses the same scan rather than reading a
# large session again. A file that changed is scanned again.
_SCANS: OrderedDict[tuple, Review] = OrderedDict()
_SCANS_LOCK = threading.Lock()
_SCANS_KEPT = 8


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


def scan_into(scanner: Scanner, path: Path, name: str, label: str | None = None) -> None:
    """Scan the session at `path` (and its sub-agent files) with `scanner`, its places named
    after `label` (default `name`): one scanner over many sessions gives each value one tag in
    all of them. The `name` itself is scanned too (its folders and the file's name: a shared
    site shows them). An unreadable file is an OSError (nothing of it is scanned)."""
    stem = name[:-len(".jsonl")] if name.endswith(".jsonl") else name
    for part in dict.fromkeys([name, *stem.split("/")]):
        scanner.scan(part, "file name")
    name = label or name
    stem = name[:-len(".jsonl")] if name.endswith(".jsonl") else name
    for f in files_of(path):
        where = name if f == path else f"{stem}/subagents/{f.name}" if "/" in name else f"subagents/{f.name}"
        if f != path:
            scanner.scan(f.name, "file name")
        carried: tuple[str | None, list[tuple]] = (None, [])  # the last text blocks of the line before, and its message
        for n, raw in enumerate(f.read_bytes().splitlines(), 1):
            obj = parse_line(raw)
            if obj is None:
                scanner.scan(raw.decode("utf-8", errors="replace"), f"{where} line {n}")
                carried = (None, [])
                continue
            runs = [[(str(f), n, p, t) for p, t in run] for run in _scan_line(scanner, obj, f"{where} line {n}")]
            message = _message_id(obj)
            if runs and message is not None and carried[0] == message and carried[1]:
                runs[0] = carried[1] + runs[0]
            for run in runs:
                if len(run) > 1:
                    scanner.scan_run(run, where)
            carried = (message, runs[-1] if runs else [])


class Replacer:
    """Replaces the values of the findings not kept with their tags, longest value first (a
    value inside a longer one is replaced as part of it), each value's other spellings with
    it, and the parts of values split across text blocks where they stand."""

    def __init__(self, review: Review, keep: frozenset[str] = frozenset()) -> None:
        chosen = [f for f in review.findings if f.tag not in keep]
        self._tags: dict[str, str] = {}
        for f in chosen:
            self._tags.setdefault(f.value, f.tag)
            for alias in f.aliases:
                self._tags.setdefault(alias, f.tag)
        values = sorted(self._tags, key=len, reverse=True)
        self._re = re.compile("|".join(re.escape(v) for v in values)) if values else None
        self._cuts = {at: [c for c in cuts if c.value in self._tags] for at, cuts in review.cuts.items()}

    def text(self, s: str) -> str:
        return self._re.sub(lambda m: self._tags[m.group()], s) if self._re is not None else s

    def obj(self, obj):
        """`obj` with every string replaced (in place: a parsed line is not needed as it was)."""
        return replace_in_place(obj, self.text)

    def line(self, raw: bytes, at: tuple[str, int] | None = None) -> bytes:
        """One line of a session file, redacted; `at` (its file and number) finds the parts of
        split values cut in it. A BOM before it stays."""
        cuts = self._cuts.get(at) if at else None
        if self._re is None and not cuts:
            return raw
        bom = BOM if raw.startswith(BOM) else b""
        obj = parse_line(raw)
        if obj is None:  # kept as it is read, so its text is replaced as it is written
            return self._raw_line(raw)
        if cuts:
            self._cut(obj, cuts)
        return bom + dumps(self.obj(obj))

    def _cut(self, obj, cuts: list[Cut]) -> None:
        by_path: dict[tuple, list[Cut]] = {}
        for c in cuts:
            by_path.setdefault(c.path, []).append(c)
        for path, parts in by_path.items():
            merged: list[list] = []  # [start, end, tag or ""], overlapping parts made one
            for c in sorted(parts, key=lambda c: c.start):
                tag = self._tags[c.value] if c.first else ""
                if merged and c.start < merged[-1][1]:
                    merged[-1][1] = max(merged[-1][1], c.end)
                    merged[-1][2] = merged[-1][2] or tag
                else:
                    merged.append([c.start, c.end, tag])
            try:
                for start, end, tag in reversed(merged):
                    cut_in_place(obj, path, start, end, tag)
            except (KeyError, IndexError, TypeError):  # (the line changed since the scan: its values are still replaced)
                continue

    def _raw_line(self, raw: bytes) -> bytes:
        """A line that is no JSON: each string in it decoded, replaced and written again (so a
        value is found however it was escaped), and the rest replaced as it stands."""
        text = raw.decode("utf-8", errors="replace")
        out, at = [], 0
        for m in _JSON_STRING.finditer(text):
            out.append(self._escaped(text[at:m.start()]))
            literal = m.group()
            try:
                value = json.loads(literal)
            except ValueError:
                out.append(self._escaped(literal))
            else:
                new = self.text(value)
                out.append(literal if new == value else json.dumps(new, ensure_ascii=False))
            at = m.end()
        out.append(self._escaped(text[at:]))
        return "".join(out).encode()

    def _escaped(self, text: str) -> str:
        for value, tag in self._tags.items():
            text = text.replace(json.dumps(value)[1:-1], tag)
        return self.text(text)


_JSON_STRING = re.compile(r'"(?:[^"\\\n]|\\.)*"')


def write_redacted(path: Path, review: Review, out_dir: Path, keep: frozenset[str] = frozenset()) -> Path:
    """A copy of the session at `path` (and its sub-agent files) in `out_dir`, laid out as the
    original, with every finding not in `keep` replaced by its tag; returns the copy's path."""
    return copy_redacted(path, Replacer(review, keep), out_dir)


def copy_redacted(path: Path, replace: Replacer, out_dir: Path) -> Path:
    """`write_redacted` with the replacer made once (for the many sessions of one review)."""
    copy = out_dir / _safe_name(replace.text(path.name), path.name)
    for f in files_of(path):
        target = copy if f == path else copy.with_suffix("") / "subagents" / _safe_name(replace.text(f.name), f.name)
        target.parent.mkdir(parents=True, exist_ok=True)
        data = f.read_bytes()
        lines = data.splitlines()
        body = b"\n".join(replace.line(raw, (str(f), n)) if raw.strip() else raw for n, raw in enumerate(lines, 1))
        target.write_bytes(body + (b"\n" if data.endswith(b"\n") else b""))
    return copy


def _safe_name(name: str, original: str) -> str:
    """A redacted file name that is still one file's name, of the same kind."""
    name = name.replace("/", "_").replace("\\", "_")
    suffix = Path(original).suffix
    return name if name.endswith(suffix) else name + suffix


@dataclass(frozen=True)
class Choice:
    """What a person asked for: which optional rules, their own patterns, the tags to keep."""

    rules: frozenset[str] = frozenset()
    patterns: tuple[str, ...] = ()
    keep: frozenset[str] = frozenset()


@contextmanager
def redacted(path: Path, choice: Choice, name: str | None = None,
             extra: list[tuple[str, str]] = ()) -> Iterator[tuple[Path, Review]]:
    """The session at `path` scanned (with its `name` and the `extra` texts, as `scan_session`)
    and copied with its findings replaced, in a temporary folder that is removed afterwards:
    (the copy's path, the review)."""
    review = scan_session(path, choice.rules, choice.patterns, name, extra)
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
    """A copy of `obj` (JSON-like: a report) with every value the scan finds in its strings (as a
    session line's are scanned) replaced by its tag, and the review that says what was found."""
    scanner = Scanner(rules)
    _scan_line(scanner, obj, "report")  # (a report holds no runs of text blocks: its texts are whole)
    review = scanner.review()
    return Replacer(review).obj(json.loads(json.dumps(obj))), review
