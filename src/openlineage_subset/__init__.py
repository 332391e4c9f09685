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

``InputSubsetFacet``, ``OutputSubsetFacet``, ``SubsetCondition`` and ``EventBase`` are the
bases of those models in every spec version, for ``isinstance`` checks that hold after a bump.
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
from openlineage_subset._convert import dump, parse_event, parse_facet
from openlineage_subset._evaluate import matches, partition_overlap
from openlineage_subset._issues import SubsetDocumentError, ValidationIssue
from openlineage_subset._render import render
from openlineage_subset._schemas import reference_validator, schema_registry
from openlineage_subset._validate import validate
from openlineage_subset._versions import (
    SpecVersion,
    UnknownSpecVersionWarning,
    spec,
    spec_versions,
)

__version__ = "0.1.0"

__all__ = [
    "EventBase",
    "FieldRef",
    "InputSubsetFacet",
    "JsonObject",
    "OutputSubsetFacet",
    "SpecVersion",
    "SubsetCondition",
    "SubsetDocumentError",
    "UnknownSpecVersionWarning",
    "ValidationIssue",
    "__version__",
    "all_of",
    "any_of",
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
    "partition_overlap",
    "partitions",
    "reference_validator",
    "render",
    "schema_registry",
    "spec",
    "spec_versions",
    "validate",
]
# The models are re-exported by name from the generated package, so a spec bump needs no edit here.
__all__ += _models  # noqa: PLE0605
