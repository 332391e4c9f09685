"""``ol-subset show``: each run's datasets and conditions, merged over the run's events."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from openlineage_subset.cli import main
from openlineage_subset.cli._show import SHOWN_PARTITIONS, summary_lines

APP, ACTION, FAILED = "app-run", "action-run", "failed-run"


def _event(
    run: str, kind: str, *, job: str = "job", parent: str | None = None, **sides: list
) -> dict:
    facets = {"parent": {"run": {"runId": parent}, "job": {"name": "app"}}} if parent else {}
    return {
        "eventType": kind,
        "run": {"runId": run, "facets": facets},
        "job": {"namespace": "tests", "name": job},
        "inputs": sides.get("inputs", []),
        "outputs": sides.get("outputs", []),
    }


def _dataset(name: str, condition: dict | None = None, *, output: bool = False) -> dict:
    dataset: dict = {"namespace": "file", "name": f"/lake/{name}"}
    if condition is not None:
        key = "outputCondition" if output else "inputCondition"
        dataset["outputFacets" if output else "inputFacets"] = {"subset": {key: condition}}
    return dataset


def _days(*days: str) -> dict:
    return {"type": "partition", "partitions": [{"dimensions": {"day": d}} for d in days]}


def test_a_run_spread_over_several_events_is_shown_once_with_every_dataset() -> None:
    events = [
        _event(APP, "START", job="app"),
        _event(ACTION, "START", parent=APP, inputs=[_dataset("a")], outputs=[_dataset("b")]),
        # bound_event spreads datasets over RUNNING events: these belong to the same run
        _event(ACTION, "RUNNING", parent=APP, inputs=[_dataset("c", _days("2024-10-15"))]),
        _event(
            ACTION,
            "COMPLETE",
            parent=APP,
            inputs=[_dataset("a", _days("2024-10-14"))],
            outputs=[_dataset("b", _days("2024-10-16"), output=True)],
        ),
        _event(FAILED, "START", job="broken", parent=APP, inputs=[_dataset("a")]),
        _event(FAILED, "FAIL", job="broken", parent=APP),
        _event(FAILED, "RUNNING", job="broken", parent=APP),  # late: the FAIL still counts
        _event(APP, "COMPLETE", job="app"),
    ]
    assert summary_lines(events, Path("/lake")) == [
        "run app  COMPLETE  (the application: parent of 2 runs)",
        "run job  COMPLETE",
        "  in   a  PARTITION (day = '2024-10-14')",
        "  out  b  PARTITION (day = '2024-10-16')",
        "  in   c  PARTITION (day = '2024-10-15')",
        "run broken  FAIL",
        "  in   a  (whole dataset)",
    ]


def test_long_lists_are_cut_short_and_names_outside_the_root_are_full() -> None:
    days = [f"2024-10-{d:02}" for d in range(1, 11)]
    events = [_event(ACTION, "COMPLETE", inputs=[_dataset("a", _days(*days))])]
    lines = summary_lines(events, Path("/elsewhere"))
    assert lines[1] == "  in   file:/lake/a  PARTITION (day = '2024-10-01')"
    assert len(lines) == 1 + SHOWN_PARTITIONS
    assert lines[-1].endswith(f"OR ... {10 - SHOWN_PARTITIONS + 1} more (10 in all)")


def test_the_command_skips_what_is_not_a_run_event_and_says_where(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    bad_facet = _dataset("x")
    bad_facet["inputFacets"] = {"subset": {"inputCondition": 5}}  # another producer's mistake
    lines = [
        json.dumps(_event(ACTION, "COMPLETE", job="a\x1b[2Jb", inputs=[bad_facet])),
        "{not json",
        json.dumps({"eventType": "START"}),
        "",
    ]
    path = tmp_path / "events.jsonl"
    path.write_text("\n".join(lines), encoding="utf-8")
    status = main(["show", str(path), "--relative-to", "/lake"])
    captured = capsys.readouterr()
    assert status == 1
    assert captured.out.splitlines()[0] == "run a\\x1b[2Jb  COMPLETE", "escaped, never obeyed"
    assert "(a subset facet that cannot be read:" in captured.out
    assert f"{path}:2: skipped: not valid JSON: " in captured.err
    assert f"{path}:3: skipped: not a RunEvent (no run.runId)" in captured.err
    assert main(["show", str(tmp_path / "missing.jsonl")]) == 2
    assert "missing.jsonl: no such file" in capsys.readouterr().err, "validate's words"


def test_names_and_paths_are_shown_as_escapes_never_obeyed(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    hostile = "\x1b]0;owned\x07\x1b[2J\r run FAKE COMPLETE\u202eevil\u2066"
    event = _event(
        f"r{hostile}",
        "COMPLETE",
        job=f"job{hostile}",
        inputs=[_dataset(f"sales{hostile}", _days(f"2024-10-15{hostile}"))],
    )
    path = tmp_path / f"events{hostile}.jsonl"
    path.write_text(json.dumps(event) + "\n{not json\n", encoding="utf-8")
    status = main(["show", str(path), str(tmp_path / f"missing{hostile}.jsonl")])
    captured = capsys.readouterr()
    assert status == 2
    for said in (captured.out, captured.err):
        acting = sorted({hex(ord(c)) for c in said if not c.isprintable() and c != "\n"})
        assert not acting, f"raw control or bidirectional characters: {acting}"
        assert not [line for line in said.splitlines() if line.startswith(" run FAKE")]
    shown = r"\x1b]0;owned\x07\x1b[2J\r run FAKE COMPLETE\u202eevil\u2066"
    assert captured.out.splitlines()[0] == f"run job{shown}  COMPLETE"
    assert f"sales{shown}" in captured.out and f"2024-10-15{shown}" in captured.out
    assert f"events{shown}.jsonl:2: skipped: not valid JSON" in captured.err
    assert f"missing{shown}.jsonl: no such file" in captured.err


def _failed(run: str, message: object, **sides: list) -> dict:
    event = _event(run, "FAIL", job=f"app.{run}", parent=APP, **sides)
    event["run"]["facets"]["errorMessage"] = {"message": message, "programmingLanguage": "JAVA"}
    return event


def test_a_failed_run_shows_the_first_line_of_its_error() -> None:
    long = "x" * 500
    events = [
        _event(APP, "START", job="app"),
        # A query whose analysis failed read nothing: no dataset, and still its error.
        _failed("analyze", "[UNRESOLVED_COLUMN] `no_such_col` cannot be resolved.\n\tat Spark\n"),
        _failed("write", "\n  Job aborted\x1b[31m.\nCaused by: ...", inputs=[_dataset("a")]),
        _failed("long", long),
        _failed("unsaid", {"not": "text"}),
    ]
    lines = summary_lines(events)
    assert lines[lines.index("run app.analyze  FAIL  (no datasets)") + 1] == (
        "  error  [UNRESOLVED_COLUMN] `no_such_col` cannot be resolved."
    )
    assert lines[lines.index("run app.write  FAIL") + 1] == "  error  Job aborted\x1b[31m."
    said = lines[lines.index("run app.long  FAIL  (no datasets)") + 1]
    assert said.startswith("  error  xxx") and said.endswith("…") and len(said) < 220
    unsaid = lines.index("run app.unsaid  FAIL  (no datasets)")
    assert not any(line.startswith("  error") for line in lines[unsaid + 1 :])
    assert not any("Spark" in line or "Caused" in line for line in lines)


def test_show_prints_an_error_s_control_characters_escaped(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    events = tmp_path / "events.jsonl"
    events.write_text(json.dumps(_failed("write", "Job aborted\x1b[31m")) + "\n")
    assert main(["show", str(events)]) == 0
    out = capsys.readouterr().out
    assert "error  Job aborted" in out and "\x1b" not in out


def test_an_overwrite_of_the_whole_dataset_shows_the_partitions_it_left() -> None:
    listed = _days("2024-10-15", "2024-10-16")
    for root in ("file:/lake/sales", "/lake/sales"):  # as capture writes it, or a bare path
        whole = {"type": "location", "locations": [root]}
        for condition in (
            {"type": "binary", "operator": "OR", "left": whole, "right": listed},
            {"type": "binary", "operator": "OR", "left": listed, "right": whole},
        ):
            done = _event(ACTION, "COMPLETE", outputs=[_dataset("sales", condition, output=True)])
            lines = summary_lines([done])
            assert lines[1].endswith("(whole dataset), leaving PARTITION (day = '2024-10-15')")
            assert lines[2].strip() == "OR PARTITION (day = '2024-10-16')"
    # Another dataset's location is no "whole dataset".
    other = {"type": "location", "locations": ["file:/lake/other"]}
    condition = {"type": "binary", "operator": "OR", "left": other, "right": listed}
    done = _event(ACTION, "COMPLETE", outputs=[_dataset("sales", condition, output=True)])
    assert "whole dataset" not in "\n".join(summary_lines([done]))
