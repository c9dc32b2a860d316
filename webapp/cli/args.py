"""How every command's arguments are parsed: one argparse parser class whose usage errors are one
line (exit 2) like every other error, the argument types that check a number before any work is
done, and the options several commands share, written once."""

from __future__ import annotations

import argparse
import math

from .output import escape_controls


class CliParser(argparse.ArgumentParser):
    """argparse, with a usage error in one line on stderr (exit 2) like every other error."""

    def error(self, message: str):
        self.exit(2, f"{self.prog}: error: {escape_controls(message)} (see --help)\n")


def whole_number(low: int, high: int | None = None):
    """An argparse type: an integer within [low, high]."""

    def parse(text: str) -> int:
        try:
            n = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"{text!r} is not a whole number") from None
        if n < low or (high is not None and n > high):
            raise argparse.ArgumentTypeError(
                f"{n} is out of range (from {low}{f' to {high}' if high is not None else ''})"
            )
        return n

    return parse


def positive(kind):
    """An argparse type: a number of `kind` (int or float) above 0."""

    def parse(text: str):
        try:
            value = kind(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"{text!r} is not a number") from None
        if value <= 0:
            raise argparse.ArgumentTypeError(f"{text} must be more than 0")
        return value

    return parse


def percent(text: str) -> float:
    """An argparse type: a finite percentage from 0 to 100 (`nan` would turn a CI gate off)."""
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a number: {text!r}") from None
    if not math.isfinite(value) or not 0 <= value <= 100:
        raise argparse.ArgumentTypeError(f"must be a percentage from 0 to 100, not {text!r}")
    return value


def seconds(text: str) -> float:
    """An argparse type: a time limit, more than 0 and finite (`inf` would overflow a timer, `0`
    or `nan` stop at once)."""
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a number: {text!r}") from None
    if not math.isfinite(value) or value <= 0:
        raise argparse.ArgumentTypeError(f"must be a number of seconds above 0, not {text!r}")
    return value


def add_api_base(sp) -> None:
    """--api-base of every command that calls a model."""
    sp.add_argument("--api-base", metavar="URL", help="an OpenAI-compatible server (default: $SESSION_TREE_API_BASE)")


def add_limit_options(sp) -> None:
    """--context-window / --max-tokens of the commands that ask for a reply."""
    sp.add_argument("--context-window", metavar="N", type=whole_number(1),
                    help="the model's window in tokens (default: $SESSION_TREE_CONTEXT_WINDOW, litellm's table, "
                         "or what the server says)")
    sp.add_argument("--max-tokens", metavar="N", type=whole_number(1),
                    help="the longest reply to allow (default: $SESSION_TREE_MAX_TOKENS, else the model's limit "
                         "and what its window leaves)")


def add_model_options(sp, model_group=None) -> None:
    """--model / --api-base / --instructions of the commands that summarize."""
    (model_group or sp).add_argument(
        "--model", metavar="M",
        help="summarize with this litellm model (default: $SESSION_TREE_MODEL; none: extractive summary)",
    )
    add_api_base(sp)
    sp.add_argument("--instructions", metavar="TEXT", help="what the model summary should focus on")
