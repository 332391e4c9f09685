"""Reading one scan: a file, DataSource V2 file, Hive table or JDBC scan, as :class:`ScanFacts`.

What a scan read is its relation (paths, table, format, partition columns), the filters that
hold for every row it passes on (its partition filters and the Filter planned right above it),
and the partition directories left after pruning, read as one printed string whatever their
number (the file index's ``PartitionPath`` list, or a listing of the files it selected). A JDBC
scan is read by ``_jdbc``.
"""

from __future__ import annotations

import dataclasses
import json
import re
from collections.abc import Iterator

from openlineage_subset.producer import scrubbed_logger, warn_once
from openlineage_subset.spark._facts import ScanFacts
from openlineage_subset.spark._jvm._bridge import (
    JavaObject,
    decoded,
    is_instance,
    java_array_type,
    java_class,
    qualified_path,
    string_of,
    strings_of,
)
from openlineage_subset.spark._jvm._jdbc import ROW_SCAN, row_scan, row_scan_source
from openlineage_subset.spark._trees import Node

log = scrubbed_logger("openlineage_subset.spark")

FILE_SCAN = "FileSourceScanExec"
BATCH_SCAN = "BatchScanExec"
HIVE_SCAN = "HiveTableScanExec"
SCANS = frozenset({FILE_SCAN, BATCH_SCAN, HIVE_SCAN, ROW_SCAN})
"""The plan nodes read here: each is one scan of a dataset."""
# Unary nodes between a scan and the Filter that Spark plans right above it.
_PASS_THROUGH = frozenset({"ColumnarToRowExec", "InputAdapter", "WholeStageCodegenExec"})
# Hadoop prints a file as ...{path=<uri>; isDirectory=false; length=..}; a path may hold any
# character but NUL, newlines included.
_FILE_PATH = re.compile(r"\{path=(.*?); isDirectory=", re.DOTALL)
_FILE_PATH_END = "; isDirectory="
_URI_OR_PATH = re.compile(r"^(?:[A-Za-z][A-Za-z0-9+.-]*:|/)")
_HSET_SEPARATOR = "\u0000"
_ATTRIBUTE = re.compile(r"(?P<name>.*)#(?P<id>\d+)L?\Z", re.DOTALL)
"""An attribute as Spark prints it: ``day#19`` (``n#3L`` for a long)."""

Ancestors = list[tuple[str, JavaObject]]
"""The nodes above a scan, root first, each with its kind."""


def read_scan(
    kind: str, jscan: JavaObject, ancestors: Ancestors, *, executed: bool
) -> ScanFacts | None:
    """The facts of one scan node of kind ``kind`` (one of :data:`SCANS`); None for a scan
    that reads neither files nor a JDBC table (a DataSource V2 or V1 scan of another kind).

    ``executed``: the plan ran, so runtime decisions (dynamic partition pruning) are known.
    """
    filters = list(_filters_above(ancestors))
    if kind == FILE_SCAN:
        facts: ScanFacts | None = _file_scan(jscan, filters, executed=executed)
    elif kind == BATCH_SCAN:
        facts = _batch_scan(jscan, filters)
    elif kind == ROW_SCAN:
        return row_scan(jscan, filters)
    else:
        facts = _hive_scan(jscan, filters)
    if facts is None or not facts.partition_columns:
        return facts
    return dataclasses.replace(facts, attributes=_partition_attributes(jscan, facts))


def _partition_attributes(jscan: JavaObject, facts: ScanFacts) -> tuple[tuple[str, int], ...]:
    """(name, id) of the partition columns the scan outputs (``day#19``), in one round trip
    or two; none where they cannot be read (no partition mapping then)."""
    try:
        printed = strings_of(jscan.output())
    except Exception:  # an output it cannot print: the mappings are left unproven
        log.debug("scan output unavailable", exc_info=True)
        return ()
    columns = set(facts.partition_columns)
    found = []
    for text in printed:
        match = _ATTRIBUTE.match(text)
        if match and match["name"] in columns:
            found.append((match["name"], int(match["id"])))
    return tuple(found)


def whole_scan(kind: str, jscan: JavaObject, error: Exception) -> ScanFacts | None:
    """What a scan read when its details cannot be read: its paths alone (the whole dataset).

    Said once per dataset; a scan whose paths cannot be read either is left out, said too.
    """
    try:
        if kind == ROW_SCAN:
            whole = row_scan_source(jscan)
            if whole is not None and whole.jdbc is not None:
                warn_once(
                    whole.jdbc.url,
                    f"read without a subset facet: its {kind} could not be read ({error!r})",
                )
            return whole
        if kind == HIVE_SCAN:
            location = str(jscan.relation().tableMeta().location().toString())
            roots: tuple[str, ...] = (location,)
        elif kind == BATCH_SCAN:
            roots = strings_of(jscan.scan().fileIndex().rootPaths())
        else:
            roots = strings_of(jscan.relation().location().rootPaths())
    except Exception:
        warn_once(kind, f"left out: neither its details nor its paths can be read ({error!r})")
        return None
    for root in roots:
        warn_once(root, f"read without a subset facet: its {kind} could not be read ({error!r})")
    return ScanFacts(source=kind, format=None, root_paths=roots)


def is_dynamic(tree: Node) -> bool:
    """Whether a filter is decided at run time (dynamic pruning, a subquery)."""
    return any(
        node.kind == "DynamicPruningExpression" or "Subquery" in node.kind for node in tree.walk()
    )


def _base_path(relation: JavaObject) -> str | None:
    """The ``basePath`` of a relation given no single path: a stream source's batch (an index
    of the files the batch took, with the source's path as its base), or a read of several
    paths under one base."""
    options = relation.options()
    if _option(options.get("path")) is not None:
        return None
    for key in ("basepath", "basePath"):  # a stream's options are case-insensitive, lower
        base = _option(options.get(key))
        if base is not None:
            return _qualified(relation.sparkSession(), base)
    return None


def _file_scan(jscan: JavaObject, above: list[Node], *, executed: bool) -> ScanFacts:
    relation = jscan.relation()
    location = relation.location()
    jfilters = jscan.partitionFilters()
    partition_filters = _filter_trees(jfilters)
    table, table_location = _catalog_table(jscan, relation)
    total = None
    if table is None and location.getClass().getSimpleName() == "InMemoryFileIndex":
        total = int(location.partitionSpec().partitions().size())
    root_paths = strings_of(location.rootPaths())
    partition_columns = _field_names(relation.partitionSchema().json())
    directories: tuple[str, ...] | None = None
    if not partition_columns:
        directories = root_paths
    elif executed and any(is_dynamic(tree) for tree in partition_filters):
        directories = _directories(_dynamically_selected(jscan), root_paths)
    if directories is None:
        directories = _pruned_directories(location, jfilters, partition_filters, root_paths)
    return ScanFacts(
        source=FILE_SCAN,
        format=_format_name(relation.fileFormat()),
        root_paths=root_paths,
        given_path=_qualified(relation.sparkSession(), _option(relation.options().get("path"))),
        dataset_root=_base_path(relation),
        table=table,
        table_location=table_location,
        partition_columns=partition_columns,
        filters=(*partition_filters, *above),
        partition_filters=tuple(partition_filters),
        directories=directories,
        total_partitions=total,
    )


def _dynamically_selected(jscan: JavaObject) -> JavaObject:
    """The partition directories left after dynamic partition pruning, as Spark ran it."""
    try:
        listing = jscan.dynamicallySelectedPartitions()
    except Exception:  # not run after all: static pruning is still a sound superset
        log.debug("dynamically selected partitions unavailable", exc_info=True)
        listing = jscan.selectedPartitions()
    if not isinstance(listing, java_array_type()):  # Spark 4: a ScanFileListing
        listing = listing.partitionDirectories()
    return listing


def _batch_scan(jscan: JavaObject, above: list[Node]) -> ScanFacts | None:
    scan = jscan.scan()
    if not is_instance(scan, "org.apache.spark.sql.execution.datasources.v2.FileScan"):
        log.debug("DataSource V2 scan %s is not a file scan; left out", scan)
        return None
    index = scan.fileIndex()
    jfilters = scan.partitionFilters()
    partition_filters = _filter_trees(jfilters)
    name = str(scan.getClass().getSimpleName())
    root_paths = strings_of(index.rootPaths())
    partition_columns = _field_names(index.partitionSchema().json())
    return ScanFacts(
        source=BATCH_SCAN,
        format=name.removesuffix("Scan").lower() or None,
        root_paths=root_paths,
        given_path=_qualified(scan.sparkSession(), _none_if_null(scan.options().get("path"))),
        partition_columns=partition_columns,
        filters=(*partition_filters, *above),
        partition_filters=tuple(partition_filters),
        directories=(
            _pruned_directories(index, jfilters, partition_filters, root_paths)
            if partition_columns
            else root_paths
        ),
        total_partitions=int(index.partitionSpec().partitions().size()),
    )


def _hive_scan(jscan: JavaObject, above: list[Node]) -> ScanFacts:
    relation = jscan.relation()
    meta = relation.tableMeta()
    partition_filters = _filter_trees(jscan.partitionPruningPred())
    location = str(meta.location().toString())
    return ScanFacts(
        source=HIVE_SCAN,
        format="hive",
        root_paths=(location,),
        table=str(meta.identifier().unquotedString()),
        table_location=location,
        partition_columns=strings_of(meta.partitionColumnNames()),
        filters=(*partition_filters, *above),
        partition_filters=tuple(partition_filters),
        partition_names=_hive_partition_names(jscan),
    )


# -- filters: the scan's own, and those of the Filter above it -------------------------------


def _conjuncts(node: Node) -> Iterator[Node]:
    if node.kind == "And":
        yield from _conjuncts(node.child("left"))
        yield from _conjuncts(node.child("right"))
    else:
        yield node


def _filter_trees(jfilters: JavaObject) -> list[Node]:
    """The expression trees of a sequence of filters, with what their JSON leaves out."""
    trees = []
    for position in range(jfilters.size()):
        jexpression = jfilters.apply(position)
        tree = decoded(jexpression)
        _read_exact_values(tree, jexpression)
        trees.append(tree)
    return trees


def _filters_above(ancestors: Ancestors) -> Iterator[Node]:
    """Conjuncts of the Filter nodes directly above a scan (through pass-through nodes)."""
    for kind, jnode in reversed(ancestors):
        if kind == "FilterExec":
            jcondition = jnode.condition()
            condition = decoded(jcondition)
            _read_exact_values(condition, jcondition)
            yield from _conjuncts(condition)
        elif kind not in _PASS_THROUGH:
            return


def _read_exact_values(tree: Node, jexpression: JavaObject) -> None:
    """Read what the JSON of an expression leaves out: ``InSet`` values, exact timestamps.

    Nodes are fetched by their pre-order number (``TreeNode.apply``); a node whose class is not
    the expected one (numbering differs when subqueries are inside) is left without them,
    which makes the translation drop it.
    """
    for node in tree.walk():
        wanted = node.kind == "InSet" or (
            node.kind == "Literal"
            and node.fields.get("dataType") in ("timestamp", "timestamp_ntz")
            and node.fields.get("value") is not None
        )
        if not wanted:
            continue
        jnode = jexpression.apply(node.index)
        if str(jnode.getClass().getSimpleName()) != node.kind:
            continue
        if node.kind == "Literal":
            node.exact.timestamp_micros = int(jnode.value())
        else:
            values = jnode.hset()
            text = str(values.mkString(_HSET_SEPARATOR))
            parts = text.split(_HSET_SEPARATOR) if text else []
            if len(parts) == int(values.size()):
                node.exact.set_values = parts


# -- the relation: table, paths, partitions --------------------------------------------------


def _catalog_table(jscan: JavaObject, relation: JavaObject) -> tuple[str | None, str | None]:
    """The catalog name and location of a table scan; (None, None) for a read by path."""
    identifier = jscan.tableIdentifier()
    if not identifier.isDefined():
        return None, None
    table = relation.sparkSession().sessionState().catalog().getTableMetadata(identifier.get())
    return str(identifier.get().unquotedString()), str(table.location().toString())


def _hive_partition_names(jscan: JavaObject) -> tuple[str, ...] | None:
    """Partition paths (``k=v/k2=v2``) a Hive table scan reads, in one call; None if unknown."""
    try:
        partitions = jscan.prunedPartitions()
    except Exception:  # a Spark without it: the table is then taken as read whole
        log.debug("HiveTableScanExec.prunedPartitions unavailable", exc_info=True)
        return None
    # Hive prints a partition as table(k=v/k2=v2), its name escaped like a path (no "(").
    return tuple(text.rpartition("(")[2].removesuffix(")") for text in strings_of(partitions))


def _pruned_directories(
    index: JavaObject, jfilters: JavaObject, filters: list[Node], roots: tuple[str, ...]
) -> tuple[str, ...] | None:
    """Partition directories a file index keeps under the (static) partition filters; None
    when they cannot be told for sure.

    ``prunePartitions`` returns ``PartitionPath(values, path)`` items, printed in one string
    (see :func:`_partition_path`); dynamic filters (decided at run time) are left out, which
    keeps a sound superset. An index that cannot prune this way is listed file by file.
    """
    kept = java_class("java.util.ArrayList")()
    for position, tree in enumerate(filters):
        if not is_dynamic(tree):
            kept.add(jfilters.apply(position))
    try:
        pruned = index.prunePartitions(
            java_class("org.apache.spark.api.python.PythonUtils").toSeq(kept),
            index.partitionSpec(),
        )
    except Exception:  # not a PartitioningAwareFileIndex: list the files it selects
        log.debug("%s cannot prune partitions; listing its files", index, exc_info=True)
        no_data_filters = java_class("org.apache.spark.api.python.PythonUtils").toSeq(
            java_class("java.util.ArrayList")()
        )
        return _directories(index.listFiles(jfilters, no_data_filters), roots)
    found = []
    for text in strings_of(pruned):
        path = _partition_path(text, roots)
        if path is None:
            log.debug("partition path not under the scan's roots: %r", text[:300])
            return None
        found.append(path)
    return tuple(found)


def _partition_path(text: str, roots: tuple[str, ...]) -> str | None:
    """The path of a printed ``PartitionPath(values,path)``; None if it is not a root or below
    one.

    The values are printed raw, so they may hold anything, a path-like text included; the path
    comes last and is one of the scan's root paths or lies below one, and the partition
    directories below a root hold no ``,`` followed by a root (Spark escapes ``:`` and ``/`` in
    them). So the last ``,<root>`` that ends the text or goes on with ``/`` starts the path.

    >>> _partition_path("PartitionPath([a,file:/r/k=b],file:/r/k=a,file%3A%2Fr)", ("file:/r",))
    'file:/r/k=a,file%3A%2Fr'
    >>> _partition_path("PartitionPath([1],file:/r/k=1)", ("file:/r/k=1",))
    'file:/r/k=1'
    """
    body = text.removesuffix(")")
    best = -1
    for root in roots:
        marker = "," + root.rstrip("/")
        start = body.rfind(marker)
        while start > best:
            end = start + len(marker)
            if end == len(body) or body[end] == "/":
                best = start
                break
            start = body.rfind(marker, 0, start)
    return None if best < 0 else body[best + 1 :]


def _directories(listing: JavaObject, roots: tuple[str, ...]) -> tuple[str, ...] | None:
    """Directories of the files of partition directories (``PartitionDirectory``), in one call;
    None when the printed listing cannot be read for sure (a path holding ``; isDirectory=``)
    or names a file outside the scan's roots."""
    text = string_of(listing)
    paths = _FILE_PATH.findall(text)
    if len(paths) != text.count(_FILE_PATH_END):
        return None
    prefixes = tuple(root.rstrip("/") + "/" for root in roots)
    if not all(path.startswith(prefixes) for path in paths):
        return None
    return tuple(dict.fromkeys(path.rpartition("/")[0] for path in paths))


def _qualified(jsession: JavaObject, path: str | None) -> str | None:
    """``path`` qualified when relative (no round trip for a qualified one)."""
    if path is None or _URI_OR_PATH.match(path):
        return path
    return qualified_path(jsession, path)


def _format_name(file_format: JavaObject) -> str | None:
    try:
        return str(file_format.shortName())
    except Exception:  # not a DataSourceRegister: its class name says enough
        return str(file_format.toString()).lower() or None


def _field_names(schema_json: str) -> tuple[str, ...]:
    return tuple(str(f["name"]) for f in json.loads(schema_json).get("fields", []))


def _option(value: JavaObject) -> str | None:
    return str(value.get()) if value.isDefined() else None


def _none_if_null(value: object) -> str | None:
    return None if value is None else str(value)
