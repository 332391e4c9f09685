"""The roots of the package's own exceptions and warnings, as httpx has ``httpx.HTTPError``.

Every exception the package raises on purpose derives from :class:`OpenLineageSubsetError`
(and keeps its older base too, ``ValueError`` for :class:`SubsetDocumentError`, so no caller
breaks); every warning it gives derives from :class:`OpenLineageSubsetWarning`. A caller can
tell the package's errors from its own, and from a bug (which is none of these), in one
``except``:

>>> from openlineage_subset import OpenLineageSubsetError, SubsetDocumentError, parse_facet
>>> issubclass(SubsetDocumentError, OpenLineageSubsetError)
True
>>> try:
...     parse_facet({"inputCondition": {"type": "nonsense"}})
... except OpenLineageSubsetError as error:
...     print(type(error).__name__)
SubsetDocumentError
"""

from __future__ import annotations


class OpenLineageSubsetError(Exception):
    """The root of every exception the package raises on purpose (docs/sdk.md, "Errors")."""


class OpenLineageSubsetWarning(UserWarning):
    """The root of every warning the package gives."""
