"""What one process builds once and reuses: the CLI's parser and the compiled templates. Reuse
must not carry anything from one use to the next."""

from __future__ import annotations

import jinja2

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


def _options(parser, command):
    import argparse

    (sub,) = [a for a in parser._actions if isinstance(a, argparse._SubParsersAction)]
    return sorted(s for a in sub.choices[command]._actions for s in a.option_strings or [a.dest])


def test_the_corpus_commands_parse_alone_as_in_the_whole_parser_without_the_other_commands_modules():
    import subprocess
    import sys

    whole, alone = cli.build_parser(), cli.build_parser("corpus")
    for command in ("index", "sql", "ls"):
        assert _options(alone, command) == _options(whole, command)
    assert "--corpus" in _options(whole, "serve")  # (the corpus commands add it to the whole parser only)
    probe = ("import sys; from webapp import cli; cli._parser(cli._ALONE['index']); "
             "print(sorted(m for m in sys.modules if m.startswith('webapp.commands_')))")
    loaded = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True).stdout
    assert loaded.strip() == "['webapp.commands_corpus']"
