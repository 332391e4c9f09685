"""The wheel's build hook: compiles the package's one Java class, the listener that lets capture
see every session of a Spark application (``spark/_jvm/java``).

The class names no Spark type, so it is compiled against the JDK alone, for Java 8 (it runs on
every Java Spark runs on): ``--release 8`` where the compiler has that option (JDK 9 and later),
``-source 8 -target 8`` on JDK 8's, whose compiler lacks it (asked of the compiler, not guessed
from its version). No Spark jar, nothing downloaded. The output goes to ``spark/_jvm/classes``
(ignored by git, shipped in the wheel as an artifact). With no Java compiler on the machine, or
one that fails, the wheel is built without the class: capture then sees the session it was
enabled on only, and says so once when it starts. ``OL_SUBSET_REQUIRE_JVM_HOOK=1`` makes either
an error instead (CI sets it). Both wheels have the same name: docs/capture.md says how to get
the full one when pip's cache holds the other.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

from hatchling.builders.hooks.plugin.interface import BuildHookInterface

JVM_LAYER = Path("src", "openlineage_subset", "spark", "_jvm")
SOURCES = JVM_LAYER / "java"
CLASSES = JVM_LAYER / "classes"
# What a user does once a JDK is there: pip's cache may hold the wheel built without the class
# (same name, same version), which a plain reinstall would take again.
REINSTALL = "pip install --no-cache-dir --force-reinstall --no-deps openlineage-subset"
WITHOUT_CLASS = (
    "the wheel is built without the listener that captures every Spark session; capture will "
    "see the session it is enabled on only. Install a JDK (Java 8 or later) and reinstall "
    f"without pip's cache ({REINSTALL})."
)


class JavacFailed(Exception):
    """The Java compiler could not be run, or rejected the sources."""


def find_javac() -> str | None:
    """``$JAVA_HOME/bin/javac``, else ``javac`` on PATH; None when there is neither."""
    home = os.environ.get("JAVA_HOME")
    if home:
        candidate = Path(home, "bin", "javac")
        if candidate.is_file() and os.access(candidate, os.X_OK):
            return str(candidate)
    return shutil.which("javac")


def java8_options(javac: str) -> list[str]:
    """The options that compile for Java 8 with this compiler.

    ``--release 8`` (JDK 9 and later) also checks the code against Java 8's API; JDK 8's javac
    does not know the option and compiles for itself with ``-source 8 -target 8``. The compiler
    is asked (``--release 8 -version`` succeeds only where the option exists), not guessed from
    a version string.
    """
    probe = _run([javac, "--release", "8", "-version"])
    return ["--release", "8"] if probe.returncode == 0 else ["-source", "8", "-target", "8"]


def _run(command: list[str]) -> subprocess.CompletedProcess[str]:
    """Run the compiler with its output captured; ``JavacFailed`` when it cannot be started."""
    try:
        return subprocess.run(command, capture_output=True, text=True, check=False)
    except OSError as error:
        raise JavacFailed(f"{command[0]} could not be run: {error}") from error


def compile_java(root: Path, javac: str) -> list[Path]:
    """Compile every source under ``SOURCES`` into ``CLASSES``; the class files written.

    Raises ``JavacFailed`` (with the compiler's output) when it cannot run or fails, leaving no
    class behind, so that a failed build never ships a stale or partial class.
    """
    sources = sorted(str(path) for path in (root / SOURCES).rglob("*.java"))
    output = root / CLASSES
    options = [*java8_options(javac), "-Xlint:-options", "-encoding", "UTF-8", "-d", str(output)]
    shutil.rmtree(output, ignore_errors=True)
    output.mkdir(parents=True)
    try:
        done = _run([javac, *options, *sources])
        if done.returncode != 0:
            said = (done.stdout + done.stderr).strip()
            raise JavacFailed(f"{javac} failed (exit status {done.returncode}): {said}")
    except JavacFailed:
        shutil.rmtree(output, ignore_errors=True)
        raise
    return sorted(output.rglob("*.class"))


class JavaClassesHook(BuildHookInterface):  # type: ignore[type-arg]
    """Compiles the Java sources before each build, into the package's ``classes`` folder."""

    def initialize(self, version: str, build_data: dict[str, Any]) -> None:
        javac = find_javac()
        try:
            if javac is None:
                raise JavacFailed("no Java compiler (javac) found")
            compile_java(Path(self.root), javac)
        except JavacFailed as failure:
            message = f"openlineage-subset: {failure}: {WITHOUT_CLASS}"
            if os.environ.get("OL_SUBSET_REQUIRE_JVM_HOOK") == "1":
                raise RuntimeError(message) from failure
            print(f"WARNING: {message}", file=sys.stderr)
            return
        build_data["artifacts"].append(f"/{CLASSES.as_posix()}/**/*.class")
