"""Which partitions a write created: the output datasets of an executed query.

How written partitions are obtained, and what it costs:

- a static partition spec that names every partition column (``INSERT ... PARTITION (d='x',
  c='y')``) is the answer itself: no I/O;
- otherwise the output location is listed once, with one Hadoop glob over its partition
  directories (``root/*=*/*=*/*``), after the write. The files this write created are the ones
  that appeared since the action started and share the job's UUID in their names
  (``part-00000-<uuid>...``); Spark's own write metrics (number of files and of dynamic
  partitions, collected in the same pass as the write) confirm the choice. Their directories
  are the written partitions.

The listing costs one glob per partitioned write (its directories, not the files' contents),
in one round trip to the JVM for the whole result. It, and everything else read from the JVM,
is in the JVM layer (``spark/_jvm/_writes.py``); this module is pure Python over the
:class:`~openlineage_subset.spark._facts.WriteFacts` it returns.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import replace
from typing import Any

from openlineage_subset_generated.latest import OutputDataset

from openlineage_subset import (
    PARTITION_MAPPING_FACET,
    SubsetDocumentError,
    all_of,
    any_of,
    dump,
    field,
    location,
    output_facet,
    partition_mapping_facet,
    spec,
)
from openlineage_subset.producer import (
    clean_location,
    dataset_identity,
    json_size,
    partition_dimensions,
    partition_path,
    scrubbed_logger,
    split_dataset_root,
    warn_once,
)
from openlineage_subset.spark._changes import LIFECYCLE_SCHEMA
from openlineage_subset.spark._config import SubsetConfig
from openlineage_subset.spark._facts import ScanFacts, SinkFacts, WriteFacts
from openlineage_subset.spark._jvm import CLOCK_SLACK_MS
from openlineage_subset.spark._mappings import partition_mappings
from openlineage_subset.spark._reads import partition_condition
from openlineage_subset.spark._translate import redact_condition

log = scrubbed_logger("openlineage_subset.spark")

_JOB_UUID = re.compile(r"-([0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12})")


def output_datasets_from_writes(
    writes: Iterable[WriteFacts],
    started_ms: int | None,
    config: SubsetConfig | None = None,
    *,
    failed: bool = False,
    scans: Sequence[ScanFacts] = (),
) -> list[OutputDataset]:
    """``OutputDataset`` models with the partitions each write created (none if unpartitioned).

    ``failed``: the write failed; each output then says what it may have changed, which is
    known without listing only where the write had static partition values (or wrote into a
    partition directory): every file it wrote, and everything a static overwrite deleted before
    writing, lies under them. Otherwise the whole dataset (no facet): a failed job's committed
    tasks may have left files in any partition, and a dynamic overwrite that failed while
    committing may have deleted partitions it never replaced. No ``lifecycleStateChange``: the
    overwrite did not complete.

    ``scans``: the action's scans; where the plan proves that an output partition column comes
    from an input's (see ``spark/_mappings.py``), the output has an
    ``olsubset_partitionMapping`` facet saying so.
    """
    config = config or SubsetConfig()
    models = spec().models
    datasets: list[OutputDataset] = []
    for write in writes:
        root, segments = split_dataset_root(clean_location(write.root), config.trim_rules)
        prefix = "/".join(segments) if all("=" in s for s in segments) else None
        namespace, name = dataset_identity(root)
        condition = None
        if prefix is None:
            pass
        elif failed:
            condition = _replaced_condition(segments, write, config)
        elif write.overwrite and not write.dynamic_overwrite:
            # Spark deleted every partition under the static values first, written or not.
            condition = _replaced_condition(segments, write, config)
            if condition is None and write.partition_columns:
                condition = _whole_and_left(write, started_ms, config)
        elif write.partition_columns or segments:
            partitions = written_partitions(write, started_ms)
            if partitions is not None:
                paths = sorted({"/".join(p for p in (prefix, path) if p) for path in partitions})
                condition = _partition_condition(paths, config)
        if condition is not None and config.redact_columns:
            condition = redact_condition(condition, config.redacts)
        facets: dict[str, Any] = {}
        if condition is not None:
            facets["subset"] = output_facet(condition, producer=config.producer)
        if not failed and condition is not None:
            mapping = _mapping_facet(write, scans, config)
            if mapping is not None:
                facets[PARTITION_MAPPING_FACET] = mapping
        dataset_facets = None
        if write.overwrite and not failed:
            dataset_facets = {
                "lifecycleStateChange": models.DatasetFacet(
                    producer=config.producer,
                    schema_url=LIFECYCLE_SCHEMA,
                    additional_properties={"lifecycleStateChange": "OVERWRITE"},
                )
            }
        datasets.append(
            models.OutputDataset(
                namespace=namespace,
                name=name,
                facets=dataset_facets,
                output_facets=facets or None,
            )
        )
    return datasets


def sink_output_datasets(
    sink: SinkFacts, config: SubsetConfig, *, failed: bool = False
) -> list[OutputDataset]:
    """The output of a stream's micro-batch with a file sink: the partitions of the files it
    committed in that batch (for an unpartitioned sink, the files themselves as locations).

    A batch that failed, or whose sink record could not be read, names the sink's dataset
    whole (no facet): what it committed is unknown. A sink with no path (``foreachBatch``,
    memory, console, Kafka...) is no output here.
    """
    if sink.path is None:
        return []
    root, segments = split_dataset_root(clean_location(sink.path), config.trim_rules)
    namespace, name = dataset_identity(root)
    facets: dict[str, Any] = {}
    if sink.files is not None and not failed:
        condition = _committed_condition(sink.path, sink.files, segments, config)
        if condition is not None and config.redact_columns:
            condition = redact_condition(condition, config.redacts)
        if condition is not None:
            facets["subset"] = output_facet(condition, producer=config.producer)
    return [
        spec().models.OutputDataset(namespace=namespace, name=name, output_facets=facets or None)
    ]


def _committed_condition(
    path: str, files: Sequence[str], segments: Sequence[str], config: SubsetConfig
) -> Any:
    """What a file sink's batch wrote: the partition directories of its files, or, where they
    lie at the sink's root, the files; None for a batch that committed nothing listed."""
    root = clean_location(path).rstrip("/")
    directories = set()
    for file in files:
        cleaned = clean_location(file)
        if not cleaned.startswith(root + "/"):
            return None  # a file outside the sink: the record is not what it seems
        directories.add(cleaned[len(root) + 1 :].rpartition("/")[0])
    if not directories:
        return None
    prefix = "/".join(segments)
    if "" in directories and not prefix:
        return location(sorted(clean_location(file) for file in files))
    paths = sorted({"/".join(p for p in (prefix, d) if p) for d in directories})
    if not all("=" in part for p in paths for part in p.split("/")):
        return location(sorted({f"{root}/{d}" if d else root for d in directories}))
    return _partition_condition(paths, config)


def _mapping_facet(write: WriteFacts, scans: Sequence[ScanFacts], config: SubsetConfig) -> Any:
    """The ``olsubset_partitionMapping`` facet of a write, or None where nothing is proven.
    One that cannot be built is left out, said once: the output keeps its other facets."""
    mappings = partition_mappings(write, scans, config)
    if not mappings:
        return None
    try:
        built = partition_mapping_facet(mappings, producer=config.producer)
    except SubsetDocumentError as error:
        warn_once(write.root, f"written without its partition mapping: {error}")
        return None
    return spec().models.OutputDatasetFacet(
        producer=config.producer,
        schema_url=str(built["_schemaURL"]),
        additional_properties={"mappings": built["mappings"]},
    )


def _replaced_condition(prefix: tuple[str, ...], write: WriteFacts, config: SubsetConfig) -> Any:
    """What a static-mode overwrite replaced: every partition under its static values (and under
    the partition directory it wrote into), written or not; None for the whole dataset. For any
    write, the region every file it can write lies in."""
    static = write.static_partitions
    if static and set(static) != set(write.partition_columns):
        fixed = {**partition_dimensions(prefix), **static}
        return all_of(field(column) == value for column, value in fixed.items())
    segments = [*prefix, partition_path(write.partition_columns, static)] if static else prefix
    if not segments:
        return None
    return _partition_condition(["/".join(segments)], config)


def _whole_and_left(write: WriteFacts, started_ms: int | None, config: SubsetConfig) -> Any:
    """What an overwrite of a whole partitioned dataset changed: all of it (its root, a
    ``location``), OR the partitions it left listed beside it, so that whoever reads the event
    knows every partition there is now (each one this write's). None (the whole dataset, no
    facet) where they are not known, or do not fit the budget as a list: condensed, they would
    say nothing the root does not."""
    partitions = written_partitions(write, started_ms)
    if not partitions or "" in partitions:
        return None
    root = location([clean_location(write.root)])
    budget = config.max_condition_bytes - json_size(dump(root)) - _OR_BYTES
    listed = _partition_condition(partitions, replace(config, max_condition_bytes=max(budget, 0)))
    if not isinstance(listed, spec().models.PartitionSubsetCondition):
        return None
    return any_of([root, listed])


_OR_BYTES = 60
"""What a ``binary`` OR adds around its two sides, in JSON bytes (no more than)."""


def written_partitions(write: WriteFacts, started_ms: int | None) -> list[str] | None:
    """Partition paths (``k=v/k2=v2``, relative to the write's root) the write created.

    ``started_ms`` (when the action started) narrows the files to the recent ones; without it
    the job's files are told apart by their UUID and Spark's file count alone.
    """
    columns = write.partition_columns
    if not columns:
        return [""]
    if set(write.static_partitions) == set(columns):
        return [partition_path(columns, write.static_partitions)]
    if write.files is None:
        return None
    earliest = -1 if started_ms is None else started_ms - CLOCK_SLACK_MS
    groups: dict[str, list[tuple[str, int]]] = {}
    for path, mtime in write.files:
        if mtime >= earliest:
            match = _JOB_UUID.search(path.rpartition("/")[2])
            groups.setdefault(match.group(1) if match else "", []).append((path, mtime))
    chosen = _job_files(groups, write.num_files)
    root = write.root.rstrip("/")
    return sorted({path[len(root) + 1 :].rpartition("/")[0] for path in chosen})


def _job_files(groups: dict[str, list[tuple[str, int]]], num_files: int | None) -> list[str]:
    """The files of this write: the one job's group, told apart by Spark's file count.

    Of several groups with the right count, the newest is this write (the listing ran right
    after it). With no group of the right count, every recent file is taken: a superset.
    """
    if len(groups) == 1:
        return [path for path, _ in next(iter(groups.values()))]
    matching = [files for files in groups.values() if len(files) == num_files]
    if matching:
        newest = max(matching, key=lambda files: max(mtime for _, mtime in files))
        return [path for path, _ in newest]
    if groups:
        log.warning(
            "could not tell this write's files from %d other groups written meanwhile; its "
            "written partitions include theirs",
            len(groups) - 1,
        )
    return [path for files in groups.values() for path, _ in files]


def _partition_condition(paths: list[str], config: SubsetConfig) -> Any:
    rows = [{"dimensions": partition_dimensions(p.split("/")), "identifier": p} for p in paths if p]
    return partition_condition(rows, config)
