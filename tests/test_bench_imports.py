"""The modules of ``fastboost bench`` import each other without circles (at module level or inside functions), and
take no private name from one another."""
import ast
from pathlib import Path

import fastboost.bench

BENCH = Path(fastboost.bench.__file__).parent
MODULES = {p.stem for p in BENCH.glob("*.py")}


def _sibling_imports(path):
    """(sibling module, imported name or None) for every import of ``path`` naming a module of the package."""
    out = []
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.ImportFrom):
            if node.level == 1:
                base = node.module
            elif node.level == 0 and (node.module or "").startswith("fastboost.bench"):
                base = node.module[len("fastboost.bench."):] or None if node.module != "fastboost.bench" else None
            else:
                continue
            for alias in node.names:
                if base is None:  # from . import x
                    if alias.name in MODULES:
                        out.append((alias.name, None))
                    else:
                        out.append(("__init__", alias.name))
                else:
                    out.append((base.split(".")[0], alias.name))
        elif isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name.startswith("fastboost.bench."):
                    out.append((alias.name.split(".")[2], None))
    return out


def _graph():
    return {name: {m for m, _ in _sibling_imports(BENCH / f"{name}.py") if m != name} for name in MODULES}


def test_no_import_circles():
    graph = _graph()
    graph.pop("__init__")  # the package imports its modules to re-export their names; none imports it back
    assert not any("__init__" in deps for deps in graph.values())
    done, path = set(), []

    def visit(name):
        assert name not in path, f"import circle: {' -> '.join(path[path.index(name):] + [name])}"
        if name in done:
            return
        path.append(name)
        for dep in sorted(graph.get(name, ())):
            visit(dep)
        path.pop()
        done.add(name)

    for name in sorted(graph):
        visit(name)


def test_the_scan_sees_a_circle(tmp_path, monkeypatch):
    """The scan is not vacuous: the modules do import each other, and it reads imports inside functions."""
    graph = _graph()
    assert "adapters" in graph["tasks"] and "tasks" in graph["child"]
    code = "def f():\n    from .cli import run\n    from fastboost.bench.measure import _hidden\n"
    (tmp_path / "x.py").write_text(code)
    assert _sibling_imports(tmp_path / "x.py") == [("cli", "run"), ("measure", "_hidden")]


def test_no_private_names_across_modules():
    private = [(path.name, module, name) for path in BENCH.glob("*.py") for module, name in _sibling_imports(path)
               if name is not None and name.startswith("_") and name not in MODULES]
    assert private == []
