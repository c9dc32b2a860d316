"""One sandbox tool call, run in a process of its own (inside bubblewrap when the machine has it).

This file is a script, not a module of the app: `tool_runner` hands its source to a fresh Python
(`python -I -S -c SOURCE`), which reads one request as JSON on stdin and prints one answer as JSON
on stdout. It imports only the standard library, since inside the sandbox there is no virtualenv.
Why a process: a tool's work (a model-chosen regular expression above all, which Python's `re`
runs holding the interpreter) must not run in the server, and a process can be given limits
(CPU time, memory, file size, processes) and killed at the time limit with all it started.

Request: {"tool", "args", "root" (the copy, as this process sees it), "aliases" (the absolute
folders a path may name instead: the session's cwd as written and resolved), "cap" (characters
of a result), "seconds" (the time limit), "limits" ({"cpu", "memory", "file", "processes",
"files"} for setrlimit)}. Answer: {"text", "error" (bool), "refused" (bool)}.
"""

import fnmatch
import json
import os
import re
import resource
import signal
import subprocess
import sys
import time

LIST_CAP = 500  # names an ls or a find lists
GREP_CAP = 100  # matching lines a grep lists


class Refused(Exception):
    """A call this sandbox does not run (a path outside the copy, bad arguments)."""


def limit(limits):
    """The process's own limits, set before any work: what it starts (bash) inherits them."""
    for name, value in (("RLIMIT_CPU", limits.get("cpu")), ("RLIMIT_AS", limits.get("memory")),
                        ("RLIMIT_FSIZE", limits.get("file")), ("RLIMIT_NPROC", limits.get("processes")),
                        ("RLIMIT_NOFILE", limits.get("files")), ("RLIMIT_CORE", 0)):
        if value is not None and hasattr(resource, name):
            resource.setrlimit(getattr(resource, name), (value, value))
    # A write past the file size limit fails (EFBIG) instead of killing the process unanswered;
    # an ignored signal stays ignored in what the process runs, so bash's writes fail the same way.
    signal.signal(signal.SIGXFSZ, signal.SIG_IGN)


class Box:
    def __init__(self, request):
        self.root = os.path.realpath(request["root"])
        self.aliases = [a for a in request.get("aliases", []) if a]
        self.cap = int(request["cap"])
        self.deadline = time.monotonic() + float(request["seconds"])
        self.cut_already = False

    def run(self, name, args):
        tool = getattr(self, "tool_" + name, None)
        if tool is None:
            raise Refused("no tool %r in the sandbox" % name)
        return tool(args)

    def cut(self, text):
        if len(text) <= self.cap:
            return text
        return text[: self.cap] + "\n[output cut at %d characters of %d]" % (self.cap, len(text))

    def tick(self):
        if time.monotonic() > self.deadline:
            raise TimeoutError

    # -- paths -----------------------------------------------------------------------------------

    def path(self, value, default=None):
        """The file in the copy a path argument names; Refused when it resolves outside the copy."""
        if value is None and default is not None:
            value = default
        if not isinstance(value, str) or not value:
            raise Refused("a path argument (a string) is needed")
        if "\0" in value:
            raise Refused("a path holds no NUL character")
        rel = value
        if os.path.isabs(value):
            for base in self.aliases:
                if value == base or value.startswith(base.rstrip("/") + "/"):
                    rel = os.path.relpath(value, base)
                    break
            else:
                raise Refused("%s is outside the session's working directory %s" % (value, self.aliases[0]))
        target = os.path.realpath(os.path.join(self.root, rel))
        if target != self.root and not target.startswith(self.root.rstrip("/") + "/"):
            raise Refused("%s resolves outside the sandbox's copy of %s" % (value, self.aliases[-1]))
        return target

    def shown(self, path):
        rel = os.path.relpath(path, self.root)
        return rel

    def files(self, base):
        """Files under `base` (itself when a file), skipping links that leave the copy."""
        if os.path.isfile(base):
            yield base
            return
        inside = self.root.rstrip("/") + "/"
        for folder, dirs, names in os.walk(base):
            self.tick()
            dirs.sort()
            for name in sorted(names):
                f = os.path.join(folder, name)
                real = os.path.realpath(f)
                if (real == self.root or real.startswith(inside)) and os.path.isfile(real):
                    yield f

    @staticmethod
    def number(args, name, default):
        value = args.get(name)
        return default if value is None else int(value)

    # -- the tools -------------------------------------------------------------------------------

    def tool_read(self, args):
        path = self.path(args.get("path"))
        if not os.path.isfile(path):
            return "Error: %s is not a file" % args.get("path"), True
        with open(path, "rb") as f:
            data = f.read()
        if b"\0" in data[:8192]:
            return "%s is a binary file (%d bytes)" % (args.get("path"), len(data)), False
        lines = data.decode("utf-8", "replace").split("\n")
        offset = max(self.number(args, "offset", 1), 1)
        count = self.number(args, "limit", 0)
        part = lines[offset - 1: offset - 1 + count] if count else lines[offset - 1:]
        return "\n".join(part), False

    def tool_ls(self, args):
        path = self.path(args.get("path"), ".")
        if not os.path.isdir(path):
            return "Error: %s is not a directory" % args.get("path"), True
        names = sorted(n + "/" if os.path.isdir(os.path.join(path, n)) else n for n in os.listdir(path))
        cap = min(self.number(args, "limit", 0) or LIST_CAP, LIST_CAP)
        more = "\n[%d more]" % (len(names) - cap) if len(names) > cap else ""
        return ("\n".join(names[:cap]) or "(empty directory)") + more, False

    def tool_find(self, args):
        pattern = args.get("pattern")
        if not isinstance(pattern, str) or not pattern:
            raise Refused("find needs a pattern")
        base = self.path(args.get("path"), ".")
        cap = min(self.number(args, "limit", 0) or LIST_CAP, LIST_CAP)
        found = []
        for f in self.files(base):
            rel = self.shown(f)
            if fnmatch.fnmatch(rel, pattern) or fnmatch.fnmatch(os.path.basename(f), pattern) or (
                    pattern.startswith("**/") and fnmatch.fnmatch(rel, pattern[3:])):
                found.append(rel)
                if len(found) >= cap:
                    break
        return "\n".join(found) or "No files found", False

    def tool_grep(self, args):
        """The model's pattern runs here, in this process: the time limit stops it mid-match."""
        pattern = args.get("pattern")
        if not isinstance(pattern, str) or not pattern:
            raise Refused("grep needs a pattern")
        flags = re.IGNORECASE if args.get("ignoreCase") else 0
        rx = re.compile(re.escape(pattern) if args.get("literal") else pattern, flags)
        base = self.path(args.get("path"), ".")
        glob = args.get("glob")
        cap = min(self.number(args, "limit", 0) or GREP_CAP, GREP_CAP)
        out = []
        for f in self.files(base):
            if isinstance(glob, str) and glob and not fnmatch.fnmatch(os.path.basename(f), glob.split("/")[-1]):
                continue
            with open(f, "rb") as fh:
                data = fh.read()
            if b"\0" in data[:8192]:
                continue
            for n, line in enumerate(data.decode("utf-8", "replace").split("\n"), 1):
                if rx.search(line):
                    out.append("%s:%d: %s" % (self.shown(f), n, line))
                    if len(out) >= cap:
                        return "\n".join(out) + "\n[stopped at %d matches]" % cap, False
            self.tick()
        return "\n".join(out) or "No matches found", False

    def tool_edit(self, args):
        path = self.path(args.get("path"))
        old, new = args.get("oldText"), args.get("newText")
        if not isinstance(old, str) or not isinstance(new, str) or not old:
            raise Refused("edit needs oldText (not empty) and newText, as strings")
        if not os.path.isfile(path):
            return "Error: %s is not a file" % args.get("path"), True
        with open(path, encoding="utf-8") as f:
            text = f.read()
        count = text.count(old)
        if count != 1:
            where = "is not in" if count == 0 else "occurs %d times in" % count
            return "Error: oldText %s %s; it must occur exactly once" % (where, args.get("path")), True
        with open(path, "w", encoding="utf-8") as f:
            f.write(text.replace(old, new, 1))
        return "Edited %s: replaced %d characters with %d." % (args.get("path"), len(old), len(new)), False

    def tool_write(self, args):
        path = self.path(args.get("path"))
        content = args.get("content")
        if not isinstance(content, str):
            raise Refused("write needs content, a string")
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, "w", encoding="utf-8") as f:
            f.write(content)
        return "Wrote %d bytes to %s." % (len(content.encode()), args.get("path")), False

    def tool_bash(self, args):
        command = args.get("command")
        if not isinstance(command, str) or not command.strip():
            raise Refused("bash needs a command")
        env = {"PATH": "/usr/local/bin:/usr/bin:/bin", "HOME": os.environ.get("HOME", "/tmp"), "PWD": self.root,
               "LANG": "C.UTF-8"}
        proc = subprocess.Popen(["bash", "-c", command], cwd=self.root, env=env, stdout=subprocess.PIPE,
                                stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL)
        kept, total = [], 0
        while True:  # the first `cap` characters' worth kept, the rest counted (a flood costs no memory)
            chunk = proc.stdout.read1(65536)
            if not chunk:
                break
            if total < 4 * self.cap + 4:
                kept.append(chunk)
            total += len(chunk)
        code = proc.wait()
        data = b"".join(kept)
        out = data.decode("utf-8", "replace")
        if total > len(data):  # (cut here: the length said is the bytes counted, not characters kept)
            out = out[: self.cap] + "\n[output cut at %d characters of about %d bytes]" % (self.cap, total)
            self.cut_already = True
        if code:
            return ("%s\n\nCommand exited with code %d" % (out, code)).lstrip("\n"), True
        return out or "(no output)", False


def main():
    request = json.loads(sys.stdin.read())
    limit(request.get("limits") or {})
    box = Box(request)
    refused = False
    try:
        text, failed = box.run(request["tool"], request.get("args") or {})
        text = text if box.cut_already else box.cut(text)
    except Refused as exc:
        text, failed, refused = "Refused: %s" % exc, True, True
    except TimeoutError:
        text, failed = "Stopped: the call took longer than %g s." % float(request["seconds"]), True
    except MemoryError:
        text, failed = "Error: the call ran out of the memory a sandbox call is given", True
    except RecursionError:
        text, failed = "Error: the pattern or the folder is nested too deeply", True
    except (OSError, UnicodeError, re.error, ValueError, TypeError, OverflowError) as exc:
        text, failed = "Error: %s" % exc, True
    sys.stdout.write(json.dumps({"text": text, "error": failed, "refused": refused}))


if __name__ == "__main__":
    main()
