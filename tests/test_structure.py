"""The package's shape: no import circles, no private names imported across modules, no wide kernels."""
import ast
import pathlib

PACKAGE = pathlib.Path(__file__).resolve().parent.parent / "fastboost"


def _modules():
    """{dotted module name: path} of every module of the package."""
    out = {}
    for path in PACKAGE.rglob("*.py"):
        parts = list(path.relative_to(PACKAGE.parent).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts = parts[:-1]
        out[".".join(parts)] = path
    return out


def _resolve(module, node):
    """The dotted name a ``from ... import`` statement in ``module`` reads from."""
    if node.level == 0:
        return node.module or ""
    is_package = _modules()[module].name == "__init__.py"
    base = module.split(".")
    base = base if is_package else base[:-1]
    base = base[:len(base) - (node.level - 1)]
    return ".".join(base + ([node.module] if node.module else []))


def _imports(module, path):
    """[(imported module, [names], line)] of every import in the module, at any depth (lazy ones too)."""
    mods = _modules()
    out = []
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            out += [(a.name, [], node.lineno) for a in node.names if a.name.split(".")[0] == "fastboost"]
        elif isinstance(node, ast.ImportFrom):
            source = _resolve(module, node)
            if source.split(".")[0] != "fastboost":
                continue
            names = [a.name for a in node.names]
            submodules = [f"{source}.{n}" for n in names if f"{source}.{n}" in mods]
            plain = [n for n in names if f"{source}.{n}" not in mods]
            if plain:
                out.append((source, plain, node.lineno))
            out += [(m, [], node.lineno) for m in submodules]
    return out


def _graph():
    mods = _modules()
    graph = {m: set() for m in mods}
    for m, path in mods.items():
        for source, _, _ in _imports(m, path):
            # the module itself, or the nearest enclosing module of the package that exists
            while source and source not in mods:
                source = source.rpartition(".")[0]
            if source and source != m:
                graph[m].add(source)
    return graph


def _cycles(graph):
    """Strongly connected components with more than one module (Tarjan), each sorted."""
    index, low, stack, on, out = {}, {}, [], set(), []

    def visit(v):
        index[v] = low[v] = len(index)
        stack.append(v)
        on.add(v)
        for w in graph[v]:
            if w not in index:
                visit(w)
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

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return out


def test_the_scanner_finds_a_circle():
    assert _cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]
    assert _cycles({"a": {"b"}, "b": set()}) == []


def test_no_import_circles():
    assert _cycles(_graph()) == []


def test_no_private_names_across_modules():
    """What another module needs is public there: ``from x import _name`` only for private modules."""
    offenders = []
    for m, path in _modules().items():
        for source, names, line in _imports(m, path):
            offenders += [f"{path.relative_to(PACKAGE.parent)}:{line}: {n} from {source}"
                          for n in names if n.startswith("_") and not n.startswith("__")]
    assert offenders == []
