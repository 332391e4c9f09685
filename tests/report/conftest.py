"""The report's tests draw lineage databases built as the lineage tests build them: the same
fixture, from tests/lineage/conftest.py."""

from __future__ import annotations

from tests.lineage.conftest import Build, lineage_db

__all__ = ["Build", "lineage_db"]
