"""The one exception the generator raises for problems a schema author can fix."""

from __future__ import annotations


class CodegenError(Exception):
    """A schema or configuration problem; the message says what, where and what to do."""
