"""The core and the CLI stand without the web app: importing them must not import Flask."""

import pkgutil
import subprocess
import sys

import webapp.core

CORE = sorted(f"webapp.core.{m.name}" for m in pkgutil.iter_modules(webapp.core.__path__))


def test_importing_the_core_and_the_cli_does_not_import_flask():
    assert {"webapp.core.session", "webapp.core.compaction", "webapp.core.catalog"} <= set(CORE)
    code = (
        "import importlib, sys\n"
        f"for name in {CORE + ['webapp.cli']!r}:\n"
        "    importlib.import_module(name)\n"
        f"assert set({CORE!r}) <= set(sys.modules)\n"
        "print(sorted(m for m in sys.modules if m == 'flask' or m.startswith('flask.')))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"
