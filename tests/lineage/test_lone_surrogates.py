"""A lone surrogate (``"\\ud800"``: half of a UTF-16 pair) is legal JSON syntax that no UTF-8 text
and no SQLite database can hold: ``validate``, ``show`` and ``ingest`` all refuse it, in the same
words, and all take a surrogate pair (one character) as it is.
"""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import pytest

from openlineage_subset.cli import main
from openlineage_subset.lineage import ingest
from tests.lineage.events import event

EVENT = event(1, "COMPLETE", 0, reads=[("/data/lake/sales", None)])


def _placed(where: str, text: str) -> dict[str, Any]:
    placed = copy.deepcopy(EVENT)
    if where == "job name":
        placed["job"]["name"] = text
    elif where == "dataset name":
        placed["inputs"][0]["name"] = text
    else:  # a key of a run facet
        placed["run"]["facets"] = {text: {"_producer": "p", "_schemaURL": "s"}}
    return placed


def _verdicts(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], document: dict[str, Any]
) -> tuple[str | None, str | None, str | None]:
    """What validate, ingest and show say of a line holding ``document``: the message when
    they refuse it, else None."""
    path = tmp_path / "events.jsonl"
    path.write_text(json.dumps(document) + "\n", encoding="ascii")  # \\u escapes, as JSON allows
    main(["validate", "--format", "json", str(path)])
    (result,) = json.loads(capsys.readouterr().out)["results"]
    report = ingest([path], tmp_path / "lineage.db")
    assert report.stored + report.invalid == 1
    stored = None if report.stored else report.problems[0].message
    main(["show", str(path)])
    said = capsys.readouterr().err
    shown = said.partition(": skipped: ")[2].rstrip("\n") or None
    return result["error"], stored, shown


@pytest.mark.parametrize("where", ["job name", "dataset name", "facet key"])
@pytest.mark.parametrize("surrogate", ["\ud800", "\udfff", "a\udc00b", "\ud83d"])
def test_every_reader_refuses_a_lone_surrogate_in_the_same_words(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], where: str, surrogate: str
) -> None:
    validated, ingested, shown = _verdicts(tmp_path, capsys, _placed(where, surrogate))
    assert validated is not None and "a lone surrogate" in validated
    assert validated.startswith("not usable JSON at $.")
    assert ingested == validated
    assert shown == validated


@pytest.mark.parametrize("where", ["job name", "dataset name", "facet key"])
def test_every_reader_takes_a_surrogate_pair(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], where: str
) -> None:
    assert _verdicts(tmp_path, capsys, _placed(where, "sales \U0001f600")) == (None, None, None)


def test_a_document_read_whole_is_refused_alike(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "event.json"
    path.write_text(json.dumps(_placed("job name", "\ud800"), indent=2), encoding="ascii")
    main(["validate", "--format", "json", str(path)])
    (result,) = json.loads(capsys.readouterr().out)["results"]
    report = ingest([path], tmp_path / "lineage.db")
    assert report.stored == 0
    assert [problem.message for problem in report.problems] == [result["error"]]
    assert result["error"].startswith("not usable JSON at $.job.name: a lone surrogate")


def test_an_archive_refuses_it_as_ingest_does(tmp_path: Path) -> None:
    """``EventArchive`` checks each line on the executors with ingest's rule (no Spark here)."""
    from openlineage_subset.lineage.queries._archive import _checked_records

    path = tmp_path / "events.jsonl"
    line = json.dumps(_placed("dataset name", "\udfff"))
    path.write_text(line + "\n", encoding="ascii")
    (stored,) = ingest([path], tmp_path / "lineage.db").problems
    ((*_, found),) = _checked_records([{"event": line, "source": str(path), "position": 1}])
    assert found == stored.message
    assert found.startswith("not usable JSON at $.inputs[0].name: a lone surrogate")
