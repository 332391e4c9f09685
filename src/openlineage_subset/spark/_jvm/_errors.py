"""Errors from the JVM: what a failing Spark raises, and their text as the JVM prints it."""

from __future__ import annotations

from typing import Any

from openlineage_subset.producer import scrub_text, scrubbed_logger
from openlineage_subset.spark._jvm._bridge import java_class

log = scrubbed_logger("openlineage_subset.spark")


def java_error_text(exception: Any) -> tuple[str, str | None]:
    """The message and stack trace of a JVM exception, as the JVM prints them; for a Python
    exception (or with the JVM gone), its text and no trace."""
    try:
        message = str(exception.toString())
        trace = str(
            java_class("org.apache.commons.lang3.exception.ExceptionUtils").getStackTrace(exception)
        )
    except Exception:  # a Python exception, or the JVM gone: its text is enough
        return str(exception), None
    return message, trace


def spark_errors() -> tuple[type[Exception], ...]:
    """What a failing Spark raises: py4j's errors (the JVM's exceptions) and PySpark's own."""
    from py4j.protocol import Py4JError  # noqa: PLC0415  (pyspark is optional)
    from pyspark.errors import PySparkException  # noqa: PLC0415

    return (Py4JError, PySparkException)


def first_error_line(error: BaseException) -> str:
    """The first line of what went wrong: the Java exception's own, for a py4j error; scrubbed
    of credentials, for the command line.

    >>> first_error_line(ValueError("no such table: sales\\nat line 3"))
    'no such table: sales'
    """
    text = str(error)
    java_exception = getattr(error, "java_exception", None)
    if java_exception is not None:
        try:
            text = str(java_exception.toString())
        except Exception:  # the JVM is gone: py4j's message is all there is
            log.debug("cannot read the Java exception", exc_info=True)
    lines = text.strip().splitlines()
    return scrub_text(lines[0]) if lines else type(error).__name__
