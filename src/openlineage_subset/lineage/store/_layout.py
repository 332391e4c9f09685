"""The lineage database's layout: its tables, indexes and triggers as one SQL script, and the
numbers that say which layout a file has (:data:`SCHEMA_VERSION`) and which older ones
:mod:`._upgrades` brings to it (:data:`UPGRADABLE`).

Tables:

- ``runs``: one row per run id, merged over its events (status, start and end times);
- ``events``: the digest of every event stored, so that reading it again changes nothing, and
  its facets but the conditions, compressed, for the UI's pages (see ``lineage/store/_facets.py``);
- ``datasets``: (namespace, name);
- ``accesses``: what a run read (``input``) or wrote (``output``) of a dataset, with the
  condition (JSON, the ``OR`` of the distinct ones its events gave; NULL: the whole dataset);
- ``access_conditions``: those distinct conditions, one row each, of the accesses that have
  several (an access with one has it as its condition alone);
- ``partitions``: the partitions of each dataset that some read or write listed, each with a
  ``partition_id``;
- ``access_partitions``: the partitions each read's and each write's conditions list
  (partition and access ids), to find the reads (impact) and the writes (provenance) of a
  partition without reading every condition;
- ``access_locations``: the places (files, directories) each read's and write's condition
  lists when that list decides where it may have touched (a location list; ``located`` in
  ``accesses``), to find the reads of a bad file without reading every condition (layout 9);
- ``access_bounds``: the ranges of ISO dates the condition of a read that is not only
  partition lists keeps partition columns in (``business_date`` within the last seven days, a
  day's partitions ``AND amount > 0``), to leave out the reads of other days without reading
  their conditions (see ``lineage/model/_bounds.py``; a database ingested before this version has
  no ranges for the latter, and reads their conditions);
- ``access_ranges``: every read that does not only list partitions, keyed by one of its ranges
  of dates (or by none), to find the reads that may hold a partition's date without reading the
  others (layout 10);
- ``partition_columns``, ``partition_kinds``: the sets of columns of each dataset's partitions,
  and how their values compare (text, date, number, null), so that a query knows without reading
  every partition whether some are finer than others, or compare otherwise than as text;
- ``partition_tails``: the distinct ends of each dataset's partition keys after the first
  column (the other columns' values together, as the partitions have them), kept by a
  trigger, so that a page draws a grid of a dataset's partitions without reading them all;
- ``dataset_names``: the other names of datasets (a table and its location, that an event's
  ``symlinks`` facet or the location its ``storage``/``catalog`` facet names says are one), with
  why; a name two datasets not otherwise joined claim is ambiguous: it is kept apart from both
  (see ``lineage/store/_dataset_names.py``);
- ``run_parents``: the parent and root run each run's ``parent`` facet names, and for an
  orchestrator's task run its DAG, task and logical date (``airflow`` facet), so that impact
  tells which task runs to re-run (see ``lineage/queries/_task_runs.py``);
- ``run_families``: the runs of one job under one parent run (a streaming query's
  micro-batches): how many and the newest, kept by triggers, so that a listing shows them as
  one row without reading them (layout 9; ``parented`` in ``runs`` says which runs are in one);
- ``dataset_counts``: how many reads, writes and partitions each dataset has, added to as the
  writer stores them and kept by triggers as merges and retention move or remove them, so
  that a listing of datasets counts none of them; with
  ``written_at`` of each write and ``started_at`` of each access (their run's, kept by
  triggers) and their indexes, a dataset's summary, latest runs and facets are as quick at ten
  million events as at a thousand (layout 12);
- ``settings``: the store's settings, by name (layout 6): ``partition_directories``, whether a
  dataset named as a partition directory is read as a partition of its table (``as-partitions``,
  the default when absent) or stays a dataset (``as-datasets``; see ``lineage/store/_settings.py``).
"""

from __future__ import annotations

import sqlite3

APPLICATION_ID = 0x4F4C5342  # "OLSB": openlineage-subset lineage
"""The ``PRAGMA application_id`` of a lineage database."""


SCHEMA_VERSION = 14
"""The ``PRAGMA user_version`` of the layout this version writes and reads. A database of
layout 3 (whose ``access_partitions`` held reads only), 4 (which kept no facets), 5 (no other
names of datasets, no ``run_parents``, no settings), 6 (no ``partition_tails``), 7 (no
index of runs by their parent), 8 (no ``access_locations``, no ``run_families``), 9 (no
``access_ranges``, no ``done``), 10 (no ``accesses_naming_places``), 11 (no
``dataset_counts``, no ``written_at`` nor ``started_at`` of accesses, no ``runs_failed``) or
12 (one index of reads and writes by start, no ``reads_by_start``; a trigger kept
``partition_tails``) or 13 (events keyed by their digest alone) is brought to 14 when first
opened (:func:`upgrade`); older ones are refused, saying to ingest again."""


UPGRADABLE = 3
"""The oldest layout :func:`upgrade` brings to :data:`SCHEMA_VERSION`."""


SCHEMA = """
CREATE TABLE runs (
    run_id          TEXT PRIMARY KEY,
    job_namespace   TEXT NOT NULL,
    job_name        TEXT NOT NULL,
    -- the terminal state (COMPLETE, FAIL, ABORT) if any, else the latest (START, RUNNING, OTHER)
    status          TEXT NOT NULL,
    -- the START event's time, else the earliest event's
    started_at      TEXT NOT NULL,
    -- the terminal event's time; NULL while no terminal event is known
    ended_at        TEXT,
    -- what status and the times are merged from, whatever order the events come in
    start_event_at  TEXT,
    first_event_at  TEXT NOT NULL,
    latest_state    TEXT NOT NULL,
    latest_state_at TEXT NOT NULL,
    terminal_state  TEXT,
    parented        INTEGER NOT NULL DEFAULT 0
    -- parented: 1 when its parent facet names a parent run (run_parents): then it is one of
    -- the runs of its job under that parent (run_families), listed with them
);
CREATE INDEX runs_by_start ON runs (started_at);
-- the runs listed one by one (no parent named), newest first without reading the others
CREATE INDEX runs_alone_by_start ON runs (started_at) WHERE parented = 0;
CREATE INDEX runs_by_end ON runs (ended_at);
CREATE INDEX runs_by_job ON runs (job_namespace, job_name);
-- the failed and aborted runs, the latest end first: the front page's incidents, counted
-- and listed without reading the other runs (layout 12)
CREATE INDEX runs_failed ON runs (coalesce(ended_at, started_at) DESC, run_id DESC)
WHERE status IN ('FAIL', 'ABORT');

CREATE TABLE events (
    digest      TEXT NOT NULL,     -- SHA-256 of the event's canonical JSON
    run_id      TEXT NOT NULL REFERENCES runs (run_id),
    event_type  TEXT NOT NULL,
    event_time  TEXT NOT NULL,
    source      TEXT NOT NULL,     -- file:line where it was first read
    -- what lineage/store/_facets.py keeps of its facets (zlib-compressed JSON; empty: it had none);
    -- NULL: not kept (the event was stored before layout 5)
    facets      BLOB
);
-- an event is known by its run and its digest (its canonical JSON holds its run id): run ids
-- come in the order runs start (UUIDv7, as the OpenLineage clients make them), so an event's
-- key is added near the last one rather than at a random place of an index of every digest,
-- which dirtied a page per event at a million events (layout 14; the digest was the key before)
CREATE UNIQUE INDEX events_by_run ON events (run_id, digest);

CREATE TABLE datasets (
    dataset_id  INTEGER PRIMARY KEY,
    namespace   TEXT NOT NULL,
    name        TEXT NOT NULL,
    UNIQUE (namespace, name)
);
CREATE INDEX datasets_by_name ON datasets (name);

CREATE TABLE accesses (
    access_id   INTEGER PRIMARY KEY,
    run_id      TEXT NOT NULL REFERENCES runs (run_id),
    dataset_id  INTEGER NOT NULL REFERENCES datasets (dataset_id),
    direction   TEXT NOT NULL CHECK (direction IN ('input', 'output')),
    condition   TEXT,  -- canonical JSON; NULL: the whole dataset
    -- 1 when the condition only lists partitions (partition lists joined by OR), each listed
    -- in access_partitions: then it selects no partition it does not list
    listed      INTEGER NOT NULL DEFAULT 0,
    -- 1 when a list of places decides where the condition may have touched (a location list,
    -- see listed_places()), each in access_locations: then it touched no place elsewhere
    located     INTEGER NOT NULL DEFAULT 0,
    -- for a write, 1 when its run completed (status COMPLETE): only such a write wrote;
    -- kept by the trigger below when a stored run's status changes (layout 10)
    done        INTEGER NOT NULL DEFAULT 0,
    -- for a write, when its run wrote: its end, else (while it runs) its start, i.e.
    -- coalesce(ended_at, started_at) of runs; kept by the trigger below (layout 12)
    written_at  TEXT,
    -- its run's start (runs.started_at), kept by the trigger below (layout 12)
    started_at  TEXT,
    UNIQUE (run_id, dataset_id, direction)
);
-- with listed: the reads of a partition are found without reading each row (and its condition)
CREATE INDEX accesses_by_dataset ON accesses (dataset_id, direction, listed);
-- with located: the reads of a file are found without reading each row
CREATE INDEX accesses_by_location ON accesses (dataset_id, direction, located);
-- the conditions naming a location that neither only list partitions nor are decided by
-- places (a location ANDed with a filter): a dataset's column order is looked for in the
-- locations its conditions name without reading the others (layout 11)
CREATE INDEX accesses_naming_places ON accesses (dataset_id, direction)
WHERE listed = 0 AND located = 0 AND instr(condition, '"location"') > 0;
-- the writes of completed runs that do not only list partitions: a partition's writers are
-- these and those that list it, not every write of failed runs too (layout 10)
CREATE INDEX writes_done ON accesses (dataset_id) WHERE direction = 'output' AND listed = 0
AND done = 1;

-- a dataset's latest write without reading the others (layout 12)
CREATE INDEX writes_by_time ON accesses (dataset_id, written_at) WHERE direction = 'output';

-- a dataset's reads, and its writes, by their runs' start: its latest (its page's history, its
-- facets), its reads from a time on (an impact since then; how many), without reading the
-- others (layout 13; layout 12 had one index of both, whose reads from a time on were found
-- among its writes)
CREATE INDEX reads_by_start ON accesses (dataset_id, started_at) WHERE direction = 'input';
CREATE INDEX writes_by_start ON accesses (dataset_id, started_at) WHERE direction = 'output';
-- the writes of runs that did not complete (failed, aborted, running): the failed writes of
-- a dataset found without reading the others (layout 12)
CREATE INDEX writes_not_done ON accesses (dataset_id) WHERE direction = 'output' AND done = 0;

CREATE TRIGGER accesses_started AFTER UPDATE OF started_at ON runs
WHEN NEW.started_at IS NOT OLD.started_at
BEGIN
    UPDATE accesses SET started_at = NEW.started_at WHERE run_id = NEW.run_id;
END;

CREATE TRIGGER writes_timed AFTER UPDATE OF started_at, ended_at ON runs
WHEN coalesce(NEW.ended_at, NEW.started_at) IS NOT coalesce(OLD.ended_at, OLD.started_at)
BEGIN
    UPDATE accesses SET written_at = coalesce(NEW.ended_at, NEW.started_at)
    WHERE run_id = NEW.run_id AND direction = 'output';
END;

CREATE TRIGGER writes_done_kept AFTER UPDATE OF status ON runs
WHEN (NEW.status = 'COMPLETE') != (OLD.status = 'COMPLETE')
BEGIN
    UPDATE accesses SET done = NEW.status = 'COMPLETE'
    WHERE run_id = NEW.run_id AND direction = 'output';
END;

-- the places (place_key(): files, directories) of the accesses whose condition they decide
-- (located), by dataset: the reads of a bad file are those of it, of a directory above it,
-- or of files below it (a range of text), and those not located
CREATE TABLE access_locations (
    dataset_id  INTEGER NOT NULL REFERENCES datasets (dataset_id),
    place       TEXT NOT NULL,
    access_id   INTEGER NOT NULL REFERENCES accesses (access_id),
    PRIMARY KEY (dataset_id, place, access_id)
) WITHOUT ROWID;

CREATE TABLE access_conditions (
    access_id   INTEGER NOT NULL REFERENCES accesses (access_id),
    condition   TEXT NOT NULL,
    PRIMARY KEY (access_id, condition)
) WITHOUT ROWID;

CREATE TABLE partitions (
    dataset_id   INTEGER NOT NULL REFERENCES datasets (dataset_id),
    -- canonical JSON object: column -> value (null: the null partition)
    dimensions   TEXT NOT NULL,
    identifier   TEXT,
    -- a short key for access_partitions, which has a row per partition a read lists
    partition_id INTEGER NOT NULL UNIQUE,
    PRIMARY KEY (dataset_id, dimensions)
) WITHOUT ROWID;

-- the distinct ends of each dataset's partition keys after the first column's pair (for
-- {"a":"x","b":"y"}: "b":"y"}), so that a grid knows the other columns' values without
-- reading every partition; added to by the writer as it stores partitions (a key of one
-- column has none; layouts 7 to 12 kept it by a trigger on each insert)
CREATE TABLE partition_tails (
    dataset_id   INTEGER NOT NULL REFERENCES datasets (dataset_id),
    tail         TEXT NOT NULL,
    PRIMARY KEY (dataset_id, tail)
) WITHOUT ROWID;

CREATE TABLE access_partitions (
    partition_id INTEGER NOT NULL REFERENCES partitions (partition_id),
    access_id    INTEGER NOT NULL REFERENCES accesses (access_id),
    PRIMARY KEY (partition_id, access_id)
) WITHOUT ROWID;

CREATE TABLE access_bounds (
    access_id   INTEGER NOT NULL REFERENCES accesses (access_id),
    column_name TEXT NOT NULL,
    low         TEXT,  -- the least ISO date the column may hold; NULL: no least
    high        TEXT,  -- the greatest; NULL: no greatest
    PRIMARY KEY (access_id, column_name)
) WITHOUT ROWID;

-- every read that does not only list partitions, by the range of dates of one column its
-- condition keeps (range_key(): the column, the class of the range's width, its least date;
-- '', 0, '' when it bounds none), so that the reads a partition's date may be in are found by
-- a range of keys per width, the others unread (range_probes()); layout 10
CREATE TABLE access_ranges (
    dataset_id  INTEGER NOT NULL REFERENCES datasets (dataset_id),
    column_name TEXT NOT NULL,
    span        INTEGER NOT NULL,
    key         TEXT NOT NULL,
    access_id   INTEGER NOT NULL REFERENCES accesses (access_id),
    PRIMARY KEY (dataset_id, column_name, span, key, access_id)
) WITHOUT ROWID;

CREATE TABLE partition_columns (
    dataset_id  INTEGER NOT NULL REFERENCES datasets (dataset_id),
    columns     TEXT NOT NULL,  -- canonical JSON array of a partition's column names, sorted
    PRIMARY KEY (dataset_id, columns)
) WITHOUT ROWID;

CREATE TABLE partition_kinds (
    dataset_id  INTEGER NOT NULL REFERENCES datasets (dataset_id),
    column_name TEXT NOT NULL,
    -- how partition_overlap() types the column's values: string, date, bigint, decimal; null
    kind        TEXT NOT NULL,
    PRIMARY KEY (dataset_id, column_name, kind)
) WITHOUT ROWID;

CREATE TABLE dataset_names (
    namespace   TEXT NOT NULL,
    name        TEXT NOT NULL,
    -- the dataset that name is another name of (several: ambiguous, kept apart from each)
    dataset_id  INTEGER NOT NULL REFERENCES datasets (dataset_id),
    reason      TEXT NOT NULL,  -- 'symlink', 'storage location'
    PRIMARY KEY (namespace, name, dataset_id)
) WITHOUT ROWID;
CREATE INDEX dataset_names_by_dataset ON dataset_names (dataset_id);

CREATE TABLE run_parents (
    run_id           TEXT PRIMARY KEY REFERENCES runs (run_id),
    -- the parent run facet's run, job and root (NULL: not named)
    parent_run_id    TEXT,
    parent_namespace TEXT,
    parent_name      TEXT,
    root_run_id      TEXT,
    root_namespace   TEXT,
    root_name        TEXT,
    -- an orchestrator's task run ('airflow': its airflow facet): DAG, task, DAG run, logical
    -- date (stored form); NULL for other runs
    orchestrator     TEXT,
    dag_id           TEXT,
    task_id          TEXT,
    dag_run_id       TEXT,
    logical_date     TEXT,
    nominal_time     TEXT   -- the nominalTime facet's start (stored form)
) WITHOUT ROWID;
-- a run's page lists the runs it started
CREATE INDEX run_parents_by_parent ON run_parents (parent_run_id);

-- the runs of one job under one parent run (a streaming query's micro-batches, a loop's
-- actions): how many, and the newest (latest start; the least run id among equals), kept by
-- the triggers below whatever order events come in, so that a listing shows them as one row
CREATE TABLE run_families (
    parent_run_id   TEXT NOT NULL,
    job_namespace   TEXT NOT NULL,
    job_name        TEXT NOT NULL,
    runs            INTEGER NOT NULL,
    newest_at       TEXT NOT NULL,
    newest_run      TEXT NOT NULL,
    PRIMARY KEY (parent_run_id, job_namespace, job_name)
) WITHOUT ROWID;
CREATE INDEX run_families_by_newest ON run_families (newest_at DESC, newest_run);

CREATE TRIGGER run_families_joined AFTER INSERT ON run_parents
WHEN NEW.parent_run_id IS NOT NULL
BEGIN
    UPDATE runs SET parented = 1 WHERE run_id = NEW.run_id;
    INSERT INTO run_families
        (parent_run_id, job_namespace, job_name, runs, newest_at, newest_run)
    SELECT NEW.parent_run_id, job_namespace, job_name, 1, started_at, run_id FROM runs
    WHERE run_id = NEW.run_id
    ON CONFLICT (parent_run_id, job_namespace, job_name) DO UPDATE SET
        runs = runs + 1,
        newest_run = CASE WHEN excluded.newest_at > newest_at OR
            (excluded.newest_at = newest_at AND excluded.newest_run < newest_run)
            THEN excluded.newest_run ELSE newest_run END,
        newest_at = max(newest_at, excluded.newest_at);
END;

-- the same, for a run whose parent an event names after others named none
CREATE TRIGGER run_families_joined_later AFTER UPDATE OF parent_run_id ON run_parents
WHEN OLD.parent_run_id IS NULL AND NEW.parent_run_id IS NOT NULL
BEGIN
    UPDATE runs SET parented = 1 WHERE run_id = NEW.run_id;
    INSERT INTO run_families
        (parent_run_id, job_namespace, job_name, runs, newest_at, newest_run)
    SELECT NEW.parent_run_id, job_namespace, job_name, 1, started_at, run_id FROM runs
    WHERE run_id = NEW.run_id
    ON CONFLICT (parent_run_id, job_namespace, job_name) DO UPDATE SET
        runs = runs + 1,
        newest_run = CASE WHEN excluded.newest_at > newest_at OR
            (excluded.newest_at = newest_at AND excluded.newest_run < newest_run)
            THEN excluded.newest_run ELSE newest_run END,
        newest_at = max(newest_at, excluded.newest_at);
END;

-- a run's start moved (a START that came after other events): its family's newest follows;
-- when the newest moved earlier, the newest is found again among the family's runs
CREATE TRIGGER run_families_moved AFTER UPDATE OF started_at ON runs
WHEN NEW.parented = 1 AND NEW.started_at != OLD.started_at
BEGIN
    UPDATE run_families SET
        newest_run = CASE WHEN NEW.started_at > newest_at OR
            (NEW.started_at = newest_at AND NEW.run_id < newest_run)
            THEN NEW.run_id ELSE newest_run END,
        newest_at = max(newest_at, NEW.started_at)
    WHERE parent_run_id = (SELECT parent_run_id FROM run_parents WHERE run_id = NEW.run_id)
    AND job_namespace = NEW.job_namespace AND job_name = NEW.job_name
    AND (newest_run != NEW.run_id OR NEW.started_at > OLD.started_at);
    UPDATE run_families SET (newest_at, newest_run) = (
        SELECT r.started_at, r.run_id FROM run_parents p JOIN runs r USING (run_id)
        WHERE p.parent_run_id = run_families.parent_run_id
        AND r.job_namespace = run_families.job_namespace AND r.job_name = run_families.job_name
        ORDER BY r.started_at DESC, r.run_id LIMIT 1)
    WHERE parent_run_id = (SELECT parent_run_id FROM run_parents WHERE run_id = NEW.run_id)
    AND job_namespace = NEW.job_namespace AND job_name = NEW.job_name
    AND newest_run = NEW.run_id AND NEW.started_at < OLD.started_at;
END;

-- how many reads, writes and (known) partitions each dataset has: the writer adds those it
-- stores (ADD_COUNTS, a statement per dataset and batch: a trigger per row cost a tenth of
-- ingest), the triggers below follow what moves (merges of datasets) or goes (retention)
CREATE TABLE dataset_counts (
    dataset_id  INTEGER PRIMARY KEY REFERENCES datasets (dataset_id),
    reads       INTEGER NOT NULL DEFAULT 0,
    writes      INTEGER NOT NULL DEFAULT 0,
    known_partitions INTEGER NOT NULL DEFAULT 0  -- not "partitions": a table is named so
);

CREATE TRIGGER dataset_counts_made AFTER INSERT ON datasets
BEGIN
    INSERT OR IGNORE INTO dataset_counts (dataset_id) VALUES (NEW.dataset_id);
END;

CREATE TRIGGER dataset_counts_gone AFTER DELETE ON datasets
BEGIN
    DELETE FROM dataset_counts WHERE dataset_id = OLD.dataset_id;
END;

CREATE TRIGGER accesses_uncounted AFTER DELETE ON accesses
BEGIN
    UPDATE dataset_counts SET reads = reads - (OLD.direction = 'input'),
        writes = writes - (OLD.direction = 'output')
    WHERE dataset_id = OLD.dataset_id;
END;

CREATE TRIGGER accesses_recounted AFTER UPDATE OF dataset_id ON accesses
WHEN NEW.dataset_id != OLD.dataset_id
BEGIN
    UPDATE dataset_counts SET reads = reads - (OLD.direction = 'input'),
        writes = writes - (OLD.direction = 'output')
    WHERE dataset_id = OLD.dataset_id;
    UPDATE dataset_counts SET reads = reads + (NEW.direction = 'input'),
        writes = writes + (NEW.direction = 'output')
    WHERE dataset_id = NEW.dataset_id;
END;

CREATE TRIGGER partitions_uncounted AFTER DELETE ON partitions
BEGIN
    UPDATE dataset_counts SET known_partitions = known_partitions - 1
    WHERE dataset_id = OLD.dataset_id;
END;

CREATE TRIGGER partitions_recounted AFTER UPDATE OF dataset_id ON partitions
WHEN NEW.dataset_id != OLD.dataset_id
BEGIN
    UPDATE dataset_counts SET known_partitions = known_partitions - 1
    WHERE dataset_id = OLD.dataset_id;
    UPDATE dataset_counts SET known_partitions = known_partitions + 1
    WHERE dataset_id = NEW.dataset_id;
END;

CREATE TABLE settings (
    name        TEXT PRIMARY KEY,  -- absent: the setting's default
    value       TEXT NOT NULL
) WITHOUT ROWID;
"""


ADD_COUNTS = (
    "UPDATE dataset_counts SET reads = reads + ?, writes = writes + ?, "
    "known_partitions = known_partitions + ? WHERE dataset_id = ?"
)
"""Add to a dataset's ``dataset_counts`` the reads, writes and partitions stored (the
parameters, then the dataset's id): the one statement that counts what is inserted."""


LATEST_ACCESSES = (
    "SELECT * FROM (SELECT access_id, started_at, run_id, direction FROM accesses "
    "INDEXED BY reads_by_start WHERE dataset_id = ? AND direction = 'input' "
    "ORDER BY started_at DESC, run_id DESC LIMIT ?) UNION ALL "
    "SELECT * FROM (SELECT access_id, started_at, run_id, direction FROM accesses "
    "INDEXED BY writes_by_start WHERE dataset_id = ? AND direction = 'output' "
    "ORDER BY started_at DESC, run_id DESC LIMIT ?) "
    "ORDER BY started_at DESC, run_id DESC, direction DESC LIMIT ?"
)
"""The ids of a dataset's latest reads and writes by their runs' start (the latest first;
a run's write before its read), each of the two indexes searched for as many (parameters:
dataset id, how many, dataset id, how many, how many)."""


def statements(script: str) -> list[str]:
    """The statements of a script (``executescript`` would commit the open transaction)."""
    statements, lines = [], []
    for line in script.splitlines():
        lines.append(line)
        text = "\n".join(lines)
        if line.rstrip().endswith(";") and sqlite3.complete_statement(text):
            statements.append(text.strip())
            lines = []
    return statements
