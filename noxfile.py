"""Developer and CI sessions. ``nox`` alone runs the default set, which is what CI runs.

- ``tests``: pytest against a plain (non-editable) install of the project (without Spark; with
  the ``serve`` extra and openlineage-python, whose ``HttpTransport`` the service's tests use).
- ``sdk``: the SDK's own tests (no Spark, no lineage database) on the other Pythons the package
  claims (3.10, 3.12, 3.13; ``tests`` runs on the one nox runs on).
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
  127.0.0.1): openlineage-dbt's ``dbt-ol`` on a small dbt-duckdb project (tests/producers/
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
nox.options.default_venv_backend = "venv"
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
# that runs nox; `sdk` covers the others (CI makes them findable: see .ci/run).
OTHER_PYTHONS = ["3.10", "3.12", "3.13"]


@nox.session
def tests(session: nox.Session) -> None:
    """Unit, property and CLI tests; pass pytest options after ``--``."""
    # The service's tests send events with openlineage-python's HttpTransport.
    session.install(".[test,codegen,serve]", OPENLINEAGE_PYTHON)
    session.run(
        "python",
        "-m",
        "pytest",
        "--ignore=tests/spark",
        "--ignore=tests/browser",
        "--ignore=tests/producers",
        "--ignore=tests/airflow",
        *session.posargs,
    )


@nox.session(python=OTHER_PYTHONS)
def sdk(session: nox.Session) -> None:
    """The SDK tests on another supported Python: models, generator, validation, CLI."""
    session.install(".[test,codegen,serve]", OPENLINEAGE_PYTHON)
    session.run(
        "python",
        "-m",
        "pytest",
        "--ignore=tests/spark",
        "--ignore=tests/lineage",
        "--ignore=tests/browser",
        "--ignore=tests/producers",
        "--ignore=tests/airflow",
        "-m",
        "not slow",
        *session.posargs,
    )


@nox.session
@nox.parametrize("pyspark", list(PYSPARK))
def spark(session: nox.Session, pyspark: str) -> None:
    """The adapter's tests on a real local SparkSession with PySpark ``pyspark``."""
    session.install(".[test,spark]", PYSPARK[pyspark])
    # The cluster's own tests run in the cluster sessions.
    session.run("python", "-m", "pytest", "tests/spark", "-m", "not cluster", *session.posargs)


# The Spark Connect client's dependencies, for its tests (pandas 3 is not supported by PySpark 4.3).
CONNECT = ("pyspark[connect]>=4,<5", "pandas<3")
CLUSTER_REDUCED = (
    "tests/spark/test_writes.py",
    "tests/spark/test_cluster_faults.py::test_a_worker_lost_in_the_middle_of_a_partitioned_write",
    "tests/spark/test_spark_connect.py",
    "tests/spark/test_connect_server.py",
)


@nox.session
def cluster(session: nox.Session) -> None:
    """Capture on a standalone cluster of this machine, on a reduced set of tests.

    The write scenarios (static, dynamic and mixed overwrites, appends, catalog tables), one
    fault, Spark Connect (clients of PySpark's own server, and of ``ol-subset connect-server``
    with the cluster as master).
    """
    session.install(".[test,spark]", PYSPARK["4"], *CONNECT)
    session.run(
        "python",
        "-m",
        "pytest",
        *(session.posargs or CLUSTER_REDUCED),
        env={"OL_SUBSET_SPARK_CLUSTER": "1"},
    )


@nox.session
@nox.parametrize("pyspark", list(PYSPARK))
def cluster_full(session: nox.Session, pyspark: str) -> None:
    """Every Spark test on the standalone cluster, with every fault, on PySpark ``pyspark``.

    Spark Connect on 4.x only: 3.5's pip package holds no Connect server.
    """
    session.install(".[test,spark]", PYSPARK[pyspark], *(CONNECT if pyspark == "4" else ()))
    session.run(
        "python",
        "-m",
        "pytest",
        "tests/spark",
        *session.posargs,
        env={"OL_SUBSET_SPARK_CLUSTER": "1"},
    )


@nox.session
def lint(session: nox.Session) -> None:
    """Ruff lint and format check (generated/ is excluded: it is checked by codegen_check)."""
    session.install(RUFF)
    session.run("ruff", "check", ".")
    session.run("ruff", "format", "--check", ".")


@nox.session
def typecheck(session: nox.Session) -> None:
    """mypy --strict on the hand-written package and the generator."""
    session.install(".[codegen,serve]", *MYPY)
    session.run("mypy")
    # The public API keeps its precise types: assert_type fails on Any or a wider type.
    session.run("mypy", "tests/typing/public_api.py")


@nox.session
def codegen(session: nox.Session) -> None:
    """Regenerate generated/ from schemas/; ``-- --check`` only reports stale files."""
    session.install(".[codegen]")
    session.run("python", "-m", "codegen", *session.posargs)


@nox.session
def codegen_check(session: nox.Session) -> None:
    """Fail when generated/ is not what schemas/ give."""
    session.install(".[codegen]")
    session.run("python", "-m", "codegen", "--check")


@nox.session
def conformance(session: nox.Session) -> None:
    """The shipped examples and the reference corpus through the CLI of a plain wheel install."""
    session.install(".")
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


@nox.session
def demo(session: nox.Session) -> None:
    """The main job and ``ol-subset run`` on an unmodified script, from a fresh install."""
    session.install(".[spark]")
    work = Path(session.create_tmp()) / "demo"
    shutil.rmtree(work, ignore_errors=True)
    session.run("ol-subset", "demo", "--workdir", str(work / "pipeline"))
    events = work / "script" / "events.jsonl"
    session.run(
        "ol-subset", "run", "--output", str(events), "examples/spark_job.py", str(work / "data")
    )
    session.run("ol-subset", "validate", "--strict", str(events))


@nox.session
@nox.parametrize("pyspark", list(PYSPARK))
def bundled_java(session: nox.Session, pyspark: str) -> None:
    """The demo on the ``[java]`` extra's runtime alone: no JAVA_HOME, no ``java`` on PATH."""
    session.install(".[spark,java]", PYSPARK[pyspark])
    work = Path(session.create_tmp()) / "bundled_java"
    shutil.rmtree(work, ignore_errors=True)
    # Spark's scripts and Hadoop need bash and coreutils: link every tool of PATH but java.
    tools = work / "bin"
    tools.mkdir(parents=True)
    for folder in filter(None, os.environ["PATH"].split(os.pathsep)):
        for tool in Path(folder).glob("*"):
            if tool.name != "java" and not os.path.lexists(tools / tool.name):
                (tools / tool.name).symlink_to(tool)
    env = {"JAVA_HOME": None, "PATH": str(tools)}
    session.run("python", "-c", "import shutil, sys; sys.exit(shutil.which('java'))", env=env)
    session.run("ol-subset", "demo", "--workdir", str(work / "demo"), env=env)
    session.run("ol-subset", "validate", "--strict", str(work / "demo" / "events.jsonl"))


@nox.session
def browser(session: nox.Session) -> None:
    """The lineage report's HTML page and the served web UI in headless Chromium (Playwright).

    Screenshots go under $OL_SUBSET_ARTIFACTS (browser/, ui/).
    """
    session.install(".[test,serve]", PLAYWRIGHT, "pillow")
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


@nox.session
def producers(session: nox.Session) -> None:
    """Events of real producers (dbt-ol, openlineage-python's HttpTransport) sent to serve.

    Nothing is fetched but packages: the dbt project has no packages (no ``dbt deps``).
    """
    session.install(".[test,serve]", OPENLINEAGE_PYTHON, *DBT)
    session.run(
        "python",
        "-m",
        "pytest",
        "tests/producers",
        "-rsx",
        *session.posargs,
        env={"DBT_SEND_ANONYMOUS_USAGE_STATS": "false", "DO_NOT_TRACK": "1"},
    )


# Airflow 3 and the provider that posts its task runs and gives Spark their parent run.
AIRFLOW = ("apache-airflow>=3,<4", "apache-airflow-providers-openlineage")


@nox.session
def airflow(session: nox.Session) -> None:
    """Airflow's DAG of PySpark tasks under our capture: the impact names the tasks to clear."""
    try:
        session.install(*AIRFLOW, silent=True)
    except CommandFailed:
        session.skip(f"Airflow could not be installed here ({', '.join(AIRFLOW)}): see pip's log")
    session.install(".[test,spark,serve]", PYSPARK["4"])
    session.run("python", "-m", "pytest", "tests/airflow", *session.posargs)


@nox.session
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
