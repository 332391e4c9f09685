"""Which side of a run a dataset is on: one vocabulary for the code of the queries.

The words users see stay as they were (the store's ``direction`` column and the JSON of runs
say ``input``/``output``, history says ``read``/``write``, the report ``read``/``written``):
each is spelled here once, from the member."""

from __future__ import annotations

import enum
from typing import Literal

__all__ = ["Side"]


class Side(enum.Enum):
    """A run's read of a dataset (``INPUT``) or its write (``OUTPUT``); the value is the word
    the store keeps in ``accesses.direction``.

    >>> [(side.value, side.verb) for side in Side]
    [('input', 'read'), ('output', 'write')]
    """

    INPUT = "input"
    OUTPUT = "output"

    @property
    def verb(self) -> Literal["read", "write"]:
        """The word a history entry's ``direction`` says."""
        return "read" if self is Side.INPUT else "write"
