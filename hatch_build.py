"""The wheel's build hook: compiles the package's one Java class, the listener that lets capture
see every session of a Spark application (``spark/_jvm/java``).

The class names no Spark type, so it is compiled against the JDK alone (``javac --release 8``:
it runs on every Java Spark runs on), with no Spark jar and nothing downloaded. Its output goes
to ``spark/_jvm/classes`` (ignored by git, shipped in the wheel as an artifact). With no Java
compiler on the machine the wheel is built without it: capture then sees the session it was
enabled on only, and says so once when it starts. ``OL_SUBSET_REQUIRE_JVM_HOOK=1`` makes a
missing compiler an error instead (CI sets it).
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


def find_javac() -> str | None:
    """``$JAVA_HOME/bin/javac``, else ``javac`` on PATH; None when there is neither."""
    home = os.environ.get("JAVA_HOME")
    if home:
        candidate = Path(home, "bin", "javac")
        if candidate.is_file() and os.access(candidate, os.X_OK):
            return str(candidate)
    return shutil.which("javac")


def compile_java(root: Path, javac: str) -> list[Path]:
    """Compile every source under ``SOURCES`` into ``CLASSES``; the class files written."""
    sources = sorted(str(path) for path in (root / SOURCES).rglob("*.java"))
    output = root / CLASSES
    shutil.rmtree(output, ignore_errors=True)
    output.mkdir(parents=True)
    options = ["--release", "8", "-Xlint:-options", "-encoding", "UTF-8", "-d", str(output)]
    subprocess.run([javac, *options, *sources], check=True)
    return sorted(output.rglob("*.class"))


class JavaClassesHook(BuildHookInterface):  # type: ignore[type-arg]
    """Compiles the Java sources before each build, into the package's ``classes`` folder."""

    def initialize(self, version: str, build_data: dict[str, Any]) -> None:
        root = Path(self.root)
        javac = find_javac()
        if javac is None:
            message = (
                "openlineage-subset: no Java compiler (javac) found: the wheel is built without "
                "the listener that captures every Spark session; capture will see the session "
                "it is enabled on only. Install a JDK (Java 8 or later) and build again."
            )
            if os.environ.get("OL_SUBSET_REQUIRE_JVM_HOOK") == "1":
                raise RuntimeError(message)
            print(message, file=sys.stderr)
            return
        compile_java(root, javac)
        build_data["artifacts"].append(f"/{CLASSES.as_posix()}/**/*.class")
