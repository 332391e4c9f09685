"""Typed, validated OpenLineage subset dataset facets: which part of a dataset a run touched.

The models are generated from the canonical JSON Schema (``BaseSubsetDatasetFacet.json``); the
names re-exported here are those of the newest spec version (:func:`spec` gives any version).

>>> from openlineage_subset import field, input_facet, validate, render, dump
>>> condition = (field("business_date") == "2024-10-15") & field("country").isin(["PL", "DE"])
>>> facet = input_facet(condition, producer="https://example.com/daily-sales")
>>> validate({"subset": dump(facet)}, strict=True)
[]
>>> render(facet)
"business_date = '2024-10-15' AND (country = 'PL' OR country = 'DE')"

Every exception the package raises on purpose derives from :class:`OpenLineageSubsetError`,
every warning it gives from :class:`OpenLineageSubsetWarning` (each keeps its older base too).

``InputSubsetFacet``, ``OutputSubsetFacet``, ``SubsetCondition`` and ``EventBase`` are the
bases of those models in every spec version, for ``isinstance`` checks that hold after a bump.

The project's one custom facet, ``olsubset_partitionMapping`` (how an output's partition
columns derive from an input's), is built, checked and applied by ``partition_mapping_facet``,
``partition_mapping_issues`` and ``apply_steps``.

The second part of ``__all__`` (after the user API) is internal to the package: what the
package's other rooms (``producer``, ``lineage``, ``cli``...) use of the SDK (the one strict
JSON reader, bounded line reading, printable text, nesting depth), never promised to users.
"""

from openlineage_subset_generated._support import (
    EventBase,
    InputSubsetFacet,
    JsonObject,
    OutputSubsetFacet,
    SubsetCondition,
)
from openlineage_subset_generated.latest import *  # noqa: F403  (the newest models)
from openlineage_subset_generated.latest import __all__ as _models

from openlineage_subset._builders import (
    FieldRef,
    all_of,
    any_of,
    field,
    input_facet,
    literal,
    location,
    output_facet,
    partition,
    partitions,
)
from openlineage_subset._convert import JsonValue, dump, parse_condition, parse_event, parse_facet
from openlineage_subset._custom_facets import custom_facet_issues
from openlineage_subset._errors import OpenLineageSubsetError, OpenLineageSubsetWarning
from openlineage_subset._evaluate import guessed_type, matches, partition_overlap
from openlineage_subset._issues import SubsetDocumentError, ValidationIssue
from openlineage_subset._json import (
    MAX_INTEGER_DIGITS,
    ParsedJson,
    UnusableJson,
    input_start,
    is_blank,
    parse_json,
    read_json,
    too_big,
)
from openlineage_subset._lines import (
    DEFAULT_MAX_LINE_BYTES,
    LARGEST_LINE_LIMIT,
    MAX_LINE_BYTES_VARIABLE,
    LongLine,
    lone_surrogate,
    max_line_bytes,
    may_hold_surrogate,
    parse_max_line_bytes,
    read_at_most,
    read_lines,
)
from openlineage_subset._nesting import MAX_DEPTH, check_nesting
from openlineage_subset._partition_mapping import (
    PARTITION_MAPPING_FACET,
    PARTITION_MAPPING_SCHEMA_URL,
    apply_steps,
    partition_mapping_event_issues,
    partition_mapping_facet,
    partition_mapping_issues,
)
from openlineage_subset._printable import escapes, json_escapes, printable, printable_json
from openlineage_subset._render import dimension_text, render
from openlineage_subset._schemas import reference_validator, schema_registry
from openlineage_subset._validate import (
    document_kind,
    misplaced_subset_facets,
    validate,
    validate_within,
    without_subset_facet,
)
from openlineage_subset._versions import (
    SpecVersion,
    UnknownSpecVersionWarning,
    spec,
    spec_versions,
)

__version__ = "0.1.0"

__all__ = [
    "PARTITION_MAPPING_FACET",
    "PARTITION_MAPPING_SCHEMA_URL",
    "EventBase",
    "FieldRef",
    "InputSubsetFacet",
    "JsonObject",
    "JsonValue",
    "OpenLineageSubsetError",
    "OpenLineageSubsetWarning",
    "OutputSubsetFacet",
    "SpecVersion",
    "SubsetCondition",
    "SubsetDocumentError",
    "UnknownSpecVersionWarning",
    "ValidationIssue",
    "__version__",
    "all_of",
    "any_of",
    "apply_steps",
    "dump",
    "field",
    "input_facet",
    "literal",
    "location",
    "matches",
    "output_facet",
    "parse_event",
    "parse_facet",
    "partition",
    "partition_mapping_facet",
    "partition_mapping_issues",
    "partition_overlap",
    "partitions",
    "reference_validator",
    "render",
    "schema_registry",
    "spec",
    "spec_versions",
    "validate",
]
# Internal to the package: for its other rooms, not user API (the module's docstring).
__all__ += [
    "DEFAULT_MAX_LINE_BYTES",
    "LARGEST_LINE_LIMIT",
    "MAX_DEPTH",
    "MAX_INTEGER_DIGITS",
    "MAX_LINE_BYTES_VARIABLE",
    "LongLine",
    "ParsedJson",
    "UnusableJson",
    "check_nesting",
    "custom_facet_issues",
    "dimension_text",
    "document_kind",
    "escapes",
    "guessed_type",
    "input_start",
    "is_blank",
    "json_escapes",
    "lone_surrogate",
    "max_line_bytes",
    "may_hold_surrogate",
    "misplaced_subset_facets",
    "parse_condition",
    "parse_json",
    "parse_max_line_bytes",
    "partition_mapping_event_issues",
    "printable",
    "printable_json",
    "read_at_most",
    "read_json",
    "read_lines",
    "too_big",
    "validate_within",
    "without_subset_facet",
]
# The models are re-exported by name from the generated package, so a spec bump needs no edit here.
__all__ += _models  # noqa: PLE0605
