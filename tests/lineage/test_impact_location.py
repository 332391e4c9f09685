"""Impact of one bad file of a dataset (``--location``): a stream's batches each read a few
files of its inbox, as locations; only those whose files include the bad one (or a directory
above it) are affected, and what they wrote; a read of the whole inbox, or by a filter, may
have read it."""

from __future__ import annotations

import random
from pathlib import Path

import pytest

from openlineage_subset.lineage import LineageQueryError, LineageStore, impact, ingest
from openlineage_subset.lineage.engine._timeline import Timeline
from openlineage_subset.lineage.queries import impact_text
from tests.lineage.conftest import Build
from tests.lineage.events import LAKE, Json, both, compare, parts, run, run_id, write_events

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


def _stream(batches: int) -> list[Json]:
    """A stream's batches, each reading one new file of the inbox and writing its day."""
    events: list[Json] = []
    for batch in range(1, batches + 1):
        day = {"day": str(batch // 10)}
        events += run(
            batch,
            batch,
            batch + 0.5,
            reads=[("inbox", _files(f"{batch}.json"))],
            writes=[("out", parts(day))],
        )
    return events


def test_the_readers_of_a_bad_file_are_found_without_reading_every_batch(tmp_path: Path) -> None:
    read = []
    for batches in (20, 80):
        source = write_events(tmp_path / f"stream-{batches}.jsonl", _stream(batches))
        db = str(tmp_path / f"stream-{batches}.db")
        ingest([source], db)
        with LineageStore.open(db, create=False) as store:
            answer = impact(store, "inbox", location=f"{INBOX}/7.json").as_json()
            read.append(store.reads.conditions)
        assert [item["runId"] for item in answer["runs"]][:1] == [run_id(7)]
    # The batch that read it (and what it wrote, and the readers of that): the same few
    # conditions whether the stream had 20 batches or 80.
    assert read[0] == read[1] <= 3, read


def _random_condition(rng: random.Random, depth: int = 0) -> Json | None:
    """A read's condition: files and directories of the inbox (a glob now and then), the whole
    inbox, a filter, or an AND / OR of those."""
    kind = rng.choice(["files", "files", "files", "whole", "filter", "and", "or"][: 7 - depth])
    if kind == "files":
        names = ["a.json", "b.json", "sub", "sub/c.json", "sub/d*.json", "e.json"]
        return _files(*rng.sample(names, rng.randint(1, 2)))
    if kind == "whole":
        return None
    if kind == "filter":
        return compare("v", "EQUAL", "1")
    left = _random_condition(rng, depth + 2) or compare("w", "EQUAL", "2")
    right = _random_condition(rng, depth + 2) or compare("w", "EQUAL", "3")
    return both(left, kind.upper(), right)


@pytest.mark.parametrize("seed", range(6))
def test_the_index_of_places_answers_as_checking_every_read(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, seed: int
) -> None:
    rng = random.Random(seed)
    events: list[Json] = []
    for number in range(1, 31):
        reads = [("inbox", _random_condition(rng))]
        if rng.random() < 0.2:  # a run of several events: the OR of their conditions
            events += run(number, number, number + 0.2, reads=[("inbox", _random_condition(rng))])
        events += run(number, number, number + 0.5, reads=reads)
    rng.shuffle(events)
    db = str(tmp_path / "lineage.db")
    ingest([write_events(tmp_path / "events.jsonl", events)], db)
    places = ["a.json", "b.json", "sub", "sub/c.json", "sub/dx.json", "sub/e.json", "zz"]
    indexed = {place: _affected(db, f"{INBOX}/{place}") for place in places}
    # Every read of the inbox, each condition checked (the index turned off).
    monkeypatch.setattr(
        Timeline,
        "readers_at",
        lambda self, dataset, _, after, inclusive: self.readers_after(dataset, after, inclusive),
    )
    assert indexed == {place: _affected(db, f"{INBOX}/{place}") for place in places}
    assert any(indexed.values()) and not all(len(v) == 30 for v in indexed.values())
