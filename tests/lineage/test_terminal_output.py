"""Names from events never act on a terminal or reorder a page: the text answers, ``ingest``'s
lines, the errors and the HTML report show control and bidirectional characters as escapes.

An event's dataset, job, namespace, partition value and run id may hold an escape code that
retitles the window (``ESC ] 0 ; title BEL``) or clears the screen (``ESC [ 2 J``), a carriage
return or line break that forges a line of output, or U+202E, which shows ``evil`` as ``live``.
"""

from __future__ import annotations

import html.parser
import re
from pathlib import Path

import pytest

from openlineage_subset.cli import main
from openlineage_subset.report import report_html
from tests.lineage.events import LAKE, Json, day, run, write_events

RETITLE, CLEAR, BELL = "\x1b]0;owned", "\x1b[2J", "\x07"
FORGED = "\r run FAKE COMPLETE"
FORGED_LINE = "\n  WRITE fake run FAKE COMPLETE"
REVERSED = "\u202eevil"
HOSTILE = RETITLE + BELL + CLEAR + FORGED + FORGED_LINE + REVERSED
"""Each trick once, in every name of the events below."""
SHOWN = (r"\x1b]0;owned\x07\x1b[2J", r"\r run FAKE COMPLETE", r"\n  WRITE fake", r"\u202eevil")
"""How the tricks are shown: as Python writes them in ``repr``."""
BIDI = "".join(map(chr, [*range(0x202A, 0x202F), *range(0x2066, 0x206A), 0x200E, 0x200F, 0x61C]))
"""Every bidirectional control: embeddings, overrides, isolates, marks."""
DATASET = f"{LAKE}/sales{HOSTILE}"
PARTITION = f"day=2024-10-15{HOSTILE}"


def _events() -> list[Json]:
    value = day(f"2024-10-15{HOSTILE}")
    events = [
        *run(1, 0, 1, writes=[(f"sales{HOSTILE}", value)], job=f"load{HOSTILE}"),
        *run(
            2,
            2,
            3,
            reads=[(f"sales{HOSTILE}", value)],
            writes=[(f"report{BIDI}", None)],
            job=f"use{HOSTILE}",
        ),
    ]
    for event in events:
        event["job"]["namespace"] = f"ns{HOSTILE}"
        event["run"]["runId"] += HOSTILE
    return events


@pytest.fixture
def db(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> str:
    source = write_events(tmp_path / "events.jsonl", _events())
    path = str(tmp_path / "lineage.db")
    assert main(["lineage", "ingest", str(source), "--db", path]) == 0
    capsys.readouterr()
    return path


def _said(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    status = main(["lineage", *args])
    captured = capsys.readouterr()
    return status, captured.out, captured.err


def _assert_shown_not_obeyed(text: str) -> None:
    """No character of ``text`` acts on a terminal (line breaks aside), and the tricks show."""
    acting = sorted({hex(ord(c)) for c in text if not c.isprintable() and c != "\n"})
    assert not acting, f"raw control or bidirectional characters reach the output: {acting}"
    lines = text.splitlines()
    assert not [line for line in lines if line.lstrip().startswith(("run FAKE", "WRITE fake"))]
    for shown in SHOWN:
        assert shown in text, f"{shown} is not visible in:\n{text}"


@pytest.mark.parametrize(
    "query",
    [
        ["history", DATASET, "--partition", PARTITION],
        ["history", DATASET],
        ["impact", DATASET, "--partition", PARTITION],
        ["provenance", DATASET, "--partition", PARTITION],
        ["partitions", DATASET],
    ],
    ids=["history of a partition", "history", "impact", "provenance", "partitions"],
)
def test_text_answers_show_escapes(
    db: str, query: list[str], capsys: pytest.CaptureFixture[str]
) -> None:
    status, out, err = _said(capsys, *query, "--db", db)
    assert status == 0, err
    _assert_shown_not_obeyed(out)


def test_every_bidirectional_control_is_shown(db: str, capsys: pytest.CaptureFixture[str]) -> None:
    status, out, _ = _said(capsys, "impact", DATASET, "--partition", PARTITION, "--db", db)
    assert status == 0
    assert not set(out) & set(BIDI)
    assert "report" + "".join(repr(c)[1:-1] for c in BIDI) in out


def test_json_answers_stay_json_escaped(db: str, capsys: pytest.CaptureFixture[str]) -> None:
    status, out, _ = _said(capsys, "history", DATASET, "--db", db, "--format", "json")
    assert status == 0
    assert out.isascii() and HOSTILE.encode("unicode_escape").decode() not in out
    assert "\\u001b]0;owned\\u0007" in out and "\\u202eevil" in out  # JSON's escapes: data


def test_an_error_naming_datasets_shows_escapes(
    db: str, capsys: pytest.CaptureFixture[str]
) -> None:
    status, out, err = _said(capsys, "history", "sale", "--db", db)
    assert status == 2 and not out
    assert "no dataset named 'sale'" in err and "datasets like it" in err
    _assert_shown_not_obeyed(err)
    _, _, err = _said(capsys, "partitions", f"sales{HOSTILE[:5]}", "--db", db)
    assert not [c for c in err if not c.isprintable() and c != "\n"]


def test_ingest_lines_show_escapes(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    folder = tmp_path / "in"
    folder.mkdir()
    hostile_file = folder / f"bad{RETITLE}{BELL}{CLEAR}{REVERSED}.jsonl"
    hostile_file.write_text("[]\n", encoding="utf-8")
    status, out, _ = _said(capsys, "ingest", str(folder), "--db", str(tmp_path / "x.db"))
    assert status == 1
    assert f"bad{RETITLE}" not in out and REVERSED not in out
    assert all(c.isprintable() for c in out.replace("\n", ""))
    assert r"bad\x1b]0;owned\x07\x1b[2J\u202eevil.jsonl:1: expected" in out


class _Page(html.parser.HTMLParser):
    """A page's text: what is marked as an escape, what is a hover text (a ``title`` element or
    attribute), and the rest."""

    def __init__(self) -> None:
        super().__init__()
        self.open: list[tuple[str, bool]] = []
        self.marked: list[str] = []
        self.hover: list[str] = []
        self.plain: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.hover += [value or "" for name, value in attrs if name == "title"]
        if tag not in ("meta", "input"):  # the page's elements without an end tag
            self.open.append((tag, ("class", "escape") in attrs))

    def handle_startendtag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.hover += [value or "" for name, value in attrs if name == "title"]

    def handle_endtag(self, tag: str) -> None:
        assert self.open.pop()[0] == tag

    def handle_data(self, data: str) -> None:
        tag, marked = self.open[-1] if self.open else ("", False)
        (self.marked if marked else self.hover if tag == "title" else self.plain).append(data)


ESCAPE = re.compile(r"\\(x[0-9a-f]{2}|u[0-9a-f]{4}|U[0-9a-f]{8}|[nrt])")


def test_the_report_marks_escapes_and_holds_no_bidirectional_control(db: str) -> None:
    for page in (report_html(db), report_html(db, DATASET, partition={"day": PARTITION[4:]})):
        acting = sorted({hex(ord(c)) for c in page if not c.isprintable() and c != "\n"})
        assert not acting, f"raw control or bidirectional characters in the page: {acting}"
        parsed = _Page()
        parsed.feed(page)
        assert parsed.marked, "escapes are marked"
        assert all(ESCAPE.fullmatch(piece) for piece in parsed.marked), parsed.marked
        assert "\\u202e" in parsed.marked and "\\x1b" in parsed.marked
        assert "\\u202e" not in "".join(parsed.plain), "an escape in text is always marked"
        hover = "\n".join(parsed.hover)
        assert "\\u202eevil" in hover and "\\r run FAKE COMPLETE" in hover, "hover texts: bare"
