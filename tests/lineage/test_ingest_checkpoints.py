"""A bulk ingest copies its log into the database in a thread of its own
(``ingestion/_checkpoints.py``): the writer's checkpoints are off meanwhile, each commit is
copied, nothing is lost, and a thread that fails hands the checkpoints back to the writer."""

from __future__ import annotations

import threading
from pathlib import Path
from typing import Any, ClassVar

import pytest

from openlineage_subset.lineage.ingestion import _checkpoints, _ingest, _writer
from openlineage_subset.lineage.ingestion._checkpoints import Checkpoints
from tests.lineage.mixed_inputs import ingest_all, inputs


class _Watched(Checkpoints):
    """Checkpoints that note the writer's own setting at each commit, and at the end."""

    made: ClassVar[list[_Watched]] = []
    awaited = False
    """Whether each commit waits for the thread to end (the thread that fails)."""

    def __init__(self, store: Any) -> None:
        super().__init__(store)
        self.automatic: list[int] = []
        self.after: int | None = None
        _Watched.made.append(self)

    def committed(self) -> None:
        super().committed()
        self.automatic.append(self._setting())
        if self.awaited and self._thread is not None:
            self._thread.join(timeout=60)  # it ends on its failure; never hang on one that does not
            assert not self._thread.is_alive(), "the checkpoint thread did not fail"

    def __exit__(self, *problem: Any) -> None:
        super().__exit__(*problem)
        self.after = self._setting()
        assert not [t for t in threading.enumerate() if t.name == "ol-subset checkpoints"]

    def _setting(self) -> int:
        return int(self.store.connection.execute("PRAGMA wal_autocheckpoint").fetchone()[0])


@pytest.fixture
def watched(monkeypatch: pytest.MonkeyPatch) -> list[_Watched]:
    _Watched.made = []
    monkeypatch.setattr(_ingest, "Checkpoints", _Watched)
    monkeypatch.setattr(_writer, "_COMMIT_EVENTS", 4)  # a commit every chunk of a few events
    monkeypatch.setattr(_ingest, "_CHUNK_BYTES", 4096)
    return _Watched.made


def _unwatched(paths: list[Path], db: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[Any, Any]:
    """The same ingest with the writer's own checkpoints."""
    with monkeypatch.context() as patch:
        patch.setattr(_ingest, "Checkpoints", _NoCheckpoints)
        return ingest_all(paths, db)


class _NoCheckpoints(Checkpoints):
    def __enter__(self) -> Checkpoints:
        return self


def test_each_commit_is_copied_by_the_thread_and_the_writer_copies_none(
    tmp_path: Path, watched: list[_Watched], monkeypatch: pytest.MonkeyPatch
) -> None:
    paths = inputs(tmp_path / "in")
    got = ingest_all(paths, tmp_path / "lineage.db")
    (copies,) = watched
    assert len(copies.automatic) > 3 and set(copies.automatic) == {0}
    assert copies.failed is None and copies.done >= 1
    assert copies.after == 1000  # the writer's own, as it was
    assert got == _unwatched(paths, tmp_path / "plain.db", monkeypatch)


def test_a_thread_that_fails_hands_the_checkpoints_back_and_loses_nothing(
    tmp_path: Path, watched: list[_Watched], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(_checkpoints, "CHECKPOINT", "PRAGMA wal_checkpoint(NO_SUCH_MODE")
    monkeypatch.setattr(_Watched, "awaited", True)
    paths = inputs(tmp_path / "in")
    got = ingest_all(paths, tmp_path / "lineage.db")
    (copies,) = watched
    assert copies.failed is not None and copies.done == 0
    # the first commit's copy failed: the writer's next commit turned its own back on
    assert copies.automatic[0] == 0 and set(copies.automatic[1:]) == {1000}
    assert copies.after == 1000
    assert got == _unwatched(paths, tmp_path / "plain.db", monkeypatch)
