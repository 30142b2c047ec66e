"""The front end (pyfront/, the `mlax` package) imports downward: its module-level imports form
no cycle, and an import inside a function remains only where it breaks a cycle or defers a
measured cost, each listed here with its reason (tests/passes/test_deferred_imports.py does the
same below the front end; tests/test_layers.py keeps the layers).

A listed cycle is checked to exist: the module imported inside the function reaches the importer
through module-level imports, so moving the import to the head would close a circle. Once it no
longer does, the import moves to the head and leaves the list. Read with `ast`: importing a
submodule runs its packages' ``__init__`` first, ``from package import name`` counts as the
submodule ``name`` where there is one, and a name a module serves through its PEP 562
``__getattr__`` counts as what that function imports.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Iterator
from functools import cache

from tests.test_layers import MODULES, _layer

FRONT = sorted(m for m in MODULES if _layer(m) == "mlax")

_CORE = ("a cycle: mlax.core builds Tracer on this module (its base class, its avals, its eager "
         "results, its sharding), and this reads the trace back from core")
_OPERATORS = "a cycle: Array's and Tracer's operators and methods are jnp's functions, built on them"
_PRNG = "a cycle: typed key arrays are operands (core) and their methods are jnp's"
_RULES_IN_JNP = ("a cycle: jnp's special functions are custom_jvp functions; these rules and "
                 "defaults are written in jnp")
_REFS = ("a cycle: refs are threaded through transformations by hooks of mlax.refs, which is "
         "built on tracing, batching and autodiff")
_STAGED_JIT = ("a cycle: the transformation stages its function as a jit (mlax.api), and api's "
               "jit is built on this module")
_SCIPY_ON_RANDOM = ("a cycle: mlax.random's samplers are built on mlax.scipy's special functions; "
                    "this draws samples")
_JIT_COST = ("import cost: mlax.api, the jit machinery with the backends' declarations, loads on "
             "the first transformation, not on `import mlax.numpy` (about 40 ms)")
_TABLE_COST = ("import cost: the pass registry imports this package to list passes (mlax-opt runs "
               "without jax); the importer's table and rewrite trace through mlax.lax, ~770 ms")
# (module, imported module) -> why the import waits for a call
DEFERRED = {
    ("mlax.random_impls", "mlax.random"): "a cycle: mlax.random draws keys through the implementations here",
    ("mlax.tracing", "mlax.experimental.checkify"):
        "a cycle: checkify's error mapping traces bodies (tracing, through mlax.numpy)",
    ("mlax.aot", "mlax.backends.xla.executable"):
        "import cost: XLA's executable and mlax -> StableHLO (~50 ms) load when XLA compiles",
    ("mlax.aot", "mlax.jaxpr"): "a cycle: mlax.jaxpr traces through jit (api, which is built on aot)",
    ("mlax.api", "mlax.shape_eval"): "a cycle: eval_shape traces with jit's tracing (api)",
    ("mlax.array_methods", "mlax.core"): _CORE,
    ("mlax.array_methods", "mlax.numpy"): _OPERATORS,
    ("mlax.array_methods", "mlax.numpy.indexing"): _OPERATORS,
    ("mlax.autodiff", "mlax.refs"): _REFS,
    ("mlax.autodiff", "mlax.vjp_object"): "a cycle: vjp_object's vjp is built on autodiff",
    ("mlax.batching", "mlax.refs"): _REFS,
    ("mlax.closure", "mlax.api"): _STAGED_JIT,
    ("mlax.core", "mlax.explicit_sharding"): "a cycle: explicit sharding's rules bind ops (core)",
    ("mlax.custom_derivatives", "mlax.numpy"): _RULES_IN_JNP,
    ("mlax.import_stablehlo", "mlax.import_stablehlo.rewrite"): _TABLE_COST,
    ("mlax.import_stablehlo", "mlax.import_stablehlo.table"): _TABLE_COST,
    ("mlax.lax.solvers", "mlax.autodiff"):
        "import cost: autodiff's vjp is served by mlax.vjp_object, which loads jit (mlax.api, ~40 ms)",
    ("mlax.lax.control_flow", "mlax.api"): _JIT_COST,
    ("mlax.numpy.math_extra", "mlax.numpy.sorting"):
        "a cycle: sorting is built on math_extra; one-argument where is sorting's nonzero",
    ("mlax.numpy.ufuncs", "mlax.shape_eval"): _JIT_COST,
    ("mlax.numpy.util", "mlax.numpy.manipulation"):
        "a cycle: util is the bottom of jnp (asarray); a nested list of tracers is stacked",
    ("mlax.prng", "mlax.core"): _PRNG,
    ("mlax.prng", "mlax.numpy"): _PRNG,
    ("mlax.prng", "mlax.numpy.util"): _PRNG,
    ("mlax.random_distributions", "mlax.nn"): "a cycle: mlax.nn's initializers draw with mlax.random",
    ("mlax.random_arguments", "mlax.random"):
        "a cycle: mlax.random's samplers check their arguments here, keys through its key_data",
    ("mlax.ref_transforms", "mlax.api"): _STAGED_JIT,
    ("mlax.ref_type", "mlax.lax"): "a cycle: lax's control flow threads refs (mlax.refs)",
    ("mlax.ref_type", "mlax.numpy"): "a cycle: lax's control flow threads refs; jnp is built on lax",
    ("mlax.scipy.linalg.householder", "mlax.random"): _SCIPY_ON_RANDOM,
    ("mlax.scipy.special.entropy", "mlax.nn"):
        "a cycle: mlax.nn's log_softmax and co. are built on mlax.scipy.special's logsumexp",
    ("mlax.scipy.stats.kde", "mlax.random"): _SCIPY_ON_RANDOM,
    ("mlax.extend_primitive", "mlax.stablehlo_import"):
        "import cost: the StableHLO importer (its table traces through mlax.lax, ~770 ms) loads for "
        "a user primitive whose lowering is written in StableHLO, not with jax.extend",
    ("mlax.sharding", "mlax.explicit_sharding"):
        "a cycle: explicit sharding is built on meshes; sharding's __getattr__ serves its names",
    ("mlax.sharding_types", "mlax.core"): _CORE,
    ("mlax.staging", "mlax.api"): _STAGED_JIT,
    ("mlax.tracing", "mlax.refs"): _REFS,
}
# Import statements inside functions, all pairs together: one more (a new call of a listed pair)
# fails too; when one moves to the head, lower this.
MOST_IN_FUNCTIONS = 42


def _is_type_checking(node: ast.If) -> bool:
    return "TYPE_CHECKING" in ast.unparse(node.test)


def _named(node: ast.Import | ast.ImportFrom) -> Iterator[tuple[str, str | None]]:
    """(mlax module, name taken from it or None) of each alias of an import statement."""
    if isinstance(node, ast.Import):
        yield from ((alias.name, None) for alias in node.names if alias.name.startswith("mlax"))
    elif node.level == 0 and (node.module or "").startswith("mlax"):
        for alias in node.names:
            sub = f"{node.module}.{alias.name}"
            yield (sub, None) if sub in MODULES else (node.module, alias.name)


@cache
def _tree(module: str) -> ast.Module:
    return ast.parse(MODULES[module].read_text())


@cache
def _served_lazily(module: str, name: str) -> tuple[str, ...]:
    """The modules ``from module import name`` imports through ``module.__getattr__``: an
    ``_ATTRIBUTES`` table's entry, else every import inside that function; none when the module
    binds the name itself."""
    body = _tree(module).body
    getattr_ = next((n for n in body if isinstance(n, ast.FunctionDef) and n.name == "__getattr__"), None)
    if getattr_ is None:
        return ()
    for node in body:
        if isinstance(node, ast.Assign) and ast.unparse(node.targets[0]) == "_ATTRIBUTES":
            table = ast.literal_eval(node.value)
            return (table[name],) if name in table else ()
    bound = {n.name for n in body if isinstance(n, ast.FunctionDef | ast.ClassDef)}
    bound |= {t.id for n in body if isinstance(n, ast.Assign) for t in n.targets if isinstance(t, ast.Name)}
    if name in bound:
        return ()
    return tuple(m for node in ast.walk(getattr_) if isinstance(node, ast.Import | ast.ImportFrom)
                 for m, _ in _named(node) if m in MODULES)


def _loads(importer: str, module: str, name: str | None) -> set[str]:
    """What the import runs first: the module, its packages (those not already running the
    importer) and what ``name`` is served from lazily."""
    parts = module.split(".")
    packages = {".".join(parts[:i]) for i in range(2, len(parts))}
    loaded = {module, *packages, *(_served_lazily(module, name) if name else ())}
    return {m for m in loaded if m in MODULES and m != importer and not importer.startswith(m + ".")}


def _statements(module: str) -> Iterator[tuple[ast.Import | ast.ImportFrom, bool]]:
    """Every import statement of a module outside ``if TYPE_CHECKING:``, and whether it runs in a
    function."""
    def walk(node: ast.AST, in_function: bool) -> Iterator[tuple[ast.Import | ast.ImportFrom, bool]]:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.Import | ast.ImportFrom):
                yield child, in_function
            elif not (isinstance(child, ast.If) and _is_type_checking(child)):
                yield from walk(child, in_function or isinstance(child, ast.FunctionDef | ast.AsyncFunctionDef
                                                                   | ast.Lambda))
    return walk(_tree(module), False)


@cache
def _graph() -> dict[str, set[str]]:
    """Module -> the front-end modules its module-level imports load."""
    return {module: {m for node, in_function in _statements(module) if not in_function
                     for target, name in _named(node) for m in _loads(module, target, name)
                     if _layer(m) == "mlax"} for module in FRONT}


def _in_functions() -> int:
    """How many import statements of mlax modules run inside functions."""
    return sum(in_function and any(True for _ in _named(node))
               for module in FRONT for node, in_function in _statements(module))


def _deferred() -> dict[tuple[str, str], set[str]]:
    """(module, imported module) of every mlax import inside a function -> what it loads."""
    found: dict[tuple[str, str], set[str]] = {}
    for module in FRONT:
        for node, in_function in _statements(module):
            for target, name in _named(node) if in_function else ():
                if target != module:
                    found.setdefault((module, target), set()).update(_loads(module, target, name))
    return found


def _reaches(starts: set[str], goal: str) -> bool:
    graph, seen, stack = _graph(), set(), list(starts)
    while stack:
        module = stack.pop()
        if module == goal:
            return True
        if module not in seen:
            seen.add(module)
            stack.extend(graph.get(module, ()))
    return False


def _cycle() -> list[str] | None:
    """One cycle of the module-level graph, or None."""
    graph, state, path = _graph(), dict.fromkeys(FRONT, 0), []

    def visit(module: str) -> list[str] | None:
        state[module] = 1
        path.append(module)
        for target in sorted(graph[module]):
            if state.get(target) == 1:
                return path[path.index(target):] + [target]
            if state.get(target) == 0 and (found := visit(target)):
                return found
        state[module] = 2
        path.pop()
        return None

    return next((found for module in FRONT if state[module] == 0 and (found := visit(module))), None)


def test_module_level_imports_form_no_cycle() -> None:
    cycle = _cycle()
    assert cycle is None, "a cycle of module-level imports: " + " -> ".join(cycle or ())


def test_every_deferred_import_has_a_reason() -> None:
    unlisted = sorted(_deferred().keys() - DEFERRED.keys())
    assert not unlisted, ("imports inside functions without a reason in DEFERRED (move them to the "
                          "module's head, or list why they wait):\n"
                          + "\n".join(f"{m} imports {t}" for m, t in unlisted))


def test_the_imports_in_functions_do_not_grow() -> None:
    count = _in_functions()
    assert count <= MOST_IN_FUNCTIONS, (f"{count} imports inside functions, at most {MOST_IN_FUNCTIONS}: "
                                        "move the new one to the module's head")
    assert count == MOST_IN_FUNCTIONS, f"{count} imports inside functions now: lower MOST_IN_FUNCTIONS to it"


def test_every_reason_is_a_cycle_or_a_measured_cost() -> None:
    """An import waits for a call only to break a cycle (checked below) or to defer an import
    cost, stated with its measured size."""
    vague = sorted(f"{m} imports {t}: {reason}" for (m, t), reason in DEFERRED.items()
                   if not reason.startswith("a cycle")
                   and not (reason.startswith("import cost") and re.search(r"~?\d+ ms", reason)))
    assert not vague, "reasons that are neither a cycle nor a measured cost:\n" + "\n".join(vague)


def test_every_listed_import_still_waits() -> None:
    """Once an import moves to the head (or goes), it leaves the list."""
    assert not DEFERRED.keys() - _deferred().keys()


def test_a_listed_cycle_is_a_cycle() -> None:
    """An import kept for a cycle would close one at the module's head; one that would not is
    moved there (the cycle is gone)."""
    deferred = _deferred()
    gone = sorted(f"{m} imports {t}" for (m, t), reason in DEFERRED.items()
                  if reason.startswith("a cycle") and (m, t) in deferred and not _reaches(deferred[m, t], m))
    assert not gone, "no cycle any more; move these imports to the module's head:\n" + "\n".join(gone)
