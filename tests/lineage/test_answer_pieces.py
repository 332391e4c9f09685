"""A dataset's partitions and its whole history a piece at a time
(``Lineage.partitions_in_pieces``, ``Lineage.history_in_pieces``: what ``ol-subset lineage
partitions`` and ``history`` print): the pieces, joined, are the whole answer, in its order,
printed as it is; and what is held follows a piece, not the dataset."""

from __future__ import annotations

import shutil
import tracemalloc
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from openlineage_subset.cli import main
from openlineage_subset.lineage import (
    HistoryQuery,
    Lineage,
    PartitionsQuery,
    history_text,
    indented_json,
    ingest,
    partitions_text,
    prune,
)
from openlineage_subset.lineage import _lineage as facade
from tests.lineage.events import (
    HOSTILE_NAME,
    at,
    compare,
    day,
    parts,
    pipeline_history,
    run,
    write_events,
)

# Partitions whose order is the values' in the dataset's column order (day, then country,
# not the names' order), the null value first, "ab" before "ab!" and "é" after "z".
ODD = [
    {"day": "2024-10-02", "country": None},
    {"day": "2024-10-02", "country": "ab!"},
    {"day": "2024-10-02", "country": "ab"},
    {"day": "2024-10-01", "country": "é"},
    {"day": "2024-10-01", "country": "z"},
    {"day": "2024-10-10", "country": "ab"},
]


def _history() -> list[dict[str, Any]]:
    events = pipeline_history(9, failed_day=4)
    events += run(900, 100, 101, writes=[("odd", parts(*ODD))])
    events += run(901, 102, 103, reads=[("odd", parts({"day": "2024-10-02", "country": "ab"}))])
    events += run(902, 104, 105, reads=[("odd", compare("day", "GREATER_THAN", "2024-10-01"))])
    # two sets of columns: listed whole, one piece
    events += run(903, 106, 107, writes=[("mixed", parts({"day": "2024-10-01"}))])
    events += run(904, 108, 109, writes=[("mixed", parts({"hour": "01", "day": "2024-10-01"}))])
    return events


@pytest.fixture(scope="module")
def db(tmp_path_factory: pytest.TempPathFactory) -> str:
    folder = tmp_path_factory.mktemp("pieces")
    path = str(folder / "lineage.db")
    ingest([write_events(folder / "events.jsonl", _history())], path)
    return path


DATASETS = ("raw", "clean", "rolling", "odd")


@pytest.mark.parametrize("name", DATASETS)
@pytest.mark.parametrize("size", [1, 4, 10_000])
def test_the_pieces_joined_are_the_whole_answer(db: str, name: str, size: int) -> None:
    query = PartitionsQuery(name)
    with Lineage(db) as lineage:
        whole = lineage.partitions(query)
        pieces = list(lineage.partitions_in_pieces(query, size))
    assert whole.partitions, "a dataset of known partitions"
    assert [state for piece in pieces for state in piece.partitions] == list(whole.partitions)
    assert len(pieces) == -(-len(whole.partitions) // size)
    assert {piece.dataset for piece in pieces} == {whole.dataset}


def test_partitions_are_listed_by_their_values_in_column_order(db: str) -> None:
    """A write of the null partition beside others of the same column (it raised TypeError:
    units with a null value do not compare): each listed, by day then country (the order its
    identifiers give), the null value first, then by code point."""
    with Lineage(db) as lineage:
        pieces = list(lineage.partitions_in_pieces(PartitionsQuery("odd"), 2))
    listed = [dict(state.partition.dimensions) for piece in pieces for state in piece.partitions]
    expected = sorted(ODD, key=lambda p: (p["day"], p["country"] is not None, p["country"] or ""))
    assert listed == expected


def test_a_piece_of_no_item_is_refused(db: str) -> None:
    with Lineage(db) as lineage:
        for pieces in (
            lineage.partitions_in_pieces(PartitionsQuery("raw"), 0),
            lineage.partitions_in_pieces(PartitionsQuery("mixed"), 0),
            lineage.history_in_pieces(HistoryQuery("raw"), 0),
            lineage.history_in_pieces(HistoryQuery("raw", {"day": "2024-10-01"}), 0),
        ):
            with pytest.raises(ValueError, match="a piece holds 1 item or more; got 0"):
                next(pieces)


@pytest.mark.parametrize("name", ["mixed", HOSTILE_NAME])
def test_a_dataset_not_of_one_set_of_columns_is_one_piece(db: str, name: str) -> None:
    """Partitions of two sets of columns (sorted in Python), or none (the answer says how the
    dataset is written): the whole answer, as one piece."""
    query = PartitionsQuery(name)
    with Lineage(db) as lineage:
        assert list(lineage.partitions_in_pieces(query, 1)) == [lineage.partitions(query)]


@pytest.mark.parametrize("name", [*DATASETS, "mixed", HOSTILE_NAME])
def test_the_command_prints_the_pieces_as_the_whole_answer(
    db: str, name: str, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(facade, "PIECE", 2)
    with Lineage(db) as lineage:
        whole = lineage.partitions(PartitionsQuery(name))
    for form, expected in (
        ("json", indented_json(whole.as_json())),
        ("text", "\n".join(partitions_text(whole))),
    ):
        assert main(["lineage", "partitions", name, "--db", db, "--format", form]) == 0
        assert capsys.readouterr().out == expected + "\n", form


def test_what_is_held_follows_a_piece_not_the_dataset(tmp_path: Path) -> None:
    """Four times the partitions, each its own run's, listed by pieces of 100: no more of
    Python's memory (traced) at the peak. Measured on a second listing: the first fills the
    bounded caches of partition keys (65,536 at most) that every query shares."""

    def listed(lineage: Lineage) -> int:
        pieces = lineage.partitions_in_pieces(PartitionsQuery("t"), 100)
        return sum(len(piece.partitions) for piece in pieces)

    _assert_flat(tmp_path, listed)


def _assert_flat(tmp_path: Path, listed: Callable[[Lineage], int]) -> None:
    """``listed`` (how many items a listing by pieces gave) over a dataset of 1,000 and of
    4,000 runs, each writing a partition of its own: each listed, and the peak of Python's
    memory (traced, a second listing's) no more for four times the runs."""
    peaks = []
    for count in (1_000, 4_000):
        events = [
            item
            for number in range(count)
            for item in run(number, number, number + 0.5, writes=[("t", day(f"p{number:05d}"))])
        ]
        db = tmp_path / f"{count}.db"
        ingest([write_events(tmp_path / f"{count}.jsonl", events)], db)
        with Lineage(db) as lineage:
            assert listed(lineage) == count
            tracemalloc.start()
            try:
                assert listed(lineage) == count
                peaks.append(tracemalloc.get_traced_memory()[1])
            finally:
                tracemalloc.stop()
    assert peaks[1] < peaks[0] * 1.25, peaks


@pytest.fixture(scope="module")
def pruned(db: str, tmp_path_factory: pytest.TempPathFactory) -> str:
    """The same history pruned at its middle: answers reaching before it carry a note."""
    path = str(tmp_path_factory.mktemp("pruned") / "lineage.db")
    shutil.copy(db, path)
    prune(path, at(40), vacuum=False)
    return path


@pytest.mark.parametrize("name", [*DATASETS, "mixed", HOSTILE_NAME])
@pytest.mark.parametrize("size", [1, 3, 10_000])
def test_a_whole_historys_pieces_joined_are_the_whole_answer(
    db: str, pruned: str, name: str, size: int
) -> None:
    for path in (db, pruned):
        query = HistoryQuery(name)
        with Lineage(path) as lineage:
            whole = lineage.history(query)
            pieces = list(lineage.history_in_pieces(query, size))
        assert whole.entries, "a dataset read or written"
        assert [entry for piece in pieces for entry in piece.entries] == list(whole.entries)
        assert len(pieces) == -(-len(whole.entries) // size)
        assert {(p.target, p.seen, p.notes) for p in pieces} == {
            (whole.target, whole.seen, whole.notes)
        }
    with Lineage(pruned) as lineage:
        assert lineage.history(HistoryQuery(name)).notes, "runs before the time were pruned"


def test_a_partitions_history_is_one_piece(db: str) -> None:
    """Asked about a partition, the indexes find what may touch it: the whole answer."""
    query = HistoryQuery("clean", {"day": "2024-10-03"})
    with Lineage(db) as lineage:
        assert list(lineage.history_in_pieces(query, 1)) == [lineage.history(query)]


@pytest.mark.parametrize("name", ["raw", "rolling", HOSTILE_NAME])
def test_the_command_prints_a_historys_pieces_as_the_whole_answer(
    pruned: str, name: str, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(facade, "PIECE", 2)
    for asked in ([], ["--partition", "day=2024-10-03"] if name != HOSTILE_NAME else []):
        with Lineage(pruned) as lineage:
            whole = lineage.history(HistoryQuery.from_text(name, asked[1:] or None))
        for form, expected in (
            ("json", indented_json(whole.as_json())),
            ("text", "\n".join(history_text(whole))),
        ):
            status = main(["lineage", "history", name, *asked, "--db", pruned, "--format", form])
            assert status == 0
            assert capsys.readouterr().out == expected + "\n", (form, asked)


def test_a_historys_pieces_hold_no_more_for_a_longer_history(tmp_path: Path) -> None:
    """Four times the runs writing a dataset, its history listed by pieces of 100: no more of
    Python's memory (traced) at the peak, on a second listing (see above)."""

    def listed(lineage: Lineage) -> int:
        pieces = lineage.history_in_pieces(HistoryQuery("t"), 100)
        return sum(len(piece.entries) for piece in pieces)

    _assert_flat(tmp_path, listed)
