"""Deterministic synthetic session files: the bundled `sample_sessions/` and benchmark inputs.

Real sessions are private, so the viewer, the tests and the benchmarks run on generated ones that
look like what the pi coding agent writes (SPEC §1-§2): user prompts, assistant turns with thinking,
text and tool calls, tool results with code, test output and tracebacks, usage that grows along a
path and drops after a compaction. Everything comes from one seeded `random.Random` and a synthetic
clock, so a run reproduces the same bytes: `python -m webapp.samples [OUTDIR]`.
"""

from __future__ import annotations

import random
import re
import sys
from datetime import UTC, datetime
from pathlib import Path

import orjson

from .core.formats.pi import as_v1

DEFAULT_OUT = Path(__file__).resolve().parent.parent / "sample_sessions"
DEEP_PATH_ENTRIES = 10_000
SYSTEM_TOKENS = 4_200  # system prompt + tool schemas: the context size before the first message

# model -> (provider, api, $ per million tokens: input, output, cacheRead, cacheWrite)
MODELS = {
    "claude-sonnet-4-5": ("anthropic", "anthropic-messages", (3.0, 15.0, 0.3, 3.75)),
    "claude-opus-4-5": ("anthropic", "anthropic-messages", (5.0, 25.0, 0.5, 6.25)),
    "gpt-5": ("openai", "openai-responses", (1.25, 10.0, 0.125, 0.0)),
}
DEFAULT_MODEL = "claude-sonnet-4-5"

# Pauses before each kind of entry, in ms: people type slowly, tools answer fast.
USER_GAP = (15_000, 240_000)
ASSISTANT_GAP = (1_500, 40_000)
RESULT_GAP = (40, 4_000)
META_GAP = (300, 3_000)
COMPACTION_GAP = (8_000, 40_000)

_ALNUM = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789"
_FIELD = re.compile(r"\{(\w+)\}")


# ----------------------------------------------------------------------------- primitives


def uuid7_at(ms: int, rng: random.Random) -> str:
    """A UUID v7 for time `ms` whose random bits come from `rng`, so ids are reproducible."""
    rand = rng.getrandbits(74)
    value = (
        (ms & 0xFFFF_FFFF_FFFF) << 80
        | 0x7 << 76
        | (rand >> 62) << 64
        | 0b10 << 62
        | rand & ((1 << 62) - 1)
    )
    h = f"{value:032x}"
    return f"{h[:8]}-{h[8:12]}-{h[12:16]}-{h[16:20]}-{h[20:]}"


def iso_ms(ms: int) -> str:
    """ISO-8601 UTC with milliseconds and `Z`, the timestamp form pi writes."""
    dt = datetime.fromtimestamp(ms // 1000, UTC)
    return f"{dt:%Y-%m-%dT%H:%M:%S}.{ms % 1000:03d}Z"


def _ms(iso: str) -> int:
    return round(datetime.fromisoformat(iso).timestamp() * 1000)


def _fill(template: str, words: dict[str, str]) -> str:
    """Replace `{name}` for known names only, so code braces in templates survive."""
    return _FIELD.sub(lambda m: words.get(m[1], m[0]), template)


def _tok(text: str) -> int:
    return len(text) // 4 + 1


def session_path(header: dict) -> Path:
    """`--<cwd>--/{timestamp}_{id}.jsonl`, the layout of SPEC §1."""
    folder = "--" + re.sub(r"[/\\:]", "-", header["cwd"].lstrip("/")) + "--"
    stamp = header["timestamp"].replace(":", "-").replace(".", "-")
    return Path(folder) / f"{stamp}_{header['id']}.jsonl"


def write_jsonl(path, header: dict, entries: list) -> None:
    """Write the header and entries, one compact JSON object per line; a `str` item is written as
    it is (that is how a sample carries a damaged line)."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    lines = [orjson.dumps(header)]
    lines += [e.encode() if isinstance(e, str) else orjson.dumps(e) for e in entries]
    path.write_bytes(b"\n".join(lines) + b"\n")


def _usage(ctx: int, cached: int, output: int, rates: tuple, fresh: int) -> dict:
    """Usage of one call on a prompt of `ctx` tokens, `cached` of them still in the provider's
    cache; providers that write caches bill the rest as a cache write except a few fresh tokens."""
    r_in, r_out, r_read, r_write = rates
    read = min(cached, ctx)
    new = ctx - read
    inp = min(fresh, new) if r_write else new
    write = new - inp
    cost = {
        "input": round(inp * r_in / 1e6, 6),
        "output": round(output * r_out / 1e6, 6),
        "cacheRead": round(read * r_read / 1e6, 6),
        "cacheWrite": round(write * r_write / 1e6, 6),
    }
    cost["total"] = round(sum(cost.values()), 6)
    return {
        "input": inp,
        "output": output,
        "cacheRead": read,
        "cacheWrite": write,
        "totalTokens": ctx + output,
        "cost": cost,
    }


def summary_markdown(goal, *, constraints=(), done=(), in_progress=(), blocked=(), decisions=(),
                     next_steps=(), critical=(), files=((), ())) -> str:
    """The structured summary pi's compaction prompt asks for, with the file lists appended."""

    def bullets(items, mark="- "):
        return "\n".join(mark + item for item in items) if items else "- (none)"

    parts = [
        f"## Goal\n{goal}",
        "## Constraints & Preferences\n" + bullets(constraints),
        "## Progress\n### Done\n" + bullets(done, "- [x] ")
        + "\n\n### In Progress\n" + bullets(in_progress, "- [ ] ")
        + "\n\n### Blocked\n" + bullets(blocked),
        "## Key Decisions\n" + bullets(decisions),
        "## Next Steps\n" + "\n".join(f"{i}. {s}" for i, s in enumerate(next_steps, 1)),
        "## Critical Context\n" + bullets(critical),
    ]
    read, modified = files
    if read:
        parts.append("<read-files>\n" + "\n".join(read) + "\n</read-files>")
    if modified:
        parts.append("<modified-files>\n" + "\n".join(modified) + "\n</modified-files>")
    return "\n\n".join(parts)


def files_touched(entries) -> tuple[list[str], list[str]]:
    """(read-only files, modified files) from tool calls and earlier summaries' details: the
    cumulative lists SPEC §6 asks a summary to carry."""
    read, modified = set(), set()
    for e in entries:
        if e["type"] in ("compaction", "branch_summary"):
            read.update(e["details"]["readFiles"])
            modified.update(e["details"]["modifiedFiles"])
        elif e["type"] == "message" and e["message"]["role"] == "assistant":
            for block in e["message"]["content"]:
                if block["type"] == "toolCall" and block["name"] in ("read", "edit", "write"):
                    target = read if block["name"] == "read" else modified
                    target.add(block["arguments"]["path"])
    return sorted(read - modified), sorted(modified)


# ----------------------------------------------------------------------------- builder


class SessionBuilder:
    """Appends entries the way an agent does: each one at the current tip, on a synthetic clock.

    Per entry it keeps (context tokens, cached tokens, model) so usage grows along every path,
    restarts from the summary after a compaction, and a branch carries the model it was forked with.
    """

    def __init__(self, cwd: str, seed: int, start_ms: int, model: str = DEFAULT_MODEL):
        self.rng = random.Random(seed)
        self.cwd = cwd
        self.ms = start_ms
        self.header = {"type": "session", "version": 3, "id": uuid7_at(start_ms, self.rng),
                       "timestamp": iso_ms(start_ms), "cwd": cwd}
        self.entries: list[dict] = []
        self.by_id: dict[str, dict] = {}
        self.tip: str | None = None
        self._base = (SYSTEM_TOKENS, 0, model)
        self.state: dict[str, tuple[int, int, str]] = {}

    def _state(self, eid):
        """An unknown id (only the damaged sample's orphan has one) starts from an empty context."""
        return self.state.get(eid, self._base)

    def _add(self, type_: str, gap: tuple[int, int], tokens: int = 0, **fields) -> str:
        self.ms += self.rng.randint(*gap)
        eid = uuid7_at(self.ms, self.rng)
        entry = {"type": type_, "id": eid, "parentId": self.tip, "timestamp": iso_ms(self.ms),
                 **fields}
        ctx, cached, model = self._state(self.tip)
        self.state[eid] = (ctx + tokens, cached, model)
        self.entries.append(entry)
        self.by_id[eid] = entry
        self.tip = eid
        return eid

    def _message(self, message: dict, gap, tokens: int) -> str:
        eid = self._add("message", gap, tokens, message=message)
        message["timestamp"] = self.ms
        return eid

    @property
    def model(self) -> str:
        """The model in force at the tip."""
        return self._state(self.tip)[2]

    def path(self, leaf: str | None) -> list[dict]:
        out = []
        while leaf in self.by_id:
            out.append(self.by_id[leaf])
            leaf = self.by_id[leaf]["parentId"]
        return out[::-1]

    # settings and metadata

    def model_change(self, model: str) -> str:
        eid = self._add("model_change", META_GAP, provider=MODELS[model][0], modelId=model)
        ctx, cached, _ = self.state[eid]
        self.state[eid] = (ctx, 0, model)
        return eid

    def thinking_level(self, level: str) -> str:
        return self._add("thinking_level_change", META_GAP, thinkingLevel=level)

    def active_tools(self, tools: list[str]) -> str:
        return self._add("active_tools_change", META_GAP, tools=tools)

    def session_info(self, name: str) -> str:
        return self._add("session_info", META_GAP, name=name)

    def label(self, target: str, label: str) -> str:
        return self._add("label", META_GAP, targetId=target, label=label)

    def custom(self, custom_type: str, data) -> str:
        return self._add("custom", META_GAP, customType=custom_type, data=data)

    def custom_message(self, custom_type: str, content: str) -> str:
        return self._add("custom_message", META_GAP, _tok(content), customType=custom_type,
                         content=content, display=True)

    # messages

    def user(self, text: str) -> str:
        return self._message({"role": "user", "content": [{"type": "text", "text": text}]},
                             USER_GAP, _tok(text))

    def bash_execution(self, command: str, output: str, exit_code: int = 0) -> str:
        message = {"role": "bashExecution", "command": command, "output": output,
                   "exitCode": exit_code, "cancelled": False, "truncated": False}
        return self._message(message, USER_GAP, _tok(command + output))

    def _call_id(self, model: str) -> str:
        if MODELS[model][0] == "anthropic":
            return "toolu_01" + "".join(self.rng.choices(_ALNUM, k=22))
        return "call_" + "".join(self.rng.choices(_ALNUM, k=24))

    def _assistant(self, blocks: list[dict], stop: str) -> str:
        ctx, cached, model = self._state(self.tip)
        provider, api, rates = MODELS[model]
        written = "".join(b.get("text") or b.get("thinking") or str(b.get("arguments"))
                          for b in blocks)
        output = _tok(written) + self.rng.randint(8, 90)
        message = {"role": "assistant", "content": blocks, "api": api, "provider": provider,
                   "model": model,
                   "usage": _usage(ctx, cached, output, rates, self.rng.randint(3, 40)),
                   "stopReason": stop}
        eid = self._message(message, ASSISTANT_GAP, output)
        self.state[eid] = (ctx + output, ctx, model)
        return eid

    @staticmethod
    def _lead(text, thinking) -> list[dict]:
        blocks = [{"type": "thinking", "thinking": thinking}] if thinking else []
        return blocks + ([{"type": "text", "text": text}] if text else [])

    def answer(self, text: str, thinking: str | None = None) -> str:
        return self._assistant(self._lead(text, thinking), "stop")

    def step(self, calls: list[tuple], text: str | None = None, thinking: str | None = None) -> str:
        """One assistant message with tool calls, then one tool result per call, in order.
        `calls` are (name, arguments, output, isError) as made by read/edit/write/bash."""
        ids = [self._call_id(self.model) for _ in calls]
        blocks = self._lead(text, thinking) + [
            {"type": "toolCall", "id": cid, "name": name, "arguments": args}
            for cid, (name, args, _, _) in zip(ids, calls, strict=True)]
        eid = self._assistant(blocks, "toolUse")
        for cid, (name, _, output, is_error) in zip(ids, calls, strict=True):
            self._message({"role": "toolResult", "toolCallId": cid, "toolName": name,
                           "content": [{"type": "text", "text": output}], "isError": is_error},
                          RESULT_GAP, _tok(output))
        return eid

    # tool calls, as (name, arguments, output, isError)

    def _abs(self, rel: str) -> str:
        return f"{self.cwd}/{rel}"

    def read(self, rel: str, content: str, **window) -> tuple:
        return "read", {"path": self._abs(rel), **window}, content, False

    def edit(self, rel: str, old: str, new: str, applied: bool = True) -> tuple:
        path = self._abs(rel)
        if applied:
            out = (f"Successfully replaced text in {path}. "
                   f"Changed {len(old)} characters to {len(new)} characters.")
        else:
            out = (f"Could not find the exact text in {path}. The old text must match exactly "
                   "including all whitespace and newlines.")
        return "edit", {"path": path, "oldText": old, "newText": new}, out, not applied

    def write(self, rel: str, content: str) -> tuple:
        path = self._abs(rel)
        out = f"Successfully wrote {len(content.encode())} bytes to {path}"
        return "write", {"path": path, "content": content}, out, False

    @staticmethod
    def bash(command: str, output: str, code: int = 0) -> tuple:
        if code:
            output += f"\n\nCommand exited with code {code}"
        return "bash", {"command": command}, output, code != 0

    # tree moves and summaries

    def fork(self, target: str) -> str:
        """A `leaf` entry (SPEC §4): the next append continues after `target`."""
        self.tip = target
        eid = self._add("leaf", META_GAP, targetId=target)
        self.state[eid] = self._state(target)
        self.tip = target
        return eid

    def branch_summary(self, from_id: str, back_to: str, **sections) -> str:
        """Return to `back_to`, summarizing the branch that ends at `from_id`."""
        kept = {e["id"] for e in self.path(back_to)}
        files = files_touched(e for e in self.path(from_id) if e["id"] not in kept)
        summary = summary_markdown(files=files, **sections)
        self.tip = back_to
        return self._add("branch_summary", COMPACTION_GAP, _tok(summary), fromId=from_id,
                         summary=summary,
                         details={"readFiles": files[0], "modifiedFiles": files[1]})

    def compaction(self, first_kept: str, **sections) -> str:
        """Compact at the tip keeping the path from `first_kept`, which must come after any
        earlier compaction so the kept tokens are a plain difference."""
        files = files_touched(self.path(self.tip))
        summary = summary_markdown(files=files, **sections)
        before, _, model = self._state(self.tip)
        kept = before - self._state(self.by_id[first_kept]["parentId"])[0]
        after = SYSTEM_TOKENS + _tok(summary) + kept
        eid = self._add("compaction", COMPACTION_GAP, summary=summary, firstKeptEntryId=first_kept,
                        tokensBefore=before, tokensAfter=after,
                        details={"readFiles": files[0], "modifiedFiles": files[1]})
        self.state[eid] = (after, 0, model)
        return eid


# ----------------------------------------------------------------------------- rich session

TOTALS_PY = '''"""Invoice totals: line sums, discounts and VAT."""
from decimal import Decimal

from .models import Invoice, Line

VAT_RATE = 0.19


def line_total(line: Line) -> float:
    return round(line.quantity * float(line.unit_price), 2)


def invoice_total(invoice: Invoice) -> Decimal:
    """Net total after discount, rounded to cents."""
    net = sum(line_total(line) for line in invoice.lines)
    if invoice.discount:
        net = net * (1 - float(invoice.discount))
    return Decimal(str(round(net, 2)))


def invoice_total_with_vat(invoice: Invoice) -> Decimal:
    net = invoice_total(invoice)
    return (net * Decimal(str(1 + VAT_RATE))).quantize(Decimal("0.01"))
'''

TOTALS_FIXED_PY = '''"""Invoice totals: line sums, discounts and VAT."""
from decimal import ROUND_HALF_UP, Decimal

from .models import Invoice, Line

CENT = Decimal("0.01")
VAT_RATE = Decimal("0.19")


def line_total(line: Line) -> Decimal:
    return Decimal(line.quantity) * Decimal(str(line.unit_price))


def invoice_total(invoice: Invoice) -> Decimal:
    """Net total after discount, rounded once to cents (half up)."""
    net = sum((line_total(line) for line in invoice.lines), Decimal(0))
    if invoice.discount:
        net *= 1 - Decimal(invoice.discount)
    return net.quantize(CENT, rounding=ROUND_HALF_UP)


def invoice_total_with_vat(invoice: Invoice) -> Decimal:
    net = invoice_total(invoice)
    return (net * (1 + VAT_RATE)).quantize(CENT, rounding=ROUND_HALF_UP)
'''

TEST_TOTALS_PY = '''from decimal import Decimal

from invoice_api.totals import invoice_total, invoice_total_with_vat
from tests.factories import make_invoice


def test_total_single_line():
    invoice = make_invoice(lines=[("Hosting", 1, "49.00")])
    assert invoice_total(invoice) == Decimal("49.00")


def test_total_with_discount():
    invoice = make_invoice(lines=[("Consulting", 3, "33.365")], discount="0.10")
    assert invoice_total(invoice) == Decimal("90.09")


def test_total_with_vat():
    invoice = make_invoice(lines=[("Hosting", 2, "10.00")])
    assert invoice_total_with_vat(invoice) == Decimal("23.80")
'''

# {progress}/{stop}/{tally} differ between `pytest -x tests/test_totals.py` and the full suite
PYTEST_DISCOUNT_FAIL = '''{progress}
=================================== FAILURES ===================================
___________________________ test_total_with_discount ___________________________

    def test_total_with_discount():
        invoice = make_invoice(lines=[("Consulting", 3, "33.365")], discount="0.10")
>       assert invoice_total(invoice) == Decimal("90.09")
E       AssertionError: assert Decimal('90.08') == Decimal('90.09')
E        +  where Decimal('90.08') = invoice_total(Invoice(number='2026-0042', customer='Acme GmbH', ...))

tests/test_totals.py:13: AssertionError
=========================== short test summary info ============================
FAILED tests/test_totals.py::test_total_with_discount - AssertionError: assert Decimal('90.08') == Decimal('90.09')
{stop}{tally}'''

PYTEST_TYPEERROR = '''.F............
=================================== FAILURES ===================================
___________________________ test_total_with_discount ___________________________

    def test_total_with_discount():
        invoice = make_invoice(lines=[("Consulting", 3, "33.365")], discount="0.10")
>       assert invoice_total(invoice) == Decimal("90.09")

tests/test_totals.py:13:
_ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _

invoice = Invoice(number='2026-0042', customer='Acme GmbH', lines=[...], discount='0.10')

    def invoice_total(invoice: Invoice) -> Decimal:
        """Net total after discount, rounded to cents."""
        net = sum(line_total(line) for line in invoice.lines)
        if invoice.discount:
>           net = net * (1 - float(invoice.discount))
E           TypeError: unsupported operand type(s) for *: 'decimal.Decimal' and 'float'

invoice_api/totals.py:17: TypeError
=========================== short test summary info ============================
FAILED tests/test_totals.py::test_total_with_discount - TypeError: unsupported operand type(s) for *: 'decimal.Decimal' and 'float'
1 failed, 13 passed in 0.36s'''

PYTEST_CIRCULAR = '''==================================== ERRORS ====================================
____________________ ERROR collecting tests/test_totals.py _____________________
ImportError while importing test module '/home/ana/projects/invoice-api/tests/test_totals.py'.
Hint: make sure your test modules/packages have valid Python names.
Traceback:
/usr/lib/python3.12/importlib/__init__.py:90: in import_module
    return _bootstrap._gcd_import(name[level:], package, level)
tests/test_totals.py:3: in <module>
    from invoice_api.totals import invoice_total, invoice_total_with_vat
invoice_api/totals.py:5: in <module>
    from .tax import VAT_RATE, vat_for  # noqa: F401  (re-exported)
invoice_api/tax.py:4: in <module>
    from .totals import CENT
E   ImportError: cannot import name 'CENT' from partially initialized module 'invoice_api.totals' (most likely due to a circular import) (/home/ana/projects/invoice-api/invoice_api/totals.py)
=========================== short test summary info ============================
ERROR tests/test_totals.py
!!!!!!!!!!!!!!!!!!!! Interrupted: 1 error during collection !!!!!!!!!!!!!!!!!!!!
1 error in 0.17s'''

CLI_PY = '''"""Command line interface: `invoice show NUMBER` and `invoice export NUMBER`."""
import argparse
import sys

from .export import write_csv
from .store import load_invoice
from .totals import invoice_total, invoice_total_with_vat


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="invoice")
    sub = parser.add_subparsers(dest="command", required=True)
    show = sub.add_parser("show", help="print an invoice with its totals")
    show.add_argument("number")
    export = sub.add_parser("export", help="write an invoice as CSV")
    export.add_argument("number")
    export.add_argument("-o", "--output", default="-")
    return parser


def cmd_show(args: argparse.Namespace) -> int:
    invoice = load_invoice(args.number)
    print(f"Invoice {invoice.number}  {invoice.customer}")
    for line in invoice.lines:
        print(f"  {line.description:<30} {line.quantity:>4} x {line.unit_price:>10}")
    print(f"  {'Net':<30} {invoice_total(invoice):>17} EUR")
    print(f"  {'Gross':<30} {invoice_total_with_vat(invoice):>17} EUR")
    return 0


def cmd_export(args: argparse.Namespace) -> int:
    invoice = load_invoice(args.number)
    out = sys.stdout if args.output == "-" else open(args.output, "w", newline="")
    with out:
        write_csv(invoice, out)
    return 0


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    return {"show": cmd_show, "export": cmd_export}[args.command](args)


if __name__ == "__main__":
    sys.exit(main())
'''

CLI_TOTAL_LINES = '''    print(f"  {'Net':<30} {invoice_total(invoice):>17} EUR")
    print(f"  {'Gross':<30} {invoice_total_with_vat(invoice):>17} EUR")
'''

CLI_TOTAL_CONVERTED = '''    rate = load_rates()[args.currency]
    print(f"  {'Net':<30} {convert(invoice_total(invoice), rate):>17} {args.currency}")
    print(f"  {'Gross':<30} {convert(invoice_total_with_vat(invoice), rate):>17} {args.currency}")
'''

CURRENCY_ARG = '''    show.add_argument(
        "--currency", choices=["EUR", "USD"], default="EUR",
        help="currency for the totals (rates from config/rates.toml)",
    )
'''

RATES_PY = '''"""Currency rates from config/rates.toml (EUR based)."""
import tomllib
from decimal import ROUND_HALF_UP, Decimal
from functools import cache
from pathlib import Path

RATES_FILE = Path(__file__).resolve().parent.parent / "config" / "rates.toml"


@cache
def load_rates() -> dict[str, Decimal]:
    with RATES_FILE.open("rb") as fh:
        return {code: Decimal(rate) for code, rate in tomllib.load(fh)["rates"].items()}


def convert(amount: Decimal, rate: Decimal) -> Decimal:
    """EUR amount in another currency, rounded to cents (half up)."""
    return (amount * rate).quantize(Decimal("0.01"), rounding=ROUND_HALF_UP)
'''

RATES_TOML = '''# Conversion rates from EUR, updated by the finance team on the 1st of each month.
[rates]
EUR = "1.00"
USD = "1.0842"
GBP = "0.8571"
'''

TAX_PY = '''"""VAT rates and VAT amounts, per customer country."""
from decimal import ROUND_HALF_UP, Decimal

from .totals import CENT

VAT_RATES = {"DE": Decimal("0.19"), "AT": Decimal("0.20"), "FR": Decimal("0.20")}
DEFAULT_COUNTRY = "DE"
VAT_RATE = VAT_RATES[DEFAULT_COUNTRY]


def vat_for(country: str, net: Decimal) -> Decimal:
    """VAT on a net amount; an unknown country is an error, never 0 %."""
    try:
        rate = VAT_RATES[country]
    except KeyError:
        raise ValueError(f"no VAT rate for country {country!r}") from None
    return (net * rate).quantize(CENT, rounding=ROUND_HALF_UP)
'''

TEST_TAX_PY = '''from decimal import Decimal

import pytest

from invoice_api.tax import vat_for


def test_vat_germany():
    assert vat_for("DE", Decimal("90.09")) == Decimal("17.12")


def test_vat_austria():
    assert vat_for("AT", Decimal("10.00")) == Decimal("2.00")


def test_vat_unknown_country():
    with pytest.raises(ValueError, match="no VAT rate"):
        vat_for("XX", Decimal("1.00"))
'''

PREVIEW_HTML = '''{% extends "base.html" %}
{% block content %}
<h1>Invoice {{ invoice.number }}</h1>
<p class="customer">{{ invoice.customer }}</p>
<table class="lines">
  {% for line in invoice.lines %}
  <tr><td>{{ line.description }}</td><td>{{ line.quantity }}</td><td>{{ line.unit_price }}</td></tr>
  {% endfor %}
</table>
<p class="note">Customer note: {{ invoice.note }}</p>
{% endblock %}
'''

USAGE_MD = '''# Using the invoice CLI

## Showing an invoice

```console
$ python -m invoice_api.cli show 2026-0042
```

prints the lines, the net total and the gross total (with VAT).

## Exporting

```console
$ python -m invoice_api.cli export 2026-0042 -o 2026-0042.csv
```
'''

USAGE_SECTION = '''
## Currencies and rounding

`show` prints totals in EUR unless `--currency` names another currency from
`config/rates.toml`:

```console
$ python -m invoice_api.cli show 2026-0042 --currency USD
```

Amounts are computed with `Decimal` and rounded **once**, after the discount, to cents
(half up). Conversion happens after that rounding and rounds to cents again.
'''

XSS_PROMPT = '''Different topic. A customer typed HTML into the invoice note field. When I open the HTML preview at /invoices/2026-0042/preview, the page shows the note like this:

Customer note: <script>alert("xss")</script> <img src=x onerror="alert(1)">

Why does the preview show <script>alert("xss")</script> and <img src=x onerror="alert(1)"> literally? Is that our escaping working, or is something broken?'''


def _rich_sections_1(b: SessionBuilder) -> dict:
    return dict(
        goal="Fix the rounding bug in `invoice_api.totals`, then add a `--currency` option to "
             "`invoice show` and move VAT into its own module.",
        constraints=["Do not change the public API of `invoice_api.totals`",
                     "EUR stays the default currency",
                     "Old imports such as `from invoice_api.totals import VAT_RATE` must keep "
                     "working"],
        done=["Rounding fixed: `Decimal` everywhere, one `ROUND_HALF_UP` to cents after the "
              "discount",
              "`invoice show --currency {EUR,USD}`, rates from `config/rates.toml` via "
              "`invoice_api/rates.py`",
              "`invoice_api/tax.py` with `vat_for(country, net)`; `totals.py` re-exports "
              "`VAT_RATE`",
              "`tests/test_tax.py` (3 tests)"],
        decisions=["**Decimal everywhere**: float rounding per line turned 90.09 into 90.08",
                   "**No one-line fix**: `Decimal * float` raises `TypeError` (abandoned branch)",
                   "**`CENT` lives in `tax.py`**: importing it from `totals.py` was circular"],
        next_steps=["Wait for the next request"],
        critical=["Tests: `python -m pytest -q` (17 passing)",
                  "Reference case: invoice `2026-0042` (Acme GmbH, 3 x 33.365, 10 % discount): "
                  "net 90.09 EUR, gross 107.21 EUR",
                  f"Branch `fix/invoice-rounding` in `{b.cwd}`"],
    )


def rich_session() -> tuple[dict, list[dict]]:
    """The showcase session: every entry type, four leaves, an edited user message, two
    compactions in a row, a branch summary, labels, and an XSS string that must stay text."""
    b = SessionBuilder("/home/ana/projects/invoice-api", seed=20260302,
                       start_ms=_ms("2026-03-02T09:14:05.221+00:00"))
    b.model_change("claude-sonnet-4-5")
    settings = b.thinking_level("medium")

    # Main line, part 1: the rounding bug.
    b.user("The test `tests/test_totals.py::test_total_with_discount` started failing after "
           "yesterday's merge. Can you find out why and fix it? Please don't change the public "
           "API of `invoice_api.totals`.")
    stop = "!!!!!!!!!!!!!!!!!!!!!!!!!! stopping after 1 failures !!!!!!!!!!!!!!!!!!!!!!!!!!!\n"
    b.step([b.bash("python -m pytest tests/test_totals.py -x -q", _fill(PYTEST_DISCOUNT_FAIL, {
        "progress": ".F", "stop": stop, "tally": "1 failed, 1 passed in 0.21s"}), 1)],
           "Let me run the failing test first.",
           thinking="A discount test fails after a merge. Run it to see actual vs expected, "
                    "then read totals.py and the test.")
    b.step([b.read("invoice_api/totals.py", TOTALS_PY),
            b.read("tests/test_totals.py", TEST_TOTALS_PY)],
           "Off by one cent. Reading the implementation and the test.")
    b.step([b.bash('grep -rn "line_total" --include=*.py .',
                   "./invoice_api/totals.py:9:def line_total(line: Line) -> float:\n"
                   "./invoice_api/totals.py:15:    net = sum(line_total(line) for line in "
                   "invoice.lines)\n"
                   "./tests/test_models.py:21:    assert line_total(line) == 24.5")],
           "Before changing `line_total`'s return type, checking who calls it.")
    good = b.step(
        [b.edit("invoice_api/totals.py", TOTALS_PY.split("\n", 1)[1],
                TOTALS_FIXED_PY.split("\n", 1)[1])],
        "## What's wrong\n\n`line_total` converts the price to `float` and rounds **each line** "
        "before the discount is applied:\n\n"
        "1. `3 * 33.365` is `100.09499999999999` as a float, so the line rounds down to `100.09`.\n"
        "2. The discount is applied to that rounded value: `100.09 * 0.9 = 90.081`, which gives "
        "`90.08`.\n\nThe expected `90.09` is exact arithmetic: `100.095 * 0.9 = 90.0855`, half "
        "up to `90.09`.\n\nI'll compute in `Decimal` and round once, at the end. Only "
        "`test_models.py` calls `line_total`, and `Decimal('24.5') == 24.5` still holds.")
    b.step([b.bash("python -m pytest -q", ".............. [100%]\n14 passed in 0.38s")])
    main_1 = b.answer(
        "## Fixed: rounding in `invoice_total`\n\nThe failure came from float arithmetic plus "
        "rounding every line before the discount.\n\n**Changes** in `invoice_api/totals.py`:\n"
        "- prices are converted with `Decimal(str(...))`, never `float`\n"
        "- the net total is rounded **once**, after the discount, with `ROUND_HALF_UP`\n"
        "- `VAT_RATE` is a `Decimal` now\n\n```python\nCENT = Decimal(\"0.01\")\n\n"
        "def invoice_total(invoice: Invoice) -> Decimal:\n"
        "    net = sum((line_total(line) for line in invoice.lines), Decimal(0))\n"
        "    if invoice.discount:\n        net *= 1 - Decimal(invoice.discount)\n"
        "    return net.quantize(CENT, rounding=ROUND_HALF_UP)\n```\n\n"
        "All 14 tests pass; the public functions keep their names and arguments.")

    # Branch A: the first prompt edited into a "minimal fix" request, which regresses.
    b.fork(settings)
    b.user("Run the tests and fix whatever fails in `invoice_api/totals.py`. Keep it minimal: "
           "a one-line change if possible.")
    b.step([b.bash("python -m pytest -q", _fill(PYTEST_DISCOUNT_FAIL, {
        "progress": ".F............", "stop": "", "tally": "1 failed, 13 passed in 0.35s"}), 1)])
    b.step([b.read("invoice_api/totals.py", TOTALS_PY)])
    b.step([b.edit("invoice_api/totals.py",
                   "    return round(line.quantity * float(line.unit_price), 2)",
                   "    return line.quantity * line.unit_price")],
           "Minimal change: keep the line total exact (`Decimal`) so `100.095` is not rounded "
           "down.")
    b.step([b.bash("python -m pytest -q", PYTEST_TYPEERROR, 1)])
    regressed = b.tip
    b.answer("The one-line change is not enough: `invoice_total` still multiplies by "
             "`1 - float(invoice.discount)`, and `Decimal * float` raises `TypeError`.\n\n"
             "A correct fix has to touch two functions:\n\n"
             "1. `line_total` returns an exact `Decimal`\n"
             "2. `invoice_total` applies the discount as `Decimal` and rounds once\n\n"
             "Should I do that, or revert?")
    branch_a = b.tip
    b.branch_summary(
        branch_a, main_1,
        goal="Fix `test_total_with_discount` with a one-line change in `invoice_api/totals.py`.",
        constraints=["Minimal change, one line if possible"],
        done=["Reproduced: `Decimal('90.08') != Decimal('90.09')`",
              "`line_total` returns `line.quantity * line.unit_price` (exact `Decimal`)"],
        blocked=["`invoice_total` multiplies the `Decimal` net by a `float` discount: `TypeError`"],
        decisions=["**Dropped the minimal fix**: rounding and discount both need `Decimal`"],
        next_steps=["Use the two-function `Decimal` fix from the main line"],
        critical=["`1 failed, 13 passed` with the one-line change"])
    b.session_info("Fix rounding in invoice totals")

    # Main line, part 2: a CLI option.
    b.user("Nice. Next: add a `--currency` option to `invoice show` so totals can be printed in "
           "EUR or USD. EUR stays the default; the rates are in `config/rates.toml`.")
    b.step([b.read("invoice_api/cli.py", CLI_PY), b.read("config/rates.toml", RATES_TOML)])
    b.step([b.edit("invoice_api/cli.py", '    show.add_argument("number")\n',
                   '    show.add_argument("number")\n' + CURRENCY_ARG)],
           "Adding the option to the `show` parser.")
    b.step([b.edit("invoice_api/cli.py", CLI_TOTAL_LINES.replace(":>17", ":>16"),
                   CLI_TOTAL_CONVERTED, applied=False)])
    b.step([b.read("invoice_api/cli.py", "\n".join(CLI_PY.splitlines()[20:28]),
                   offset=21, limit=8)],
           "The alignment in the f-strings differs from what I assumed; re-reading `cmd_show`.")
    b.step([b.edit("invoice_api/cli.py", "from .store import load_invoice\n",
                   "from .rates import convert, load_rates\nfrom .store import load_invoice\n"),
            b.edit("invoice_api/cli.py", CLI_TOTAL_LINES, CLI_TOTAL_CONVERTED),
            b.write("invoice_api/rates.py", RATES_PY)])
    b.step([b.bash("python -m invoice_api.cli show 2026-0042 --currency USD",
                   "Invoice 2026-0042  Acme GmbH\n"
                   "  Consulting                        3 x     33.365\n"
                   "  Net                                          97.68 USD\n"
                   "  Gross                                       116.24 USD")])
    b.step([b.bash("python -m pytest -q", ".............. [100%]\n14 passed in 0.40s")])
    currency_done = b.answer(
        "## `--currency` for `invoice show`\n\n```console\n"
        "$ python -m invoice_api.cli show 2026-0042 --currency USD\n```\n\n"
        "- `--currency` accepts `EUR` (default) and `USD`\n"
        "- rates come from `config/rates.toml` through the new `invoice_api/rates.py` "
        "(`load_rates()` is cached)\n"
        "- conversion happens **after** the EUR totals are rounded, then rounds to cents again, "
        "so EUR output is unchanged\n\n"
        "All 14 tests pass. `GBP` is in `rates.toml` too; say if it should be allowed.")

    # Main line, part 3: a refactor on a stronger model, then the first compaction.
    b.model_change("claude-opus-4-5")
    b.thinking_level("high")
    refactor = b.user(
        "Refactor `invoice_api/totals.py`: move the VAT logic into a new module "
        "`invoice_api/tax.py` with a `vat_for(country, net)` function. Old imports like "
        "`from invoice_api.totals import VAT_RATE` must keep working.")
    b.step([b.read("invoice_api/totals.py", TOTALS_FIXED_PY),
            b.bash('grep -rn "VAT_RATE\\|invoice_total_with_vat" --include=*.py .',
                   "./invoice_api/totals.py:7:VAT_RATE = Decimal(\"0.19\")\n"
                   "./invoice_api/totals.py:24:def invoice_total_with_vat(invoice: Invoice) -> "
                   "Decimal:\n"
                   "./invoice_api/cli.py:8:from .totals import invoice_total, "
                   "invoice_total_with_vat\n"
                   "./invoice_api/export.py:4:from .totals import VAT_RATE\n"
                   "./tests/test_totals.py:3:from invoice_api.totals import invoice_total, "
                   "invoice_total_with_vat")],
           thinking="`export.py` imports `VAT_RATE` from `totals`, so `totals` must re-export it. "
                    "`vat_for` needs per-country rates; DE stays the default so "
                    "`invoice_total_with_vat` keeps its result.")
    b.step([b.write("invoice_api/tax.py", TAX_PY)])
    b.step([b.edit("invoice_api/totals.py",
                   'from .models import Invoice, Line\n\nCENT = Decimal("0.01")\n'
                   'VAT_RATE = Decimal("0.19")\n',
                   'from .models import Invoice, Line\nfrom .tax import VAT_RATE, vat_for  '
                   '# noqa: F401  (re-exported)\n\nCENT = Decimal("0.01")\n')])
    b.step([b.bash("python -m pytest -q", PYTEST_CIRCULAR, 2)])
    b.step([b.edit("invoice_api/tax.py", "from .totals import CENT\n",
                   'CENT = Decimal("0.01")\n'),
            b.write("tests/test_tax.py", TEST_TAX_PY)],
           "Circular import: `tax.py` takes `CENT` from `totals.py`, which imports `tax.py`. "
           "`tax.py` gets its own `CENT`; adding tests for `vat_for` too.")
    b.step([b.bash("python -m pytest -q", "................. [100%]\n17 passed in 0.41s")])
    b.answer(
        "## Refactor done\n\n- new `invoice_api/tax.py`: `VAT_RATES` per country and "
        "`vat_for(country, net)`; unknown countries raise `ValueError`\n"
        "- `totals.py` re-exports `VAT_RATE`, so existing imports keep working:\n\n"
        "```python\nfrom .tax import VAT_RATE, vat_for  # noqa: F401  (re-exported)\n```\n\n"
        "- `tests/test_tax.py` covers DE, AT and an unknown country\n\n"
        "I hit a circular import on the way (`tax.py` imported `CENT` from `totals.py`); "
        "`tax.py` now defines its own. **17 tests pass.**")
    sections = _rich_sections_1(b)
    b.compaction(refactor, **sections)
    b.custom_message("git-status", "On branch `fix/invoice-rounding`, 3 commits ahead of "
                     "`origin/main`.\n\nModified: `invoice_api/cli.py`, `invoice_api/tax.py`, "
                     "`invoice_api/totals.py`\nUntracked: `invoice_api/rates.py`, "
                     "`tests/test_tax.py`")
    b.active_tools(["read", "bash", "edit", "write", "grep", "find", "ls"])

    # Main line, part 4: the XSS question, a user shell command, docs, the second compaction.
    b.user(XSS_PROMPT)
    b.step([b.read("templates/preview.html", PREVIEW_HTML),
            b.bash('grep -n "autoescape\\|Markup\\||safe" invoice_api/web.py templates/*.html',
                   "invoice_api/web.py:12:    env = Environment(loader=FileSystemLoader"
                   "(\"templates\"), autoescape=select_autoescape([\"html\"]))")])
    xss_answer = b.answer(
        "## That's the escaping working\n\nThe template prints the note with `{{ invoice.note }}` "
        "and the Jinja environment has `autoescape=select_autoescape([\"html\"])`. Jinja turns "
        "`<` into `&lt;` and `\"` into `&#34;`, so the page source is:\n\n"
        "```html\n<p class=\"note\">Customer note: "
        "&lt;script&gt;alert(&#34;xss&#34;)&lt;/script&gt;"
        " &lt;img src=x onerror=&#34;alert(1)&#34;&gt;</p>\n```\n\n"
        "The browser shows that as text and runs nothing. Keep it that way:\n\n"
        "- never add `|safe` or `Markup(...)` to `invoice.note`\n"
        "- keep the preview template an `.html` file, so autoescaping stays on\n"
        "- the note itself is stored as the customer typed it; escaping belongs to the output")
    b.bash_execution("git diff --stat",
                     " invoice_api/cli.py    | 14 +++++++++++---\n"
                     " invoice_api/rates.py  | 17 +++++++++++++++++\n"
                     " invoice_api/tax.py    | 17 +++++++++++++++++\n"
                     " invoice_api/totals.py | 21 ++++++++++-----------\n"
                     " tests/test_tax.py     | 17 +++++++++++++++++\n"
                     " 5 files changed, 79 insertions(+), 13 deletions(-)\n")
    docs = b.user("Write a short section in `docs/usage.md` about the `--currency` option and the "
                  "rounding rule (round once, half up).")
    b.step([b.read("docs/usage.md", USAGE_MD)])
    b.step([b.edit("docs/usage.md", "$ python -m invoice_api.cli export 2026-0042 -o "
                   "2026-0042.csv\n```\n", "$ python -m invoice_api.cli export 2026-0042 -o "
                   "2026-0042.csv\n```\n" + USAGE_SECTION)])
    b.answer("Added **Currencies and rounding** to `docs/usage.md`:\n\n"
             "> Amounts are computed with `Decimal` and rounded **once**, after the discount, "
             "to cents (half up).\n\nIt also shows the `--currency USD` example.")
    b.compaction(
        docs, **{**sections,
                 "done": sections["done"] + [
                     "Explained the preview: autoescaping shows the note's HTML as text; "
                     "`invoice.note` must never be `|safe`",
                     "`docs/usage.md`: section *Currencies and rounding*"],
                 "next_steps": ["Final test and lint run", "Write the PR description"]})
    b.custom("todo-state", {"todos": [
        {"text": "Fix rounding in invoice_total", "done": True},
        {"text": "--currency option", "done": True},
        {"text": "Extract VAT into tax.py", "done": True},
        {"text": "Document currencies", "done": True},
        {"text": "PR description", "done": False}]})
    b.user("Run the whole test suite and ruff once more, then write me a PR description.")
    b.step([b.bash("python -m pytest -q && ruff check .",
                   "................. [100%]\n17 passed in 0.44s\nAll checks passed!")])
    tip = b.answer(
        "## Fix invoice rounding, add `--currency`, extract VAT\n\n### Why\n"
        "`invoice_total` rounded every line as a float before the discount, so invoice "
        "`2026-0042` came out at 90.08 instead of 90.09.\n\n### What changed\n"
        "- `totals.py`: `Decimal` arithmetic, one `ROUND_HALF_UP` to cents\n"
        "- `invoice show --currency {EUR,USD}` with rates from `config/rates.toml`\n"
        "- `tax.py`: per-country VAT via `vat_for`; `VAT_RATE` still importable from `totals`\n"
        "- `docs/usage.md`: currencies and the rounding rule\n\n### Testing\n"
        "```console\n$ python -m pytest -q\n17 passed\n$ ruff check .\nAll checks passed!\n```")

    # Branch B, from the --currency answer: every currency in rates.toml.
    b.fork(currency_done)
    b.user("Yes, allow every currency that is in `rates.toml`, not just EUR and USD.")
    b.step([b.edit("invoice_api/cli.py", 'choices=["EUR", "USD"]', "choices=sorted(load_rates())")])
    b.step([b.bash("python -m invoice_api.cli show 2026-0042 --currency GBP",
                   "Invoice 2026-0042  Acme GmbH\n"
                   "  Consulting                        3 x     33.365\n"
                   "  Net                                          77.22 GBP\n"
                   "  Gross                                        91.89 GBP")])
    b.answer("`--currency` now takes its choices from `rates.toml` (`EUR`, `GBP`, `USD`), so a "
             "new rate needs no code change.")

    # Branch C, from the XSS answer: sanitizing on input instead.
    b.fork(xss_answer)
    b.user("Should we also strip HTML from notes when they are saved, e.g. with `bleach`?")
    b.step([b.bash("python -m pip show bleach", "WARNING: Package(s) not found: bleach", 1)])
    b.answer("I'd rather not:\n\n1. `bleach` is not installed and has been deprecated since "
             "2023; `nh3` is the maintained alternative.\n2. Stripping on input loses what the "
             "customer wrote, and the CSV export would change too.\n3. Escaping on output is "
             "already correct, as the preview shows.\n\nIf notes ever need formatting, sanitize "
             "with `nh3` **at render time** and keep the stored text as typed.",
             thinking="Sanitizing on save is a design change; output escaping already works.")

    # Reviewing the tree: labels last, so no conversation continues after a label entry.
    b.label(good, "good approach")
    b.label(regressed, "regression")
    b.fork(tip)
    return b.header, b.entries


# ----------------------------------------------------------------------------- synthetic sessions

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
        parts, total, fns = [_fill(head, words)], 0, self.v["functions"]
        while total < size:
            parts.append(_fill(block, {**words, "fn": fns[len(parts) % len(fns)]}))
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
            old, new = (_fill(t, w) for t in self.rng.choice(EDITS))
            return b.edit(module_path, old, new, applied=kind == "edit")
        if kind == "edit_test":
            old = _fill("def test_{fn}_empty():", w)
            new = _fill('def test_{fn}_missing_customer(caplog):\n    assert {fn}([{"id": "1", '
                        '"amount": "2"}]) == []\n    assert "no customer_id" in caplog.text\n\n\n',
                        w) + old
            return b.edit(f"tests/test_{w['module']}.py", old, new)
        if kind == "edit_doc":
            old = _fill("## `{fn}`\n", w)
            return b.edit(w["doc"], old, old + "\nEmpty input returns an empty list; a missing "
                                              "amount counts as `0.0` and is logged.\n")
        if kind == "write_test":
            return b.write(_fill("tests/test_cli_{fn}.py", w), _fill(TEST_HEAD + TEST_BLOCK, w))
        if kind == "test_pass":
            return b.bash(COMMANDS[kind], _fill(PYTEST_PASS, w))
        return b.bash(_fill(COMMANDS[kind], w), _fill(OUTPUTS[kind], w), int(kind in FAILING))

    def turn(self, plan, trunk: bool) -> None:
        prompt, groups, answer, w, thinking = plan
        start = len(self.b.entries)
        uid = self.b.user(_fill(prompt, w))
        self.users.append(uid)
        for i, group in enumerate(groups):
            text = STEP_TEXT.get(group[0]) if self.rng.random() < 0.5 else None
            self.b.step([self.call(kind, w) for kind in group], text and _fill(text, w),
                        _fill(thinking, w) if thinking and i == 0 else None)
        self.b.answer(_fill(answer, w))
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
            decisions=[_fill(d, w) for d in self.rng.sample(DECISIONS, 2)],
            next_steps=["Finish the task in progress",
                        "Run `python -m pytest -q` and `ruff check`"],
            critical=[_fill("Tests run with `python -m pytest -q` ({n} passing at last run)", w),
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
                       _ms("2026-02-16T08:02:41.507+00:00") if start_ms is None else start_ms)
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
    b = SessionBuilder(header["cwd"], seed + 1, _ms(entries[-1]["timestamp"]) + 1000)
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


def damaged_session() -> tuple[dict, list[str]]:
    """A small session as a crash leaves it: one torn line in the middle, and one entry whose
    parent exists nowhere. Returned as raw lines, since one of them is not JSON."""
    b = SessionBuilder("/home/ana/projects/invoice-api", seed=303,
                       start_ms=_ms("2026-03-03T16:40:12.034+00:00"))
    b.model_change("claude-sonnet-4-5")
    b.thinking_level("off")
    b.user("Add a `__repr__` to `Invoice` that shows the number and the customer.")
    models_py = ('from dataclasses import dataclass, field\nfrom decimal import Decimal\n\n\n'
                 '@dataclass\nclass Line:\n    description: str\n    quantity: int\n'
                 '    unit_price: Decimal\n\n\n@dataclass\nclass Invoice:\n    number: str\n'
                 '    customer: str\n    lines: list[Line] = field(default_factory=list)\n'
                 '    discount: str | None = None\n    note: str = ""\n')
    b.step([b.read("invoice_api/models.py", models_py)])
    b.step([b.edit("invoice_api/models.py", '    note: str = ""\n',
                   '    note: str = ""\n\n    def __repr__(self) -> str:\n'
                   '        return f"Invoice({self.number!r}, {self.customer!r})"\n')])
    answered = b.answer("Done: `repr(invoice)` now reads `Invoice('2026-0042', 'Acme GmbH')`.")
    b.user("Now make `Line` frozen so lines can go into sets.")
    torn = len(b.entries) - 1
    b.tip = answered  # the torn prompt was lost; the session went on from the last answer
    b.user("Make `Line` a frozen dataclass.")
    b.step([b.edit("invoice_api/models.py", "@dataclass\nclass Line:",
                   "@dataclass(frozen=True)\nclass Line:")])
    b.answer("`Line` is frozen now; assigning to a field raises `FrozenInstanceError`.")
    b.tip = uuid7_at(b.ms, b.rng)  # a parent that was never written
    b.user("Also run ruff on the package.")
    b.step([b.bash("ruff check invoice_api", "All checks passed!")])
    b.answer("`ruff check invoice_api`: no issues.")
    lines = [orjson.dumps(e).decode() for e in b.entries]
    lines[torn] = lines[torn][: lines[torn].index('"text":"') + 24]  # cut inside the prompt
    return b.header, lines


def pi_v1_session() -> tuple[dict, list[dict]]:
    """An old pi file: no `version`, no ids (entries chain in file order), the model in the
    header, and a compaction that points at its first kept entry by line index."""
    header, entries = synthetic_session(30, seed=1118, branches=0, compactions=1,
                                        project="legacy-cli",
                                        start_ms=_ms("2025-11-18T10:05:33.910+00:00"))
    _, v1 = as_v1(header, entries)
    header = {"type": "session", "id": header["id"], "timestamp": header["timestamp"],
              "cwd": header["cwd"], "provider": "anthropic", "modelId": DEFAULT_MODEL,
              "thinkingLevel": "medium"}
    return header, v1


SAMPLES = (rich_session, large_session, damaged_session, pi_v1_session)


def main(argv: list[str] | None = None) -> int:
    """Regenerate every sample under OUTDIR; stale `.jsonl` files in the folders it writes are
    removed, so a changed generator leaves no old copies behind."""
    args = sys.argv[1:] if argv is None else argv
    out = Path(args[0]) if args else DEFAULT_OUT
    written = []
    for make in SAMPLES:
        header, entries = make()
        path = out / session_path(header)
        write_jsonl(path, header, entries)
        written.append(path)
        print(f"{path}  ({len(entries)} entries)")
    for stale in {p for w in written for p in w.parent.glob("*.jsonl")} - set(written):
        stale.unlink()
    return 0


if __name__ == "__main__":
    sys.exit(main())
