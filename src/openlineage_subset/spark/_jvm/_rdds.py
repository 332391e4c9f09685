"""What a Spark job run outside SQL read and wrote: its RDD graph, walked through py4j.

A job's final stage holds its last RDD, whose dependencies lead down to the RDDs that read
something (the leaves of the graph):

- a Hadoop input format's (``sc.textFile``, ``wholeTextFiles``, ``binaryFiles``,
  ``hadoopFile``, ``newAPIHadoopFile``, ``sequenceFile``, ``pickleFile``...): the paths in its
  configuration's input directories (``mapreduce.input.fileinputformat.inputdir``), a glob
  resolved to what it matches;
- a DataFrame's file scan turned into an RDD (``df.rdd``): the directories of the files its
  partitions read;
- local data (``sc.parallelize``, an empty RDD): no dataset;
- anything else (a checkpoint, a JDBC query, a library's own RDD): named by its class only, so
  that capture can say which input it could not name.

What a job wrote is in its final stage's function: the configuration of a Hadoop write
(``saveAsTextFile``, ``saveAsHadoopFile``, ``saveAsNewAPIHadoopFile``, ``saveAsPickleFile``)
names its output directory (``mapreduce.output.fileoutputformat.outputdir``).

The walk asks each RDD for its id and dependencies (a few round trips per RDD, bounded by
:data:`MAX_RDDS`); the files of a DataFrame scan cross one partition's list at a time.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, replace
from urllib.parse import unquote

from openlineage_subset.spark._facts import RddJobFacts, RddWriteFacts, ScanFacts
from openlineage_subset.spark._jvm._bridge import (
    JavaObject,
    java_class,
    java_member,
    qualified_in,
    strings_of_array,
)
from openlineage_subset.spark._jvm._errors import java_error_text

INPUT_DIRECTORIES = "mapreduce.input.fileinputformat.inputdir"
OUTPUT_DIRECTORY = "mapreduce.output.fileoutputformat.outputdir"
_OUTPUT_FORMATS = ("mapreduce.job.outputformat.class", "mapred.output.format.class")
MAX_RDDS = 5000
"""The most RDDs one walk visits: a graph larger than this (an iterative job's thousands of
unions) is not read, and its inputs are not named."""
_HADOOP_RDD = "org.apache.spark.rdd.HadoopRDD"
_NEW_HADOOP_RDD = "org.apache.spark.rdd.NewHadoopRDD"
HADOOP_READS = frozenset(
    {
        _HADOOP_RDD,
        _NEW_HADOOP_RDD,
        "org.apache.spark.rdd.WholeTextFileRDD",
        "org.apache.spark.rdd.BinaryFileRDD",
    }
)
"""The RDDs of Hadoop input formats (and their subclasses, by an instance check)."""
FILE_SCAN = "org.apache.spark.sql.execution.datasources.FileScanRDD"
_LOCAL_DATA = frozenset(
    {"org.apache.spark.rdd.ParallelCollectionRDD", "org.apache.spark.rdd.EmptyRDD"}
)
_WRITE_CONFIG = "org.apache.spark.internal.io.HadoopWriteConfigUtil"
"""The type of the write configuration a Hadoop save's task function holds."""
_RESULT_STAGE = "org.apache.spark.scheduler.ResultStage"
_TYPE_CHECK_SITES = (" at SerDeUtil.scala:", " at PythonHadoopUtil.scala:")
"""Where PySpark makes the RDDs whose first element it checks as it converts between Python
objects and Hadoop's writables: before a Hadoop save (``saveAsSequenceFile``...), as it reads
a sequence or Hadoop file (``sequenceFile``, ``hadoopFile``...)."""
_TYPE_CHECKS = frozenset({"first", "take"})
"""The Scala RDD operations PySpark's check runs (a script's ``first()`` runs none: PySpark
takes from Python)."""
_GLOB_CHARACTERS = frozenset("*?[{")
_CALL_SITE = "callSite.short"
_SCOPE = "spark.rdd.scope"
"""A job property: the outermost RDD operation it runs in, as JSON (``{"id":"3","name":"..."}``)."""


@dataclass(frozen=True)
class RddReads:
    """What the leaves of an RDD graph read: file reads, and the classes of the others."""

    scans: tuple[ScanFacts, ...]
    unnamed: tuple[str, ...]


def rdd_reads(rdd: JavaObject) -> RddReads:
    """What an RDD and everything it depends on read (see the module's docstring).

    Example (``df`` a DataFrame read from ``/lake/sales``)::

        rdd_reads(df._jdf.rdd()).scans[0].root_paths   # ('file:/lake/sales',)
    """
    leaves = _leaves(rdd)
    if leaves is None:
        return RddReads((), (f"a graph of more than {MAX_RDDS} RDDs",))
    scans: list[ScanFacts] = []
    unnamed: list[str] = []
    for leaf in leaves:
        kind = str(leaf.getClass().getName())
        if kind in _LOCAL_DATA:
            continue
        if kind == FILE_SCAN:
            scans.append(_file_scan_read(leaf))
        elif kind in HADOOP_READS or _is_hadoop_rdd(leaf):
            found = _hadoop_reads(leaf, kind)
            if found:
                scans.extend(found)
            else:
                unnamed.append(f"{kind} of {_input_format(leaf)}")
        else:
            unnamed.append(kind)
    return RddReads(tuple(scans), tuple(dict.fromkeys(unnamed)))


def job_facts(job: JavaObject) -> RddJobFacts:
    """The facts of one job the Java forwarder handed over: ``job`` is its array of the job's
    start event, final stage (None when the job ended before it could be read), end event and
    why the stage could not be read (None here: the caller reports that as an error first).
    """
    start, stage, end = job[0], job[1], job[2]
    result = end.jobResult()
    failed = not str(result.getClass().getSimpleName()).startswith("JobSucceeded")
    message, trace = java_error_text(result.exception()) if failed else (None, None)
    action, called_by_script = _action(start, stage)
    facts = RddJobFacts(
        job_id=int(end.jobId()),
        action=action,
        called_by_script=called_by_script,
        started_ms=int(start.time()),
        ended_ms=int(end.time()),
        failed=failed,
        error_message=message,
        stack_trace=trace,
        lost=stage is None,
    )
    if stage is None:
        return facts
    final_rdd = stage.rdd()
    reads = rdd_reads(final_rdd)
    writes = _writes(stage)
    type_check = (
        not writes
        and action in _TYPE_CHECKS
        and not called_by_script
        and any(site in str(final_rdd.creationSite().shortForm()) for site in _TYPE_CHECK_SITES)
    )
    return replace(
        facts, reads=reads.scans, writes=writes, unnamed=reads.unnamed, type_check=type_check
    )


def input_paths(directories: str) -> list[str]:
    """The paths of a Hadoop ``inputdir`` setting: separated by commas, with ``\\,`` a comma
    and ``\\\\`` a backslash inside a path (as Hadoop's ``FileInputFormat`` escapes them).

    >>> input_paths("file:/a,/b/c\\\\,d,/e/{x\\\\,y}")
    ['file:/a', '/b/c,d', '/e/{x,y}']
    """
    paths: list[str] = []
    current: list[str] = []
    escaped = False
    for character in directories:
        if escaped:
            current.append(character)
            escaped = False
        elif character == "\\":
            escaped = True
        elif character == ",":
            paths.append("".join(current))
            current = []
        else:
            current.append(character)
    paths.append("".join(current))
    return [path for path in paths if path]


def scanned_file(text: str) -> str | None:
    """The path of one file a DataFrame scan reads, from its ``toString``
    (``path: <URL-encoded path>, range: 0-10, partition values: [...]``), decoded as Hadoop
    prints paths; None for any other text.

    >>> scanned_file("path: file:///lake/sales/day=2024-10-15/a%20b.parquet, range: 0-9, ...")
    'file:///lake/sales/day=2024-10-15/a b.parquet'
    """
    prefix, separator = "path: ", ", range: "
    if not text.startswith(prefix) or separator not in text:
        return None
    return unquote(text[len(prefix) : text.index(separator)])


def _leaves(rdd: JavaObject) -> list[JavaObject] | None:
    """The RDDs with no dependency below ``rdd`` (itself, if it has none); None beyond
    :data:`MAX_RDDS`. A checkpointed RDD's dependency is its checkpoint: what the job read."""
    leaves = []
    seen: set[int] = set()
    pending = [rdd]
    while pending:
        current = pending.pop()
        identity = int(current.id())
        if identity in seen:
            continue
        seen.add(identity)
        if len(seen) > MAX_RDDS:
            return None
        dependencies = current.dependencies()
        count = int(dependencies.size())
        if count == 0:
            leaves.append(current)
        pending.extend(dependencies.apply(index).rdd() for index in range(count))
    return leaves


def _is_hadoop_rdd(rdd: JavaObject) -> bool:
    """Whether an RDD of another class is a Hadoop input format's (a subclass)."""
    return any(
        bool(java_member(f"java.lang.Class:{name}", "isInstance")(rdd))
        for name in (_HADOOP_RDD, _NEW_HADOOP_RDD)
    )


def _hadoop_reads(rdd: JavaObject, kind: str) -> list[ScanFacts]:
    """One read per input path of a Hadoop input format's RDD (none when it names no path)."""
    conf = rdd.getConf()
    directories = conf.get(INPUT_DIRECTORIES)
    if directories is None:
        return []
    source = kind.rpartition(".")[2]
    reads = []
    for path in input_paths(str(directories)):
        qualified = qualified_in(conf, path)
        if _GLOB_CHARACTERS.isdisjoint(path):
            reads.append(ScanFacts(source, None, (qualified,), directories=(qualified,)))
            continue
        matched = _glob(conf, qualified)
        reads.append(ScanFacts(source, None, matched, given_path=qualified, directories=matched))
    return reads


def _glob(conf: JavaObject, pattern: str) -> tuple[str, ...]:
    """What a Hadoop glob matches, qualified, in a few round trips whatever their number."""
    path = java_class("org.apache.hadoop.fs.Path")(pattern)
    statuses = path.getFileSystem(conf).globStatus(path)
    if statuses is None:
        return ()
    return strings_of_array(java_class("org.apache.hadoop.fs.FileUtil").stat2Paths(statuses))


def _input_format(rdd: JavaObject) -> str:
    """The input format a Hadoop RDD reads with, for the log."""
    conf = rdd.getConf()
    for key in ("mapreduce.job.inputformat.class", "mapred.input.format.class"):
        value = conf.get(key)
        if value is not None:
            return str(value)
    return "an input format that names no input directory"


def _file_scan_read(rdd: JavaObject) -> ScanFacts:
    """The directories of the files a DataFrame scan turned into an RDD reads (and the files)."""
    partitions = rdd.filePartitions()
    files = set()
    for index in range(int(partitions.size())):
        for text in strings_of_array(partitions.apply(index).files()):
            path = scanned_file(text)
            if path is not None:
                files.add(path)
    found = tuple(sorted({path.rpartition("/")[0] for path in files}))
    return ScanFacts("FileScanRDD", None, found, directories=found, files=tuple(sorted(files)))


def _writes(stage: JavaObject) -> tuple[RddWriteFacts, ...]:
    """Where the job's final stage wrote: the output directory of the Hadoop write
    configuration its function holds, if any."""
    if str(stage.getClass().getName()) != _RESULT_STAGE:
        return ()
    function = stage.func()
    fields = function.getClass().getDeclaredFields()
    writes = []
    for index in range(len(fields)):
        field = fields[index]
        if str(field.getType().getName()) != _WRITE_CONFIG:
            continue
        field.setAccessible(True)
        config = field.get(function)
        conf_field = config.getClass().getDeclaredField("conf")
        conf_field.setAccessible(True)
        conf = conf_field.get(config).value()
        directory = conf.get(OUTPUT_DIRECTORY)
        output_format = next(
            (str(v) for v in map(conf.get, _OUTPUT_FORMATS) if v is not None), None
        )
        path = None if directory is None else qualified_in(conf, str(directory))
        writes.append(RddWriteFacts(path, output_format))
    return tuple(writes)


def _action(start: JavaObject, stage: JavaObject) -> tuple[str, bool]:
    """The Spark method that ran a job, and whether the script's own call of an RDD action
    did: the call site PySpark gives those (``count at daily.py:31``), else the outermost RDD
    operation Spark ran the job in (``saveAsTextFile``), else the call site Spark gives its
    final stage."""
    properties = start.properties()
    if properties is not None:
        call_site = properties.getProperty(_CALL_SITE)
        if call_site is not None:
            return method_of(str(call_site)), True
        scope = properties.getProperty(_SCOPE)
        if scope is not None:
            name = json.loads(str(scope)).get("name")
            if isinstance(name, str) and name:
                return name, False
    if stage is not None:
        return method_of(str(stage.name())), False
    infos = start.stageInfos()
    named = [
        (int(info.stageId()), str(info.name())) for info in map(infos.apply, range(infos.size()))
    ]
    return (method_of(max(named)[1]) if named else "job"), False


def method_of(call_site: str) -> str:
    """The Spark method a call site names.

    >>> method_of("count at /jobs/daily.py:31"), method_of("runJob at PythonRDD.scala:181")
    ('count', 'runJob')
    """
    return call_site.partition(" at ")[0].strip() or "job"
