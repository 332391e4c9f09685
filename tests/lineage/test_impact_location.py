"""Impact of one bad file of a dataset (``--location``): a stream's batches each read a few
files of its inbox, as locations; only those whose files include the bad one (or a directory
above it) are affected, and what they wrote; a read of the whole inbox, or by a filter, may
have read it."""

from __future__ import annotations

import random
from pathlib import Path

import pytest

from openlineage_subset.lineage import LineageQueryError, impact, ingest
from openlineage_subset.lineage.queries import impact_text
from tests.lineage.conftest import Build
from tests.lineage.events import LAKE, Json, both, compare, parts, run, write_events

INBOX = f"file:{LAKE}/inbox"


def _files(*names: str) -> Json:
    return {"type": "location", "locations": [f"{INBOX}/{name}" for name in names]}


def _history() -> list[Json]:
    """Batches 1-3 read one or two files each and write the day of their rows into ``out``;
    run 4 reads the inbox whole, run 5 by a filter, run 6 a directory of it, run 7 reads
    ``out``'s day 2 (downstream of batch 2)."""
    return [
        *run(1, 0, 1, reads=[("inbox", _files("a.json"))], writes=[("out", parts({"day": "1"}))]),
        *run(
            2,
            2,
            3,
            reads=[("inbox", _files("b.json", "c.json"))],
            writes=[("out", parts({"day": "2"}))],
        ),
        *run(3, 4, 5, reads=[("inbox", _files("d.json"))], writes=[("out", parts({"day": "3"}))]),
        *run(4, 6, 7, reads=[("inbox", None)], writes=[]),
        *run(5, 8, 9, reads=[("inbox", compare("v", "GREATER_THAN", "3"))], writes=[]),
        *run(6, 10, 11, reads=[("inbox", {"type": "location", "locations": [f"{INBOX}/late"]})]),
        *run(
            7,
            12,
            13,
            reads=[("out", parts({"day": "2"}))],
            writes=[("report", None)],
        ),
        *run(
            8,
            14,
            15,
            reads=[("inbox", both(_files("e.json"), "AND", compare("v", "EQUAL", "1")))],
        ),
    ]


def _affected(db: str, location: str) -> list[str]:
    answer = impact(db, "inbox", location=location).as_json()
    return sorted(item["runId"][-1] for item in answer["runs"])


def test_a_bad_file_affects_the_batches_that_read_it_and_what_they_wrote(lineage_db: Build) -> None:
    db = lineage_db(_history())
    # c.json: batch 2 read it; 4 (whole), 5 (a filter) may have; 7 read what batch 2 wrote.
    assert _affected(db, f"{LAKE}/inbox/c.json") == ["2", "4", "5", "7"]
    answer = impact(db, "inbox", location=f"{LAKE}/inbox/c.json").as_json()
    assert answer["location"] == f"{INBOX}/c.json"
    plan = {
        p["dataset"]["name"]: [i["identifier"] for i in p["definite"]] for p in answer["backfill"]
    }
    assert plan[f"{LAKE}/out"] == ["day=2"], "only the day the batch that read it wrote"
    # A file in a directory a run read: that run, and the runs that read it whole or by filter.
    assert _affected(db, f"{INBOX}/late/x.json") == ["4", "5", "6"]
    # A directory holding files runs read: every run that read any of them.
    assert _affected(db, f"{LAKE}/inbox") == [str(n) for n in range(1, 9)]
    # AND: the location side decides (e.json, not another file).
    assert "8" not in _affected(db, f"{LAKE}/inbox/a.json")
    assert "8" in _affected(db, f"{LAKE}/inbox/e.json")
    text = "\n".join(impact_text(impact(db, "inbox", location=f"{LAKE}/inbox/a.json")))
    assert f"location {INBOX}/a.json" in text
    assert "read file:/data/lake/inbox: the part below" in text


def test_the_answer_does_not_depend_on_the_order_events_arrived(tmp_path: Path) -> None:
    events = _history()
    answers = []
    for seed in (None, 40, 41):
        shuffled = list(events)
        if seed is not None:
            random.Random(seed).shuffle(shuffled)
        db = str(tmp_path / f"lineage-{seed}.db")
        ingest([write_events(tmp_path / f"events-{seed}.jsonl", shuffled)], db)
        answers.append(_affected(db, f"{LAKE}/inbox/b.json"))
    assert answers[0] == ["2", "4", "5", "7"]
    assert answers[1:] == answers[:1] * 2


@pytest.mark.parametrize("bad", ["", "   ", "a\x00b"])
def test_a_location_that_is_no_path_is_the_users_error(lineage_db: Build, bad: str) -> None:
    db = lineage_db(_history())
    with pytest.raises(LineageQueryError, match="location"):
        impact(db, "inbox", location=bad)


def test_a_location_read_never_excludes_what_a_glob_or_a_condensed_parent_may_hold(
    lineage_db: Build,
) -> None:
    condensed = {"type": "location", "locations": [f"{INBOX}/2024", f"{INBOX}/sub/x*.json"]}
    db = lineage_db(run(1, 0, 1, reads=[("inbox", condensed)]))
    for place in ("2024/11/01/a.json", "sub/xyz.json", "sub/other.json"):
        assert _affected(db, f"{LAKE}/inbox/{place}") == ["1"]
    assert _affected(db, f"{LAKE}/inbox/other.json") == []
