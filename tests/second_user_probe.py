"""What another account on the machine can get from a running `session-tree serve`: run by
tests/web/test_second_user.py as that account (a copy of this file, standard library only, in a
folder it may read), or as the owner with the token to show the same requests are real.

Reads a JSON plan (argv[1]): {"base": URL, "requests": [[method, path], ...], "files": [path, ...],
"token": the owner's or null, "rel": a session's path}. Prints a JSON report: every answer's
status, whether it showed a CSRF token or a session's text, and what opening each file gave."""

from __future__ import annotations

import errno
import json
import os
import re
import sys
import urllib.error
import urllib.parse
import urllib.request

CSRF = re.compile(r'(?:name="csrf_token" value="|"X-CSRF-Token": ")([^"]+)"')
GUESS = "guessed-token-0000000000000000000000"


class NoRedirect(urllib.request.HTTPRedirectHandler):
    def redirect_request(self, *args, **kwargs):
        return None


OPENER = urllib.request.build_opener(NoRedirect)


def ask(base: str, method: str, path: str, headers: dict, form: dict | None = None) -> tuple[int, str, str]:
    """(status, body read, content type) of one request; a redirect's body is where it leads."""
    data = urllib.parse.urlencode(form).encode() if form is not None else (b"" if method == "POST" else None)
    request = urllib.request.Request(base.rstrip("/") + path, data=data, method=method, headers=headers)
    try:
        response = OPENER.open(request, timeout=60)
    except urllib.error.HTTPError as exc:
        response = exc
    kind = response.headers.get("Content-Type", "")
    # (an event stream never ends: its status and headers are the answer)
    body = "" if "event-stream" in kind else response.read(1 << 20).decode("utf-8", "replace")
    if 300 <= response.status < 400:
        body = "Location: " + response.headers.get("Location", "")
    response.close()
    return response.status, body, kind


def where(status: int, body: str) -> str:
    """Where a redirect leads ('' for any other answer)."""
    return body.removeprefix("Location: ") if 300 <= status < 400 else ""


def main() -> None:
    plan = json.load(open(sys.argv[1]))
    base, token = plan["base"], plan["token"]
    port = base.rstrip("/").rpartition(":")[2]
    same_site = {"Origin": base.rstrip("/"), "Sec-Fetch-Site": "same-origin", "Accept": "text/html"}
    ways = [("the token", {"Authorization": f"token {token}"})] if token else [
        ("nothing", {}), ("a guessed token", {"Authorization": f"token {GUESS}"}),
        ("a guessed cookie", {"Cookie": f"session-tree-{port}={GUESS}"})]
    answers, scraped = [], set()
    for method, path in plan["requests"]:
        for way, headers in ways:
            status, body, _ = ask(base, method, path, {**same_site, **headers},
                                  {"csrf_token": next(iter(scraped), "")} if method == "POST" else None)
            scraped.update(CSRF.findall(body))
            answers.append({"method": method, "path": path, "with": way, "status": status,
                            "shows_text": plan["secret_text"] in body, "bytes": len(body), "where": where(status, body)})
    if not token:
        # ?token= with a guess, and a replay POSTed with whatever CSRF token the pages gave away
        status, body, _ = ask(base, "GET", f"/?token={GUESS}", same_site)
        answers.append({"method": "GET", "path": "/?token=<guess>", "with": "a guessed token", "status": status,
                        "shows_text": False, "bytes": 0, "where": where(status, body)})
        form = {"csrf_token": next(iter(scraped), ""), "model": "ollama_chat/x", "api_base": "http://127.0.0.1:9",
                "tools": "sandbox", "allow_bash": "1", "from": "x"}
        status, body, _ = ask(base, "POST", f"/s/{plan['rel']}/-/replay", same_site, form)
        answers.append({"method": "POST", "path": "replay with a scraped CSRF token", "with": "nothing",
                        "status": status, "shows_text": plan["secret_text"] in body, "bytes": len(body), "where": where(status, body)})
    files = {}
    for path in plan["files"]:
        try:
            with open(path, "rb") as f:
                f.read(16)
            files[path] = "read"
        except IsADirectoryError:
            try:
                files[path] = f"listed {len(os.listdir(path))}"
            except OSError as exc:
                files[path] = errno.errorcode.get(exc.errno, str(exc.errno))
        except OSError as exc:
            files[path] = errno.errorcode.get(exc.errno, str(exc.errno))
    print(json.dumps({"answers": answers, "csrf_tokens_found": len(scraped), "files": files}))


if __name__ == "__main__":
    main()
