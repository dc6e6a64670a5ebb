"""The layers of ``ingest_assets``: only ``defs/`` (and the code location) import dagster.

The engine, the store, the settings, the inbox walk, the plans and the CLI's no-op path run
without Dagster, as ``chunking`` does; ``ingest run`` imports Dagster only when it has runs to
launch (``tests/ingest/test_pending.py`` checks that path end to end).
"""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
PACKAGE = ROOT / "ingest_assets"
DAGSTER_SIDE = {"defs", "definitions.py"}


def _imports(path: Path) -> set[str]:
    """Every module a file imports, at any depth (function-level imports included)."""
    names: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            names |= {alias.name for alias in node.names}
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names.add(node.module)
    return names


def _plain_modules() -> list[Path]:
    return [p for p in sorted(PACKAGE.rglob("*.py")) if p.relative_to(PACKAGE).parts[0] not in DAGSTER_SIDE]


def test_no_module_outside_defs_imports_dagster() -> None:
    offenders = {
        str(path.relative_to(ROOT)): sorted(
            n for n in _imports(path) if n.split(".")[0].startswith("dagster")
        )
        for path in _plain_modules()
    }
    assert len(offenders) > 15
    assert {path: names for path, names in offenders.items() if names} == {}


def _in_cli(path: Path) -> bool:
    return path.relative_to(PACKAGE).parts[0] == "cli"


def test_only_the_cli_reaches_into_defs_and_only_inside_a_function() -> None:
    """The plain layers never import the Dagster side; the CLI does, lazily, to launch runs."""
    reaching = set()
    for path in _plain_modules():
        into_defs = {n for n in _imports(path) if n.startswith("ingest_assets.defs")}
        if _in_cli(path):
            top = {
                node.module
                for node in ast.parse(path.read_text()).body
                if isinstance(node, ast.ImportFrom) and node.module
            } | {
                alias.name
                for node in ast.parse(path.read_text()).body
                if isinstance(node, ast.Import)
                for alias in node.names
            }
            assert not {n for n in top if n.startswith("ingest_assets.defs")}, path
            reaching |= into_defs
        else:
            assert into_defs == set(), path
    assert reaching  # ``ingest run`` and ``ingest shards`` launch runs through defs.launch


def test_defs_never_imports_the_cli() -> None:
    """The Dagster side depends on the engine, the store and the plans, never on the command line."""
    dagster_side = [PACKAGE / "definitions.py", *sorted((PACKAGE / "defs").rglob("*.py"))]
    offenders = {
        str(path.relative_to(ROOT)): sorted(
            n for n in _imports(path) if n.startswith(("ingest_assets.cli", "ingest_assets.commands"))
        )
        for path in dagster_side
    }
    assert len(offenders) > 10
    assert {path: names for path, names in offenders.items() if names} == {}
    assert not (PACKAGE / "commands.py").exists() and not (PACKAGE / "cli.py").exists()
    relative = [  # which these checks would not see
        str(path.relative_to(ROOT))
        for path in sorted(PACKAGE.rglob("*.py"))
        for node in ast.walk(ast.parse(path.read_text()))
        if isinstance(node, ast.ImportFrom) and node.level
    ]
    assert relative == []


def test_importing_the_plain_layers_loads_no_dagster() -> None:
    modules = sorted(
        ".".join(("ingest_assets", *p.relative_to(PACKAGE).with_suffix("").parts)).removesuffix(".__init__")
        for p in _plain_modules()
    )
    code = (
        f"import sys, importlib\nfor m in {modules!r}: importlib.import_module(m)\n"
        "print('dagster' in sys.modules)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd=ROOT)
    assert out.stdout.strip() == "False"


def test_no_module_is_over_about_500_lines() -> None:
    sizes = {str(p.relative_to(ROOT)): len(p.read_text().splitlines()) for p in sorted(PACKAGE.rglob("*.py"))}
    assert {path: n for path, n in sizes.items() if n > 520} == {}


def _reads_a_bar(node: ast.AST) -> bool:
    """``"|" in x`` or ``x.split("|")`` (``rsplit``, ``partition``, ``rpartition``)."""
    if isinstance(node, ast.Compare):
        return isinstance(node.left, ast.Constant) and node.left.value == "|"
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute):
        splits = node.func.attr in ("split", "rsplit", "partition", "rpartition")
        return splits and any(isinstance(a, ast.Constant) and a.value == "|" for a in node.args)
    return False


def test_only_the_key_helpers_read_a_chunk_partition() -> None:
    """``<plan key>|<shard>`` is read by ``engine/keys.py`` only (``plan_and_shard``,
    ``is_chunk_partition``): no other module tests for or splits at a ``"|"``."""
    reading = {
        str(path.relative_to(PACKAGE))
        for path in sorted(PACKAGE.rglob("*.py"))
        for node in ast.walk(ast.parse(path.read_text()))
        if _reads_a_bar(node)
    }
    assert reading == {"engine/keys.py"}


def _reads_the_environment(node: ast.AST) -> bool:
    """``Settings.from_env(...)``, ``Settings(...)`` or an ``os.environ`` / ``os.getenv`` read of
    an ``INGEST_*`` variable."""
    if isinstance(node, ast.Call):
        func = node.func
        if isinstance(func, ast.Name) and func.id == "Settings":
            return True
        if isinstance(func, ast.Attribute) and func.attr == "from_env":
            return isinstance(func.value, ast.Name) and func.value.id == "Settings"
        if isinstance(func, ast.Attribute) and func.attr in ("get", "getenv"):
            return any(isinstance(a, ast.Constant) and str(a.value).startswith("INGEST_") for a in node.args)
    return False


def test_settings_are_read_at_the_entry_points_and_passed_down() -> None:
    """The environment is read where a process starts its work (the CLI's ``main``, the code
    location, a run's resource, the library's front doors) and nowhere deeper: the store,
    engine, steps and workers are given a :class:`Settings`."""
    reading = {
        str(path.relative_to(PACKAGE))
        for path in sorted(PACKAGE.rglob("*.py"))
        if path.name != "settings.py"
        for node in ast.walk(ast.parse(path.read_text()))
        if _reads_the_environment(node)
    }
    assert reading == {
        "cli/parser.py",  # `ingest`: once, for every command
        "cli/run.py",  # run_pipeline(), the library's way to run the pipeline
        "defs/__init__.py",  # the code location
        "defs/resources.py",  # a run process (launched by the CLI, the UI or the daemon)
        "store/store.py",  # IngestStore(path) without settings, for library users
    }
