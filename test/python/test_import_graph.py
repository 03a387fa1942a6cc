"""The import graph of mlwarp's own modules, read from the source (module-level and function-local imports):
no cycles, the compiler and the runtime below the user API, and function-local imports only where they keep
a heavy or optional dependency (MLIR, the compiler, torch, jax, CUDA) out of `import mlwarp`.

Such an import says so in a comment (`# lazy: MLIR`, `# lazy: torch`, ...: what it keeps out).

Edges follow what Python runs: `import a.b` and `from a.b import name` are edges to `a.b`; `from a import b`
is an edge to the submodule `a.b` when there is one, else to the package `a`.
"""

import ast
import pathlib
import pkgutil
import subprocess
import sys
import tomllib
import types

ROOT = pathlib.Path(__file__).resolve().parents[2]
# The package's folders (the design card's layout): python/mlwarp is `mlwarp`, compiler/ is `mlwarp.compiler`, ...
with open(ROOT / "pyproject.toml", "rb") as _f:
    PACKAGE_DIRS = tomllib.load(_f)["tool"]["setuptools"]["package-dir"]

# Packages below the user API: they import each other and mlwarp.core, never the modules at mlwarp's top.
LOWER = ("mlwarp.core", "mlwarp.compiler", "mlwarp.runtime", "mlwarp.tools")

# Heavy or optional dependencies `import mlwarp` must not load: a module that imports one of these at its top,
# directly or through mlwarp modules, is heavy, and a light module may import it inside a function.
HEAVY = ("mlir", "torch", "jax", "cuda", "mpi4py", "paddle")

# Import cycles being paid off (none left): a cycle not listed here fails.
KNOWN_CYCLES = []

# Function-local imports that defer something on purpose although it imports nothing heavy, and why.
DEFERRED_ON_PURPOSE = {
    ("mlwarp", "mlwarp._api"): "the package loads its user API on the first use of a name (PEP 562), so that "
                               "`import mlwarp.compiler...` and `import mlwarp.runtime` load only what they import",
    ("mlwarp", "mlwarp.kernels.fingerprint"): "the API's first use starts the cache key's source stats in a thread "
                                              "before importing the API; a module of the API layer, loaded with it",
    ("mlwarp._api", "mlwarp.geometry.isosurface"): "wp.geometry loads on the first use of one of its names "
                                                   "(_api._lazy_names: its tables and volume functions cost ~60 ms "
                                                   "of import); wp.MarchingCubes is one",
}

# Function-local imports that defer nothing heavy (workarounds of the cycles above), per module: more fails
# (lower a number once they are hoisted).
KNOWN_FUNCTION_LOCAL = {
    "mlwarp.library.builtins": 1,
    "mlwarp.compiler.builtins.composite_pyscope": 2,
    "mlwarp.compiler.builtins.derivatives": 3,
    "mlwarp.compiler.builtins.pyscope": 1,
    "mlwarp.compiler.frontend.resolve": 1,
    "mlwarp.compiler.lowering.composites_to_vector": 4,
    "mlwarp.compiler.targets.cuda.gpu_kernel": 1,
    "mlwarp.compiler.passes.autodiff_ir": 2,
    "mlwarp.compiler.passes.autodiff_jvp": 2,
    "mlwarp.launching.cuda_compile": 1,
    "mlwarp.kernels.func": 1,
    "mlwarp.kernels.func_grad": 1,
    "mlwarp.interop.jax": 4,
    "mlwarp.autodiff.jvp": 1,
    "mlwarp.launching.stream": 1,
    "mlwarp.kernels.struct": 3,
    "mlwarp.tools.opt": 1,
}

def _modules() -> dict:
    out = {}
    for package, folder in PACKAGE_DIRS.items():
        for path in (ROOT / folder).rglob("*.py"):
            parts = path.relative_to(ROOT / folder).with_suffix("").parts
            if parts[-1] == "__init__":
                parts = parts[:-1]
            out[".".join((package, *parts))] = path
    return out


def _targets(module: str, is_package: bool, node, modules) -> list:
    if isinstance(node, ast.Import):
        return [alias.name for alias in node.names]
    base = module if is_package else module.rpartition(".")[0]
    if node.level:
        base = ".".join(base.split(".")[: len(base.split(".")) - node.level + 1])
        target = f"{base}.{node.module}" if node.module else base
    else:
        target = node.module
    submodules = [f"{target}.{a.name}" for a in node.names if f"{target}.{a.name}" in modules]
    names = [a.name for a in node.names if f"{target}.{a.name}" not in modules]
    return submodules + ([target] if names else [])


class Graph:
    """mlwarp's modules and their imports: `edges` (every import), `top` (module-level ones only), `heavy_deps`
    (the HEAVY packages a module imports at its top) and `function_local` ((module, line, target, comment))."""

    def __init__(self):
        self.modules = _modules()
        self.edges = {m: set() for m in self.modules}
        self.top = {m: set() for m in self.modules}
        self.heavy_deps = {m: set() for m in self.modules}
        self.function_local = []
        for module, path in self.modules.items():
            text = path.read_text()
            tree = ast.parse(text)
            in_function = {id(n) for f in ast.walk(tree) if isinstance(f, (ast.FunctionDef, ast.AsyncFunctionDef))
                           for n in ast.walk(f) if isinstance(n, (ast.Import, ast.ImportFrom))}
            for node in ast.walk(tree):
                if isinstance(node, (ast.Import, ast.ImportFrom)):
                    local = id(node) in in_function
                    for target in _targets(module, path.name == "__init__.py", node, self.modules):
                        self._add(module, target, local, node, text.splitlines())

    def _add(self, module, target, local, node, lines):
        if target.split(".")[0] != "mlwarp":
            if target.split(".")[0] in HEAVY:
                if local:
                    self.function_local.append((module, node.lineno, target, _comment(lines, node)))
                else:
                    self.heavy_deps[module].add(target.split(".")[0])
            return
        while target not in self.modules:  # `from mlwarp.x import y` where y is a name of mlwarp.x
            target = target.rpartition(".")[0]
        if target == module:
            return
        self.edges[module].add(target)
        if local:
            self.function_local.append((module, node.lineno, target, _comment(lines, node)))
        else:
            self.top[module].add(target)

    def loads(self, module) -> set:
        """What importing `module` runs at module level (its parent packages and their imports included)."""
        seen, todo = set(), [module]
        while todo:
            m = todo.pop()
            if m in seen:
                continue
            seen.add(m)
            todo.extend(self.top[m])
            parent = m.rpartition(".")[0]
            if parent:
                todo.append(parent)
        return seen

    def is_heavy(self, module) -> bool:
        return any(self.heavy_deps[m] for m in self.loads(module))


def _graph():
    g = Graph()
    return g.edges, g.function_local


def _comment(lines, node) -> str:
    """The comment on an import's lines, or on the comment line just above it."""
    above = lines[node.lineno - 2].strip() if node.lineno > 1 else ""
    here = [line.partition("#")[2] for line in lines[node.lineno - 1: node.end_lineno]]
    return " ".join(([above.lstrip("#")] if above.startswith("#") else []) + here).strip()


def _cycles(edges) -> list:
    """The strongly connected components with more than one module (Tarjan, iterative)."""
    index, low, stack, on_stack, out = {}, {}, [], set(), []
    for root in sorted(edges):
        if root in index:
            continue
        work = [(root, iter(sorted(edges[root])))]
        index[root] = low[root] = len(index)
        stack.append(root)
        on_stack.add(root)
        while work:
            v, children = work[-1]
            for w in children:
                if w not in index:
                    index[w] = low[w] = len(index)
                    stack.append(w)
                    on_stack.add(w)
                    work.append((w, iter(sorted(edges[w]))))
                    break
                if w in on_stack:
                    low[v] = min(low[v], index[w])
            else:
                work.pop()
                if work:
                    low[work[-1][0]] = min(low[work[-1][0]], low[v])
                if low[v] == index[v]:
                    component = []
                    while True:
                        w = stack.pop()
                        on_stack.discard(w)
                        component.append(w)
                        if w == v:
                            break
                    if len(component) > 1:
                        out.append(sorted(component))
    return out


def _a_cycle(component, edges) -> list:
    """One concrete cycle inside a strongly connected component, for the failure message."""
    members = set(component)
    path, seen = [component[0]], {component[0]: 0}
    while True:
        nxt = sorted(w for w in edges[path[-1]] if w in members)
        back = [w for w in nxt if w in seen]
        if back:
            return path[seen[back[0]]:] + [back[0]]
        path.append(nxt[0])
        seen[path[-1]] = len(path) - 1


def test_the_graph_sees_the_package():
    edges, function_local = _graph()
    assert "mlwarp.core.types" in edges and "mlwarp.compiler.driver" in edges
    assert "mlwarp.core.types" in edges["mlwarp.core.vector"]
    assert "mlwarp._api" in edges["mlwarp"] and "mlwarp.kernels.kernel" in edges["mlwarp._api"]
    g = Graph()
    assert g.is_heavy("mlwarp.compiler.driver") and not g.is_heavy("mlwarp.core.types")
    assert not g.is_heavy("mlwarp.kernels.kernel") and _deferring(g, "mlwarp.kernels.kernel", "mlwarp.compiler.driver")
    assert not _deferring(g, "mlwarp.kernels.kernel", "mlwarp.core.types")


def test_the_cycle_finder_finds_cycles():
    edges = {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}
    assert _cycles(edges) == [["a", "b", "c"]]
    assert _a_cycle(["a", "b", "c"], edges) == ["a", "b", "c", "a"]
    assert _cycles({"a": {"b"}, "b": set()}) == []


def test_no_import_cycles():
    edges, _ = _graph()
    cycles = _cycles(edges)
    new = [c for c in cycles if sorted(c) not in [sorted(k) for k in KNOWN_CYCLES]]
    assert not new, "import cycles:\n" + "\n".join(
        f"  {len(c)} modules, e.g. {' -> '.join(_a_cycle(c, edges))}: {c}" for c in new)


def test_compiler_and_runtime_import_no_api_module():
    edges, _ = _graph()
    upward = sorted(f"{m} -> {t}" for m, targets in edges.items() if m.startswith(LOWER)
                    for t in targets if not t.startswith(LOWER))
    assert not upward, "the lower layers import the user API:\n  " + "\n  ".join(upward)


def test_core_imports_nothing_else_of_mlwarp():
    edges, _ = _graph()
    up = sorted(f"{m} -> {t}" for m, ts in edges.items() if m.startswith("mlwarp.core")
                for t in ts if not t.startswith("mlwarp.core"))
    assert not up, "\n".join(up)


def _deferring(g, module, target) -> bool:
    """A function-local import that keeps something heavy out of a light module."""
    if (module, target) in DEFERRED_ON_PURPOSE:
        return True
    heavy_target = target.split(".")[0] in HEAVY or g.is_heavy(target)
    return heavy_target and not g.is_heavy(module)


def test_function_local_imports_defer_heavy_dependencies_and_say_so():
    g = Graph()
    silent = sorted({f"{m}:{line} imports {t}" for m, line, t, comment in g.function_local
                     if _deferring(g, m, t) and not comment})
    assert not silent, ("function-local imports that keep MLIR, torch, jax or CUDA out of `import mlwarp` "
                        "say so in a comment:\n  " + "\n  ".join(silent))
    counts = {}
    for m, line, t, comment in g.function_local:
        if not _deferring(g, m, t):
            counts.setdefault(m, []).append(f"{m}:{line} imports {t}")
    grown = [f"{m}: {len(v)} > {KNOWN_FUNCTION_LOCAL.get(m, 0)}:\n    " + "\n    ".join(v)
             for m, v in sorted(counts.items()) if len(v) > KNOWN_FUNCTION_LOCAL.get(m, 0)]
    assert not grown, ("function-local imports that defer nothing heavy (import at the top of the module; a "
                       "cycle means some code belongs in a lower module):\n  " + "\n  ".join(grown))


def test_import_mlwarp_loads_nothing_heavy():
    g = Graph()
    heavy = sorted(f"{m} imports {sorted(g.heavy_deps[m])}" for m in g.loads("mlwarp") if g.heavy_deps[m])
    assert not heavy, "\n".join(heavy)


def _loaded_by(statement: str) -> list:
    code = f"{statement}\nimport sys\nprint(sorted(m for m in sys.modules if m.startswith('mlwarp')))"
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    return eval(r.stdout.strip().splitlines()[-1])


def test_the_lower_layers_load_without_the_user_api():
    for statement in ("import mlwarp.compiler.passes.registry", "import mlwarp.runtime", "import mlwarp.core.types"):
        loaded = _loaded_by(statement)
        api = [m for m in loaded if m not in ("mlwarp", "mlwarp._source_layout") and not m.startswith(LOWER)]
        assert not api, f"`{statement}` loads the user API: {api}"
    # the registry's declarations (core.config), and the package's compiler/__init__: insert.py with the pipeline
    # text parser and the stage tables it checks insertion points against (MLIR-free: targets, cpu/, cuda/, host, and
    # the CPU library step's native toolchain)
    assert len(_loaded_by("import mlwarp.compiler.passes.registry")) <= 22  # + the source layout finder


def test_the_package_binds_the_api_names_over_its_submodules():
    import mlwarp

    shadowed = {m.name for m in pkgutil.iter_modules(mlwarp.__path__)
                if not isinstance(getattr(mlwarp, m.name, None), types.ModuleType)}
    shadowed -= {m.name for m in pkgutil.iter_modules(mlwarp.__path__) if getattr(mlwarp, m.name, None) is None}
    assert shadowed == mlwarp._SHADOWED
    # importing such a submodule first leaves the API's name in place (a fresh process: nothing loaded yet)
    code = ("import mlwarp.launching.launch, mlwarp.config, mlwarp.kernels.struct\nimport mlwarp as wp\n"
            "print(callable(wp.launch), type(wp.config).__name__, callable(wp.struct), 'vec3' in dir(wp))")
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    assert r.stdout.split() == ["True", "_Config", "True", "True"]
