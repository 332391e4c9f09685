"""``ol-subset show`` reads what ``validate`` reads: a pretty-printed event, a JSON array, a
folder, standard input, with validate's limits and words for what it refuses.

Each shape is checked against JSON Lines: ``show`` prints for it what it prints for the same
events one a line.
"""

from __future__ import annotations

import io
import json
import sys
from pathlib import Path

import pytest

from openlineage_subset.cli import main
from tests.lineage.events import parts, run

DAY = ({"day": "2024-10-15", "country": "PL"}, {"day": "2024-10-16", "country": "DE"})
EVENTS = [
    *run(1, 0, 5, reads=[("raw", parts(*DAY))], writes=[("clean", parts(DAY[0]))]),
    *run(2, 10, 15, reads=[("clean", parts(DAY[0]))], writes=[("report", None)], status="FAIL"),
]


def _show(
    capsys: pytest.CaptureFixture[str], *paths: str | Path, options: tuple[str, ...] = ()
) -> tuple[int, str, str]:
    status = main(["show", *options, *map(str, paths)])
    captured = capsys.readouterr()
    return status, captured.out, captured.err


def _validate(capsys: pytest.CaptureFixture[str], path: Path, *options: str) -> str:
    main(["validate", *options, str(path)])
    return capsys.readouterr().out


def _as_json_lines(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], events: list[dict] = EVENTS
) -> str:
    """What show prints for ``events`` one a line, the reference for every other shape."""
    path = tmp_path / "reference.jsonl"
    path.write_text("".join(json.dumps(event) + "\n" for event in events), encoding="utf-8")
    status, out, err = _show(capsys, path)
    assert (status, err) == (0, "")
    shown = [line.split()[1] for line in out.splitlines() if line.startswith("run ")]
    assert shown == list(dict.fromkeys(event["job"]["name"] for event in events))
    return out


def test_a_pretty_printed_event_is_shown_as_its_line_would_be(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    expected = _as_json_lines(tmp_path, capsys, EVENTS[1:2])
    path = tmp_path / "event.json"
    path.write_text(json.dumps(EVENTS[1], indent=2), encoding="utf-8")
    assert _show(capsys, path) == (0, expected, "")


@pytest.mark.parametrize("indent", [2, None], ids=["pretty", "one-line"])
def test_a_json_array_is_shown_as_its_events_one_a_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], indent: int | None
) -> None:
    expected = _as_json_lines(tmp_path, capsys)
    path = tmp_path / "events.json"
    path.write_text(json.dumps(EVENTS, indent=indent), encoding="utf-8")
    assert _show(capsys, path) == (0, expected, "")


def test_a_json_file_holding_json_lines_is_read_as_lines(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    expected = _as_json_lines(tmp_path, capsys)
    path = tmp_path / "events.json"
    path.write_text("\n".join(json.dumps(event) for event in EVENTS), encoding="utf-8")
    assert _show(capsys, path) == (0, expected, "")


def test_a_folder_is_shown_as_its_files_in_path_order(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    expected = _as_json_lines(tmp_path, capsys)
    folder = tmp_path / "events"
    (folder / "b").mkdir(parents=True)
    (folder / "a.json").write_text(json.dumps(EVENTS[:2], indent=2), encoding="utf-8")
    (folder / "b" / "c.jsonl").write_text(json.dumps(EVENTS[2]) + "\n", encoding="utf-8")
    (folder / "b" / "d.ndjson").write_text(json.dumps(EVENTS[3]) + "\n", encoding="utf-8")
    (folder / "notes.txt").write_text("not events", encoding="utf-8")  # not read, as validate
    assert _show(capsys, folder) == (0, expected, "")


@pytest.mark.parametrize("shape", ["json-lines", "array"])
def test_a_dash_reads_standard_input(
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
    shape: str,
) -> None:
    expected = _as_json_lines(tmp_path, capsys)
    if shape == "array":
        data = json.dumps(EVENTS, indent=2)
    else:
        data = "".join(json.dumps(event) + "\n" for event in EVENTS)
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(data.encode())))
    assert _show(capsys, "-") == (0, expected, "")


def test_a_closed_standard_input_cannot_be_read(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(sys, "stdin", None)
    assert _show(capsys, "-") == (2, "", "<stdin>: standard input is closed\n")


@pytest.mark.parametrize(
    "text",
    ['{\n  "a": NaN\n}', '{\n  "run": {},\n  "run": {"runId": "r"}\n}', '{\n  "a": [1,\n'],
    ids=["nan", "repeated-key", "cut-short"],
)
def test_a_bad_document_is_skipped_in_validates_words(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], text: str
) -> None:
    path = tmp_path / "bad.json"
    path.write_text(text, encoding="utf-8")
    (said,) = _validate(capsys, path).splitlines()[:1]
    words = said.removeprefix(f"{path}: error: ")
    assert words != said and words.startswith(("not usable JSON", "not valid JSON"))
    assert _show(capsys, path) == (1, "", f"{path}: skipped: {words}\n")


def test_an_array_item_that_is_no_run_event_is_named_by_its_index(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    expected = _as_json_lines(tmp_path, capsys, EVENTS[:1])
    path = tmp_path / "events.json"
    path.write_text(json.dumps([EVENTS[0], {"eventType": "START"}], indent=2), encoding="utf-8")
    assert _show(capsys, path) == (
        1,
        expected,
        f"{path}[1]: skipped: not a RunEvent (no run.runId)\n",
    )


def test_a_whole_document_is_held_to_the_line_limit(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "events.json"
    path.write_text(json.dumps(EVENTS, indent=2), encoding="utf-8")
    options = ("--max-line-bytes", "4000")
    (said,) = _validate(capsys, path, *options).splitlines()[:1]
    words = said.removeprefix(f"{path}: error: ")
    assert "more than 4000 bytes, the limit of a document read whole" in words
    assert _show(capsys, path, options=options) == (1, "", f"{path}: skipped: {words}\n")


@pytest.mark.parametrize(
    ("name", "content"), [("empty.json", ""), ("empty.jsonl", "\n\n"), ("none.json", "[]")]
)
def test_an_empty_input_is_said_as_validate_says_it(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], name: str, content: str
) -> None:
    path = tmp_path / name
    path.write_text(content, encoding="utf-8")
    (said,) = _validate(capsys, path).splitlines()[:1]
    words = said.removeprefix(f"{path}: error: ")
    assert words.startswith("empty ")
    assert _show(capsys, path) == (1, "", f"{path}: skipped: {words}\n")


def test_a_folder_without_event_files_cannot_be_read(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "notes.txt").write_text("not events", encoding="utf-8")
    (said,) = _validate(capsys, tmp_path).splitlines()[:1]
    words = said.removeprefix(f"{tmp_path}: error: ")
    assert words == "folder holds no .json, .jsonl or .ndjson file"
    assert _show(capsys, tmp_path) == (2, "", f"{tmp_path}: {words}\n")
