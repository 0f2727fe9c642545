"""The house rules of ``mttui/``, checked on the ``ast`` of every module.

Imports go one way, from a layer down to the layers below it (any direction within
a layer); no module imports itself through a loop, also not between modules of one
folder; no module uses another module's ``_private`` names; no module is over
400 lines. For the tests themselves: no test module imports another one, and no
fixture is defined twice. The walker is tested on small synthetic trees at the end.
"""

from __future__ import annotations

import ast
import textwrap
from pathlib import Path

import pytest

import mttui
from tests.support.import_graph import Import, ImportGraph, layer_of, scan

# Bottom to top. A module may import from its own layer and the layers below.
# The root entry holds the package ``__init__`` only (the version).
LAYERS: tuple[tuple[str, ...], ...] = (
    ("mttui",),
    ("mttui.session",),
    ("mttui.config",),
    ("mttui.graph",),
    ("mttui.core",),
    ("mttui.messages", "mttui.widgets"),
    ("mttui.screens",),
    ("mttui.paste_guard", "mttui.terminal_driver"),
    ("mttui.app", "mttui.demo"),
    ("mttui.cli",),
)
ROOT = "mttui"
MAX_LINES = 400
TEXTUAL = ("textual",)
LANGGRAPH = ("langgraph", "langchain", "langchain_core", "langchain_openai")

# Private names of the standard library or third parties that may be used, with why.
ALLOWED_PRIVATE: dict[str, str] = {
    "os._exit": "documented stdlib API: leave at once on a second signal, no cleanup",
}


@pytest.fixture(scope="module")
def house() -> ImportGraph:
    return scan(Path(mttui.__file__).parent)


def _lines(imports: list[Import]) -> str:
    return "\n".join(f"  {i.source}:{i.line} imports {i.target}" for i in imports)


def test_every_module_has_a_layer(house: ImportGraph) -> None:
    loose = sorted(name for name in house.modules if layer_of(name, LAYERS, ROOT) is None)
    assert not loose, "modules in no layer of LAYERS:\n" + "\n".join(f"  {n}" for n in loose)


def test_every_layer_exists(house: ImportGraph) -> None:
    missing = [
        entry
        for entries in LAYERS
        for entry in entries
        if not any(name == entry or name.startswith(entry + ".") for name in house.modules)
    ]
    assert not missing, f"LAYERS names modules that do not exist: {missing}"


def test_no_import_cycles(house: ImportGraph) -> None:
    loops = house.cycles()
    assert not loops, "import cycles:\n" + "\n".join(f"  {house.describe(c)}" for c in loops)


def test_imports_only_go_down(house: ImportGraph) -> None:
    upward = house.upward(LAYERS, ROOT)
    assert not upward, "imports from a lower layer to a higher one:\n" + _lines(upward)


def test_session_imports_no_graph_core_textual_or_langgraph(house: ImportGraph) -> None:
    bad = house.importers("mttui.session", ("mttui.graph", "mttui.core", *TEXTUAL, *LANGGRAPH))
    assert not bad, "session/ must stay storage only:\n" + _lines(bad)


def test_graph_imports_no_textual_or_core(house: ImportGraph) -> None:
    bad = house.importers("mttui.graph", ("mttui.core", *TEXTUAL))
    assert not bad, "graph/ must not know the UI or the use cases:\n" + _lines(bad)


def test_core_imports_no_textual(house: ImportGraph) -> None:
    bad = house.importers("mttui.core", TEXTUAL)
    assert not bad, "core/ must not know Textual:\n" + _lines(bad)


def test_no_use_of_other_modules_private_names(house: ImportGraph) -> None:
    uses = house.private_uses(ALLOWED_PRIVATE)
    assert not uses, "uses of another module's _private names:\n" + "\n".join(
        f"  {u}" for u in uses
    )


def test_no_module_over_400_lines(house: ImportGraph) -> None:
    long = house.longer_than(MAX_LINES)
    assert not long, f"modules over {MAX_LINES} lines:\n" + "\n".join(
        f"  {m.name}: {m.lines}" for m in long
    )


def test_test_modules_import_no_other_test_module() -> None:
    tests = scan(Path(__file__).parent)  # the package ``tests``
    cross = [i for i in tests.imports if i.internal and i.target.startswith("tests.test_")]
    assert not cross, "shared test helpers belong in tests/support or conftest:\n" + _lines(cross)


def test_no_fixture_is_defined_twice() -> None:
    root = Path(__file__).parent
    defined: dict[str, list[str]] = {}
    for path in sorted(root.rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if not isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
                continue
            for deco in node.decorator_list:
                if "fixture" in ast.unparse(deco):
                    named = [k.value for k in getattr(deco, "keywords", []) if k.arg == "name"]
                    name = ast.literal_eval(named[0]) if named else node.name
                    defined.setdefault(name, []).append(str(path.relative_to(root)))
    twice = {name: files for name, files in defined.items() if len(files) > 1}
    assert not twice, f"fixtures defined in more than one file: {twice}"


# -- the walker itself, on synthetic trees ------------------------------------
def _tree(tmp_path: Path, files: dict[str, str]) -> ImportGraph:
    pkg = tmp_path / "pkg"
    for name, source in {"__init__.py": "", **files}.items():
        path = pkg / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(source))
    return scan(pkg)


def test_walker_finds_a_cycle_through_lazy_and_type_checking_imports(tmp_path: Path) -> None:
    graph = _tree(
        tmp_path,
        {
            "a.py": "from pkg.b import thing\n",
            "b.py": "def f():\n    from . import c\n",
            "c.py": "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from .a import x\n",
            "d.py": "import pkg.a\n",
        },
    )
    [cycle] = graph.cycles()
    assert cycle.loop == ["pkg.a", "pkg.b", "pkg.c", "pkg.a"]
    assert graph.describe(cycle) == "pkg.a (line 1) -> pkg.b (line 2) -> pkg.c (line 3) -> pkg.a"


def test_walker_reports_the_whole_tangle(tmp_path: Path) -> None:
    graph = _tree(
        tmp_path,
        {
            "a.py": "from . import b, c\n",
            "b.py": "from . import a\n",
            "c.py": "from . import b\n",
        },
    )
    [cycle] = graph.cycles()
    assert cycle.members == ["pkg.a", "pkg.b", "pkg.c"]
    assert (
        graph.describe(cycle)
        == "pkg.a (line 1) -> pkg.b (line 1) -> pkg.a; in the same tangle: pkg.c"
    )


def test_walker_resolves_relative_and_submodule_imports(tmp_path: Path) -> None:
    graph = _tree(
        tmp_path,
        {
            "sub/__init__.py": "from . import leaf\n",
            "sub/leaf.py": "from .. import top\nfrom ..sub import name_in_init\n",
            "top.py": "import importlib\nimportlib.import_module('pkg.sub.leaf')\nimport os.path\n",
        },
    )
    assert graph.internal() == {
        "pkg": {},
        "pkg.sub": {"pkg.sub.leaf": 1},
        "pkg.sub.leaf": {"pkg.top": 1, "pkg.sub": 2},
        "pkg.top": {"pkg.sub.leaf": 2},
    }
    assert [c.loop for c in graph.cycles()] == [["pkg.sub", "pkg.sub.leaf", "pkg.sub"]]
    external = {(i.source, i.target) for i in graph.imports if not i.internal}
    assert external == {("pkg.top", "importlib"), ("pkg.top", "os.path")}


def test_walker_finds_an_upward_import(tmp_path: Path) -> None:
    graph = _tree(
        tmp_path,
        {
            "low/__init__.py": "",
            "low/store.py": "def f():\n    from pkg.high import screen\n",
            "high.py": "from pkg.low import store\n",
        },
    )
    layers = (("pkg",), ("pkg.low",), ("pkg.high",))
    assert [(i.source, i.target, i.line) for i in graph.upward(layers, "pkg")] == [
        ("pkg.low.store", "pkg.high", 2)
    ]
    assert layer_of("pkg.lowly", layers, "pkg") is None
    assert layer_of("pkg.low.store", layers, "pkg") == 1


def test_walker_finds_forbidden_third_party_imports(tmp_path: Path) -> None:
    graph = _tree(tmp_path, {"low.py": "def f():\n    import textual.app\n"})
    assert [i.target for i in graph.importers("pkg.low", TEXTUAL)] == ["textual.app"]


def test_walker_finds_private_uses(tmp_path: Path) -> None:
    graph = _tree(
        tmp_path,
        {
            "a.py": """\
            import os
            from pkg.b import _helper
            from pkg import b

            class Mine(b.Base):
                _cache: dict = {}

                def __init__(self):
                    self._own = 1

                def run(self, other):
                    self._own, self._cache, cls_ok = 2, {}, self.__dict__
                    b._state
                    other._secret
                    self._inherited
                    super()._own
                    super()._from_base()
                    getattr(other, "_hidden")
                    os._exit(0)
            """,
            "b.py": "class Base:\n    def _from_base(self): ...\n",
        },
    )
    assert [str(u) for u in graph.private_uses({"os._exit": "why"})] == [
        "pkg.a:2: from pkg.b import _helper",
        "pkg.a:13: b._state",
        "pkg.a:14: other._secret",
        "pkg.a:15: self._inherited",
        "pkg.a:17: super()._from_base",
        "pkg.a:18: getattr(other, '_hidden')",
    ]


def test_walker_counts_lines(tmp_path: Path) -> None:
    graph = _tree(tmp_path, {"big.py": "x = 1\n" * 401, "ok.py": "x = 1\n" * 400})
    assert [m.name for m in graph.longer_than(400)] == ["pkg.big"]
