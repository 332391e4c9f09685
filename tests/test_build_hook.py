"""The wheel's build hook (hatch_build.py) with a stand-in ``javac`` on PATH: a JDK 8 compiler
(no ``--release``) is given ``-source 8 -target 8``, a newer one ``--release 8``, and a compiler
that fails, or cannot be run, leaves a wheel without the class and a warning, never a failed
install (unless ``OL_SUBSET_REQUIRE_JVM_HOOK=1``). No real JDK is used: each build runs in a copy
of the project, so the checkout's compiled class is never touched."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

from tests.helpers import ROOT

pytestmark = pytest.mark.skipif(os.name == "nt", reason="the stand-in javac is a POSIX script")

JVM = Path("src", "openlineage_subset", "spark", "_jvm")
# A stand-in for javac: logs its arguments, behaves as KIND says, and "compiles" each source
# into an empty class file where javac would write it (-d, then the source's package folders).
FAKE_JAVAC = """#!{python}
import json, os, pathlib, sys
args = sys.argv[1:]
with open({log!r}, "a") as log:
    log.write(json.dumps(args) + "\\n")
if {kind!r} == "jdk8" and "--release" in args:
    sys.exit("javac: invalid flag: --release")
if "-version" in args:
    print("javac 0.0-fake")
    sys.exit(0)
if {kind!r} == "failing":
    sys.exit("error: this javac fails")
out = pathlib.Path(args[args.index("-d") + 1])
for source in (arg for arg in args if arg.endswith(".java")):
    package = pathlib.Path(source).relative_to({sources!r}).with_suffix(".class")
    (out / package).parent.mkdir(parents=True, exist_ok=True)
    (out / package).write_bytes(b"")
"""


def _build(tmp_path: Path, kind: str, *, require: bool = False) -> tuple[Path | None, str, Path]:
    """Build a wheel of a copy of the project with javac of KIND first on PATH and no JAVA_HOME:
    the wheel (None when the build failed), the build's output and javac's log of calls."""
    project = tmp_path / "project"
    skip = shutil.ignore_patterns("__pycache__", "classes", "*.egg-info")
    for name in ("pyproject.toml", "hatch_build.py", "README.md", "LICENSE"):
        shutil.copy2(ROOT / name, _mkdir(project) / name)
    for name in ("src", "generated"):
        shutil.copytree(ROOT / name, project / name, ignore=skip)
    tools = _mkdir(tmp_path / "bin")
    log = tmp_path / "javac.log"
    javac = tools / "javac"
    if kind == "unrunnable":
        javac.write_bytes(b"\x7fELF not a program")
    else:
        javac.write_text(
            FAKE_JAVAC.format(
                python=sys.executable, log=str(log), kind=kind, sources=str(project / JVM / "java")
            ),
            encoding="utf-8",
        )
    javac.chmod(0o755)
    env = {
        k: v for k, v in os.environ.items() if k not in {"JAVA_HOME", "OL_SUBSET_REQUIRE_JVM_HOOK"}
    }
    env["PATH"] = os.pathsep.join([str(tools), env.get("PATH", "")])
    if require:
        env["OL_SUBSET_REQUIRE_JVM_HOOK"] = "1"
    wheels = _mkdir(tmp_path / "wheels")
    done = subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "--no-deps", "-v", "-w", str(wheels), str(project)],
        capture_output=True,
        text=True,
        env=env,
        check=False,
    )
    built = sorted(wheels.glob("openlineage_subset-*.whl"))
    return (built[0] if done.returncode == 0 else None), done.stdout + done.stderr, log


def _mkdir(path: Path) -> Path:
    path.mkdir(parents=True, exist_ok=True)
    return path


def _classes_expected() -> set[str]:
    """The class file of each Java source in the checkout, as the wheel names it."""
    java = ROOT / JVM / "java"
    return {
        (JVM / "classes" / path.relative_to(java).with_suffix(".class"))
        .relative_to("src")
        .as_posix()
        for path in java.rglob("*.java")
    }


def _compile_calls(log: Path) -> list[list[str]]:
    calls = [json.loads(line) for line in log.read_text(encoding="utf-8").splitlines()]
    return [call for call in calls if "-version" not in call]


@pytest.mark.parametrize(
    ("kind", "options"),
    [("jdk8", ["-source", "8", "-target", "8"]), ("jdk17", ["--release", "8"])],
)
def test_the_class_is_compiled_for_java_8_with_the_options_the_compiler_has(
    tmp_path: Path, kind: str, options: list[str]
) -> None:
    wheel, output, log = _build(tmp_path, kind)
    assert wheel is not None, output
    (call,) = _compile_calls(log)
    at = call.index(options[0])
    assert call[at : at + len(options)] == options
    assert ("--release" in call) == (kind != "jdk8")
    names = set(zipfile.ZipFile(wheel).namelist())
    assert _classes_expected() <= names


@pytest.mark.parametrize("kind", ["failing", "unrunnable"])
def test_a_compiler_that_fails_leaves_a_wheel_without_the_class_and_says_so(
    tmp_path: Path, kind: str
) -> None:
    wheel, output, _ = _build(tmp_path, kind)
    assert wheel is not None, output
    names = zipfile.ZipFile(wheel).namelist()
    assert "openlineage_subset/spark/_jvm/__init__.py" in names
    assert not [name for name in names if name.endswith(".class")]
    assert "WARNING: openlineage-subset:" in output
    said = {"failing": "this javac fails", "unrunnable": "could not be run"}[kind]
    assert said in output
    assert "pip install --no-cache-dir --force-reinstall" in output


def test_a_failing_compiler_is_an_error_where_the_class_is_required(tmp_path: Path) -> None:
    wheel, output, _ = _build(tmp_path, "failing", require=True)
    assert wheel is None
    assert "this javac fails" in output
