"""The package's shape: no import cycle among sparsedp's modules.

Every ``import`` and ``from ... import`` of the source tree counts, a deferred one
(inside a function) too: a cycle that only a deferred import keeps from failing
is still a cycle of the design.
"""
import ast
from pathlib import Path

SOURCE = Path(__file__).resolve().parents[1] / "sparsedp"


def module_graph(root):
    """``{module: set of sparsedp modules it imports}`` from the source files."""
    files = {}
    for path in root.rglob("*.py"):
        parts = path.relative_to(root.parent).with_suffix("").parts
        name = ".".join(parts[:-1] if parts[-1] == "__init__" else parts)
        files[name] = path
    graph = {}
    for name, path in files.items():
        package = name if path.name == "__init__.py" else name.rpartition(".")[0]
        deps = set()
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.ImportFrom):
                if node.level:
                    base = package.split(".")[:len(package.split(".")) - node.level + 1]
                    target = ".".join(base + ([node.module] if node.module else []))
                else:
                    target = node.module or ""
                for alias in node.names:
                    full = f"{target}.{alias.name}"
                    deps.add(full if full in files else target)
            elif isinstance(node, ast.Import):
                deps.update(alias.name for alias in node.names)
        graph[name] = {d for d in deps if d in files and d != name}
    return graph


def cycles(graph):
    """Each cycle once, as the list of its modules (Tarjan's strongly connected parts)."""
    index, low, stack, on_stack, found = {}, {}, [], set(), []

    def visit(v):
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in sorted(graph[v]):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            part = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                part.append(w)
                if w == v:
                    break
            if len(part) > 1:
                found.append(sorted(part))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return found


def test_the_graph_sees_the_package():
    graph = module_graph(SOURCE)
    assert "sparsedp.solvers._base" in graph
    assert "sparsedp.solvers._result" in graph["sparsedp.solvers._base"]


def test_cycles_are_found():
    graph = {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}
    assert cycles(graph) == [["a", "b", "c"]]
    assert cycles({"a": {"b"}, "b": set()}) == []


def test_no_import_cycle_in_sparsedp():
    found = cycles(module_graph(SOURCE))
    assert not found, "import cycles: " + "; ".join(" <-> ".join(c) for c in found)


# ---- one place per solver, and modules of a readable size ------------------------------
#: the solvers' names and keys as the source spells them (the registry's, issue 30)
SOLVER_NAMES = {"dp_cd", "dp_gcd", "dp_sgd", "dp_scd", "cd", "gcd", "sgd", "scd"}


def solver_name_tests(path):
    """``(line, text)`` of every comparison, membership test or dict key that names a
    solver in ``path`` (docstrings and messages, not compared, are not name tests)."""
    found = []
    for node in ast.walk(ast.parse(path.read_text())):
        named = []
        if isinstance(node, ast.Compare):
            named = [node.left, *node.comparators]
            named += [e for c in node.comparators if isinstance(c, (ast.Tuple, ast.List, ast.Set))
                      for e in c.elts]
        elif isinstance(node, ast.Dict):
            named = [k for k in node.keys if k is not None]
        if any(isinstance(n, ast.Constant) and n.value in SOLVER_NAMES for n in named):
            found.append((node.lineno, ast.unparse(node)[:80]))
    return found


def test_name_tests_are_found():
    import tempfile
    with tempfile.TemporaryDirectory() as tmp:
        planted = Path(tmp) / "planted.py"
        planted.write_text('def f(solver):\n    """dp_cd or cd."""\n'
                           '    if solver == "gcd":\n        return {"dp_sgd": 1}\n'
                           '    return solver in ("cd", "x")\n')
        assert sorted(line for line, _ in solver_name_tests(planted)) == [3, 4, 5]


def test_no_solver_name_test_outside_the_solvers():
    """Consumers ask the specs (sparsedp.solvers.REGISTRY), never a solver's name."""
    offenders = {str(path.relative_to(SOURCE)): found
                 for path in SOURCE.rglob("*.py") if "solvers" not in path.parts
                 for found in [solver_name_tests(path)] if found}
    assert not offenders, offenders


def test_no_module_over_700_lines():
    sizes = {str(p.relative_to(SOURCE)): len(p.read_text().splitlines())
             for pattern in ("*.py", "*.pyx", "*.pxd") for p in SOURCE.rglob(pattern)}
    assert sizes and not {name: n for name, n in sizes.items() if n > 700}
