"""How much a lost command weighs in a summary's score: routine ones little, those the work
depended on much.

A session runs dozens of `cd`, `ls`, `grep` and `git status` commands to look around; a summary
that drops them loses little. A failing test run, a build, an install or a migration is what the
next steps build on: a summary that drops one loses a lot. Each command is one of three kinds,
from its programs and how it ended, and weighs that much in the "Commands run" score and in the
summary's overall score (every other fact weighs 1).
"""

from __future__ import annotations

import re

KEY = "key"  # the work depended on its result: a failure, a test run, a build, an install, a migration
OTHER = "other"
ROUTINE = "routine"  # looking around: navigation, listing, reading files or status
KINDS = (KEY, OTHER, ROUTINE)
WEIGHTS = {KEY: 2.0, OTHER: 1.0, ROUTINE: 0.25}
KIND_TITLES = {
    KEY: "the work depended on (failures, tests, builds, installs, migrations)",
    OTHER: "other commands",
    ROUTINE: "routine (navigation, listing, reading files or status)",
}

_ROUTINE_PROGRAMS = frozenset(
    "cd ls ll la pwd cat head tail less more grep egrep fgrep rg ag ack find fd tree wc echo printf "
    "which whereis type file stat du df env printenv whoami id date uname hostname basename dirname "
    "realpath readlink sort uniq cut jq column true clear history nl od xxd hexdump".split()
)
_ROUTINE_GIT = frozenset("status log diff show branch remote rev-parse blame describe ls-files shortlog reflog".split())
_KEY_WORDS = re.compile(
    r"\b(?:pytest|unittest|tox|nox|jest|vitest|mocha|rspec|phpunit|ctest|"
    r"test|tests|check|build|compile|install|add|migrate|migration|migrations|upgrade|"
    r"alembic|makemigrations|tsc|webpack|vite|gcc|g\+\+|clang|javac|mvn|gradle|"
    r"make|cmake|ninja|bazel|docker|deploy|release|publish)\b"
)
_SEPARATORS = re.compile(r"&&|\|\||[;|\n]")
_ASSIGNMENT = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*=")
_FAILED = re.compile(r"^(?:exit -?[1-9]\d*|failed|cancelled)$")


def _programs(command: str) -> list[list[str]]:
    """The words of each simple command in a shell line (`cd a && pytest -q` → two)."""
    parts = []
    for part in _SEPARATORS.split(command):
        words = part.strip().split()
        while words and (words[0] in ("sudo", "time", "nice", "env", "command", "exec") or _ASSIGNMENT.match(words[0])):
            words = words[1:]
        if words:
            parts.append(words)
    return parts


def _is_routine(words: list[str]) -> bool:
    program = words[0].rsplit("/", 1)[-1]
    if program == "git":
        sub = next((w for w in words[1:] if not w.startswith("-")), "")
        return sub in _ROUTINE_GIT
    if program == "sed":
        return "-i" not in words and not any(w.startswith("-i") for w in words)
    return program in _ROUTINE_PROGRAMS


def command_kind(command: str, details: list[str] = ()) -> str:
    """KEY, OTHER or ROUTINE for a command as the audit records it (its text, its exit status)."""
    if any(_FAILED.match(d) for d in details):
        return KEY
    parts = _programs(command)
    if not parts:
        return OTHER
    if all(_is_routine(p) for p in parts):
        return ROUTINE
    if any(_KEY_WORDS.search(" ".join(p[:3])) for p in parts if not _is_routine(p) and p[0] != "git"):
        return KEY
    return OTHER


def command_weight(command: str, details: list[str] = ()) -> float:
    return WEIGHTS[command_kind(command, details)]
