"""The package's rooms and the one import rule (stated in ``statespace/__init__.py``):

    app -> ensemble, evaluation -> smoothers -> filters -> methods -> model -> data -> _runtime

A room imports only rooms to its right; ``ensemble`` and ``evaluation`` do not import each other;
nothing imports the facade (``statespace/__init__.py``) or the application; a module takes no
underscore name (module or attribute) from another room; there is no import circle between modules
(imports inside functions count: they are still a dependency); no module is over 500 lines.

Read from the source text with ``ast``, so the test needs nothing imported and fails on the first
import that breaks the rule, naming it.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PACKAGES = ("statespace", "filters", "smoothers")
MAX_LINES = 500

#: room -> its floor; a room imports only rooms on lower floors (or its own)
FLOORS = {
    "statespace._runtime": 0,
    "statespace.data": 1,
    "statespace.model": 2,
    "statespace.methods": 3,
    "filters": 4,
    "smoothers": 5,
    "statespace.evaluation": 6,
    "statespace.ensemble": 6,
    "statespace.app": 7,
}


def _modules() -> dict[str, Path]:
    out = {}
    for pkg in PACKAGES:
        for path in sorted((ROOT / pkg).rglob("*.py")):
            if "__pycache__" in path.parts:
                continue
            parts = list(path.relative_to(ROOT).with_suffix("").parts)
            if parts[-1] == "__init__":
                parts = parts[:-1]
            out[".".join(parts)] = path
    return out


MODULES = _modules()


def _room(module: str) -> str | None:
    """The room of a module; ``None`` for the facade and ``statespace/__main__.py`` (the entry point)."""
    for room in sorted(FLOORS, key=len, reverse=True):
        if module == room or module.startswith(room + "."):
            return room
    return None


def _resolve(module: str, path: Path, node: ast.ImportFrom) -> str:
    if not node.level:
        return node.module or ""
    package = module.split(".") if path.name == "__init__.py" else module.split(".")[:-1]
    base = package[: len(package) - node.level + 1]
    return ".".join(base + ([node.module] if node.module else []))


def _imports(module: str, path: Path) -> list[tuple[int, str, str | None]]:
    """(line, imported module, imported name or None) of every project import in the file; a name
    that is itself a module (``from statespace.model import ranges``) counts as that module."""
    out = []
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            out += [(node.lineno, a.name, None) for a in node.names if a.name.split(".")[0] in PACKAGES]
        elif isinstance(node, ast.ImportFrom):
            target = _resolve(module, path, node)
            if target.split(".")[0] not in PACKAGES:
                continue
            for a in node.names:
                sub = f"{target}.{a.name}"
                out.append((node.lineno, sub, None) if sub in MODULES else (node.lineno, target, a.name))
    return out


EDGES = {m: _imports(m, p) for m, p in MODULES.items()}


def _where(module: str, line: int) -> str:
    return f"{MODULES[module].relative_to(ROOT)}:{line}"


def test_every_module_has_a_room():
    homeless = [m for m in MODULES if _room(m) is None and m not in ("statespace", "statespace.__main__")]
    assert not homeless, f"modules outside every room: {homeless}"


def _crossings(edges: dict):
    """(where, target, name, from room, to room) of every import from one room into another; an
    import of the facade (``statespace``) has the target room ``None``."""
    for module, found in edges.items():
        mine = _room(module)
        for line, target, name in found:
            if mine is None or module == "statespace.__main__":
                continue
            theirs = None if target == "statespace" else _room(target)
            if theirs != mine:
                yield f"{_where(module, line)}", target, name, mine, theirs


def arrow_violations(edges: dict) -> list[str]:
    wrong = []
    for where, target, name, mine, theirs in _crossings(edges):
        if theirs is None:
            wrong.append(f"{where} imports the facade (statespace.{name})")
        elif theirs == "statespace.app":
            wrong.append(f"{where} imports the application ({target})")
        elif FLOORS[theirs] >= FLOORS[mine]:
            wrong.append(f"{where}: {mine} imports {theirs} ({target}), against the arrow")
    return wrong


def underscore_violations(edges: dict) -> list[str]:
    wrong = []
    for where, target, name, mine, theirs in _crossings(edges):
        if theirs is None:
            continue
        inner = target[len(theirs):].split(".")
        private = (name or "").startswith("_") and not (name or "").startswith("__")
        if any(p.startswith("_") for p in inner if p) or private:
            wrong.append(f"{where} takes {target}{'.' + name if name else ''} from {theirs}")
    return wrong


def test_imports_follow_the_arrow():
    wrong = arrow_violations(EDGES)
    assert not wrong, "\n".join(wrong)


def test_no_underscore_name_of_another_room():
    wrong = underscore_violations(EDGES)
    assert not wrong, "\n".join(wrong)


def _circles() -> list[list[str]]:
    graph = {m: sorted({t for _, t, _ in edges if t in MODULES and t != m}) for m, edges in EDGES.items()}
    # a package's own __init__ importing its modules is how a package exports: the module importing
    # its package back is the circle, so both arrows stay in the graph
    index, low, stack, on, out, counter = {}, {}, [], set(), [], [0]

    def strong(v):  # Tarjan's strongly connected components
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on.add(v)
        for w in graph[v]:
            if w not in index:
                strong(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                out.append(sorted(comp))

    for v in graph:
        if v not in index:
            strong(v)
    return out


def test_no_import_circle():
    circles = _circles()
    assert not circles, "modules importing each other in a circle:\n" + "\n".join(" <-> ".join(c) for c in circles)


@pytest.mark.parametrize("module", sorted(MODULES))
def test_module_is_at_most_500_lines(module):
    lines = len(MODULES[module].read_text().splitlines())
    assert lines <= MAX_LINES, f"{MODULES[module].relative_to(ROOT)} has {lines} lines (at most {MAX_LINES})"


def test_every_room_says_what_it_holds_and_may_import():
    for room in FLOORS:
        init = ROOT / room.replace(".", "/") / "__init__.py"
        doc = ast.get_docstring(ast.parse(init.read_text())) or ""
        assert len(doc.splitlines()) >= 3 and "import" in doc.lower(), f"{init.relative_to(ROOT)}: no room page"


def test_the_rule_can_fail():
    """The checks see a wrong arrow, the facade, the application and an underscore name in imports
    made up for the test (lines of a real module, whose place names the line)."""
    made_up = {"statespace.model.ranges": [
        (1, "filters.elo", "Elo"),                   # model imports a method: against the arrow
        (2, "statespace", "Games"),                  # the facade
        (3, "statespace.app.cli", "main"),           # the application
        (4, "statespace.data.games", "_private"),    # another room's underscore name
        (5, "statespace._runtime.jit", "kernel"),    # allowed: a lower room's public name
        (6, "statespace.model.numeric", "_clip"),    # allowed: its own room
    ]}
    arrow = arrow_violations(made_up)
    assert len(arrow) == 3 and "against the arrow" in arrow[0] and "facade" in arrow[1] \
        and "application" in arrow[2]
    assert underscore_violations(made_up) == ["statespace/model/ranges.py:4 takes statespace.data.games._private "
                                              "from statespace.data"]


def test_every_package_is_installed():
    """A non-editable install ships only the packages pyproject.toml lists: a new room (a folder with
    an ``__init__.py``) missing there would import from a clone and fail from a wheel."""
    import tomllib

    listed = set(tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]["packages"])
    found = {".".join(p.parent.relative_to(ROOT).parts) for pkg in PACKAGES
             for p in (ROOT / pkg).rglob("__init__.py") if "__pycache__" not in p.parts}
    assert found == listed, f"packages on disk but not in pyproject.toml: {sorted(found - listed)}; " \
                            f"listed but absent: {sorted(listed - found)}"
