"""Numbers given on the command line are checked once, with one clear line and status 2."""

from __future__ import annotations

from pathlib import Path

import pytest

from openlineage_subset.cli import main
from openlineage_subset.delivery import Outbox


@pytest.mark.parametrize("value", ["nan", "inf", "-1", "1e10", "soon"])
def test_replay_refuses_a_timeout_that_is_not_a_number_of_seconds(
    value: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    with pytest.raises(SystemExit) as ended:
        main(["replay", str(tmp_path / "outbox"), "--timeout", value])
    assert ended.value.code == 2
    said = capsys.readouterr().err
    assert "--timeout" in said and "seconds" in said and value in said


def test_replay_takes_a_timeout_of_seconds(tmp_path: Path) -> None:
    Outbox(tmp_path / "outbox").close(1.0)  # an empty outbox
    status = main(
        [
            "replay",
            str(tmp_path / "outbox"),
            "--timeout",
            "2.5",
            "--output",
            str(tmp_path / "events.jsonl"),
        ]
    )
    assert status == 0


HUGE = "99999999999999999999999"


@pytest.mark.parametrize(
    "args",
    [
        ["lineage", "runs", "--limit", HUGE],
        ["lineage", "runs", "--limit", "9223372036854775808"],
        ["lineage", "runs", "--limit", "-1"],
        ["lineage", "impact", "sales", "--depth", HUGE],
        ["lineage", "provenance", "sales", "--depth", "0"],
        ["lineage", "report", "sales", "--html", "r.html", "--depth", HUGE],
    ],
)
def test_lineage_counts_out_of_range_are_one_line_and_exit_2(
    args: list[str], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    db = tmp_path / "lineage.db"
    assert main(["lineage", "ingest", str(_empty(tmp_path)), "--db", str(db)]) == 0
    capsys.readouterr()
    assert main([*args, "--db", str(db)]) == 2
    err = capsys.readouterr().err
    name = "limit" if "--limit" in args else "depth"
    assert err.count("\n") == 1, err
    assert f"{name} must be a whole number from 1 to 1000000000, got {args[-1]}" in err


@pytest.mark.parametrize("value", [f"{HUGE}G", "5G", "99999999999999999999999"])
def test_a_line_limit_out_of_range_is_refused(
    value: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    for command in (["validate"], ["show"], ["lineage", "ingest", "--db", str(tmp_path / "db")]):
        with pytest.raises(SystemExit) as ended:
            main([*command, "--max-line-bytes", value, str(_empty(tmp_path))])
        assert ended.value.code == 2
        assert "a number of bytes, 1 or more and at most 4G" in capsys.readouterr().err


def test_more_processes_than_exist_are_the_processors_there_are(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    db = str(tmp_path / "lineage.db")
    assert main(["lineage", "ingest", str(_empty(tmp_path)), "--db", db, "--jobs", HUGE]) == 0


def _empty(folder: Path) -> Path:
    path = folder / "events.jsonl"
    path.write_text("", encoding="utf-8")
    return path
