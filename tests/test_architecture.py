"""The shape of the `webapp` package, read from its own imports: no import cycle between its
modules (a deferred import inside a function counts: it hides a cycle, it does not remove it),
and no module of it or of the samples generator over 800 lines. Each layer imports only those
below it, so each can be read, tested and replaced alone."""

import ast
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[1] / "webapp"
MAX_LINES = 800


def modules() -> dict[str, Path]:
    """Dotted module name -> file, for every module of the package (a package by its name)."""
    found = {}
    for path in PACKAGE.rglob("*.py"):
        parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
        found[".".join(parts[:-1] if parts[-1] == "__init__" else parts)] = path
    return found


def imports(name: str, path: Path, known: dict[str, Path]) -> set[str]:
    """The modules of the package that `name` imports anywhere in its file."""
    here = name.split(".") if path.name == "__init__.py" else name.split(".")[:-1]
    out = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            targets = [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = ".".join(here[: len(here) - node.level + 1] + [node.module or ""]).strip(".") \
                if node.level else node.module or ""
            targets = [base] + [f"{base}.{a.name}" for a in node.names]
        else:
            continue
        for t in targets:
            while t and t not in known:
                t = t.rpartition(".")[0]
            if t and t != name and not name.startswith(t + "."):  # (a package's own __init__ runs first anyway)
                out.add(t)
    return out


def cycle_from(start: str, graph: dict[str, set[str]]) -> list[str] | None:
    """One import cycle through `start`, as the modules along it, or None."""
    stack, seen = [(start, [start])], set()
    while stack:
        node, path = stack.pop()
        for nxt in graph[node]:
            if nxt == start:
                return path + [start]
            if nxt not in seen:
                seen.add(nxt)
                stack.append((nxt, path + [nxt]))
    return None


def test_the_package_has_no_import_cycle():
    known = modules()
    graph = {name: imports(name, path, known) for name, path in known.items()}
    assert len(known) > 40 and graph["webapp.core.tree"] >= {"webapp.core.reader", "webapp.core.entries"}
    cycles, seen = [], set()
    for name in sorted(graph):
        if name not in seen and (c := cycle_from(name, graph)):
            cycles.append(c)
            seen.update(c)
    assert not cycles, "import cycles: " + "; ".join(" -> ".join(c) for c in cycles)


def test_no_module_is_over_800_lines():
    files = [*PACKAGE.rglob("*.py"), *(PACKAGE.parent / "samplegen").rglob("*.py")]
    assert len(files) > 45
    long = {str(p.relative_to(PACKAGE.parent)): n for p in files
            if (n := len(p.read_text(encoding="utf-8").splitlines())) > MAX_LINES}
    assert not long, f"modules over {MAX_LINES} lines: {long}"
