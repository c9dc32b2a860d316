"""The command line's sharing: `--redact` with its options on `export` and `compare --html`, with
the review printed before the file is written."""

from __future__ import annotations

import argparse
import sys
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

# The redaction's module (webapp.core.redact, with the detector library detect-secrets) is imported
# inside the functions that redact: 0.07 s of CPU to import (`time.process_time` around the import,
# modules compiled), which `compare` without --html does not pay (`export` and `compare --html`
# render with the web app's export, which imports it).


def add_redaction_arguments(sp: argparse.ArgumentParser) -> None:
    """The options of a command that writes a file to share."""
    g = sp.add_argument_group("redaction (secrets found by detect-secrets' plugins are replaced by [REDACTED:rule#n])")
    g.add_argument("--redact", action="store_true", help="replace secrets in everything written (the review is printed first)")
    g.add_argument("--redact-rule", metavar="RULE", action="append", default=[],
                   help="also redact: home (home paths: on by default, as the web review ticks them), "
                        "user (user names), email (e-mail addresses)")
    g.add_argument("--keep-home-paths", action="store_true",
                   help="leave home paths (/home/NAME/...) as they are: --redact replaces them by default")
    g.add_argument("--redact-pattern", metavar="REGEX", action="append", default=[], help="also what this regular expression matches")
    g.add_argument("--keep", metavar="TAG", action="append", default=[],
                   help="leave the value of this tag (from the review, e.g. 'hex-entropy#2') as it is")
    g.add_argument("--review", action="store_true", help="print what would be redacted and write nothing")


def choice_of(args):
    """The redaction the options ask for (a `Choice`), or None; a bad pattern or rule is a
    ValueError saying which."""
    from ..core.redact import DEFAULT_RULES, Choice, Scanner

    if not (args.redact or args.review):
        return None
    keep = frozenset(t if t.startswith("[REDACTED:") else f"[REDACTED:{t}]" for t in args.keep)
    rules = DEFAULT_RULES | frozenset(args.redact_rule)  # (the web review's defaults, ticked on a first visit)
    if getattr(args, "keep_home_paths", False):
        if "home" in args.redact_rule:
            raise ValueError("--keep-home-paths and --redact-rule home ask for opposite things: give one")
        rules -= {"home"}
    choice = Choice(rules, tuple(args.redact_pattern), keep)
    Scanner(choice.rules, choice.patterns)
    return choice


def print_review(review, keep: frozenset[str], out=sys.stdout) -> None:
    """Every redaction of a `Review`, one a line: tag, rule, first characters, where (kept ones say so)."""
    from ..core.redact import summary

    for f in review.findings:
        more = f" and {len(f.places) - 2} more" if len(f.places) > 2 else ""
        state = "  (kept as it is)" if f.tag in keep else ""
        print(f"{f.tag}  {f.rule}  {f.preview!r}  {'; '.join(f.places[:2])}{more}{state}", file=out)
    print(summary(review, keep), file=out)


@dataclass(frozen=True)
class Shared:
    """A redacted copy's companions: the replacer (for ids, names and any text a page adds)
    and the session's verdicts with their notes redacted (a data folder's are not in the copy)."""

    replace: object
    verdicts: dict


@contextmanager
def shared_copy(path: Path, args):
    """The file to render: the session itself, or (with --redact) its redacted copy, with the
    line the file shows and its `Shared` companions; None for the path when only a review was
    asked (nothing is written)."""
    from ..core.redact import Replacer, redacted, summary
    from ..core.session import Session
    from ..core.verdicts import verdicts
    from ..web.share import redacted_verdicts, verdict_texts

    choice = choice_of(args)
    if choice is None:
        yield path, None, None
        return
    given = verdicts(Session.open(path))
    with redacted(path, choice, path.name, verdict_texts(given)) as (copy, review):
        unknown = sorted(choice.keep - set(review.by_tag()))
        if unknown:
            raise ValueError(f"--keep {unknown[0]}: no redaction has that tag (--review lists them)")
        print_review(review, choice.keep, sys.stderr if not args.review else sys.stdout)
        replace = Replacer(review, choice.keep)
        yield (None if args.review else copy), summary(review, choice.keep), Shared(replace, redacted_verdicts(given, replace))
