"""Validation issues, JSON paths, and the one exception for unusable documents."""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Literal

from openlineage_subset._errors import OpenLineageSubsetError

_IDENTIFIER = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


def json_path(parts: Sequence[str | int]) -> str:
    """A JSONPath for a location in a document.

    >>> json_path(("inputs", 0, "inputFacets", "subset"))
    '$.inputs[0].inputFacets.subset'
    >>> json_path(("dimensions", "business date"))
    "$.dimensions['business date']"
    >>> json_path(("dimensions", "day\\n"))  # not the key "day": the printing layer escapes
    "$.dimensions['day\\n']"
    """
    text = "$"
    for part in parts:
        if isinstance(part, int):
            text += f"[{part}]"
        elif _IDENTIFIER.fullmatch(part):
            text += "." + part
        else:
            escaped = part.replace("\\", "\\\\").replace("'", "\\'")
            text += f"['{escaped}']"
    return text


@dataclass(frozen=True)
class ValidationIssue:
    """One problem in a document: where (a JSONPath), what, and which rule found it.

    ``rule`` is ``"schema"`` for the JSON Schema itself and ``"strict"`` for the rules the
    schema states only in prose (checked with ``strict=True``).

    >>> str(ValidationIssue("$.subset", "missing required property '_producer'"))
    "$.subset: missing required property '_producer'"
    """

    path: str
    message: str
    rule: Literal["schema", "strict"] = "schema"

    def __str__(self) -> str:
        return f"{self.path}: {self.message}"


class SubsetDocumentError(ValueError, OpenLineageSubsetError):
    """A document that cannot be parsed into models: malformed, or of an unknown condition type.

    ``issues`` lists every problem with its JSONPath; the message shows them too.

    >>> from openlineage_subset import parse_facet
    >>> try:
    ...     parse_facet({"inputCondition": {"type": "nope"}, "_producer": "https://example.com",
    ...                  "_schemaURL": "https://openlineage.io/spec/facets/1-0-0/"
    ...                  "BaseSubsetDatasetFacet.json#/$defs/InputSubsetInputDatasetFacet"})
    ... except SubsetDocumentError as error:
    ...     print(error.issues[0].path)
    $.inputCondition.type
    """

    def __init__(self, what: str, issues: Iterable[ValidationIssue]) -> None:
        self.issues = tuple(issues)
        lines = "".join(f"\n  {issue}" for issue in self.issues)
        super().__init__(f"{what}:{lines}")


def json_error_text(error: json.JSONDecodeError, *, one_line: bool) -> str:
    """What ``json`` found wrong with a text, and where: ``column C`` for one line of JSON
    Lines (``one_line``), else ``line L, column C``. A text that ends before its JSON value
    does (a line cut short, inside a string or not) is said to be cut short, not reported by
    the character JSON stumbled on (the newline ending a string is no "control character").

    >>> try:
    ...     json.loads('{"name": "lake/sal\\n')
    ... except json.JSONDecodeError as error:
    ...     print(json_error_text(error, one_line=True))
    the line is cut short: it ends at column 19, inside its JSON value
    >>> try:
    ...     json.loads('{"a": [1,\\n  2,\\n')
    ... except json.JSONDecodeError as error:
    ...     print(json_error_text(error, one_line=False))
    the text is cut short: it ends at line 2, column 5, inside its JSON value
    >>> try:
    ...     json.loads('{"name": 1 2}')
    ... except json.JSONDecodeError as error:
    ...     print(json_error_text(error, one_line=True))
    Expecting ',' delimiter (column 12)
    """
    line, column = error.lineno, error.colno
    end = len(error.doc.rstrip())
    cut = error.pos >= end
    if cut:  # where its last character is followed, not where JSON looked after blanks
        line = error.doc.count("\n", 0, end) + 1
        column = end - error.doc.rfind("\n", 0, end)
    where = f"column {column}" if one_line else f"line {line}, column {column}"
    if cut:
        what = "line" if one_line else "text"
        return f"the {what} is cut short: it ends at {where}, inside its JSON value"
    return f"{error.msg} ({where})"
