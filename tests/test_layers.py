"""The package's layers follow one session's data flow, and no import goes upward or in a circle.

Every ``import`` statement in ``harness/`` is read from the source (module level and inside
functions alike: a lazy import is still a dependency). A module may import from its own
layer and the layers below; ``harness`` never imports ``scripted_agents`` (agents are found
through the registry); and the import graph of ``harness`` has no cycle. The test also
checks that the table below names every package, so a new package has to be given a place.
"""

from __future__ import annotations

import ast
import importlib
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
PACKAGE = ROOT / "harness"

LAYERS: tuple[tuple[str, ...], ...] = (
    ("harness", "harness.errors", "harness.seeding"),
    ("harness.reading",),
    ("harness.protocol",),
    ("harness.transports",),
    ("harness.sim",),
    ("harness.faults",),
    ("harness.scenarios",),
    ("harness.session",),
    ("harness.proxy",),
    ("harness.worlds",),
    ("harness.llm",),
    ("harness.batch",),
    ("harness.report",),
    ("harness.fixtures",),
    ("harness.probe",),
    ("harness.bench",),
    ("harness.cli", "harness.view"),
)
"""Lowest first: CLI -> batch -> session -> row -> table -> report, read upward. One session's
rooms, bottom to top: the simulated catalogue (sim), the faults that wrap its tools, the scenario
files that name both, and the session core that runs them."""

ALIASES: dict[str, str] = {
    "harness.sim.agent": "harness.session.agent",
    "harness.sim.scenario": "harness.scenarios.scenario",
    "harness.sim.session": "harness.session.simulated",
}
"""Old module paths kept for agents written against them: each only hands back its new home
(checked below), so its one upward import is not a dependency of the layer it sits in."""


def _modules() -> dict[str, Path]:
    out: dict[str, Path] = {}
    for path in sorted(PACKAGE.rglob("*.py")):
        parts = path.relative_to(ROOT).with_suffix("").parts
        name = ".".join(parts[:-1] if parts[-1] == "__init__" else parts)
        out[name] = path
    return out


MODULES = _modules()


def _target(name: str) -> str | None:
    """The module of ours an imported dotted name lands in (a submodule, or a package face)."""
    while name:
        if name in MODULES:
            return name
        name = name.rpartition(".")[0]
    return None


def _imports(module: str) -> set[str]:
    path = MODULES[module]
    tree = ast.parse(path.read_text(encoding="utf-8"), str(path))
    is_package = path.name == "__init__.py"
    found: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            if node.level:  # relative: resolve against this module's package
                base = module if is_package else module.rpartition(".")[0]
                for _ in range(node.level - 1):
                    base = base.rpartition(".")[0]
                stem = f"{base}.{node.module}" if node.module else base
            else:
                stem = node.module or ""
            for alias in node.names:
                sub = f"{stem}.{alias.name}"
                found.add(sub if sub in MODULES else stem)
    return found


GRAPH: dict[str, set[str]] = {
    module: {t for name in _imports(module) if (t := _target(name)) is not None and t != module}
    for module in MODULES
    if module not in ALIASES
}


def _layer(module: str) -> int:
    best = -1
    for rank, prefixes in enumerate(LAYERS):
        for prefix in prefixes:
            if module == prefix or (prefix != "harness" and module.startswith(prefix + ".")):
                best = rank
    if best < 0:
        raise AssertionError(f"{module} is in no layer: give its package a place in LAYERS")
    return best


def test_every_module_belongs_to_a_layer() -> None:
    for module in MODULES:
        _layer(module)


@pytest.mark.parametrize(("alias", "home"), sorted(ALIASES.items()))
def test_an_old_module_path_is_only_an_alias_of_its_new_home(alias: str, home: str) -> None:
    assert _imports(alias) == {"sys", "warnings", home}, f"{alias} does more than alias {home}"
    with pytest.warns(DeprecationWarning, match=home):
        sys.modules.pop(alias, None)
        module = importlib.import_module(alias)
    assert module is importlib.import_module(home)


@pytest.mark.parametrize("module", sorted(set(MODULES) - set(ALIASES)))
def test_no_module_imports_from_a_layer_above_its_own(module: str) -> None:
    upward = sorted(t for t in GRAPH[module] if _layer(t) > _layer(module))
    assert not upward, f"{module} (layer {_layer(module)}) imports {upward} from above"


@pytest.mark.parametrize("module", sorted(MODULES))
def test_harness_never_imports_scripted_agents_by_name(module: str) -> None:
    named = sorted(n for n in _imports(module) if n.split(".")[0] == "scripted_agents")
    assert not named, f"{module} imports {named}: find agents through harness.session.registry"


def _cycle(graph: dict[str, set[str]]) -> list[str] | None:
    colour: dict[str, int] = {}
    stack: list[str] = []

    def visit(node: str) -> list[str] | None:
        colour[node] = 1
        stack.append(node)
        for nxt in sorted(graph.get(node, ())):
            if colour.get(nxt) == 1:
                return [*stack[stack.index(nxt) :], nxt]
            if nxt not in colour and (found := visit(nxt)) is not None:
                return found
        stack.pop()
        colour[node] = 2
        return None

    for node in sorted(graph):
        if node not in colour and (found := visit(node)) is not None:
            return found
    return None


def test_nothing_outside_harness_llm_imports_it_the_registry_finds_the_llm_agent() -> None:
    def llm(name: str) -> bool:
        return name == "harness.llm" or name.startswith("harness.llm.")

    importers = sorted(m for m, targets in GRAPH.items() if not llm(m) and any(llm(t) for t in targets))
    assert not importers, (
        f"{importers} import harness.llm: find the llm agent through harness.session.registry"
    )


def test_the_error_reader_is_a_leaf_that_never_saw_the_simulated_faults() -> None:
    # harness.reading is measured against real servers' errors; it must not know the simulator's
    # own fault templates: standard library and itself only, and no word of harness.faults.kinds.
    def reading(name: str) -> bool:
        return name == "harness.reading" or name.startswith("harness.reading.")

    modules = sorted(m for m in MODULES if reading(m))
    assert modules, "harness.reading is missing"
    for module in modules:
        names = _imports(module)
        ours = sorted(
            n for n in names if n.split(".")[0] in ("harness", "scripted_agents") and not reading(n)
        )
        assert not ours, f"{module} imports {ours}: the reader imports nothing of the harness"
        foreign = sorted(
            n for n in names if n.split(".")[0] not in sys.stdlib_module_names and not reading(n)
        )
        assert not foreign, f"{module} imports {foreign}: the reader uses the standard library only"
        source = MODULES[module].read_text(encoding="utf-8")
        for word in (
            "harness.sim",
            "harness.faults",
            "harness.session",
            "scripted_agents",
            "FAULT_KIND_TABLE",
        ):
            assert word not in source, f"{module} names {word}"


def test_the_import_graph_has_no_cycle() -> None:
    cycle = _cycle(GRAPH)
    assert cycle is None, "import cycle: " + " -> ".join(cycle or [])


def test_the_cycle_finder_finds_a_planted_cycle() -> None:
    # The checks above pass on a clean tree; show that they could fail.
    planted = {k: set(v) for k, v in GRAPH.items()}
    planted["harness.protocol.client"].add("harness.protocol")
    assert _cycle(planted) is not None
    assert _layer("harness.cli.run") > _layer("harness.session.simulated") > _layer("harness.protocol.server")


def test_the_viewer_and_the_command_line_both_call_the_report_and_neither_imports_the_other() -> None:
    # They share a layer; what a page and a command show of a run is built in harness.report
    # (documents, findings), so that the two cannot drift and neither reaches into the other.
    # The one crossing is the command that starts the viewer, harness.cli.view.
    def inside(name: str, package: str) -> bool:
        return name == package or name.startswith(package + ".")

    for module, targets in GRAPH.items():
        if inside(module, "harness.view"):
            assert not [t for t in targets if inside(t, "harness.cli")], f"{module} imports the command line"
        if inside(module, "harness.cli") and module != "harness.cli.view":
            assert not [t for t in targets if inside(t, "harness.view")], f"{module} imports the viewer"


def test_the_protocol_core_imports_no_transport_and_not_its_own_face() -> None:
    for module in MODULES:
        if module.startswith("harness.protocol."):
            assert "harness.protocol" not in GRAPH[module], f"{module} imports the package face"
            assert not any(t.startswith("harness.transports") for t in GRAPH[module]), module


AGENTS_DIR = ROOT / "scripted_agents"


def _agent_imports(name: str) -> set[str]:
    tree = ast.parse((AGENTS_DIR / f"{name}.py").read_text(encoding="utf-8"))
    found: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            stem = node.module or ""
            found.update({stem, *(f"{stem}.{alias.name}" for alias in node.names)})
    return found


def test_the_world_repair_never_reaches_the_fixes_keyed_to_the_generator_s_corruptions() -> None:
    # scripted_agents/world.py is all a scripted agent does on a world: it imports no other module
    # of scripted_agents (base.py imports fixes.py, whose rewrites undo what harness.scenarios.family
    # writes), names none of the fixes, and nothing of the simulator's fault table.
    # tests/worlds/test_repair.py holds the same at run time.
    names = _agent_imports("world")
    ours = sorted(n for n in names if n.split(".")[0] == "scripted_agents")
    assert not ours, f"scripted_agents/world.py imports {ours}"
    assert not any(n.startswith(("harness.faults.kinds", "harness.scenarios.family")) for n in names)
    tree = ast.parse((AGENTS_DIR / "world.py").read_text(encoding="utf-8"))
    used = {n.id for n in ast.walk(tree) if isinstance(n, ast.Name)}
    used |= {n.attr for n in ast.walk(tree) if isinstance(n, ast.Attribute)}
    for word in ("_rewrites", "fix_value", "fixes", "fixed", "_wrong_form", "FAULT_KIND_TABLE"):
        assert word not in used, f"scripted_agents/world.py uses {word}"


def test_the_world_repair_check_would_see_an_import_of_the_fixes() -> None:
    # The check above reads imports; show it would catch one.
    planted = ast.parse("from scripted_agents.fixes import fix_value\nimport scripted_agents.base")
    found = {n.module for n in ast.walk(planted) if isinstance(n, ast.ImportFrom)}
    found |= {a.name for n in ast.walk(planted) if isinstance(n, ast.Import) for a in n.names}
    assert {"scripted_agents.fixes", "scripted_agents.base"} <= found
