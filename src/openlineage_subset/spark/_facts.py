"""What the adapter reads from Spark, as plain, typed data: the one thing the JVM layer
(``spark/_jvm``) hands to the pure Python rest of the adapter.

:class:`ScanFacts` say what a scan read, :class:`WriteFacts` what a write command wrote,
:class:`ChangeFacts` what a statement changed otherwise (CREATE, DROP, TRUNCATE, LOAD DATA, a
JDBC write, ...); :class:`JdbcSource` is the database and table of a JDBC read or write;
:class:`RddJobFacts` what a Spark job run outside SQL (an RDD action) read and wrote.
Tests of the translation build these directly, with no JVM.
"""

from __future__ import annotations

from dataclasses import dataclass

from openlineage_subset.spark._trees import Node


@dataclass(frozen=True)
class JdbcSource:
    """A JDBC read's or write's database and table, as its options give them: never a
    credential (the URL is scrubbed where it is read, the ``user`` and ``password`` options
    are not read at all)."""

    url: str
    """The database's JDBC URL, scrubbed of credentials."""
    table: str | None = None
    """The ``dbtable`` option as written: a table's name, or anything valid in a FROM clause."""
    query: str | None = None
    """The ``query`` option."""
    properties: tuple[tuple[str, str], ...] = ()
    """The connection properties that name the database (SQL Server's ``databaseName``,
    ``serverName``, ``portNumber``, ``instanceName``), where the options set them."""
    derby_home: str | None = None
    """``derby.system.home`` (else the working directory) of the JVM, for an embedded Derby
    database named by a relative path."""
    prepare_query: bool = False
    """The ``prepareQuery`` option is set: the query may read what it prepares (a temporary
    table), so the tables it names are not known for sure."""


@dataclass(frozen=True)
class ScanFacts:
    """What one scan of a plan read, as plain data."""

    source: str
    """The scan node: ``FileSourceScanExec``, ``BatchScanExec``, ``HiveTableScanExec`` or
    ``RowDataSourceScanExec`` (a JDBC read)."""
    format: str | None
    root_paths: tuple[str, ...]
    """The paths Spark lists (globs already resolved to what matched)."""
    given_path: str | None = None
    """The path as the user wrote it (a glob stays a glob), when Spark keeps it."""
    table: str | None = None
    table_location: str | None = None
    partition_columns: tuple[str, ...] = ()
    filters: tuple[Node, ...] = ()
    """Conjuncts every row the scan passes on satisfies: partition filters and the Filter above."""
    partition_filters: tuple[Node, ...] = ()
    directories: tuple[str, ...] | None = None
    """The directories holding the files read after partition pruning; None when unknown."""
    total_partitions: int | None = None
    """Partitions of the whole relation, where known without extra listing."""
    partition_names: tuple[str, ...] | None = None
    """A Hive table scan's selected partitions by name (``k=v/k2=v2``), when Spark says."""
    jdbc: JdbcSource | None = None
    """A JDBC scan's database and table (its ``filters`` are those the database applied, and
    the Filter above); it has no paths."""
    attributes: tuple[tuple[str, int], ...] = ()
    """(name, id) of the partition columns among the attributes the scan outputs: where a
    write's query uses them (see ``spark/_mappings.py``)."""
    dataset_root: str | None = None
    """The directory the paths read belong to as one dataset, where Spark says (a stream
    source's path, a ``basePath``): the dataset is named after it, the paths are locations."""
    files: tuple[str, ...] | None = None
    """The files a DataFrame scan under an RDD read (``FileScanRDD``), where they were listed:
    a stream batch's, for the actions a ``foreachBatch`` function runs on it."""


@dataclass(frozen=True, kw_only=True)
class WriteFacts:
    """What one write command wrote, as plain data."""

    command: str
    root: str
    """Where the dataset lives: the write's output path or the table's location (raw)."""
    table: str | None
    partition_columns: tuple[str, ...]
    static_partitions: dict[str, str]
    files: tuple[tuple[str, int], ...] | None
    """(path, modification time in ms) of the data files under ``root`` after the write."""
    num_files: int | None
    num_parts: int | None
    overwrite: bool = False
    """The write replaced data (``mode("overwrite")``, ``INSERT OVERWRITE``)."""
    dynamic_overwrite: bool = False
    """An overwrite that replaced only the partitions it wrote (dynamic partition overwrite, and
    every Hive table overwrite); otherwise an overwrite replaced all the partitions matching its
    static partition values, written or not."""
    query: Node | None = None
    """The query written, as Spark optimized it (its logical plan): where partitions are written
    dynamically, for the partition mappings (``spark/_mappings.py``)."""
    partition_ids: tuple[int | None, ...] = ()
    """The id of the query's attribute each partition column takes its values from (None: a
    static value, or unknown), in the order of ``partition_columns``."""


@dataclass(frozen=True)
class TableFacts:
    """A catalog table as the statements that change it need it: name, location, partitioning."""

    identifier: str
    """``database.table``, unquoted."""
    location: str | None
    partition_columns: tuple[str, ...] = ()
    jdbc: JdbcSource | None = None
    """For a table of a JDBC database, which has no location: its database (``identifier`` is
    then the table's name in it)."""
    catalog_only: bool = False
    """A catalog table whose data lives in another system (``CREATE TABLE t USING jdbc``): a
    statement on it changes Spark's catalog, not a dataset (its reads and writes name the
    database's table)."""


@dataclass(frozen=True)
class ChangeFacts:
    """A statement that changed a dataset other than by writing a query's rows into it.

    ``partition_specs`` scope the change to partitions (a spec may name only some partition
    columns: ``TRUNCATE TABLE t PARTITION (day='x')`` empties every ``day=x/...``); None means
    the whole dataset.
    """

    command: str
    lifecycle: str | None
    """The ``lifecycleStateChange`` value: CREATE, DROP, TRUNCATE, ALTER, RENAME, OVERWRITE."""
    table: TableFacts
    partition_specs: tuple[dict[str, str], ...] | None = None
    previous: TableFacts | None = None
    """The table before a RENAME."""
    source: str | None = None
    """What ``LOAD DATA`` read: its qualified path."""
    location_guessed: bool = False
    """The table's location was not known before it was dropped or renamed: the catalog's
    default location stands for it."""


@dataclass(frozen=True)
class RddWriteFacts:
    """Where a Hadoop write of an RDD put its files (``saveAsTextFile``, ``saveAsHadoopFile``,
    ``saveAsPickleFile``...)."""

    path: str | None
    """The output directory, qualified (``file:/out``); None when the write's configuration
    names none (an output format that writes to a database, say)."""
    output_format: str | None = None
    """The output format's class, as the write's configuration names it."""


@dataclass(frozen=True, kw_only=True)
class RddJobFacts:
    """A Spark job run outside any SQL execution (an RDD action), as plain data."""

    job_id: int
    action: str
    """The Spark method the job's call site names (``saveAsTextFile``, ``count``, ``runJob``)."""
    started_ms: int
    ended_ms: int
    called_by_script: bool = False
    """PySpark says the script's own call of an RDD action ran the job (it gives those the
    script's call site: ``count at daily.py:31``)."""
    reads: tuple[ScanFacts, ...] = ()
    """The files its RDDs read: one per Hadoop input path (``source`` the RDD's class), one
    per DataFrame scan turned into an RDD (``source`` ``FileScanRDD``)."""
    writes: tuple[RddWriteFacts, ...] = ()
    unnamed: tuple[str, ...] = ()
    """The classes of the RDDs it read that name no dataset capture knows (a checkpoint, a
    JDBC query, an RDD of a library's own)."""
    failed: bool = False
    error_message: str | None = None
    stack_trace: str | None = None
    lost: bool = False
    """The job ended before capture saw it start, so its RDDs could not be read: nothing but
    its call site and end is known."""
    type_check: bool = False
    """The job is PySpark's look at a first element as it converts between Python objects and
    Hadoop's writables (before ``saveAsSequenceFile``, as ``sequenceFile`` reads): part of the
    save or of the read's own actions, not an action."""


@dataclass(frozen=True)
class SinkFacts:
    """A micro-batch's sink, as plain data."""

    kind: str
    """The sink's class (``FileStreamSink``, ``ForeachBatchSink``, ``MemorySink``...), or the
    root of the plan when it holds no sink."""
    path: str | None = None
    """A file sink's output path, qualified."""
    files: tuple[str, ...] | None = None
    """The files a file sink committed in this batch; None when its record could not be read
    (``problem`` says why)."""
    problem: str | None = None


@dataclass(frozen=True)
class StreamBatch:
    """One micro-batch of one run of a streaming query, as Spark describes it."""

    query_id: str
    """The query's id: the same across restarts from its checkpoint."""
    run_id: str
    """This start of the query (a new one at each restart)."""
    batch_id: int
    name: str | None = None
    """The query's name (``queryName``), when it has one."""

    @property
    def query(self) -> str:
        """What names the query's jobs: its name, else its id."""
        return self.name or self.query_id


@dataclass(frozen=True)
class StreamScanFacts:
    """A micro-batch's scan of a streaming source of DataSource V2 (Kafka, rate, a socket...):
    what the source is and the offsets the batch read between, as Spark writes them."""

    stream: str
    """The source's stream class (``KafkaMicroBatchStream``, ``RateStreamMicroBatchStream``)."""
    described: str
    """The stream as Spark prints it (``KafkaV2[Subscribe[clicks]]``)."""
    start: str | None
    """The offset the batch started after, as JSON (Kafka: ``{"topic": {"0": 23}}``)."""
    end: str | None
    """The offset the batch read up to (exclusive for Kafka), as JSON."""
    servers: str | None = None
    """Kafka's ``bootstrap.servers``, where the stream says."""
