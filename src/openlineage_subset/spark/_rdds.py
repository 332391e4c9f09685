"""The runs of Spark jobs run outside SQL executions (RDD actions): their datasets and events.

Pure Python over :class:`~openlineage_subset.spark._facts.RddJobFacts`. A job is a run when it
wrote files, or read them through a Hadoop input format (``sc.textFile``, ``pickleFile``...);
its inputs are named and scoped as a scan's are (``_reads``: a sub-path of a ``key=value`` or
date-shaped layout is a subset of the dataset at its root), its output is the directory it
wrote, with the partition (``k=v`` directories) or location it wrote below its dataset's root.

Not runs of their own:

- a job that read only through DataFrames turned into RDDs and wrote nothing, unless PySpark
  says the script's own RDD action ran it (``df.rdd.map(f).count()``: PySpark gives such jobs
  the script's call site): Spark runs such jobs itself to infer a schema (JSON, CSV with
  ``inferSchema``, PySpark's ``toDF()`` of an RDD of a DataFrame's rows, through ``first()``),
  and the DataFrame's own actions are runs already;
- PySpark's look at a first element as it converts between Python objects and Hadoop's
  writables, before a Hadoop save (``saveAsSequenceFile``...) and as it reads a sequence or
  Hadoop file (``sequenceFile``...): the save's, or the later action's, run reads all of it;
- a job that read and wrote no dataset (``sc.parallelize(...).count()``), as for SQL actions;
- a job that ended before capture could read it (``lost``): said once in the log, counted.
"""

from __future__ import annotations

from typing import Any

from openlineage_subset_generated.latest import OutputDataset

from openlineage_subset import dump, location, output_facet, spec
from openlineage_subset.producer import (
    JobRef,
    Report,
    clean_location,
    dataset_identity,
    engine_facet,
    error_facet,
    job_name,
    parent_facet,
    partition_dimensions,
    scrub_text,
    split_dataset_root,
    start_and_end,
)
from openlineage_subset.spark._config import SubsetConfig
from openlineage_subset.spark._facts import RddJobFacts, RddWriteFacts
from openlineage_subset.spark._reads import input_datasets_from_scans, partition_condition
from openlineage_subset.spark._translate import redact_condition

DATAFRAME_SCAN = "FileScanRDD"
"""The ``source`` of a read through a DataFrame's file scan turned into an RDD."""
LOST_JOBS = "(Spark jobs outside SQL)"
LOST = (
    "a job ended before capture saw it start, so what it read and wrote is not known: it has "
    "no run (docs/capture.md, RDD actions)"
)


def is_action(job: RddJobFacts) -> bool:
    """Whether a job is a run of its own (see the module's docstring).

    >>> from dataclasses import replace
    >>> from openlineage_subset.spark._facts import ScanFacts
    >>> scan = ScanFacts(DATAFRAME_SCAN, None, ("file:/lake/logs",))
    >>> job = RddJobFacts(job_id=1, action="json", started_ms=0, ended_ms=1, reads=(scan,))
    >>> is_action(job), is_action(replace(job, writes=(RddWriteFacts("file:/out"),)))
    (False, True)
    >>> is_action(replace(job, action="count", called_by_script=True))
    True
    """
    if job.lost or (job.type_check and not job.writes):
        return False
    if job.writes or job.called_by_script:
        return True
    return any(read.source != DATAFRAME_SCAN for read in job.reads)


def rdd_job_events(
    job: RddJobFacts,
    *,
    parent: JobRef,
    run_id: str,
    spark_version: str,
    config: SubsetConfig,
    report: Report,
) -> list[dict[str, Any]]:
    """START and COMPLETE/FAIL of one job's run, a child of ``parent``; none when the job is no
    action of its own or touched no dataset. A job that was ``lost`` is told to ``report``.

    Example (``job`` read ``/lake/logs`` and wrote ``/lake/copy``)::

        start, end = rdd_job_events(job, parent=application, run_id=new_run_id(),
                                    spark_version="4.0.0", config=SubsetConfig(), report=warn)
        end["job"]["name"]   # 'daily.save_as_text_file.lake_copy'
    """
    if job.lost:
        report(LOST_JOBS, LOST)
        return []
    if not is_action(job):
        return []
    inputs = [dump(d) for d in input_datasets_from_scans(job.reads, config, report=report)]
    for kind in job.unnamed:
        report(f"(an input read by {kind})", "left out: it names no dataset capture knows")
    outputs = [dump(d) for d in rdd_output_datasets(job.writes, config, report=report)]
    if not inputs and not outputs:
        return []
    producer = config.producer
    facets = {
        "parent": parent_facet(parent, producer),
        "processing_engine": engine_facet(spark_version, producer),
    }
    name = job_name(parent.name, job.action, outputs or inputs)
    error = None
    if job.failed:
        error = error_facet(job.error_message or "the job failed", job.stack_trace, producer)
    return start_and_end(
        JobRef(parent.namespace, name, run_id),
        producer=producer,
        run_facets=facets,
        started_ns=job.started_ms * 1_000_000,
        ended_ns=job.ended_ms * 1_000_000,
        inputs=inputs,
        outputs=outputs,
        error=error,
    )


def rdd_output_datasets(
    writes: tuple[RddWriteFacts, ...], config: SubsetConfig, *, report: Report
) -> list[OutputDataset]:
    """The datasets RDD writes wrote: each output directory's dataset, with the partition
    (``k=v`` directories) or the location it wrote when that is below the dataset's root.

    >>> from openlineage_subset.producer._degrade import warn_once
    >>> (out,) = rdd_output_datasets((RddWriteFacts("file:/lake/t/day=1"),), SubsetConfig(),
    ...                              report=warn_once)
    >>> out.name, dump(out.output_facets["subset"])["outputCondition"]["partitions"]
    ('/lake/t', [{'dimensions': {'day': '1'}, 'identifier': 'day=1'}])
    """
    models = spec().models
    datasets = []
    for write in writes:
        if write.path is None:
            what = write.output_format or "an output format"
            report(f"(an output written by {what})", "left out: it names no output directory")
            continue
        try:
            path = clean_location(write.path)
            root, segments = split_dataset_root(path, config.trim_rules)
            namespace, name = dataset_identity(root)
        except ValueError as error:
            report(scrub_text(write.path), f"left out: it cannot be named ({error})")
            continue
        condition = _written(path, segments, config)
        facets = None
        if condition is not None:
            facets = {"subset": output_facet(condition, producer=config.producer)}
        datasets.append(models.OutputDataset(namespace=namespace, name=name, output_facets=facets))
    return datasets


def _written(path: str, segments: tuple[str, ...], config: SubsetConfig) -> Any:
    """What a write into ``path`` (``segments`` below its dataset's root) wrote of the dataset:
    a partition, a location, or None (the whole dataset)."""
    if not segments:
        return None
    condition: Any
    if all("=" in segment for segment in segments):
        row = {"dimensions": partition_dimensions(segments), "identifier": "/".join(segments)}
        condition = partition_condition([row], config)
    else:
        condition = location([path])
    if condition is not None and config.redact_columns:
        condition = redact_condition(condition, config.redacts)
    return condition
