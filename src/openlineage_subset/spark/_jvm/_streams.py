"""Structured Streaming: what a micro-batch's sink is, and the files a file sink committed in it.

A micro-batch's query execution (an ``IncrementalExecution``) holds its sink at the root of its
logical plan: ``WriteToMicroBatchDataSourceV1`` for the sinks of the DataSource V1 API (the
file sink, ``foreachBatch``), ``WriteToMicroBatchDataSource`` for DataSource V2's (memory,
console, Kafka, ``foreach``). Its inputs are ordinary scans of its executed plan: a file
source's batch is a scan of exactly the files that batch took (an index of those files).

A file sink keeps its own record of each batch: ``<path>/_spark_metadata/<batch id>``, a
version line then one JSON line per file it committed (``{"path": ..., "action": "add"}``).
Every ``compactInterval`` batches (10 by default) the record of a batch is a compaction,
``<batch id>.compact``: every file committed so far. A compaction's own files are what it holds
less what the records before it held (back to the previous compaction): the records Spark
itself reads to compact. A record longer than :data:`MAX_SINK_LOG_BYTES` is not read.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from urllib.parse import unquote

from openlineage_subset.spark._facts import SinkFacts, StreamBatch, StreamScanFacts
from openlineage_subset.spark._jvm._bridge import JavaObject, java_class, qualified_in, string_of

MAX_SINK_LOG_BYTES = 64 << 20
"""The largest file sink record read (a compaction of millions of files is not)."""
_FILE_SINK = "FileSink["
_V1_WRITE = "WriteToMicroBatchDataSourceV1"
_V2_WRITE = "WriteToMicroBatchDataSource"
_MAX_RECORDS = 1000
"""The most records read back to the previous compaction (the interval is 10 by default)."""


def sink_facts(query_execution: JavaObject, batch_id: int) -> SinkFacts:
    """What the sink of the micro-batch ``batch_id`` of ``query_execution`` is, and for a file
    sink, the files it committed in that batch."""
    root = query_execution.logical()
    root_class = str(root.getClass().getSimpleName())
    if root_class == _V1_WRITE:
        sink = root.sink()
        kind = str(sink.getClass().getSimpleName())
        described = string_of(sink)
        if described.startswith(_FILE_SINK) and described.endswith("]"):
            conf = query_execution.sparkSession().sessionState().newHadoopConf()
            path = qualified_in(conf, described[len(_FILE_SINK) : -1])
            files, problem = committed_files(conf, path, batch_id)
            return SinkFacts(kind, path=path, files=files, problem=problem)
        return SinkFacts(kind)
    if root_class == _V2_WRITE:
        table = root.table()
        if str(table.getClass().getSimpleName()) == "DataSourceV2Relation":
            table = table.table()  # Spark 4.1 and later hold the relation here
        return SinkFacts(str(table.getClass().getSimpleName()).rstrip("$"))
    return SinkFacts(root_class)


def stream_scan_facts(jscan: JavaObject) -> StreamScanFacts:
    """A ``MicroBatchScanExec``: its stream, and the offsets of the batch (a few round trips)."""
    stream = jscan.stream()
    kind = str(stream.getClass().getSimpleName())
    servers = None
    if kind == "KafkaMicroBatchStream":
        try:  # a package-private member of Kafka's connector: public in its bytecode
            found = stream.kafkaOffsetReader().driverKafkaParams().get("bootstrap.servers")
            servers = None if found is None else str(found)
        except Exception:  # another connector version: the broker is not known
            servers = None
    return StreamScanFacts(
        kind, string_of(stream), _offset(jscan.start()), _offset(jscan.end()), servers
    )


def _offset(offset: JavaObject) -> str | None:
    return None if offset is None else str(offset.json())


def execution_batch(query_execution: JavaObject) -> StreamBatch:
    """The batch a micro-batch's query execution runs, asked of it (three round trips): where
    Spark's description of it was not kept. It does not know the query's name."""
    return StreamBatch(
        str(query_execution.queryId()),
        str(query_execution.runId()),
        int(query_execution.currentBatchId()),
    )


def committed_files(
    conf: JavaObject, path: str, batch_id: int
) -> tuple[tuple[str, ...] | None, str | None]:
    """The files a file sink at ``path`` committed in batch ``batch_id``, from its own record
    (see the module's docstring); (None, why) when the record cannot be read."""
    return batch_files(lambda location: _record(conf, location), path, batch_id)


def batch_files(
    read: Callable[[str], str | None], path: str, batch_id: int
) -> tuple[tuple[str, ...] | None, str | None]:
    """:func:`committed_files` over ``read`` (a record's text by its location, None when there
    is none): a batch's record, or its compaction less the records back to the one before.

    >>> records = {"/o/_spark_metadata/0": 'v1\\n{"path":"/o/a"}',
    ...            "/o/_spark_metadata/1.compact": 'v1\\n{"path":"/o/a"}\\n{"path":"/o/b"}'}
    >>> batch_files(records.get, "/o", 1)
    (('/o/b',), None)
    """
    log = f"{path.rstrip('/')}/_spark_metadata"
    text = read(f"{log}/{batch_id}")
    if text is not None:
        return tuple(record_files(text)), None
    text = read(f"{log}/{batch_id}.compact")
    if text is None:
        return None, f"no record of batch {batch_id} in {log}"
    files = set(record_files(text))
    for earlier in range(batch_id - 1, max(batch_id - _MAX_RECORDS, -1), -1):
        delta = read(f"{log}/{earlier}")
        compacted = None if delta is not None else read(f"{log}/{earlier}.compact")
        if delta is None and compacted is None:
            return None, f"the records before batch {batch_id} in {log} are gone"
        files.difference_update(record_files(delta if delta is not None else compacted or ""))
        if compacted is not None:
            break
    return tuple(sorted(files)), None


def record_files(text: str) -> list[str]:
    """The files a file sink record adds (its first line is its version).

    >>> record_files('v1\\n{"path":"file:///o/day=1/a%20b.parquet","action":"add"}\\n')
    ['file:///o/day=1/a b.parquet']
    """
    files = []
    for line in text.splitlines()[1:]:
        if line.strip():
            entry = json.loads(line)
            if entry.get("action", "add") == "add" and not entry.get("isDir", False):
                files.append(unquote(str(entry["path"])))  # a URI: Hadoop's path decoded
    return files


def _record(conf: JavaObject, location: str) -> str | None:
    """The text of one record, in two round trips; None when it does not exist."""
    path = java_class("org.apache.hadoop.fs.Path")(location)
    system = path.getFileSystem(conf)
    if not system.exists(path):
        return None
    if int(system.getFileStatus(path).getLen()) > MAX_SINK_LOG_BYTES:
        raise ValueError(f"{location} is larger than {MAX_SINK_LOG_BYTES} bytes")
    stream = system.open(path)
    try:
        return str(java_class("org.apache.commons.io.IOUtils").toString(stream, "UTF-8"))
    finally:
        stream.close()
