"""The redactor's own context rules, beside detect-secrets' plugins: what a secret looks like by
where it stands rather than by its characters.

detect-secrets finds a provider's token by its shape and a password only in an assignment whose
value holds no space, `;`, `(`, `$` or backtick (its keyword plugin takes such a value for code).
A session is mostly shell, `.env` dumps, YAML, JSON and prose, where a password may hold any of
those. So these rules read the syntax around a value: an assignment to a name that says secret
(`DB_PASSWORD=`, `password:`, `"apiKey": `, `--token `, `export X='…'`), a URL's password or
secret parameter, an Authorization header, a private key's body without its header, an AWS secret
key standing alone in prose, and the tokens of providers the library has no plugin for.

These patterns are fixed and ours (never a pattern from outside), and written to run in linear
time on hostile text: every repetition is bounded or anchored by a character class that cannot
overlap what follows it.
"""

from __future__ import annotations

import math
import re
from collections import Counter

ASSIGNMENT = "secret-assignment"

# Tokens of providers detect-secrets has no plugin for, or whose plugin takes only part of the
# token (its Stripe pattern stops after 24 characters, its OpenAI one needs the legacy marker).
# Each starts only where a run of token characters starts (`_START`): a hostile run of
# "sk-sk-sk-…" is then read once, not once from each of its starts.
_START = r"(?<![A-Za-z0-9_\-])"
PROVIDER_TOKENS = tuple((rule, re.compile(_START + pattern)) for rule, pattern in (
    ("anthropic-key", r"sk-ant-(?:api|admin|oat|sid)\d{2}-[A-Za-z0-9_\-]{20,}"),
    ("openai-key", r"(?:sk-(?:proj|svcacct|admin|None)-[A-Za-z0-9_\-]{20,}|sk-[A-Za-z0-9]{40,})"),
    ("github-token", r"(?:github_pat_[A-Za-z0-9_]{22,}|gh[pousr]_[A-Za-z0-9_]{30,})"),
    ("gitlab-token", r"gl(?:pat|dt|ptt|rt|cbt|ft|imt|agent|oas|soat)-[A-Za-z0-9_\-]{20,}"),
    ("stripe-key", r"(?:(?:sk|rk)_(?:live|test)_[0-9A-Za-z]{16,}|whsec_[A-Za-z0-9]{24,})"),
    ("slack-token", r"(?:xox[abposre]-[A-Za-z0-9\-]{10,}|xapp-\d-[A-Za-z0-9\-]{10,})"),
    ("google-api-key", r"AIza[0-9A-Za-z_\-]{35}"),
    ("google-oauth-token", r"ya29\.[0-9A-Za-z_\-]{20,}"),
    ("huggingface-token", r"hf_[A-Za-z0-9]{30,}"),
    ("npm-token", r"npm_[A-Za-z0-9]{36}"),
    ("groq-key", r"gsk_[A-Za-z0-9]{40,}"),
    ("xai-key", r"xai-[A-Za-z0-9]{40,}"),
    ("digitalocean-token", r"do[opr]_v1_[a-f0-9]{64}"),
    ("shopify-token", r"shp(?:at|ca|pa|ss)_[a-fA-F0-9]{32}"),
    ("databricks-token", r"dapi[a-f0-9]{32}"),
    ("age-key", r"AGE-SECRET-KEY-1[0-9A-Z]{58}"),
    # (the library's JWT pattern reads from every "eyJ" of a run to its end: this one from the run's start)
    ("jwt", r"eyJ[A-Za-z0-9_\-]{2,}={0,2}\.[A-Za-z0-9_\-]{2,}={0,2}(?:\.[A-Za-z0-9_\-+/]*={0,2})?"),
))
# A word each provider's tokens start with: the rules above run only on text holding one.
_PROVIDER_GATE = re.compile(r"sk-|sk_|rk_|whsec_|gh[pousr]_|github_pat_|gl[a-z]{1,5}-|xox|xapp-|AIza|ya29\.|hf_|gsk_|xai-"
                            r"|_v1_|shp|dapi|AGE-SECRET|npm_|eyJ")

# --- Names that say a value is secret -----------------------------------------------------------

_WORDS = re.compile(r"[A-Z]?[a-z]+|[A-Z]+(?![a-z])|\d+|[^\W\d_]+")
_SECRET_WORDS = frozenset({
    "password", "passwd", "passwort", "pwd", "passphrase", "secret", "secrets", "token", "credential", "credentials",
    "apikey", "privatekey", "accesskey", "secretkey", "authkey", "contraseña", "contrasena", "motdepasse",
    "jwt", "bearer", "cookie", "pat",
})
# Words after which a name holds something about a secret, not the secret (`token_type`,
# `password_file`, `secretName`, `max_tokens`).
_ABOUT_WORDS = frozenset({
    "name", "names", "id", "ids", "type", "types", "path", "paths", "file", "files", "dir", "url", "uri", "endpoint",
    "env", "var", "field", "fields", "header", "headers", "prefix", "suffix", "length", "len", "count", "size",
    "limit", "limits", "max", "min", "budget", "usage", "policy", "provider", "manager", "store", "version",
    "arn", "ref", "format", "label", "hint", "prompt", "placeholder", "help", "description", "desc", "text",
    "message", "msg", "error", "errors", "regex", "pattern", "required", "enabled", "expiry", "expires",
    "expiration", "ttl", "timeout", "valid", "mode", "source", "kind", "rotation", "location", "region",
    "scope", "scopes", "index", "input", "output", "lifetime", "estimate", "cost", "reset", "strength",
    "changed", "set", "list", "command", "cmd", "key", "keys", "class", "module", "schema", "option",
    "options", "flag", "visible", "shown", "hidden", "confirm", "confirmation", "policy", "rules", "rule",
})
# Key names whose second word makes a secret of "key" (`api_key`, `privateKey`, `SECRET_KEY`) and
# the first words that make one ordinary (`cache_key`, `primary_key`, `public_key`).
_KEY_ORDINARY = frozenset({
    "public", "primary", "foreign", "sort", "partition", "cache", "hot", "lookup", "map", "dict", "object", "row",
    "column", "index", "unique", "composite", "natural", "surrogate", "keyboard", "music", "group", "idempotency",
    "dedup", "dedupe", "react", "list", "item", "query", "storage", "state", "route", "router", "translation",
    "i18n", "locale", "config", "setting", "settings", "env", "field", "prop", "props", "label", "hash", "shortcut",
    "hotkey", "sorting", "default", "unique", "a", "b", "the", "my", "your", "by", "of", "has", "get", "set",
    "no", "missing", "invalid", "which", "this", "that", "min", "max", "next", "prev", "ordering", "order",
    "registry", "redis", "s3", "bucket", "cursor", "page", "pagination", "continuation", "event", "message",
})


def secret_name(name: str) -> bool:
    """Whether `name` (an identifier, a header, a flag or a JSON key) names a secret value:
    a word such as password, secret or token in it (not followed by a word that makes it
    about the secret, as in `token_type`), or "key" after a word that makes a key secret."""
    words = [w.lower() for w in _WORDS.findall(name)]
    if not words or len(words) > 8:
        return False
    last = words[-1]
    if words in (["pwd"], ["cwd"]):  # (the shell's working folder, not a password)
        return False
    for i, w in enumerate(words):
        if w in _SECRET_WORDS or (w == "pass" and i == len(words) - 1):
            return last not in _ABOUT_WORDS or i == len(words) - 1
    if last == "key" and len(words) >= 2:
        return words[-2] not in _KEY_ORDINARY and words[-2] not in _ABOUT_WORDS
    if last == "auth" and len(words) == 1:
        return True  # (docker's config.json: "auth": "base64 of user:password")
    return False


# --- Values that are no secret: placeholders, references, code ----------------------------------

_NOT_VALUES = frozenset({
    "true", "false", "null", "none", "nil", "undefined", "yes", "no", "on", "off", "required", "optional", "str",
    "string", "bytes", "int", "integer", "number", "bool", "boolean", "any", "object", "secretstr", "secret",
    "password", "token", "redacted", "hidden", "masked", "empty", "unset", "example", "placeholder", "your",
    "self", "this", "env", "default", "config", "settings", "options", "value", "values", "var", "const", "let",
})
# First words of a type annotation (`password: str`, `apiKey?: string;`, `token: Optional[str] = None`).
_TYPE_WORDS = frozenset({
    "str", "string", "bytes", "int", "bool", "boolean", "float", "number", "any", "object", "optional", "union",
    "secretstr", "secretbytes", "none", "list", "dict", "typing", "char", "text", "unknown", "record", "array",
    "uint8array", "buffer", "promise", "pydantic", "field", "annotated", "literal", "sequence", "mapping",
})
_TEMPLATE = re.compile(r"\$\{[^}\n]{0,200}\}|\{\{[^}\n]{0,200}\}\}|%\([A-Za-z_]\w{0,60}\)s|<[^<>\n]{1,80}>|\$\([^)\n]{0,200}\)"
                       r"|\$[A-Z_][A-Z0-9_]{0,80}|\$env:\w{1,80}|%[A-Z_][A-Z0-9_]{0,80}%")
_PLACEHOLDER_CHARS = frozenset("*xX.•…-_#<> ")
_ENV_LOOKUP = re.compile(r"(?:os\.environ|os\.getenv|getenv|process\.env|import\.meta\.env|System\.getenv|ENV\[|env\(|Deno\.env"
                         r"|config\.|settings\.|secrets\.|vars\.|self\.|this\.|args\.|opts\.|options\.|params\.|request\.|req\.)")
# Code in place of a value: an identifier, a chain of them, a call, a subscript, `await`/`new`.
_CODE = re.compile(r"(?:await |new |typeof |\*|&)?[A-Za-z_$][\w$]{0,80}(?:\??\.[A-Za-z_$][\w$]{0,80}|\[[^\]\n]{0,80}\]"
                   r"|\([^()\n]{0,120}\)){0,12}[ \t]*(?:\|\||\?\?|or|\?|\+)?[ \t]*[,;)\]}]*")


# What only code holds: operators and keywords (`a || await f()`, `() => {`, `x ? y : z`).
_CODE_MARKS = re.compile(r"\|\||&&|\?\?|=>|\bawait\b|\basync\b|\bfunction\b|\bnew [A-Z]|\$\{|\)\.|\(\)|!!|\s\?\s|\breturn\b")


def placeholder(value: str) -> bool:
    """A value that stands for a secret without being one: empty or a word such as `none`,
    `********`, `<your key>`, `${DB_PASS}`, `$DB_PASS`, `sk-...`, an earlier redaction."""
    v = value.strip()
    if len(v) < 3 or v.lower().strip("'\"") in _NOT_VALUES or set(v) <= _PLACEHOLDER_CHARS:
        return True
    if v.startswith("[REDACTED") or v.endswith(("...", "…")) or (v.isdigit() and len(v) < 5):
        return True
    return not any(c.isalnum() for c in _TEMPLATE.sub("", v))  # templates and punctuation only (`${a}...${b}`)


def _is_code(value: str, spaced: bool, yaml: bool = False) -> bool:
    """Whether an unquoted value reads as code rather than as a literal: a type annotation, a
    lookup of the environment or settings, or (after `name = ` with spaces, as code is written)
    an operator or keyword only code holds, an identifier, a chain of them or a call. A shell or
    `.env` assignment (`NAME=value`) is literal whatever its characters, except for a chain of
    attributes or a trailing comma; a YAML value (`yaml`) shaped like a call with a symbol a
    password would hold (`x(y)`) is literal too."""
    first = re.match(r"[A-Za-z_]\w*", value)
    if first and first.group().lower() in _TYPE_WORDS and (len(first.group()) == len(value) or value[first.end()] in "[|=?; ,"):
        return True
    if _ENV_LOOKUP.match(value):
        return True
    if spaced and (_CODE_MARKS.search(value) or value.rstrip().endswith((";", "{", "(", ","))):
        return True
    shape = _CODE.fullmatch(value)
    if shape is None or (yaml and _yaml_literal(value)):
        return False
    if spaced:
        return not any(c.isdigit() for c in value) or any(c in value for c in ".([")
    return "." in value or value.endswith(",")


# --- The rules ------------------------------------------------------------------------------------

_NAME = r"[A-Za-z_][\w.\-]{0,80}"
_DQ = r'"((?:[^"\\\n]|\\.){1,500})"'
_SQ = r"'([^'\n]{1,500})'"
_BQ = r"`([^`\n]{1,500})`"
# A line that starts an assignment: shell, `.env`, Dockerfile, PowerShell, cmd; the value is the
# rest of the line (a `.env` value may hold spaces and anything else).
_LINE_ASSIGN = re.compile(
    r"[ \t]*(?:export[ \t]+|declare(?:[ \t]+-\w+){0,3}[ \t]+|typeset[ \t]+|local[ \t]+|readonly[ \t]+|set[ \t]+"
    r"|ENV[ \t]+|ARG[ \t]+|\$env:|const[ \t]+|let[ \t]+|var[ \t]+|final[ \t]+)?"
    r"(?P<name>" + _NAME + r")(?P<before>[ \t]*)(?::?=)(?P<after>[ \t]*)(?P<value>[^\n]{1,500})")
# `name: value` at the start of a line: YAML, an HTTP-style header, a `.netrc`-like listing.
_LINE_COLON = re.compile(r"[ \t]*(?:-[ \t]+)?[\"']?(?P<name>" + _NAME + r")[\"']?[ \t]*:[ \t]+(?P<value>[^\n]{1,500})")
# A quoted value after a name anywhere: JSON, code, TOML, a YAML flow map.
_QUOTED = re.compile(r"(?<![\w.\-])[\"'`]?(?P<name>" + _NAME + r")[\"'`]?[ \t]*(?:=>|:=|==|[:=])[ \t]*(?:r|b|f)?(?:"
                     + _DQ + "|" + _SQ + "|" + _BQ + ")")
# A command's option: `--password=…`, `--token …`, `-p '…'` is left out (too many meanings).
_FLAG = re.compile(r"(?<![\w-])--(?P<name>[A-Za-z][\w\-]{1,60})(?:=|[ \t]+)(?:" + _DQ + "|" + _SQ + r"|(?P<bare>[^\s\"'`|;&<>]{1,300}))")
# `curl -u user:password`, `--user user:password`.
_USER_FLAG = re.compile(r"(?<![\w-])(?:-u|--user|--proxy-user)[ \t]+[\"']?[^\s:\"']{1,100}:(?P<value>[^\s\"']{1,300})")
# A header that carries a credential, in a request or in code.
_HEADER = re.compile(
    r"(?i)\b(?:proxy-)?authorization[\"']?[ \t]*:[ \t]*[\"']?(?:bearer|basic|token|digest|bot|apikey|sso-key|key)?[ \t]*"
    r"(?P<value>[A-Za-z0-9._~+/=\-:]{8,2000})"
    r"|\b(?:x-api-key|api-key|x-auth-token|x-access-token|private-token|x-goog-api-key|x-figma-token|apikey|cookie"
    r"|x-csrf-token|x-xsrf-token)[\"']?[ \t]*:[ \t]*[\"']?(?P<value2>[^\s\"']{8,2000}(?:[ \t]+[^\s\"']{1,2000}){0,20})")
# A URL's password: greedy to the last `@` of its authority (a password may hold `@`), never
# past a `/` or a space (a port and a path are no password).
_URL_PASSWORD = re.compile(r"(?i)\b[a-z][a-z0-9+.\-]{1,20}://[^\s:@/\"'<>]{0,100}:(?P<value>[^\s/\"'<>]{1,200})@[A-Za-z0-9.\-_\[\]]")
# The same inside quotes, where a password may also hold spaces.
_QUOTED_URL_PASSWORD = re.compile(r"[\"'](?i:[a-z][a-z0-9+.\-]{1,20})://[^\s:@/\"']{0,100}:(?P<value>[^\"'\n/]{1,200}?)@[A-Za-z0-9.\-_]{1,200}[/:\"']")
# A secret parameter of a URL (`?access_token=…`, `&sig=…`, `X-Amz-Signature=…`).
_URL_PARAM = re.compile(r"[?&;](?P<name>[\w.\-]{1,40})=(?P<value>[^&#\s\"'<>]{4,600})")
_URL_PARAM_NAMES = frozenset({"sig", "signature", "x-amz-signature", "x-amz-security-token", "x-goog-signature", "code",
                              "client_secret", "key", "apikey", "api_key", "auth", "access_token", "refresh_token"})
# Prose: "the password is …", "my token: …".
_PROSE = re.compile(r"(?i)\b(?:password|passphrase|passwd|secret|token|api[ _-]?key|pin|passcode)"
                    r"(?:[ \t]+(?:is|was|would be|will be|=|:|to)|:|=)[ \t]+[\"'`]?(?P<value>[^\s\"'`]{6,200})")
# A private key's body without its header: two or more lines of base64 of a PEM's width, or one
# long run that starts as a DER key or an OpenSSH key does.
_KEY_BODY_LINES = re.compile(r"(?:^[ \t]*[A-Za-z0-9+/]{60,80}[ \t]*\r?\n){2,}(?:[ \t]*[A-Za-z0-9+/]{4,80}={0,2}[ \t]*$)?", re.M)
_KEY_BODY_RUN = re.compile(r"(?<![A-Za-z0-9+/])(?:MII[A-Za-z0-9+/]{60,}|b3BlbnNzaC1rZXktdjE[A-Za-z0-9+/]{40,}|"
                           r"MC4CAQAwBQYDK2Vw[A-Za-z0-9+/]{16,})={0,2}")
# An AWS secret access key on its own: 40 characters of base64, mixed.
_AWS_SECRET = re.compile(r"(?<![A-Za-z0-9/+=])[A-Za-z0-9/+]{40}(?![A-Za-z0-9/+=])")

# The words a secret's name holds (what `secret_name` accepts), searched in the lowered text
# (a case-insensitive alternation costs fifteen times more), and told apart in `_gate` below.
_GATE_WORDS = re.compile(r"pass|pwd|secret|token|credential|auth|cookie|jwt|bearer|contrase|motdepasse|key|pat")


def _entropy(s: str) -> float:
    counts = Counter(s)
    return -sum(c / len(s) * math.log2(c / len(s)) for c in counts.values())


def _mixed_case(s: str) -> bool:
    return any(c.isupper() for c in s) and any(c.islower() for c in s) and any(c.isdigit() for c in s)


def _unquoted(raw: str) -> str:
    """An unquoted value as a shell or a `.env` reader takes it: to the end of the line, less a
    trailing comment (` #…`); a value quoted whole is taken inside its quotes."""
    v = raw.strip()
    if len(v) >= 2 and v[0] == v[-1] and v[0] in "\"'`":
        return v[1:-1]
    if v[:1] in "\"'" and v[0] in v[1:]:  # a quoted value followed by more (`'a b' # note`)
        return v[1:v.index(v[0], 1)]
    hash_at = re.search(r"[ \t]#", v)
    return v[:hash_at.start()].rstrip() if hash_at else v


def _gate(text: str) -> list[tuple[int, int]]:
    """Where `text` holds a word a secret's name holds: not "tokens", "author", "keyboard" or a
    "pat" inside a word (a "key" counts at the end of a name: `api_key`, `stripeKey`)."""
    low = text.lower()
    out = []
    for m in _GATE_WORDS.finditer(low):
        word, at, end = m.group(), m.start(), m.end()
        after = low[end:end + 2]
        if (word == "token" and after[:1] == "s") or (word == "auth" and after == "or"):
            continue
        if word in ("key", "pat"):
            before = low[at - 1:at] if at else ""
            inside = after[:1].isalnum()
            if inside or (word == "pat" and before.isalnum()) or (word == "key" and not (before.isalpha() or before in "_-")):
                continue
        out.append((at, end))
    return out


def _windows(spans: list[tuple[int, int]], size: int, before: int, after: int) -> list[tuple[int, int]]:
    """The stretches around each of `spans` in a text of `size` characters (merged where they
    overlap): the rules that cannot be anchored run only there, so a long text without a
    keyword costs one search."""
    out: list[tuple[int, int]] = []
    for at, to in spans:
        start, end = max(0, at - before), min(size, to + after)
        if out and start <= out[-1][1]:
            out[-1] = (out[-1][0], max(out[-1][1], end))
        else:
            out.append((start, end))
    return out


def context_hits(text: str) -> list[tuple[str, str]]:
    """The secrets these rules find in `text`: (value, rule) pairs, each value as it stands in
    the text (so replacing it there replaces the secret)."""
    out: list[tuple[str, str]] = []
    if _PROVIDER_GATE.search(text):
        for rule, pattern in PROVIDER_TOKENS:
            out.extend((m.group(), rule) for m in pattern.finditer(text))
    if "://" in text:
        for start, end in _windows([m.span() for m in _SCHEME.finditer(text)], len(text), 25, 2000):
            for pattern in (_URL_PASSWORD, _QUOTED_URL_PASSWORD):
                out.extend((m.group("value"), "url-password") for m in pattern.finditer(text, start, end)
                           if not placeholder(m.group("value")))
            for m in _URL_PARAM.finditer(text, start, end):
                name = m.group("name")
                if (name.lower() in _URL_PARAM_NAMES or secret_name(name)) and not placeholder(m.group("value")):
                    out.append((m.group("value"), "url-secret"))
    out.extend(_assignments(text))
    if "\n" in text or "MII" in text or "b3BlbnNzaC1rZXktdjE" in text or "MC4CAQAw" in text:
        out.extend((m.group().strip(), "private-key-body") for m in _KEY_BODY_LINES.finditer(text) if _mixed_case(m.group()))
        out.extend((m.group(), "private-key-body") for m in _KEY_BODY_RUN.finditer(text))
    for m in _AWS_SECRET.finditer(text):
        token = m.group()
        if _mixed_case(token) and _entropy(token) > 4.3 and token.count("/") <= 5 and not _pathlike(token):
            out.append((token, "aws-secret"))
    return out


_SCHEME = re.compile("://")


def _pathlike(token: str) -> bool:
    """Segments that read as words (`src/components/Header/Nav`): a path, not a key."""
    parts = [p for p in token.split("/") if p]
    return len(parts) >= 3 and all(re.fullmatch(r"[A-Za-z]+\d{0,2}", p) for p in parts)


def _assignments(text: str) -> list[tuple[str, str]]:
    """Values assigned to names that say secret, in the lines and stretches around each such
    word (shell, `.env`, YAML, JSON, code, options, headers, prose)."""
    out: list[tuple[str, str]] = []

    def add(name: str, value: str) -> None:
        if secret_name(name) and not placeholder(value):
            out.append((value, ASSIGNMENT))

    lines_done: set[int] = set()
    for start, end in _windows(_gate(text), len(text), 100, 700):
        # the lines the stretch touches, each once: their assignments are anchored at the line's start
        at = text.rfind("\n", 0, start) + 1
        while at <= end and at < len(text):
            line_end = text.find("\n", at)
            line_end = len(text) if line_end < 0 else line_end
            if at not in lines_done:
                lines_done.add(at)
                _line_assignments(text, at, line_end, add)
            at = line_end + 1
        for m in _QUOTED.finditer(text, start, end):
            add(m.group("name"), next(g for g in m.groups()[1:] if g is not None))
        for m in _FLAG.finditer(text, start, end):
            value = m.group(2) or m.group(3) or m.group("bare")
            if not (m.group("bare") and _is_code(value, False)):
                add(m.group("name"), value)
        for m in _HEADER.finditer(text, start, end):
            value = (m.group("value") or m.group("value2") or "").rstrip(",;)")
            if not placeholder(value) and not _ENV_LOOKUP.match(value):
                out.append((value, "auth-header"))
        for m in _PROSE.finditer(text, start, end):
            value = m.group("value").rstrip(".,;:)!?]}")
            if len(value) >= 6 and not placeholder(value) and not _is_code(m.group("value").rstrip(".,;:!?"), True) and _not_a_word(value):
                out.append((value, ASSIGNMENT))
    for m in _USER_FLAG.finditer(text):
        if not placeholder(m.group("value")) and not m.group("value").startswith("//"):  # (`-u redis://…`: a URL, read as one)
            out.append((m.group("value"), ASSIGNMENT))
    return out


def _line_assignments(text: str, start: int, end: int, add) -> None:
    """`NAME=value` (shell, `.env`) and `name: value` (YAML) on the line text[start:end]."""
    m = _LINE_ASSIGN.match(text, start, end)
    if m:
        raw = m.group("value")
        value = _unquoted(raw)
        spaced = bool(m.group("before") or m.group("after"))
        if value and (raw.strip()[:1] in "\"'" or not _is_code(value, spaced)):
            add(m.group("name"), value)
    m = _LINE_COLON.match(text, start, end)
    if m:
        raw = m.group("value").strip()
        value = _unquoted(raw)
        if value and raw[:1] not in "|>&*!{[" and (raw[:1] in "\"'" or not _is_code(value, True, yaml=True)):
            add(m.group("name"), value)


def _yaml_literal(value: str) -> bool:
    """A YAML scalar that only looks like code: a call-like `x(y)` with no trailing comma (a
    JavaScript property would have one), holding a digit or a symbol a password would."""
    return value[-1:] not in ",;" and "." not in value and any(not c.isalnum() and c != "_" for c in value) \
        and not value.endswith("()")


def _not_a_word(value: str) -> bool:
    """Prose's "the token is invalid": a value of letters alone (or a capitalized word) is text."""
    core = value.strip("`'\"")
    return not re.fullmatch(r"[A-Za-z][a-z]*(?:[-'][a-z]+)*", core)
