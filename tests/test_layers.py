"""The package import graph: every ``import`` of every module under ``src/skillrag`` (module level and
inside functions alike: a lazy import is still an arrow) points to a package below it, so the graph has
no cycle. The order is the one of ARCHITECTURE.md (``text`` and ``workspace`` at the bottom, ``cli`` and
``service`` at the top); ``skillrag/__init__.py`` is the front door above everything, imported by nobody
inside the package.
"""

from __future__ import annotations

import ast
from collections import defaultdict
from pathlib import Path

import pytest

SRC = Path(__file__).resolve().parents[1] / "src" / "skillrag"

#: Bottom first. A package may import the packages of a lower rank only (never one of its own rank).
LAYERS: list[set[str]] = [
    {"errors", "_version", "demo_data", "skills_builtin"},  # root modules and package data
    {"workspace", "text", "tracing"},
    {"models"},
    {"corpus"},
    {"wiki"},
    {"search"},
    {"skill"},
    {"harness", "evidence"},
    {"evaluation", "review"},
    {"service", "demo"},
    {"cli"},
    {"__init__"},  # the front door
]
RANK = {pkg: n for n, layer in enumerate(LAYERS) for pkg in layer}


def _module_name(path: Path) -> list[str]:
    parts = list(path.relative_to(SRC.parent).with_suffix("").parts)
    return parts[:-1] if parts[-1] == "__init__" else parts


def _unit(parts: list[str]) -> str:
    """The package (or root module) a dotted ``skillrag...`` name belongs to."""
    return parts[1] if len(parts) > 1 else "__init__"


def _is_unit(name: str) -> bool:
    return (SRC / name / "__init__.py").is_file() or (SRC / f"{name}.py").is_file()


def import_edges() -> dict[tuple[str, str], list[str]]:
    """``(importer, imported) -> ["file:line", ...]`` over every import statement of the package."""
    edges: dict[tuple[str, str], list[str]] = defaultdict(list)
    for path in sorted(SRC.rglob("*.py")):
        mod = _module_name(path)
        package = mod if path.name == "__init__.py" else mod[:-1]
        src = _unit(mod) if path.parent != SRC else (mod[-1] if path.name != "__init__.py" else "__init__")
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), filename=str(path))):
            targets: list[list[str]] = []
            if isinstance(node, ast.Import):
                targets = [a.name.split(".") for a in node.names]
            elif isinstance(node, ast.ImportFrom):
                base = (package[: len(package) - node.level + 1] if node.level else [])
                full = base + (node.module.split(".") if node.module else [])
                if full == ["skillrag"]:  # from skillrag import wiki (a package) / __version__ (the root's)
                    targets = [["skillrag", a.name] if _is_unit(a.name) else ["skillrag"] for a in node.names]
                else:
                    targets = [full]
            for t in targets:
                if not t or t[0] != "skillrag":
                    continue
                dst = _unit(t)
                if dst != src:
                    edges[(src, dst)].append(f"{path.relative_to(SRC)}:{node.lineno}")
    return edges


def test_every_package_has_a_layer() -> None:
    units = {p.name for p in SRC.iterdir() if p.is_dir() and (p / "__init__.py").is_file()}
    units |= {p.stem for p in SRC.glob("*.py") if p.name != "__init__.py"}
    assert units - set(RANK) == set(), "add the new package to LAYERS (and to ARCHITECTURE.md)"


def test_imports_point_down_the_layers() -> None:
    edges = import_edges()
    assert edges, "the walk found no imports at all"
    wrong = [f"{a} -> {b} ({', '.join(where[:3])})" for (a, b), where in sorted(edges.items())
             if RANK.get(b, -1) >= RANK.get(a, -1)]
    assert not wrong, "imports against the layer order:\n" + "\n".join(wrong)


def test_the_import_graph_has_no_cycle() -> None:
    graph: dict[str, set[str]] = defaultdict(set)
    for a, b in import_edges():
        graph[a].add(b)
    state: dict[str, int] = {}

    def visit(node: str, path: list[str]) -> list[str] | None:
        state[node] = 1
        for nxt in sorted(graph[node]):
            if state.get(nxt) == 1:
                loop = [*path, node]
                return [*loop[loop.index(nxt):], nxt]
            if nxt not in state and (found := visit(nxt, [*path, node])):
                return found
        state[node] = 2
        return None

    for start in sorted(graph):
        if start not in state:
            cycle = visit(start, [])
            assert cycle is None, " -> ".join(cycle)


@pytest.mark.parametrize("code,edge", [
    ("def f():\n    from skillrag.search import SearchFilters\n", ("corpus", "search")),
    ("import skillrag.wiki.layer as l\n", ("corpus", "wiki")),
    ("def f():\n    from skillrag import wiki\n", ("corpus", "wiki")),
    ("from .. import errors\n", None),
])
def test_the_walk_sees_lazy_and_relative_imports(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                 code: str, edge: tuple[str, str] | None) -> None:
    """The walk itself: a function-level import and ``from skillrag import pkg`` are arrows too."""
    root = tmp_path / "skillrag"
    (root / "corpus").mkdir(parents=True)
    (root / "__init__.py").write_text("")
    (root / "corpus" / "__init__.py").write_text("")
    (root / "corpus" / "x.py").write_text(code)
    (root / "wiki").mkdir()
    (root / "wiki" / "__init__.py").write_text("")
    (root / "errors.py").write_text("")
    monkeypatch.setattr(f"{__name__}.SRC", root)
    edges = import_edges()
    if edge is None:
        assert ("corpus", "errors") in edges
    else:
        assert edge in edges and edges[edge] == ["corpus/x.py:" + str(code.count("\n", 0, code.index("import")) + 1)]
