"""GET /api/v1/...: the same JSON as ``ol-subset lineage QUERY --format json``, over the same
database, while events arrive; a bad argument is a 400 with a message."""

from __future__ import annotations

import json
import sqlite3
import subprocess
import threading
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from tests.lineage.events import HOSTILE_NAME, LAKE, pipeline_history, run, write_events
from tests.service.conftest import Server, command, environment

QUERIES = [
    ("impact", ["clean"], {"dataset": "clean"}),
    (
        "impact",
        ["raw", "--partition", "day=2024-10-02", "--partition", "country=PL", "--depth", "2"],
        {"dataset": "raw", "partition": ["day=2024-10-02", "country=PL"], "depth": "2"},
    ),
    (
        "impact",
        ["clean", "--partition", "day=2024-10-03", "--since", "2024-10-15T00:20:00Z"],
        {"dataset": "clean", "partition": "day=2024-10-03", "since": "2024-10-15T00:20:00Z"},
    ),
    (
        "provenance",
        ["rolling", "--partition", "day=2024-10-04"],
        {"dataset": "rolling", "partition": "day=2024-10-04"},
    ),
    (
        "provenance",
        ["report_out", "--namespace", "file"],
        {"dataset": "report_out", "namespace": "file"},
    ),
    (
        "history",
        ["clean", "--partition", "day=2024-10-05"],
        {"dataset": "clean", "partition": "day=2024-10-05"},
    ),
    ("history", [HOSTILE_NAME], {"dataset": HOSTILE_NAME}),
    ("partitions", ["raw"], {"dataset": "raw"}),
    ("datasets", [], {}),
    ("runs", [], {}),
    ("runs", ["--job", "tests.clean", "--limit", "3"], {"job": "tests.clean", "limit": "3"}),
]


def cli_json(db: str, query: str, args: list[str]) -> object:
    done = subprocess.run(
        command("lineage", query, *args, "--db", db, "--format", "json"),
        capture_output=True,
        text=True,
        env=environment(),
        check=False,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


@pytest.fixture
def history_db(tmp_path: Path) -> str:
    events = pipeline_history(days=6)
    events = [
        *events,
        *run(900, 500, 501, reads=[("rolling", None)], writes=[("report_out", None)], job="x"),
    ]
    db = str(tmp_path / "lineage.db")
    done = subprocess.run(
        command("lineage", "ingest", str(write_events(tmp_path / "e.jsonl", events)), "--db", db),
        capture_output=True,
        text=True,
        env=environment(),
        check=False,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    return db


def _as_one_page(answer: Any) -> Any:
    """An impact or provenance answer of the API as the command line's, when all of it is on
    its first page: the page's own keys left out, provenance's runs as the tree's run ids."""
    if answer.get("query") not in ("impact", "provenance"):
        return answer
    assert answer.pop("next") is None, "all of it on one page"
    assert answer.pop("limit") == 50
    total = answer.pop("total")
    if answer["query"] == "provenance":
        answer["runs"] = sorted(run["runId"] for run in answer["runs"])
        assert total["runs"] == len(answer["runs"])
    else:
        assert total["runs"] == len(answer["runs"])
    return answer


def _run_ids(steps: list[Any]) -> set[str]:
    return {step["runId"] for step in steps} | {
        found for step in steps for read in step["inputs"] for found in _run_ids(read["writers"])
    }


def test_the_api_answers_as_the_command_line(serve: Callable[..., Server], history_db: str) -> None:
    server = serve(db=history_db)
    for query, args, params in QUERIES:
        status, answer = server.get(f"/api/v1/{query}?{urllib.parse.urlencode(params, True)}")
        assert status == 200, (query, params, answer)
        expected = cli_json(history_db, query, args)
        if query == "provenance":  # its runs each once, rather than the tree of its writers
            assert isinstance(expected, dict)
            expected["runs"] = sorted(_run_ids(expected.pop("writers")))
        assert _as_one_page(answer) == expected, (query, params)
    # Not empty answers that would agree by accident:
    _, impact = server.get("/api/v1/impact?dataset=clean")
    assert impact["runs"], impact
    _, listed = server.get("/api/v1/datasets")
    assert len(listed["datasets"]) == 5


@pytest.mark.parametrize(
    ("path", "words"),
    [
        ("/api/v1/impact", "name the dataset"),
        ("/api/v1/impact?dataset=clean&partition=day", "partition takes COLUMN=VALUE"),
        (
            "/api/v1/impact?dataset=clean&partition=day=2024-10-01&partition=day=2024-10-02",
            "gives day twice ('2024-10-01' and '2024-10-02')",
        ),
        ("/api/v1/impact?dataset=clean&depth=two", "depth must be a whole number"),
        (
            "/api/v1/impact?dataset=clean&depth=0",
            "depth must be a whole number from 1 to 1000000000",
        ),
        ("/api/v1/impact?dataset=clean&since=soon", "not an ISO-8601 time"),
        ("/api/v1/impact?dataset=nowhere", "no dataset named 'nowhere'"),
        ("/api/v1/history?dataset=clean&since=2024-10-01", "unknown query parameter 'since'"),
        ("/api/v1/partitions?dataset=clean&dataset=raw", "given more than once"),
        ("/api/v1/runs?limit=0", "limit must be a whole number from 1 to 1000000000"),
    ],
)
def test_a_bad_argument_is_a_400_with_a_message(
    serve: Callable[..., Server], history_db: str, path: str, words: str
) -> None:
    server = serve(db=history_db)
    status, answer = server.get(path)
    assert status == 400, answer
    assert words in answer["error"]


def test_the_command_line_reads_while_the_server_writes(
    serve: Callable[..., Server], tmp_path: Path
) -> None:
    events = pipeline_history(days=20)
    server = serve()
    statuses: list[int] = []
    stop = threading.Event()

    def post(part: list[dict[str, object]]) -> None:
        for event in part:
            if stop.is_set():
                return
            body = json.dumps(event).encode()
            status = server.request("POST", "/api/v1/lineage", body)[0]
            while status == 503 and not stop.is_set():  # busy too long: sent again, as producers do
                status = server.request("POST", "/api/v1/lineage", body)[0]
            statuses.append(status)

    senders = [threading.Thread(target=post, args=(events[i::3],)) for i in range(3)]
    for sender in senders:
        sender.start()
    answers = []
    try:
        while any(sender.is_alive() for sender in senders):
            done = subprocess.run(
                command("lineage", "datasets", "--db", server.db, "--format", "json"),
                capture_output=True,
                text=True,
                env=environment(),
                check=False,
                timeout=120,
            )
            assert done.returncode == 0, done.stderr
            answers.append(json.loads(done.stdout))
            api_status, answer = server.get("/api/v1/impact?dataset=raw")
            assert api_status in (200, 400), answer  # 400 until the first event naming raw
    finally:
        # On a failure, the senders stop before the server is stopped: else a POST under way
        # when it is killed ends in a ConnectionResetError that hides the failure.
        stop.set()
        for sender in senders:
            sender.join()
    assert answers, "the command ran while events arrived"
    assert sorted(set(statuses)) == [201]
    assert len(statuses) == len(events)
    _, final = server.get("/api/v1/runs?limit=1")
    assert final["total"] == len(events) // 2
    with sqlite3.connect(server.db) as connection:
        assert connection.execute("SELECT count(*) FROM events").fetchone()[0] == len(events)
    connection.close()


def test_a_command_line_query_after_a_server_query_leaves_the_server_s_log_alone(
    serve: Callable[..., Server],
) -> None:
    # A query the server answered once made a command-line query, on closing, delete the
    # write-ahead log under the server's writer: the events acknowledged after that were lost
    # to every other process, and the server's next query failed with "disk I/O error".
    events = pipeline_history(days=4)
    server = serve()
    half = len(events) // 2

    def post(part: list[dict[str, object]]) -> None:
        for event in part:
            assert server.request("POST", "/api/v1/lineage", json.dumps(event).encode())[0] == 201

    def command_line_runs() -> int:
        done = subprocess.run(
            command("lineage", "runs", "--db", server.db, "--format", "json", "--limit", "1"),
            capture_output=True,
            text=True,
            env=environment(),
            check=False,
            timeout=120,
        )
        assert done.returncode == 0, done.stderr
        return int(json.loads(done.stdout)["total"])

    post(events[:half])
    assert server.get("/api/v1/impact?dataset=raw")[0] == 200
    assert command_line_runs() == half // 2
    post(events[half:])
    status, answer = server.get("/api/v1/impact?dataset=raw")
    assert status == 200, answer
    assert command_line_runs() == len(events) // 2


OUT_OF_RANGE = ["9223372036854775808", "99999999999999999999999", "1000000001", "-1", "0"]
NOT_A_COUNT = ["1e3", "+1", "1_0", " 1", "\u0663", "1.0", "x" * 5000]


def test_every_number_argument_is_bounded_a_400_never_a_500(
    serve: Callable[..., Server], history_db: str
) -> None:
    server = serve(db=history_db)
    numbers = [
        ("/api/v1/impact?dataset=clean&", "depth"),
        ("/api/v1/provenance?dataset=clean&", "depth"),
        ("/api/v1/runs?", "limit"),
    ]
    for path, name in numbers:
        for value in [*OUT_OF_RANGE, *NOT_A_COUNT]:
            asked = path + urllib.parse.urlencode({name: value})
            status, answer = server.get(asked)
            assert status == 400, (asked, answer)
            assert answer["error"].startswith(f"{name} must be a whole number from 1 to 1000000000")
        assert server.get(path + f"{name}=1000000000")[0] == 200, "the largest is answered"
    # the UI's answer page, as its form sends a depth
    for value in OUT_OF_RANGE:
        page = f"/answer?namespace=file&name={urllib.parse.quote(LAKE)}/clean&depth={value}"
        with pytest.raises(urllib.error.HTTPError) as refused:
            urllib.request.urlopen(server.url + page, timeout=30)
        assert refused.value.code == 400
        assert "depth must be a whole number from 1 to 1000000000" in refused.value.read().decode()
    server.stop()
    _, err = server.process.communicate()
    assert "Traceback" not in err and "failed unexpectedly" not in err
