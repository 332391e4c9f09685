"""openlineage-dbt for real: ``dbt-ol seed`` and ``dbt-ol run`` (twice: the second run of the
incremental model is incremental) on the dbt-duckdb project of ``dbt_project/``, posting with
openlineage-python's HTTP transport to ``lineage serve``. Its events are stored, the dataset
page shows the models, and the answers call a dbt model what it is: a dataset written whole by
every run, with no partitions.

Needs ``dbt-ol`` (openlineage-dbt with dbt-core and dbt-duckdb: the ``producers`` nox session
installs them); skipped, saying so, without it. Nothing is fetched but what pip installed.
"""

from __future__ import annotations

import os
import re
import shutil
import sqlite3
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

from tests.real_producers.conftest import api, lineage_text, runs_of
from tests.service.conftest import Server
from tests.service.helpers import fetch, page_path

PROJECT = Path(__file__).parent / "dbt_project"
MODELS = ("paid_orders", "daily_sales")
DBT_SECONDS = 300


def _dbt_ol() -> Path:
    """The ``dbt-ol`` beside this Python (a nox session's), or on PATH."""
    beside = Path(sys.executable).parent / "dbt-ol"
    found = beside if beside.is_file() else shutil.which("dbt-ol")
    if found is None:
        pytest.skip(
            "openlineage-dbt is not installed (no dbt-ol beside this Python or on PATH): "
            "`nox -s producers` installs it with dbt-core and dbt-duckdb"
        )
    return Path(found)


def _dbt(dbt_ol: Path, project: Path, server: Server, *args: str) -> int:
    """Run ``dbt-ol ARGS`` in ``project``, sending to ``server``; the events it emitted."""
    env = {
        **os.environ,
        # dbt-ol starts `dbt` by name: the one installed beside it.
        "PATH": os.pathsep.join([str(dbt_ol.parent), os.environ.get("PATH", "")]),
        "OPENLINEAGE_URL": server.url,
        "OPENLINEAGE_NAMESPACE": "shop",
        "DBT_PROFILES_DIR": str(project),
        "SHOP_DUCKDB": str(project / "shop.duckdb"),
        "DBT_SEND_ANONYMOUS_USAGE_STATS": "false",
        "DO_NOT_TRACK": "1",
    }
    env.pop("OPENLINEAGE_CONFIG", None)
    done = subprocess.run(
        [str(dbt_ol), *args],
        cwd=project,
        env=env,
        capture_output=True,
        text=True,
        timeout=DBT_SECONDS,
        check=False,
    )
    output = done.stdout + done.stderr
    assert done.returncode == 0, output[-4000:]
    emitted = re.search(r"Emitted (\d+) OpenLineage events", output)
    assert emitted is not None, output[-4000:]
    return int(emitted.group(1))


def _stored_events(server: Server) -> int:
    with sqlite3.connect(server.db) as connection:
        (count,) = connection.execute("SELECT count(*) FROM events").fetchone()
    connection.close()
    return int(count)


def test_dbt_ol_runs_are_stored_shown_and_answered_as_whole_datasets(
    serve: Callable[..., Server], tmp_path: Path
) -> None:
    dbt_ol = _dbt_ol()
    project = tmp_path / "shop"
    shutil.copytree(PROJECT, project)
    server = serve()
    emitted = _dbt(dbt_ol, project, server, "seed")
    emitted += _dbt(dbt_ol, project, server, "run")
    # A new day of orders, then the second run: the incremental model adds it.
    with (project / "seeds" / "orders.csv").open("a", encoding="utf-8") as seed:
        seed.write("6,2024-11-04,DE,5.00\n")
    emitted += _dbt(dbt_ol, project, server, "seed")
    emitted += _dbt(dbt_ol, project, server, "run")
    compiled = (project / "target" / "run" / "shop" / "models" / "daily_sales.sql").read_text()
    assert "insert into" in compiled.lower(), "the second run did not run incrementally"

    # Stored: every event dbt-ol sent, a START and an end for each run.
    assert _stored_events(server) == emitted
    runs = runs_of(server)
    assert len(runs) * 2 == emitted
    assert all(run["status"] == "COMPLETE" for run in runs)
    by_job: dict[str, int] = {}
    for run in runs:
        for model in MODELS:
            if run["job"]["name"].endswith(f".{model}"):
                by_job[model] = by_job.get(model, 0) + 1
    assert by_job == dict.fromkeys(MODELS, 2), by_job

    datasets = {item["name"]: item for item in api(server, "datasets")["datasets"]}
    names = {model: f"shop.main.{model}" for model in ("orders", *MODELS)}
    assert set(names.values()) <= set(datasets), sorted(datasets)
    for model in MODELS:
        assert datasets[names[model]]["writes"] == 2
        assert datasets[names[model]]["partitions"] == 0
    assert datasets[names["orders"]]["reads"] == 2  # the view read the source, each run
    namespace = datasets[names["daily_sales"]]["namespace"]
    assert namespace.startswith("duckdb://")

    # Shown: the dataset page of each model answers and names it.
    for model in MODELS:
        shown = page_path("/dataset", namespace=namespace, name=names[model])
        status, _, page = fetch(server, shown)
        assert status == 200 and names[model] in page
        assert "Written whole by every run (2 write(s)): no partitions." in page

    # Answered: a dbt model is written whole; impact follows the models whole.
    text = lineage_text(server, "partitions", names["daily_sales"], "--namespace", namespace)
    assert "Written whole by every run (2 write(s)): no partitions." in text
    assert "No partition known" not in text
    answer = api(server, "partitions", dataset=names["daily_sales"], namespace=namespace)
    assert answer["partitions"] == [] and answer["writes"] == answer["wholeWrites"] == 2
    text = lineage_text(server, "impact", names["orders"], "--namespace", namespace)
    assert f"Impact of {namespace}/{names['orders']} (whole dataset)" in text
    assert "4 run(s) affected: 4 definite, 0 possible" in text
    plan = text.split("Backfill plan: recompute", 1)[1].splitlines()
    for model in MODELS:
        at = plan.index(f"  {namespace}/{names[model]}")
        assert plan[at + 1] == "    whole dataset (definite)"
