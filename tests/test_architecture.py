"""The package's import graph: one direction of data flow, no cycles, and the configuration side free of TensorFlow.

Every import of a tsattn module counts, lazy ones (inside functions) included: a module may import only modules
of a lower layer. docs/architecture.md explains each layer; a new module goes in the lowest layer it can.
"""

import ast
import subprocess
import sys
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[1] / "tsattn"

# lowest first; a module imports only modules of earlier layers
LAYERS = [
    {"errors", "_version", "_backend", "progress"},
    {"checks", "intervals", "specs", "data", "io"},
    {"metrics", "panel", "layers", "engine", "plots", "covariates"},
    {"windows", "losses"},
    {"baselines", "models"},
    {"config", "state", "evaluation", "verdicts"},
    {"selection"},
    {"artefacts", "harness", "report"},
    {"backtesting"},
    {"runs", "forecaster"},
    {"compare"},
    {"tuning"},
]


def imports_of(path: Path) -> set[str]:
    """The tsattn modules a file imports anywhere (module level or inside functions)."""
    found = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom) and node.level == 1:
            found.update([node.module.split(".")[0]] if node.module else [alias.name for alias in node.names])
        elif isinstance(node, ast.ImportFrom) and (node.module or "").startswith("tsattn."):
            found.add(node.module.split(".")[1])
        elif isinstance(node, ast.Import):
            found.update(alias.name.split(".")[1] for alias in node.names if alias.name.startswith("tsattn."))
    return found


def graph() -> dict[str, set[str]]:
    modules = {path.stem for path in PACKAGE.glob("*.py")} - {"__init__", "__main__"}
    return {name: (imports_of(PACKAGE / f"{name}.py") & modules) - {name} for name in modules}


def test_every_module_has_a_layer():
    placed = set().union(*LAYERS)
    assert set(graph()) == placed, "a module was added or removed: place it in LAYERS and docs/architecture.md"


def test_imports_go_down_only():
    layer_of = {name: i for i, layer in enumerate(LAYERS) for name in layer}
    upward = [f"{name} (layer {layer_of[name]}) imports {other} (layer {layer_of[other]})"
              for name, deps in graph().items() for other in deps if layer_of[other] >= layer_of[name]]
    assert not upward, upward


def test_no_import_cycles():
    edges = graph()
    state = {}

    def visit(node, path):
        state[node] = "open"
        for other in edges[node]:
            assert state.get(other) != "open", " -> ".join(path + [node, other])
            if other not in state:
                visit(other, path + [node])
        state[node] = "done"

    for node in edges:
        if node not in state:
            visit(node, [])


def test_configuration_side_imports_no_tensorflow():
    """Settings, presets, ranges, losses, the fitted state, evaluation and the artefact format load without
    TensorFlow (the CLI checks settings before paying for it)."""
    code = ("import sys, tsattn.config, tsattn.losses, tsattn.specs, tsattn.state, tsattn.evaluation, "
            "tsattn.artefacts; print('tensorflow' in sys.modules, 'keras' in sys.modules)")
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert result.stdout.split() == ["False", "False"]


def test_no_module_imports_another_modules_private_name():
    """A name starting with an underscore is its module's own: another module that needs it gets a public one."""
    sources = [*PACKAGE.glob("*.py"), *(PACKAGE.parent / "cli").glob("*.py")]
    private = []
    for path in sources:
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            inside = isinstance(node, ast.ImportFrom) and (node.level >= 1 or (node.module or "").startswith("tsattn"))
            if inside:
                private += [f"{path.name} imports {alias.name} from {node.module}" for alias in node.names
                            if alias.name.startswith("_") and not alias.name.startswith("__")
                            and alias.name not in ("_backend", "_version")]  # dunders (__version__) are public
    assert not private, private
