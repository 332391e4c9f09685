"""Which part of which dataset a plan's scans read: the input datasets with their conditions.

Pure Python over :class:`~openlineage_subset.spark._facts.ScanFacts`. Each scan's paths are
mapped to dataset roots (a sub-path of a ``key=value`` or date-shaped layout is named after its
root), each read gets the condition the hierarchy chooses, and reads of one dataset are merged
into one condition that covers all of them (an OR), or none when one of them read it whole.
A JDBC scan reads the tables its options name (``_jdbc``), with the condition the row filters
give where the read passed on rows of one table.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, replace
from typing import Any

from openlineage_subset_generated._support import SubsetCondition
from openlineage_subset_generated.latest import InputDataset

from openlineage_subset import (
    all_of,
    any_of,
    dump,
    field,
    input_facet,
    location,
    parse_condition,
    spec,
)
from openlineage_subset.producer import (
    Report,
    clean_location,
    condense,
    condense_locations,
    condense_partitions,
    dataset_identity,
    dataset_label,
    glob_root,
    json_size,
    partition_dimensions,
    scrub_text,
    split_dataset_root,
    warn_once,
)
from openlineage_subset.spark._config import SubsetConfig
from openlineage_subset.spark._facts import JdbcSource, ScanFacts, StreamScanFacts
from openlineage_subset.spark._jdbc import jdbc_read
from openlineage_subset.spark._translate import condition_from_filters, redact_condition
from openlineage_subset.spark._trees import Node

_IGNORED_PARTITION_FILTERS = frozenset({"IsNotNull", "DynamicPruningExpression"})


@dataclass(frozen=True)
class Read:
    """One scan's read of one dataset: where the dataset is, and what part of it was read."""

    root: str
    """The dataset's root location, cleaned of credentials."""
    condition: Any
    """The subset condition, or None when the read took the dataset whole (or says nothing)."""
    scan: ScanFacts


def reads_of_scan(facts: ScanFacts, config: SubsetConfig) -> list[Read]:
    """The datasets one scan read, each with the condition the hierarchy chooses."""
    return [
        Read(root, _condition(facts, root, paths, whole, config), facts)
        for root, paths, whole in _dataset_roots(facts, config)
    ]


def input_datasets_from_scans(
    scans: Iterable[ScanFacts],
    config: SubsetConfig | None = None,
    *,
    report: Report = warn_once,
) -> list[InputDataset]:
    """``InputDataset`` models for the scans of a plan: one per dataset, conditions merged.

    A scan whose condition cannot be worked out still names its datasets, without a subset
    facet (the whole dataset, which is sound); ``report`` is told so, once per dataset.
    """
    config = config or SubsetConfig()
    by_dataset: dict[tuple[str, str], list[Any]] = {}
    for facts in scans:
        if facts.jdbc is not None:
            for identity, condition in _jdbc_reads(facts, facts.jdbc, config, report):
                by_dataset.setdefault(identity, []).append(condition)
            continue
        for read in reads_or_whole(facts, config, report):
            try:
                identity = dataset_identity(read.root)
            except ValueError as error:
                report(read.root, f"left out: it cannot be named ({error})")
                continue
            by_dataset.setdefault(identity, []).append(read.condition)
    models = spec().models
    datasets: list[InputDataset] = []
    for (namespace, name), conditions in by_dataset.items():
        condition = merge_conditions(conditions, config)
        facets = None
        if condition is not None:
            facets = {"subset": input_facet(condition, producer=config.producer)}
        datasets.append(models.InputDataset(namespace=namespace, name=name, input_facets=facets))
    return datasets


def _jdbc_reads(
    facts: ScanFacts, source: JdbcSource, config: SubsetConfig, report: Report
) -> list[tuple[tuple[str, str], Any]]:
    """The tables a JDBC scan read, each with its condition: that of the row filters (those the
    database applied, and the Filter above) where the scan passed on rows of its one table,
    else none."""
    read = jdbc_read(source)
    if read.named_by_query:
        (identity,) = read.datasets
        label = dataset_label(*identity)
        if config.redact_columns:
            report(label, "left out: named after its query, which may hold redacted values")
            return []
        report(label, "named after its query: the tables it reads cannot be told for sure")
    condition = None
    if read.rows_of_one_table:
        try:
            level = _filters_level(facts, config)
        except Exception as error:  # the table is still named, read whole
            why = scrub_text(f"{type(error).__name__}: {error}")
            report(dataset_label(*read.datasets[0]), f"read without a subset facet: {why}")
            level = None
        condition = None if level is None else level[0]
    return [(identity, condition) for identity in read.datasets]


def reads_or_whole(facts: ScanFacts, config: SubsetConfig, report: Report) -> list[Read]:
    """The reads of a scan; if their conditions fail, the datasets read whole (no facet)."""
    try:
        return reads_of_scan(facts, config)
    except Exception as error:  # one unreadable scan must not lose the run's other datasets
        reads = []
        why = scrub_text(f"{type(error).__name__}: {error}")
        for raw in facts.root_paths or (facts.table_location or "",):
            try:
                root = clean_location(facts.table_location or raw)
            except ValueError:
                report(scrub_text(raw), f"left out: it cannot be named ({why})")
                continue
            report(root, f"read without a subset facet: {why}")
            reads.append(Read(root, None, facts))
        return reads


KAFKA_STREAM = "KafkaMicroBatchStream"


def stream_source_datasets(
    streams: Sequence[StreamScanFacts], config: SubsetConfig, report: Report
) -> list[InputDataset]:
    """The datasets a micro-batch read from streaming sources of DataSource V2: for Kafka,
    each topic it read (namespace ``kafka://<first bootstrap server>``, as OpenLineage names
    topics) with the offsets of the batch per partition as its condition (see
    :func:`kafka_offsets_condition`). Other sources (rate, socket, memory) are no dataset:
    said once each, and the batch goes on without them."""
    datasets: list[InputDataset] = []
    for stream in streams:
        if stream.stream != KAFKA_STREAM:
            warn_once(
                f"(a stream's {stream.stream} source)",
                "its batches read no dataset capture can name: they have no input from it",
            )
            continue
        server = (stream.servers or "").split(",")[0].strip()
        if not server or stream.end is None:
            report(
                scrub_text(f"(the Kafka source {stream.described})"),
                "left out: its brokers or its batch's offsets are not known",
            )
            continue
        ends = json.loads(stream.end)
        starts = json.loads(stream.start) if stream.start else {}
        for topic in sorted(ends):
            condition = kafka_offsets_condition(starts.get(topic, {}), ends[topic])
            if condition is None:
                continue  # nothing read from it in this batch
            if json_size(dump(condition)) > config.max_condition_bytes:
                condition = condensed_model(dump(condition), config.max_condition_bytes)
            facets = None
            if condition is not None:
                facets = {"subset": input_facet(condition, producer=config.producer)}
            datasets.append(
                spec().models.InputDataset(
                    namespace=f"kafka://{scrub_text(server)}", name=topic, input_facets=facets
                )
            )
    return datasets


def kafka_offsets_condition(starts: dict[str, int], ends: dict[str, int]) -> Any:
    """What one Kafka topic's rows a batch read: for each partition it read, ``partition`` is
    that partition AND ``offset`` from its start offset (the batch's start: offsets below it
    were read before) up to its end offset, excluded; OR over the partitions. None when it read
    no row (every end at or below its start).

    >>> dump(kafka_offsets_condition({"0": 5}, {"0": 9}))["operator"]
    'AND'
    >>> kafka_offsets_condition({"0": 9}, {"0": 9}) is None
    True
    """
    branches = []
    for partition in sorted(ends, key=int):
        end, start = int(ends[partition]), starts.get(partition)
        if start is not None and int(start) >= end:
            continue
        parts = [field("partition") == int(partition)]
        if start is not None and int(start) > 0:
            parts.append(field("offset") >= int(start))
        parts.append(field("offset") < end)
        branches.append(all_of(parts))
    return any_of(branches) if branches else None


def batch_file_scan(facts: ScanFacts) -> ScanFacts:
    """A scan read inside a stream's micro-batch (by a ``foreachBatch`` function): an RDD's
    file scan is the batch's files, named as locations of the directory they share (the
    stream's source; a partition directory is cut off by the naming rules). Any other scan is
    as it is.

    >>> scan = ScanFacts("FileScanRDD", None, ("file:/in",), directories=("file:/in",),
    ...                  files=("file:/in/a.json", "file:/in/b.json"))
    >>> batch = batch_file_scan(scan)
    >>> batch.root_paths, batch.dataset_root
    (('file:/in/a.json', 'file:/in/b.json'), 'file:/in')
    """
    if facts.source != "FileScanRDD" or not facts.files:
        return facts
    shared = facts.files[0].rpartition("/")[0]
    for path in facts.files[1:]:
        while shared and not path.startswith(shared + "/"):
            shared = shared.rpartition("/")[0]
    if not shared or shared.endswith(":"):
        return facts
    return replace(facts, root_paths=facts.files, dataset_root=shared, directories=None)


def _dataset_roots(
    facts: ScanFacts, config: SubsetConfig
) -> list[tuple[str, tuple[str, ...], bool]]:
    """(dataset root, the paths read below it, whether the root was read whole)."""
    if facts.table_location is not None:
        return [(clean_location(facts.table_location), (), True)]
    rules = config.trim_rules
    pattern = glob_root(facts.given_path) if facts.given_path else None
    if facts.dataset_root is not None:
        pattern = clean_location(facts.dataset_root)
    glob_dataset = split_dataset_root(pattern, rules)[0] if pattern else None
    roots: dict[str, list[str]] = {}
    for raw in facts.root_paths:
        path = clean_location(raw)
        if glob_dataset is not None and _under(path, glob_dataset):
            root = glob_dataset
        else:
            root = split_dataset_root(path, rules)[0]
        roots.setdefault(root, []).append(path)
    return [
        (root, tuple(dict.fromkeys(paths)), paths == [root] and glob_dataset != root)
        for root, paths in roots.items()
    ]


def _condition(
    facts: ScanFacts, root: str, paths: Sequence[str], whole: bool, config: SubsetConfig
) -> Any:
    """The condition of one read: the first level that applies, or all of them combined.

    A level whose condition would carry a redacted column's value is redacted first (see
    :func:`~openlineage_subset.spark._translate.redact_condition`); one left with nothing does
    not apply, so the next one is used.
    """
    found = [
        level
        for level in (
            _partitions_level(facts, root, whole, config),
            _locations_level(paths, whole, config),
            _filters_level(facts, config),
        )
        if level is not None
    ]
    if not found:
        return None
    if not config.combine_levels:
        found = found[:1]
    size = sum(level_size for _, level_size in found) + 64 * (len(found) - 1)
    combined = all_of([condition for condition, _ in found])
    if size > config.max_condition_bytes:
        return condensed_model(dump(combined), config.max_condition_bytes)
    return combined


def _filters_level(facts: ScanFacts, config: SubsetConfig) -> tuple[Any, int] | None:
    if not config.row_filters:
        return None
    condition = condition_from_filters(facts.filters)
    if condition is not None and config.redact_columns:
        condition = redact_condition(condition, config.redacts)
    if condition is None:
        return None
    size = _json_size(condition)
    if size > config.max_condition_bytes:
        condition = condensed_model(dump(condition), config.max_condition_bytes)
        size = 0 if condition is None else _json_size(condition)
    return None if condition is None else (condition, size)


def _partitions_level(
    facts: ScanFacts, root: str, whole: bool, config: SubsetConfig
) -> tuple[Any, int] | None:
    relative = _partition_paths(facts, root)
    if relative is None:
        return None
    if whole and not _pruned(facts, len(relative)):
        return None
    # Partition paths share their segments (day=1 is in every shop's path): parse each once.
    segments: dict[str, dict[str, str | None]] = {}
    rows = []
    for path in relative:
        dimensions: dict[str, str | None] = {}
        for segment in path.split("/"):
            if segment not in segments:
                if not _key_value(segment):
                    return None
                segments[segment] = partition_dimensions([segment])
            dimensions.update(segments[segment])
        rows.append({"dimensions": dimensions, "identifier": path})
    columns = {column for row in rows for column in row["dimensions"]}
    if config.redact_columns and any(config.redacts(column) for column in columns):
        return None
    condition = partition_condition(rows, config)
    if condition is None:
        return None
    listed = isinstance(condition, spec().models.PartitionSubsetCondition)
    return condition, _listed_size(rows) if listed else _json_size(condition)


def partition_condition(rows: list[dict[str, Any]], config: SubsetConfig) -> Any:
    """The partitions (``dimensions`` and ``identifier``), listed when at most
    ``max_partitions`` fit in ``max_condition_bytes``, else condensed soundly (or None)."""
    if not rows:
        return None
    budget = config.max_condition_bytes
    if len(rows) <= config.max_partitions and _listed_size(rows) <= budget:
        models = spec().models
        return models.PartitionSubsetCondition(partitions=[models.Partition(**r) for r in rows])
    condensed = condense_partitions([row["dimensions"] for row in rows], budget, max_listed=0)
    return _model(condensed.condition)


def _listed_size(rows: list[dict[str, Any]]) -> int:
    """The JSON size of a partition list: estimated from its paths (no larger than this), or
    counted exactly when escapes make non-ASCII paths longer."""
    size = 40
    for row in rows:
        path = row["identifier"]
        size += 2 * len(path) + 8 * len(row["dimensions"]) + 40
    if not all(row["identifier"].isascii() for row in rows):
        return json_size(rows) + 40
    return size


def condensed_model(condition: dict[str, Any], max_bytes: int) -> Any:
    """The condensed form of ``condition`` (JSON) as a model, or None (the whole dataset)."""
    return _model(condense(condition, max_bytes).condition)


def _model(condition: dict[str, Any] | None) -> SubsetCondition | None:
    """A condensed condition (JSON, or None for the whole dataset) as a model."""
    return None if condition is None else parse_condition(condition)


def _partition_paths(facts: ScanFacts, root: str) -> list[str] | None:
    """Partition paths (``k=v/k2=v2``) read below ``root``, or None if the read is not by them."""
    if facts.partition_names is not None:
        names = set(facts.partition_names)
    elif facts.directories is not None:
        names = set(_relative_directories(facts, root))
    else:
        return None
    if "" in names:
        return None  # files right in the root: not a read by partitions
    return sorted(names)


def _relative_directories(facts: ScanFacts, root: str) -> list[str]:
    """The read directories below ``root``, relative to it.

    Spark prints the directories in the same form as the paths it was given, so each is cut
    against the raw path it lies under; only a directory under none of them is cleaned first.
    """
    prefixes = []
    for raw in (facts.table_location,) if facts.table_location else facts.root_paths:
        cleaned = clean_location(raw)
        if _under(cleaned, root):
            prefixes.append((raw.rstrip("/"), cleaned[len(root) :].strip("/")))
    relative = []
    for directory in facts.directories or ():
        for raw, offset in prefixes:
            if directory == raw or directory.startswith(raw + "/"):
                rest = directory[len(raw) :].strip("/")
                relative.append(f"{offset}/{rest}".strip("/"))
                break
        else:
            cleaned = clean_location(directory)
            if _under(cleaned, root):
                relative.append(cleaned[len(root) :].strip("/"))
    return relative


def _key_value(segment: str) -> bool:
    key, equals, value = segment.partition("=")
    return bool(key and equals and value)


def _pruned(facts: ScanFacts, selected: int) -> bool:
    """Whether partition pruning left out some of the dataset's partitions."""
    if facts.total_partitions is not None:
        return selected < facts.total_partitions
    return any(_restricts(node) for node in facts.partition_filters)


def _restricts(node: Node) -> bool:
    return node.kind not in _IGNORED_PARTITION_FILTERS


def _locations_level(
    paths: Sequence[str], whole: bool, config: SubsetConfig
) -> tuple[Any, int] | None:
    if whole or not paths:
        return None
    locations = sorted(paths)
    if config.redact_columns and redact_condition(location(locations), config.redacts) is None:
        return None
    condensed = condense_locations(
        locations, config.max_condition_bytes, max_listed=config.max_locations
    )
    condition = _model(condensed.condition)
    return None if condition is None else (condition, condensed.size)


def _json_size(condition: Any) -> int:
    return len(json.dumps(dump(condition)))


def merge_conditions(conditions: Sequence[Any], config: SubsetConfig) -> Any:
    """One condition covering every read: partitions and locations unite, others are ORed.

    None (a read that took the dataset whole) makes the merge None: the union is everything.
    """
    if not conditions or any(condition is None for condition in conditions):
        return None
    if len(conditions) == 1:
        return conditions[0]
    models = spec().models
    kinds = {type(condition) for condition in conditions}
    merged: Any
    if kinds == {models.PartitionSubsetCondition}:
        partitions = sorted(
            _unique(p for c in conditions for p in c.partitions),
            key=lambda p: p.identifier or json.dumps(p.dimensions, sort_keys=True),
        )
        rows = [{"dimensions": p.dimensions, "identifier": p.identifier} for p in partitions]
        return partition_condition(rows, config)
    if kinds == {models.LocationSubsetCondition}:
        locations = sorted({loc for c in conditions for loc in c.locations})
        condensed = condense_locations(
            locations, config.max_condition_bytes, max_listed=config.max_locations
        )
        return _model(condensed.condition)
    merged = any_of(_unique(conditions))
    if _json_size(merged) <= config.max_condition_bytes:
        return merged
    return condensed_model(dump(merged), config.max_condition_bytes)


def _unique(items: Iterable[Any]) -> list[Any]:
    seen: dict[str, Any] = {}
    for item in items:
        seen.setdefault(json.dumps(dump(item), sort_keys=True), item)
    return list(seen.values())


def _under(path: str, root: str) -> bool:
    return path == root or path.startswith(root.rstrip("/") + "/")
