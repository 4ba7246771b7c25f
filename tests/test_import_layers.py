"""The package's layers: no import runs from a lower layer up to a higher one, and no circle.

The layers, lowest first (a package may import from packages of *lower* layers only; packages on
one layer do not import each other):

0. ``errors``, ``text_raster``: leaves with no distrl imports; then ``plugins`` (extension-point
   names, which the schema checks) and ``extras`` (optional dependencies by name).
1. ``core`` (actions, observations, tasks, trajectories, faults, seeds), ``config`` (the schema).
2. ``replay`` (buffers and samplers), ``store`` (the Parquet store), ``judges`` (success
   judges), ``agents`` (scripted agents), ``logs`` (progress lines, scalar trackers).
3. ``envs`` (device backends; a backend may ask a judge), ``policies``.
4. ``algos`` (losses over policies and replay windows), ``fakeadb`` (a fake adb server built on
   PhoneSim).
5. ``runtime``: the workers, replay service, learner, the training loop and its placements.
6. ``bench`` (benchmarks over runs), ``viewer`` (reports of run folders).
7. ``cli``.

Every import counts, including those inside functions (a lazy import still runs upward when it
runs). Circles are checked between modules over the imports made at import time (module level,
outside ``if TYPE_CHECKING``), which are the ones a circle breaks.
"""

from __future__ import annotations

import ast
from pathlib import Path

import distrl

LAYERS: dict[str, float] = {
    "errors": 0,
    "text_raster": 0,
    "plugins": 0.5,
    "extras": 0.5,
    "logs": 2,
    "torch_files": 1,
    "core": 1,
    "config": 1,
    "replay": 2,
    "store": 2,
    "judges": 2,
    "agents": 2,
    "envs": 3,
    "policies": 3,
    "algos": 4,
    "fakeadb": 4,
    "runtime": 5,
    "bench": 6,
    "viewer": 6,
    "cli": 7,
}

ROOT = Path(distrl.__file__).parent


def _module_name(path: Path) -> str:
    parts = list(path.relative_to(ROOT.parent).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def _imports(tree: ast.Module, module: str, is_package: bool) -> list[tuple[str, int, bool]]:
    """(imported distrl module, line, made at import time) for every import in ``tree``."""
    found: list[tuple[str, int, bool]] = []
    eager: set[int] = set()
    for node in tree.body:  # module level, outside ``if TYPE_CHECKING:``
        if isinstance(node, ast.Import | ast.ImportFrom):
            eager.add(id(node))
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:  # relative: resolve against this module's package
                package = module.split(".")
                package = package if is_package else package[:-1]
                base = ".".join(package[: len(package) - node.level + 1] + ([base] if base else []))
            names = [base] + [f"{base}.{alias.name}" for alias in node.names]
        else:
            continue
        for name in names:
            if name == "distrl" or name.startswith("distrl."):
                found.append((name, node.lineno, id(node) in eager))
    return found


def _graph() -> tuple[dict[str, list[tuple[str, int, bool]]], set[str]]:
    modules: dict[str, list[tuple[str, int, bool]]] = {}
    for path in sorted(ROOT.rglob("*.py")):
        module = _module_name(path)
        tree = ast.parse(path.read_text(), str(path))
        modules[module] = _imports(tree, module, path.name == "__init__.py")
    return modules, set(modules)


def _layer(module: str) -> tuple[str, float] | None:
    parts = module.split(".")
    if len(parts) < 2:
        return None  # the package root itself
    return parts[1], LAYERS[parts[1]]


def test_every_subpackage_has_a_layer() -> None:
    packages = {p.name for p in ROOT.iterdir() if (p / "__init__.py").is_file()}
    modules = {p.stem for p in ROOT.glob("*.py") if p.name != "__init__.py"}
    assert packages | modules == set(LAYERS)


def test_no_import_runs_up_or_across_a_layer() -> None:
    modules, _ = _graph()
    wrong = []
    for module, imports in modules.items():
        here = _layer(module)
        for target, line, _eager in imports:
            there = _layer(target)
            if here is None or there is None or here[0] == there[0]:
                continue
            if there[1] >= here[1]:
                wrong.append(f"{module}:{line} imports {target} (layer {there[1]} >= {here[1]})")
    assert not wrong, "\n".join(wrong)


def test_no_import_circle() -> None:
    modules, known = _graph()
    edges: dict[str, set[str]] = {}
    for module, imports in modules.items():
        targets = set()
        for target, _line, eager in imports:
            # ``from pkg import name`` names a module only when that module exists.
            while target not in known and "." in target:
                target = target.rsplit(".", 1)[0]
            if eager and target != module and target in known:
                targets.add(target)
        edges[module] = targets
    visiting: list[str] = []
    state: dict[str, int] = {}  # 1: on the stack, 2: done

    def visit(module: str) -> None:
        state[module] = 1
        visiting.append(module)
        for target in sorted(edges[module]):
            # A package's __init__ importing its own submodules is not a circle back to it.
            if module.startswith(target + ".") or target.startswith(module + "."):
                continue
            if state.get(target) == 1:
                circle = visiting[visiting.index(target) :] + [target]
                raise AssertionError("import circle: " + " -> ".join(circle))
            if state.get(target) is None:
                visit(target)
        visiting.pop()
        state[module] = 2

    for module in sorted(edges):
        if module not in state:
            visit(module)
