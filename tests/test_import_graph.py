"""No import cycle anywhere in ``src/cat_code``, counting imports inside functions.

grimp (what import-linter builds its graph with) reads every import statement of every
module, at module level or inside a function; imports under ``if TYPE_CHECKING:`` are
left out, since nothing loads them at run time. A cycle is a strongly connected set of
modules (Tarjan); the failure names each one with the import lines that close it, so
the fix can start from the message. The floors themselves are import-linter's job
(``lint-imports``, contracts in pyproject.toml); this test catches the cycles inside a
floor that a layers contract cannot see.
"""

from __future__ import annotations

import grimp


def _import_graph() -> grimp.ImportGraph:
    return grimp.build_graph("cat_code", exclude_type_checking_imports=True)


def _cycles(graph: grimp.ImportGraph) -> list[list[str]]:
    """Every set of modules that import each other round, each sorted, largest first."""
    order: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def visit(module: str) -> None:
        # Iterative Tarjan: deep packages must not hit the recursion limit.
        work = [(module, iter(sorted(graph.find_modules_directly_imported_by(module))))]
        order[module] = low[module] = len(order)
        stack.append(module)
        on_stack.add(module)
        while work:
            here, targets = work[-1]
            target = next(targets, None)
            if target is not None:
                if target not in order:
                    order[target] = low[target] = len(order)
                    stack.append(target)
                    on_stack.add(target)
                    work.append(
                        (target, iter(sorted(graph.find_modules_directly_imported_by(target))))
                    )
                elif target in on_stack:
                    low[here] = min(low[here], order[target])
                continue
            work.pop()
            if work:
                parent = work[-1][0]
                low[parent] = min(low[parent], low[here])
            if low[here] == order[here]:
                component = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.append(member)
                    if member == here:
                        break
                if len(component) > 1:
                    found.append(sorted(component))

    for module in sorted(graph.modules):
        if module not in order:
            visit(module)
    return sorted(found, key=lambda c: (-len(c), c))


def _describe(graph: grimp.ImportGraph, cycle: list[str]) -> str:
    members = set(cycle)
    lines = [" <-> ".join(cycle)]
    for importer in cycle:
        for imported in sorted(graph.find_modules_directly_imported_by(importer) & members):
            details = graph.get_import_details(importer=importer, imported=imported)
            where = ", ".join(f"l.{d['line_number']}" for d in details)
            lines.append(f"    {importer} -> {imported} ({where})")
    return "\n".join(lines)


def test_the_cycle_finder_names_a_cycle_and_ignores_a_chain() -> None:
    graph = grimp.ImportGraph()
    for module in ("pkg", "pkg.a", "pkg.b", "pkg.c", "pkg.d"):
        graph.add_module(module)
    graph.add_import(importer="pkg.a", imported="pkg.b", line_number=1, line_contents="")
    graph.add_import(importer="pkg.b", imported="pkg.c", line_number=2, line_contents="")
    graph.add_import(importer="pkg.c", imported="pkg.a", line_number=3, line_contents="")
    graph.add_import(importer="pkg.c", imported="pkg.d", line_number=4, line_contents="")
    assert _cycles(graph) == [["pkg.a", "pkg.b", "pkg.c"]]
    assert "pkg.c -> pkg.a (l.3)" in _describe(graph, ["pkg.a", "pkg.b", "pkg.c"])


def test_no_module_of_cat_code_is_part_of_an_import_cycle() -> None:
    graph = _import_graph()
    cycles = _cycles(graph)
    assert not cycles, "import cycles in src/cat_code:\n" + "\n".join(
        _describe(graph, cycle) for cycle in cycles
    )


def test_the_mcp_library_is_part_of_no_import_cycle() -> None:
    graph = _import_graph()
    cycles = [c for c in _cycles(graph) if any(m.startswith("cat_code.mcp") for m in c)]
    assert not cycles, "import cycles in cat_code.mcp:\n" + "\n".join(
        _describe(graph, cycle) for cycle in cycles
    )
