"""The tests mirror the code, so a test is found where its subject is:

- ``tests/unit/<path>/test_*.py`` tests ``graphsvc/<path>`` with no server (``tests/unit/project``
  holds the tests about the project as a whole: its architecture, docs, files);
- ``tests/integration/<feature>/test_*.py`` tests a feature against the real servers;
- ``tests/api/test_*.py`` speaks to the app over HTTP only, as a black box.

Every folder of tests is a package, so two folders may hold files of the same name. What tests
share lives once, in ``tests/support`` (or a folder's ``conftest.py``): no test module imports
another, and no function is written out twice."""

from __future__ import annotations

import ast
from collections import defaultdict
from pathlib import Path

from tests.support.paths import ROOT

TESTS = ROOT / "tests"
PACKAGE = ROOT / "graphsvc"
TIERS = {"unit", "integration", "api"}


def _test_files() -> list[Path]:
    return sorted(TESTS.rglob("test_*.py"))


def _python_files() -> list[Path]:
    return sorted(path for path in TESTS.rglob("*.py") if path.name != "__init__.py")


def _relative(path: Path) -> str:
    return path.relative_to(ROOT).as_posix()


def test_every_unit_test_sits_under_the_package_path_it_tests() -> None:
    unit = TESTS / "unit"
    strays = [
        _relative(path)
        for path in unit.rglob("test_*.py")
        if path.parent.relative_to(unit).parts[:1] != ("project",)
        and not (PACKAGE / path.parent.relative_to(unit) / "__init__.py").is_file()
    ]
    assert not strays, (
        "unit tests under a path graphsvc/ has no package for (move each to "
        "tests/unit/<the path of what it tests>, or tests/unit/project):\n" + "\n".join(strays)
    )


def test_every_test_file_sits_in_a_tier_and_an_integration_test_in_a_feature() -> None:
    strays = [
        _relative(path)
        for path in _test_files()
        if len(parts := path.relative_to(TESTS).parts) < 2
        or parts[0] not in TIERS
        or (parts[0] == "integration" and len(parts) < 3)
    ]
    assert not strays, (
        "test files outside tests/unit/<path>, tests/integration/<feature> and tests/api:\n"
        + "\n".join(strays)
    )


def test_every_folder_of_tests_is_a_package() -> None:
    folders = {path.parent for path in [*_test_files(), *TESTS.rglob("conftest.py")]}
    chain = {
        up for folder in folders for up in [folder, *folder.parents] if up.is_relative_to(TESTS)
    }
    bare = sorted(_relative(folder) for folder in chain if not (folder / "__init__.py").is_file())
    assert not bare, "folders of tests without an __init__.py:\n" + "\n".join(bare)


def _is_test_module(module: str) -> bool:
    return any(part.startswith("test_") or part == "conftest" for part in module.split("."))


def _test_modules_named(node: ast.Import | ast.ImportFrom) -> list[str]:
    """The test modules (test_*, conftest) an import statement names."""
    if isinstance(node, ast.Import):
        modules = [alias.name for alias in node.names]
    elif _is_test_module(node.module or ""):
        modules = [node.module or ""]
    else:
        modules = [f"{node.module or ''}.{alias.name}".strip(".") for alias in node.names]
    return [module for module in modules if _is_test_module(module)]


def test_no_test_module_imports_another() -> None:
    found = [
        f"{_relative(path)}:{node.lineno}: {module}"
        for path in _python_files()
        for node in ast.walk(ast.parse(path.read_text()))
        if isinstance(node, ast.Import | ast.ImportFrom)
        for module in _test_modules_named(node)
    ]
    assert not found, (
        "test modules imported (move what they share to tests/support):\n" + "\n".join(found)
    )


def test_no_function_is_written_twice() -> None:
    """A function (or class) of the same name and the same code in two files of tests/ is a
    copy: it belongs in tests/support, once."""
    written: dict[tuple[str, str], list[str]] = defaultdict(list)
    for path in _python_files():
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
                written[node.name, ast.dump(node)].append(f"{_relative(path)}:{node.lineno}")
    copies = [
        f"{name}: {', '.join(places)}"
        for (name, _), places in sorted(written.items())
        if len({place.split(":")[0] for place in places}) > 1
    ]
    assert not copies, "functions written out in more than one file:\n" + "\n".join(copies)
