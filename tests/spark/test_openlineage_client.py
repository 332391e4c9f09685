"""The installed openlineage-python still behaves as ``_openlineage_client`` relies on.

Run where the ``spark`` extra is installed (the nox ``spark`` sessions), against whatever
release of the supported range pip chose; no SparkSession is needed. When one of these fails
after an openlineage-python release, the adapter module is the one place to change.
"""

from __future__ import annotations

import json
import os
import re
import uuid
from importlib import metadata
from pathlib import Path

import pytest

pytest.importorskip("openlineage.client", reason="openlineage-python comes with the spark extra")

from openlineage.client.run import Job, Run, RunEvent, RunState
from openlineage.client.serde import Serde

from openlineage_subset.delivery import (
    SUPPORTED,
    configured_transport,
    new_run_id,
    to_json,
    wire_event,
)

ROOT = Path(__file__).parents[2]


def test_the_supported_range_is_the_spark_extra_s_and_holds_the_installed_release() -> None:
    spark_extra = re.search(r"^spark = \[(.*)\]$", (ROOT / "pyproject.toml").read_text(), re.M)
    assert spark_extra is not None and f'"openlineage-python{SUPPORTED}"' in spark_extra[1]
    installed = tuple(int(part) for part in metadata.version("openlineage-python").split(".")[:2])
    low, high = re.findall(r"[0-9][0-9.]*", SUPPORTED)
    assert tuple(int(part) for part in low.split(".")) <= installed < (int(high), 0)


def test_serde_drops_nulls_and_the_wire_event_keeps_them() -> None:
    event = {
        "eventType": "COMPLETE",
        "run": {"runId": "r", "facets": {"x": None}},
        "outputs": [{"name": "t", "facets": {"subset": {"dimensions": {"day": None}}}}],
    }
    plain = json.loads(Serde.to_json(event))
    assert "x" not in plain["run"]["facets"], "the premise: its serializer drops None"
    assert plain["outputs"][0]["facets"]["subset"]["dimensions"] == {}, "and erases nulls"
    wired = json.loads(Serde.to_json(wire_event(event)))
    assert wired["outputs"] == event["outputs"], "the dataset lists travel verbatim"


def test_the_configured_transport_follows_its_documented_variables(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    for name in ("OPENLINEAGE_URL", "OPENLINEAGE_CONFIG", "OPENLINEAGE_DISABLED"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("HOME", str(tmp_path))
    monkeypatch.setenv("OPENLINEAGE__TRANSPORT__TYPE", "console")
    transport, settings = configured_transport()
    assert type(transport).__name__ == "ConsoleTransport" and settings["type"] == "console"

    monkeypatch.delenv("OPENLINEAGE__TRANSPORT__TYPE")
    monkeypatch.setenv("OPENLINEAGE_URL", "http://127.0.0.1:9")
    before = dict(os.environ)
    transport, _ = configured_transport()
    assert type(transport).__name__ == "HttpTransport"
    assert dict(os.environ) == before, "the environment is left as it was"

    monkeypatch.setenv("OPENLINEAGE_URL", "not-a-url")
    with pytest.raises(ValueError, match="not-a-url"):
        configured_transport()


def test_its_own_events_serialize_and_run_ids_are_uuid7() -> None:
    run_id = new_run_id()
    assert uuid.UUID(run_id).version == 7
    event = RunEvent(
        eventType=RunState.START,
        eventTime="2024-10-15T00:00:00Z",
        run=Run(runId=run_id),
        job=Job(namespace="n", name="j"),
        producer="p",
    )
    assert json.loads(to_json(event))["run"] == {"runId": run_id, "facets": {}}
