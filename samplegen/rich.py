"""The bundled rich sample: an invoice project's session with branches, failing and fixed
tests, compactions, a branch summary and hostile text (HTML a page must escape), written out
turn by turn so every view has something real-looking to show.
"""

from __future__ import annotations

from .builder import SessionBuilder, fill, iso_to_ms


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
                       start_ms=iso_to_ms("2026-03-02T09:14:05.221+00:00"))
    b.model_change("claude-sonnet-4-5")
    settings = b.thinking_level("medium")

    # Main line, part 1: the rounding bug.
    b.user("The test `tests/test_totals.py::test_total_with_discount` started failing after "
           "yesterday's merge. Can you find out why and fix it? Please don't change the public "
           "API of `invoice_api.totals`.")
    stop = "!!!!!!!!!!!!!!!!!!!!!!!!!! stopping after 1 failures !!!!!!!!!!!!!!!!!!!!!!!!!!!\n"
    b.step([b.bash("python -m pytest tests/test_totals.py -x -q", fill(PYTEST_DISCOUNT_FAIL, {
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
    b.step([b.bash("python -m pytest -q", fill(PYTEST_DISCOUNT_FAIL, {
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
