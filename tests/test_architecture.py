"""The house rules the tree keeps: rooms import only downward and through each other's faces,
py4j stays in one layer, no file grows past what a reader takes in.

The rooms (docs/architecture.md draws them): the SDK at the package root; ``producer``,
``delivery``, ``lineage``, ``report``, ``spark``, ``service`` and ``cli`` above it. Every
import is read from the source (those inside functions too), so an arrow back up fails here,
not in a user's traceback.

A room's face is its ``__init__.py`` (its ``__all__``). Another room imports from the face,
never from an underscored module inside (``openlineage_subset.lineage.store._database``,
``openlineage_subset.spark._jvm._session``); the SDK's face is the package root
(``openlineage_subset``), its underscored modules (``openlineage_subset._json``) are its
inside. The same holds in ``benchmarks/`` and in ``tests/``, where a test may reach inside its
own room only: ``tests/<room>/`` is that room's, a top-level ``tests/test_<room>_*.py`` too
(``test_spark_reads_logic.py``), any other top-level ``tests/test_*.py`` the SDK's. A test may
import another room's module itself (``from openlineage_subset.spark import _capture``) to
patch a name in it; the package's code and the benchmarks may not.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

from tests.helpers import ROOT

PACKAGE = ROOT / "src" / "openlineage_subset"
SDK = "sdk"
ALLOWED: dict[str, frozenset[str]] = {
    SDK: frozenset({SDK}),
    "producer": frozenset({SDK, "producer"}),
    "delivery": frozenset({SDK, "producer", "delivery"}),
    "lineage": frozenset({SDK, "producer", "lineage"}),
    "spark": frozenset({SDK, "producer", "delivery", "spark"}),
    "report": frozenset({SDK, "producer", "lineage", "report"}),
    "service": frozenset({SDK, "producer", "lineage", "report", "service"}),
    "cli": frozenset({SDK, "producer", "delivery", "lineage", "report", "spark", "service", "cli"}),
}
"""Which rooms each room may import from: arrows point down, never up or sideways."""
JVM_LAYER = PACKAGE / "spark" / "_jvm"
JVM_WORDS = re.compile(
    r"py4j|JavaObject|_jsparkSession|_jsc\b|_jdf\b|_gateway\b|\bimplements\b"
    r"|(?<!openlineage_subset\.spark)\._jvm\b"
)
"""What names the JVM bridge (PySpark's handles on the JVM: ``spark._jsc``, ``sc._jvm``,
``sc._gateway``...): only the JVM layer may say it. ``openlineage_subset.spark._jvm``, the
layer's own name, is how the rest imports it."""
BENCHMARKS = ROOT / "benchmarks"
MAX_LINES = 800


def _sources(*folders: Path) -> list[Path]:
    return sorted(path for folder in folders for path in folder.rglob("*.py"))


def _room(path: Path) -> str:
    parts = path.relative_to(PACKAGE).parts
    if parts == ("__main__.py",):
        return "cli"  # ``python -m openlineage_subset``: the command line's other door
    return parts[0] if len(parts) > 1 else SDK


def _room_of_module(module: str) -> str | None:
    """The room of an ``openlineage_subset`` module; None for another package."""
    parts = module.split(".")
    if parts[0] != "openlineage_subset":
        return None
    if len(parts) == 1 or parts[1] not in ALLOWED:
        return SDK
    return parts[1]


def _imports(path: Path, text: str | None = None) -> list[tuple[int, str]]:
    found = []
    source = path.read_text(encoding="utf-8") if text is None else text
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            found += [(node.lineno, alias.name) for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
            found.append((node.lineno, node.module))
            # ``from openlineage_subset import spark`` names a room by its last part.
            found += [(node.lineno, f"{node.module}.{alias.name}") for alias in node.names]
    return found


@pytest.mark.parametrize("path", _sources(PACKAGE), ids=lambda p: str(p.relative_to(PACKAGE)))
def test_rooms_import_only_downward(path: Path) -> None:
    room = _room(path)
    wrong = []
    for line, module in _imports(path):
        target = _room_of_module(module)
        if target is not None and target not in ALLOWED[room]:
            wrong.append(f"line {line}: {module} ({room} -> {target})")
    assert not wrong, f"{path.relative_to(ROOT)} imports upward or sideways: {wrong}"


def _own_room(path: Path) -> str | None:
    """The room a file may reach inside (the module docstring); None: no room (benchmarks)."""
    if PACKAGE in path.parents:
        return _room(path)
    parts = path.relative_to(ROOT).parts
    if parts[0] != "tests":
        return None
    if len(parts) > 2:
        return parts[1] if parts[1] in ALLOWED else None
    rooms = [room for room in ALLOWED if parts[1].startswith(f"test_{room}_")]
    return rooms[0] if rooms else SDK


def _inside(module: str) -> bool:
    """Whether a module of the package is inside a room: anything below a room's face (its
    sub-rooms too: ``openlineage_subset.lineage.store``), an underscored module of the SDK."""
    parts = module.split(".")[1:]
    if parts and parts[0] in ALLOWED:
        room, parts = parts[0], parts[1:]
        if parts and (PACKAGE / room / parts[0]).is_dir():
            return True
    return any(part.startswith("_") and not part.startswith("__") for part in parts)


def _reaches_inside(path: Path, text: str | None = None) -> list[str]:
    own = _own_room(path)
    in_tests = ROOT / "tests" in path.parents
    found = []
    source = path.read_text(encoding="utf-8") if text is None else text
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            modules = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
            modules = [node.module]
            if in_tests and all(alias.name.startswith("_") for alias in node.names):
                modules = []  # a test imports a module of another room (a sub-room's) to patch it
            elif not in_tests and not _inside(node.module):
                # ``from openlineage_subset.spark import _capture`` names a module inside too
                modules += [f"{node.module}.{alias.name}" for alias in node.names]
        else:
            continue
        found += [
            f"line {node.lineno}: {module}"
            for module in modules
            if _room_of_module(module) not in (None, own) and _inside(module)
        ]
    return found


@pytest.mark.parametrize(
    "path",
    _sources(PACKAGE, ROOT / "benchmarks", ROOT / "tests"),
    ids=lambda p: str(p.relative_to(ROOT)),
)
def test_rooms_talk_through_faces(path: Path) -> None:
    found = _reaches_inside(path)
    assert not found, (
        f"{path.relative_to(ROOT)} reaches inside another room (import from its face, "
        f"its __init__'s __all__, which exports what other rooms may use): {found}"
    )


def test_the_face_rule_sees_a_back_door() -> None:
    """The rule can fail: a module importing another room's inside is refused, its own not."""
    doors = (
        "from openlineage_subset.lineage.store._database import LineageStore\n"
        "import openlineage_subset._json\n"
        "from openlineage_subset.spark import _capture\n"
        "from openlineage_subset.lineage import LineageStore\n"
        "from openlineage_subset.service._sink import EventSink\n"
    )
    found = _reaches_inside(PACKAGE / "service" / "_example.py", doors)
    assert [line.split(": ")[1] for line in found] == [
        "openlineage_subset.lineage.store._database",
        "openlineage_subset._json",
        "openlineage_subset.spark._capture",
    ]
    in_a_test = _reaches_inside(ROOT / "tests" / "service" / "test_example.py", doors)
    assert len(in_a_test) == 2  # a test may import a module of another room to patch it
    assert _room_of_module("openlineage_subset.spark._jvm._session") == "spark"
    assert _inside("openlineage_subset.lineage.store")  # a sub-room is inside its room
    assert not _inside("openlineage_subset.lineage")
    assert _own_room(ROOT / "tests" / "test_spark_reads_logic.py") == "spark"
    assert _own_room(ROOT / "tests" / "lineage" / "test_x.py") == "lineage"
    assert _own_room(ROOT / "tests" / "test_render.py") == SDK
    assert _own_room(ROOT / "benchmarks" / "serve.py") is None


LINEAGE = PACKAGE / "lineage"
LINEAGE_ROOMS: dict[str, frozenset[str]] = {
    "model": frozenset({"model"}),
    "store": frozenset({"model", "store"}),
    "ingestion": frozenset({"model", "store", "ingestion"}),
    "engine": frozenset({"model", "store", "engine"}),
    "queries": frozenset({"model", "store", "ingestion", "engine", "queries"}),
    "pages": frozenset({"model", "store", "ingestion", "engine", "queries", "pages"}),
}
"""``lineage/``'s sub-rooms, from the bottom up, and which of them each may import: the pure
records and conditions (``model``), the database (``store``), what ingest writes and what the
queries walk (``ingestion``, ``engine``, side by side), the questions (``queries``), what pages
draw (``pages``). ``lineage/_lineage.py`` and the face above them may import any."""


def _lineage_room(path: Path) -> str | None:
    """The sub-room of a module of ``lineage/``; None for the room's own top (face, ``Lineage``)."""
    parts = path.relative_to(LINEAGE).parts
    return parts[0] if len(parts) > 1 else None


def _lineage_imports_wrong(path: Path, text: str | None = None) -> list[str]:
    """The imports of a ``lineage/`` module that climb to a sub-room above its own, reach
    inside another sub-room (past its face), or ask the room's own face from below it."""
    own = _lineage_room(path)
    if own is None:
        return []
    source = path.read_text(encoding="utf-8") if text is None else text
    wrong = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            modules = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
            # ``from openlineage_subset.lineage.model import _time`` names a module inside
            modules = [node.module]
            modules += [f"{node.module}.{a.name}" for a in node.names if a.name.startswith("_")]
        else:
            continue
        wrong += _climbs(own, node.lineno, modules)
    return wrong


def _climbs(own: str, line: int, modules: list[str]) -> list[str]:
    wrong = []
    for module in modules:
        parts = module.split(".")
        if parts[:2] != ["openlineage_subset", "lineage"]:
            continue
        target = parts[2] if len(parts) > 2 else None
        if target is None or target not in LINEAGE_ROOMS:
            wrong.append(f"line {line}: {module} (the room's top, above every sub-room)")
        elif target not in LINEAGE_ROOMS[own]:
            wrong.append(f"line {line}: {module} ({own} -> {target}, up or sideways)")
        elif target != own and len(parts) > 3:
            wrong.append(f"line {line}: {module} (inside {target}: import from its face)")
    return wrong


@pytest.mark.parametrize("path", _sources(LINEAGE), ids=lambda p: str(p.relative_to(LINEAGE)))
def test_lineage_sub_rooms_import_downward_through_faces(path: Path) -> None:
    wrong = _lineage_imports_wrong(path)
    assert not wrong, f"{path.relative_to(ROOT)}: {wrong}"


def test_the_sub_room_rule_can_fail() -> None:
    doors = (
        "from openlineage_subset.lineage.queries import impact\n"
        "from openlineage_subset.lineage.model._time import normal_time\n"
        "from openlineage_subset.lineage import Lineage\n"
        "from openlineage_subset.lineage.store import LineageStore\n"
        "from openlineage_subset.lineage.engine._timeline import Timeline\n"
        "from openlineage_subset.lineage.model import _time\n"
    )
    found = _lineage_imports_wrong(LINEAGE / "engine" / "_planted.py", doors)
    assert [line.split(": ")[1].split(" ")[0] for line in found] == [
        "openlineage_subset.lineage.queries",
        "openlineage_subset.lineage.model._time",
        "openlineage_subset.lineage",
        "openlineage_subset.lineage.model._time",
    ]
    assert set(LINEAGE_ROOMS) == {p.parent.name for p in LINEAGE.glob("*/__init__.py")}, (
        "LINEAGE_ROOMS names every sub-room of lineage/"
    )


SERVE_EXTRA = ("starlette", "uvicorn")
"""The ``serve`` extra's packages: only ``service/`` imports them (and ``cli/`` imports it
inside ``lineage serve`` alone), so that every other command runs without the extra."""


@pytest.mark.parametrize(
    "path",
    [p for p in _sources(PACKAGE) if PACKAGE / "service" not in p.parents],
    ids=lambda p: str(p.relative_to(PACKAGE)),
)
def test_only_the_service_imports_the_serve_extra(path: Path) -> None:
    found = [
        f"line {line}: {module}"
        for line, module in _imports(path)
        if module.split(".")[0] in SERVE_EXTRA
    ]
    assert not found, f"{path.relative_to(ROOT)} imports the serve extra: {found}"


def test_the_room_map_knows_every_room() -> None:
    rooms = {p.name for p in PACKAGE.iterdir() if (p / "__init__.py").is_file()}
    assert rooms == set(ALLOWED) - {SDK}


@pytest.mark.parametrize(
    "path",
    [p for p in _sources(PACKAGE, BENCHMARKS) if JVM_LAYER not in p.parents],
    ids=lambda p: str(p.relative_to(ROOT)),
)
def test_only_the_jvm_layer_names_py4j(path: Path) -> None:
    """The package and the benchmarks reach the JVM only through ``spark/_jvm``."""
    text = path.read_text(encoding="utf-8")
    found = [
        f"line {text.count(chr(10), 0, match.start()) + 1}: {match.group()}"
        for match in JVM_WORDS.finditer(text)
    ]
    assert not found, f"{path.relative_to(ROOT)} names the JVM bridge outside spark/_jvm: {found}"


@pytest.mark.parametrize(
    "path",
    _sources(PACKAGE, ROOT / "codegen", ROOT / "tests", ROOT / "benchmarks"),
    ids=lambda p: str(p.relative_to(ROOT)),
)
def test_no_source_file_is_longer_than_a_reader_takes_in(path: Path) -> None:
    lines = path.read_text(encoding="utf-8").count("\n")
    assert lines <= MAX_LINES, f"{path.relative_to(ROOT)} has {lines} lines (at most {MAX_LINES})"


PICTURE = ROOT / "docs" / "architecture.md"
_ROW = re.compile(r"^\| (?P<room>[^|]+) \|[^|]+\| (?P<modules>.+) \|$", re.MULTILINE)


def _pictured_rooms() -> dict[Path, set[str]]:
    """The folder of each row of the picture's table of rooms, and the modules it lists."""
    rooms = {}
    for row in _ROW.finditer(PICTURE.read_text(encoding="utf-8")):
        named = re.search(r"`([\w/]+)`", row["room"])
        if named is None:
            continue
        folder = PACKAGE if named[1] == "openlineage_subset" else PACKAGE / named[1].rstrip("/")
        rooms[folder] = set(re.findall(r"`(_\w+)`", row["modules"]))
    return rooms


def test_the_picture_of_the_rooms_matches_the_tree() -> None:
    rooms = _pictured_rooms()
    folders = {PACKAGE, *(p.parent for p in PACKAGE.rglob("__init__.py"))}
    assert set(rooms) == folders, "docs/architecture.md has one row per package folder"
    for folder, listed in rooms.items():
        modules = {
            path.stem for path in folder.glob("_*.py") if path.stem not in ("__init__", "__main__")
        }
        where = folder.relative_to(ROOT)
        assert listed == modules, f"{where}: pictured but gone {listed - modules}, " + (
            f"there but not pictured {modules - listed}"
        )


def test_the_rules_catch_what_they_are_for(tmp_path: Path) -> None:
    """The checks above fail on a planted violation (an import up, a py4j name)."""
    planted = tmp_path / "planted.py"
    planted.write_text(
        "def f():\n    from openlineage_subset.spark import enable\n    return enable\n",
        encoding="utf-8",
    )
    assert (2, "openlineage_subset.spark") in _imports(planted)
    assert _room_of_module("openlineage_subset.spark._capture") not in ALLOWED["lineage"]
    assert JVM_WORDS.search("x = df._jdf.queryExecution()")
    assert JVM_WORDS.search("spark.sparkContext._jsc.sc().listenerBus()")
    assert JVM_WORDS.search("pid = sc._jvm.java.lang.ProcessHandle.current().pid()")
    assert JVM_WORDS.search("from pyspark import java_gateway")
    assert not JVM_WORDS.search("from openlineage_subset.spark._jvm import plan_facts")
    assert not JVM_WORDS.search("the implementation of the listener")


TESTS = ROOT / "tests"


def _imported_test_modules(tree: ast.AST, path: Path) -> list[str]:
    """The imports of ``test_*`` modules in ``tree`` (the source of ``path``), at any depth."""
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            modules, names = [alias.name.split(".") for alias in node.names], []
        elif isinstance(node, ast.ImportFrom):
            parts = node.module.split(".") if node.module else []
            folder = (path.parents[node.level - 1] if node.level else ROOT).joinpath(*parts)
            modules = [parts]
            # ``from tests.lineage import test_x`` or ``from . import test_x``: a module by name.
            names = [alias.name for alias in node.names if (folder / f"{alias.name}.py").is_file()]
        else:
            continue
        if any(module and module[-1].startswith("test_") for module in modules) or any(
            name.startswith("test_") for name in names
        ):
            found.append(f"line {node.lineno}: {ast.unparse(node)}")
    return found


def test_test_modules_share_helpers_not_each_other() -> None:
    """What tests share lives in a ``conftest.py`` (fixtures) or a helpers module (for example
    ``tests/service/helpers.py``), never in a test module that others import: importing one runs
    its module-level code (skips, fixtures, marks) in the importer, and moving or renaming a test
    module breaks others."""
    wrong = {
        str(path.relative_to(ROOT)): imports
        for path in _sources(TESTS)
        if (imports := _imported_test_modules(ast.parse(path.read_text("utf-8")), path))
    }
    assert not wrong, f"test modules imported by other modules: {wrong}"
    planted = TESTS / "lineage" / "planted.py"  # never written: only its imports are read
    for source, caught in [
        ("from tests.lineage.test_impact_oracle import Step", True),
        ("from .test_impact_oracle import Step", True),
        ("from . import test_impact_oracle", True),
        ("from tests.lineage import test_impact_oracle as oracle", True),
        ("import tests.lineage.test_impact_oracle", True),
        ("from tests.lineage.pipelines import Step", False),
    ]:
        assert bool(_imported_test_modules(ast.parse(source), planted)) == caught, source
