"""Installed as users install Python tools (a wheel, what pipx and `uv tool install` build), the
app works: the wheel holds the templates, static files and sample sessions, and `session-tree
demo` from it serves pages, assets and an export, with no checkout in sight.

The wheel is built from a copy of the project's files, into a new virtual environment in a
temporary folder; that environment reaches the dependencies already installed in this one through
a .pth line (installing them from a registry would take minutes and the network), and runs with no
PYTHONPATH from a folder that is not the checkout.
"""

from __future__ import annotations

import http.cookiejar
import os
import re
import shutil
import signal
import subprocess
import sys
import sysconfig
import time
import urllib.error
import urllib.request
from pathlib import Path

from tests.serve_process import free_port

PROJECT = Path(__file__).resolve().parents[1]
# What a wheel is built from: the package (with its symlinks to the folders below) and those folders.
SOURCES = ("pyproject.toml", "README.md", "webapp", "templates", "static", "sample_sessions", "docs")


def clean_env(home: Path) -> dict[str, str]:
    """The environment of a user's shell: no PYTHONPATH, none of the app's settings, a home and a
    temporary folder of its own."""
    env = {k: v for k, v in os.environ.items()
           if k not in ("PYTHONPATH", "PYTHONHOME", "VIRTUAL_ENV") and not k.startswith("SESSION_TREE_")}
    (home / "tmp").mkdir(parents=True)
    env.update(HOME=str(home), TMPDIR=str(home / "tmp"), XDG_CACHE_HOME=str(home / ".cache"))
    return env


def build_wheel(tmp: Path, env: dict) -> Path:
    src = tmp / "src"
    for name in SOURCES:
        path = PROJECT / name
        if path.is_dir():
            shutil.copytree(path, src / name, symlinks=True, ignore=shutil.ignore_patterns("__pycache__"))
        else:
            src.mkdir(exist_ok=True)
            shutil.copy2(path, src / name)
    subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "-q",
                    "-w", str(tmp / "dist"), str(src)], check=True, env=env, cwd=tmp, capture_output=True)
    (wheel,) = (tmp / "dist").glob("session_tree-*.whl")
    return wheel


def new_venv(tmp: Path, wheel: Path, env: dict) -> Path:
    venv = tmp / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True, env=env, cwd=tmp)
    python = venv / "bin" / "python"
    site = subprocess.run([python, "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
                          check=True, env=env, cwd=tmp, capture_output=True, text=True).stdout.strip()
    (Path(site) / "dependencies.pth").write_text(sysconfig.get_paths()["purelib"] + "\n")
    subprocess.run([python, "-m", "pip", "install", "--no-deps", "--no-index", "-q", str(wheel)],
                   check=True, env=env, cwd=tmp, capture_output=True)
    return venv


def served_url(proc: subprocess.Popen) -> tuple[str, Path]:
    """The URL and the folder the server says it serves (the lines a person reads)."""
    for line in proc.stdout:
        if m := re.search(r"serving (\S+) .*on (https?://\S+)", line):
            return m.group(2), Path(m.group(1))
    raise AssertionError(f"the server ended without saying where it serves (exit {proc.wait()})")


def browser():
    """An opener that keeps cookies as a browser does (the printed address's token logs in once)."""
    return urllib.request.build_opener(urllib.request.HTTPCookieProcessor(http.cookiejar.CookieJar()))


def get(opener, url: str, proc: subprocess.Popen, deadline: float):
    """`url` once the server answers (it starts listening just after it says where)."""
    while True:
        try:
            return opener.open(url, timeout=30)
        except urllib.error.URLError as exc:
            if isinstance(exc, urllib.error.HTTPError) or proc.poll() is not None or time.monotonic() > deadline:
                raise
            time.sleep(0.1)


def test_the_wheel_installed_in_a_new_venv_serves_the_demo(tmp_path):
    env = clean_env(tmp_path / "home")
    wheel = build_wheel(tmp_path, env)
    venv = new_venv(tmp_path, wheel, env)
    installed = subprocess.run([venv / "bin" / "python", "-c", "import webapp; print(webapp.__file__)"],
                               check=True, env=env, cwd=tmp_path, capture_output=True, text=True).stdout.strip()
    assert Path(installed).is_relative_to(venv) and not Path(installed).is_relative_to(PROJECT)
    assert not (Path(installed).parent / "templates").is_symlink()  # the wheel holds the files themselves

    proc = subprocess.Popen([venv / "bin" / "session-tree", "demo", "--port", str(free_port())], env=env,
                            cwd=tmp_path, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True,
                            start_new_session=True)
    try:
        url, served = served_url(proc)
        assert served.is_relative_to(tmp_path / "home" / "tmp")  # a fresh copy, not the installed samples
        opener = browser()
        index = get(opener, url, proc, time.monotonic() + 60)
        page = index.read().decode()
        assert index.status == 200 and "invoice-api" in page
        base = url.split("?")[0].rstrip("/")
        sessions = sorted(set(re.findall(r'href="(/s/[^"?#]+\.jsonl)"', page)))
        assert len(sessions) == 7  # the seven bundled sample files (three of them one conversation)
        session = opener.open(base + sessions[0], timeout=60)
        html = session.read().decode()
        assert session.status == 200 and "<svg" in html
        assets = re.findall(r'(?:href|src)="(/static/[^"?]+\.(?:css|js))', html)
        assert any(a.endswith(".css") for a in assets) and any(re.search(r"/htmx[^/]*\.js$", a) for a in assets)
        for asset in assets:
            answer = opener.open(base + asset, timeout=30)
            assert answer.status == 200 and len(answer.read()) > 100, asset
        doc = opener.open(f"{base}/docs/corpus-tables", timeout=30)  # (the docs a page links travel too)
        assert doc.status == 200 and "sessions" in doc.read().decode()
        review = opener.open(f"{base}{sessions[0]}/export", timeout=120)  # (a share starts at its review)
        assert review.status == 200 and "/export/review" in review.url
        export = opener.open(f"{base}{sessions[0]}/export?reviewed=1&redact=1", timeout=120)
        assert export.status == 200 and "text/html" in export.headers["Content-Type"]
        assert "<svg" in export.read().decode()
    finally:
        os.killpg(proc.pid, signal.SIGTERM)
        proc.wait(timeout=30)
    assert not served.exists()  # the copy goes when the server stops
