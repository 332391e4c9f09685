"""Spark's errors for the command line: which exceptions a failing Spark raises, and the first
line of one. The JVM layer reads them; this is the door to them for modules outside
``spark/``, which never import the layer itself.
"""

from __future__ import annotations

from openlineage_subset.spark._jvm import first_error_line, spark_errors

__all__ = ["first_error_line", "spark_errors"]
