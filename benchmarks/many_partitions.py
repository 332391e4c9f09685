"""One small event listing thousands of partitions: what it costs to ingest and to ask about.

A run writes ``--partitions`` partitions (default 10,000) of ``day=2024-01-01/part=N``, a
numeric column, and a second run reads them all and writes as many of another dataset: two
events of a few MB. Then, each timed once from a cold start of its own (a new connection, as
the CLI and the service answer one click), it prints the wall and CPU time of the ingest, of
``lineage partitions`` of the output, of the impact of one input partition (through the run
that read them all: it recomputes every partition it wrote) and of the provenance of one
output partition; then the server time of the pages an on-call engineer opens for it (the two
dataset pages, the impact and provenance answer pages, the JSON impact), through a real
``lineage serve`` on 127.0.0.1 (as ``benchmarks/pages.py`` measures them).

Target (issue 38): each within 1 s. Before the partitions were looked up by key, the impact
asked ``partition_overlap`` of each listed partition against every known one: at 2,000
partitions 4,000,000 evaluations, minutes.

    python benchmarks/many_partitions.py [--partitions 10000] [--repeat 3]
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any
from urllib.parse import urlencode

sys.path.insert(0, str(Path(__file__).parent))

from pages import measured, started  # benchmarks/pages.py: the real server, a page's times
from serve import stop_server

from openlineage_subset.lineage import dataset_partitions, impact, ingest, provenance

NAMESPACE = "file"
READ, WRITTEN = "/lake/many/in", "/lake/many/out"
PRODUCER = "https://github.com/openlineage-subset/openlineage-subset/benchmarks"
_FACET = "https://openlineage.io/spec/facets/1-0-0/BaseSubsetDatasetFacet.json"
_EVENT = "https://openlineage.io/spec/2-0-2/OpenLineage.json#/$defs/RunEvent"


def _event(number: int, job: str, reads: list[str], writes: list[str], count: int) -> Any:
    condition = {
        "type": "partition",
        "partitions": [
            {
                "identifier": f"day=2024-01-01/part={n}",
                "dimensions": {"day": "2024-01-01", "part": str(n)},
            }
            for n in range(count)
        ],
    }

    def dataset(name: str, key: str) -> Any:
        facet = {"_producer": PRODUCER, "_schemaURL": _FACET, f"{key}Condition": condition}
        return {"namespace": NAMESPACE, "name": name, f"{key}Facets": {"subset": facet}}

    return {
        "eventType": "COMPLETE",
        "eventTime": f"2024-01-0{number + 1}T00:00:00Z",
        "producer": PRODUCER,
        "schemaURL": _EVENT,
        "run": {"runId": f"01900000-0000-7000-8000-{number:012d}"},
        "job": {"namespace": "bench", "name": job},
        "inputs": [dataset(name, "input") for name in reads],
        "outputs": [dataset(name, "output") for name in writes],
    }


def timed(function: Callable[[], Any]) -> tuple[float, float]:
    cpu, wall = time.process_time(), time.perf_counter()
    function()
    return time.perf_counter() - wall, time.process_time() - cpu


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--partitions", type=int, default=10_000, help="partitions listed")
    parser.add_argument("--repeat", type=int, default=3, help="requests of each page (median)")
    args = parser.parse_args()
    count = args.partitions
    with tempfile.TemporaryDirectory() as folder:
        events = Path(folder, "events.jsonl")
        with events.open("w", encoding="utf-8") as out:
            for item in (
                _event(1, "load", [], [READ], count),
                _event(2, "spread", [READ], [WRITTEN], count),
            ):
                out.write(json.dumps(item) + "\n")
        db = Path(folder, "lineage.db")
        asked = {"day": "2024-01-01", "part": str(count // 2)}
        print(f"{count:,} partitions a dataset; 2 events, {events.stat().st_size / 1e6:.1f} MB")
        print(f"{'':32} {'wall s':>8} {'CPU s':>8}")
        for name, function in [
            ("ingest", lambda: ingest([events], db)),
            ("partitions of the output", lambda: dataset_partitions(db, WRITTEN)),
            ("impact of one input partition", lambda: impact(db, READ, partition=asked)),
            ("provenance of one output one", lambda: provenance(db, WRITTEN, partition=asked)),
        ]:
            wall, cpu = timed(function)
            print(f"{name:32} {wall:8.3f} {cpu:8.3f}")
        process, base = started(db, None)
        try:
            typed = ", ".join(f"{column}={value}" for column, value in asked.items())
            api = [("dataset", READ), *(("partition", f"{k}={v}") for k, v in asked.items())]
            for name, path in [
                (
                    "dataset page, input",
                    f"/dataset?{urlencode({'namespace': NAMESPACE, 'name': READ})}",
                ),
                (
                    "dataset page, output",
                    f"/dataset?{urlencode({'namespace': NAMESPACE, 'name': WRITTEN})}",
                ),
                (
                    "impact page",
                    f"/answer?{urlencode({'namespace': NAMESPACE, 'name': READ, 'ask': typed})}",
                ),
                (
                    "provenance page",
                    "/answer?"
                    + urlencode(
                        {
                            "namespace": NAMESPACE,
                            "name": WRITTEN,
                            "query": "provenance",
                            "ask": typed,
                        }
                    ),
                ),
                ("api impact", f"/api/v1/impact?{urlencode(api)}"),
            ]:
                times, _ = measured(base, process.pid, path, args.repeat)
                print(
                    f"{name:32} {times['wall']:8.3f} {times['cpu']:8.3f} "
                    f"({times['bytes'] / 1e6:.1f} MB, server CPU)"
                )
        finally:
            stop_server(process)


if __name__ == "__main__":
    main()
