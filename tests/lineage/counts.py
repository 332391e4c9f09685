"""What layout 12 keeps as the history changes (``dataset_counts``, each write's
``written_at``, each access's ``started_at``), against the same worked out from the rows
themselves."""

from __future__ import annotations

import sqlite3
from pathlib import Path

_KEPT = (
    "SELECT d.namespace, d.name, c.reads, c.writes, c.known_partitions FROM datasets d "
    "LEFT JOIN dataset_counts c USING (dataset_id) ORDER BY 1, 2"
)
_RECOUNTED = (
    "SELECT d.namespace, d.name, "
    "(SELECT count(*) FROM accesses a WHERE a.dataset_id = d.dataset_id "
    "AND a.direction = 'input'), "
    "(SELECT count(*) FROM accesses a WHERE a.dataset_id = d.dataset_id "
    "AND a.direction = 'output'), "
    "(SELECT count(*) FROM partitions p WHERE p.dataset_id = d.dataset_id) "
    "FROM datasets d ORDER BY 1, 2"
)
_WRITTEN = (
    "SELECT a.access_id FROM accesses a JOIN runs r USING (run_id) WHERE a.written_at IS NOT "
    "(CASE a.direction WHEN 'output' THEN coalesce(r.ended_at, r.started_at) END) "
    "OR a.started_at IS NOT r.started_at"
)


def assert_counts_kept(db: str | Path) -> None:
    """Each dataset's counts as kept equal its rows counted, one row of counts per dataset
    and no other; each write's time is its run's end (else start), each read's none; each
    access's start is its run's."""
    with sqlite3.connect(db) as connection:
        kept = connection.execute(_KEPT).fetchall()
        assert kept == connection.execute(_RECOUNTED).fetchall()
        (rows,) = connection.execute("SELECT count(*) FROM dataset_counts").fetchone()
        assert rows == len(kept), "a row of counts for a dataset that is not there"
        assert connection.execute(_WRITTEN).fetchall() == []
