"""What one process builds once and reuses: the CLI's parser and the compiled templates. Reuse
must not carry anything from one use to the next."""

from __future__ import annotations

import jinja2
import pytest

from tests.conftest import Builder
from webapp import cli
from webapp.web.app import create_app


def test_the_parser_is_built_once_and_a_parse_leaves_no_trace_in_the_next(tmp_path):
    first = cli._parser().parse_args(["serve", str(tmp_path), "--allow-host", "a.example"])
    second = cli._parser().parse_args(["serve", str(tmp_path)])
    assert cli._parser() is cli._parser()
    assert first.allow_host == ["a.example"] and second.allow_host == []  # the default list is not grown
    assert second.port == 8000 and second.func is first.func


def test_a_second_app_renders_without_compiling_a_template_again(tmp_path, monkeypatch):
    b = Builder()
    b.user("hello")
    b.assistant("hi")
    b.write(tmp_path / "s.jsonl")
    compiled: list[str] = []
    real = jinja2.Environment.compile

    def counting(self, source, name=None, *args, **kwargs):
        compiled.append(name)
        return real(self, source, name, *args, **kwargs)

    monkeypatch.setattr(jinja2.Environment, "compile", counting)
    pages = []
    for _ in range(2):
        client = create_app(tmp_path).test_client()
        pages.append(client.get("/s/s.jsonl").get_data(as_text=True))
        compiled.append("--next app--")
    second_app = compiled[compiled.index("--next app--") + 1:-1]
    assert second_app == []
    assert "hello" in pages[1] and pages[0].count("hello") == pages[1].count("hello")


def _subparsers(parser):
    import argparse

    (sub,) = [a for a in parser._actions if isinstance(a, argparse._SubParsersAction)]
    return sub.choices


def _options(parser, command):
    return sorted(s for a in _subparsers(parser)[command]._actions for s in a.option_strings or [a.dest])


def test_each_group_of_commands_parses_alone_as_in_the_whole_parser():
    whole = cli.build_parser()
    assert list(_subparsers(whole)) == list(cli.COMMANDS)  # the table names every command, in --help's order
    for group in cli.GROUPS:
        alone = cli.build_parser(group)
        built = [c for c, sp in _subparsers(alone).items() if sp.get_default("func")]
        assert built == [c for c, (g, _) in cli.COMMANDS.items() if g == group]
        for command in built:
            assert _options(alone, command) == _options(whole, command)
    assert list(_subparsers(cli.build_parser(None))) == list(cli.COMMANDS)  # (--help's: the names alone)


@pytest.mark.parametrize("argv, heavy", [(["show"], ("flask", "duckdb", "litellm")),
                                         (["index"], ("flask", "litellm", "pyarrow")),
                                         (["--help"], ("flask", "duckdb", "litellm", "webapp.core.session"))])
def test_a_command_imports_the_module_of_its_group_and_no_other(argv, heavy):
    import subprocess
    import sys

    groups = [f"webapp.cli.{g}" for g in cli.GROUPS]
    probe = ("import sys; from webapp import cli; cli.parser_for(sys.argv[1:]); "
             f"print(sorted(m for m in sys.modules if m in {groups!r}), "
             f"[m for m in {list(heavy)!r} if m in sys.modules])")
    loaded = subprocess.run([sys.executable, "-c", probe, *argv], capture_output=True, text=True, check=True).stdout
    group = cli.COMMANDS[argv[0]][0] if argv[0] in cli.COMMANDS else None
    assert loaded.strip() == f"{[f'webapp.cli.{group}'] if group else []} []"
