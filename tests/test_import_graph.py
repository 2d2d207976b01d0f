"""The package's import graph, read from the source (every import, also those inside functions,
which hide a circle from Python but not from a reader): the runtime (`llm/`) never imports
operations (`ops/`), and what both need about a model file (`modelfile/`) imports neither."""
from __future__ import annotations

import ast
from pathlib import Path

import edge_agent

PACKAGE = Path(edge_agent.__file__).parent


def _type_checking_only(node: ast.If) -> bool:
    test = node.test
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or \
        (isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING")


def imports_of(path: Path) -> set[str]:
    """Modules of edge_agent that `path` imports at run time (annotation-only imports left out)."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    skipped = {id(n) for node in ast.walk(tree) if isinstance(node, ast.If) and _type_checking_only(node)
               for child in node.body for n in ast.walk(child)}
    found: set[str] = set()
    for node in ast.walk(tree):
        if id(node) in skipped:
            continue
        if isinstance(node, ast.Import):
            found |= {a.name for a in node.names if a.name.startswith("edge_agent")}
        elif isinstance(node, ast.ImportFrom) and node.module and node.module.startswith("edge_agent"):
            found.add(node.module)
            found |= {f"{node.module}.{a.name}" for a in node.names}  # `from edge_agent import ops`
    return found


def subpackage(module: str) -> str | None:
    """edge_agent.llm.catalog -> llm; a top-level module (edge_agent.config) -> its name."""
    parts = module.split(".")
    if len(parts) < 2:
        return None
    name = parts[1]
    return name if (PACKAGE / name).is_dir() or (PACKAGE / f"{name}.py").is_file() else None


def package_graph() -> dict[str, dict[str, list[str]]]:
    """{importing subpackage: {imported subpackage: [files that do it]}}."""
    graph: dict[str, dict[str, list[str]]] = {}
    for path in sorted(PACKAGE.rglob("*.py")):
        rel = path.relative_to(PACKAGE)
        src = rel.parts[0] if len(rel.parts) > 1 else rel.stem
        for module in imports_of(path):
            dst = subpackage(module)
            if dst is not None and dst != src:
                graph.setdefault(src, {}).setdefault(dst, []).append(str(rel))
    return graph


def reaches(graph, start: str, goal: str) -> bool:
    seen, todo = set(), [start]
    while todo:
        node = todo.pop()
        if node == goal:
            return True
        if node not in seen:
            seen.add(node)
            todo += list(graph.get(node, {}))
    return False


def test_the_reader_finds_imports_inside_functions_and_skips_annotation_only_ones(tmp_path):
    src = tmp_path / "m.py"
    src.write_text("from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from edge_agent.ops import doctor\n"
                   "def f():\n    from edge_agent.llm.catalog import load_catalog\n    import edge_agent.store.db\n")
    assert imports_of(src) == {"edge_agent.llm.catalog", "edge_agent.llm.catalog.load_catalog", "edge_agent.store.db"}
    graph = {"llm": {"modelfile": []}, "ops": {"llm": [], "modelfile": []}}
    assert reaches(graph, "ops", "modelfile") and not reaches(graph, "llm", "ops")
    assert reaches({**graph, "modelfile": {"ops": []}}, "llm", "ops")  # a circle through the lower package


def test_the_runtime_never_imports_operations():
    graph = package_graph()
    assert "ops" not in graph.get("llm", {}), graph["llm"].get("ops")
    assert not reaches(graph, "llm", "ops"), "llm reaches ops through another package"
    assert reaches(graph, "ops", "llm")  # doctor checks the runtime: the one allowed direction


def test_what_both_need_about_a_model_file_imports_neither():
    graph = package_graph()
    assert not graph.get("modelfile"), graph.get("modelfile")
    assert "modelfile" in graph["llm"] and "modelfile" in graph["ops"]
