"""Everything this package asks of openlineage-python, in one module.

openlineage-python (the ``spark`` extra) brings the transports users configure (HTTP, Kafka,
console, ...), the discovery of their configuration, and run ids. Four things of it are used,
each here and nowhere else, so that a release that changes one breaks this module and its test
(``tests/spark/test_openlineage_client.py``, run against the installed release), not capture:

- :func:`configured_transport`: ``OpenLineageClient()`` reads the user's configuration;
- :func:`wire_event`: its serializer drops every None (erasing null partitions) and passes an
  Enum member's value through, which carries the dataset lists verbatim;
- :func:`to_json`: its ``Serde`` for events that are its own classes;
- :func:`new_run_id`: its ``generate_new_uuid`` (a UUIDv7, as the spec recommends).

Nothing is imported at module level: the SDK and the lineage queries work without the extra.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from enum import Enum
from typing import Any

from openlineage_subset.producer import scrub_logs_under

SUPPORTED = ">=1.30,<2"
"""The openlineage-python releases this module is written for: the ``spark`` extra's bound
(a test keeps the two equal)."""


def configured_transport() -> tuple[Any, Mapping[str, Any]]:
    """The transport openlineage-python's own configuration gives, and its ``transport``
    settings (empty when it found no transport type). Raises what openlineage-python raises
    for a configuration it cannot use (``ValueError``, ``ImportError``, ...).

    The process environment is left as it was: openlineage-python (1.54) writes
    ``OPENLINEAGE__TRANSPORT__TRANSPORTS__*`` variables into ``os.environ`` when it reads
    ``OPENLINEAGE_URL``, which the user's job and later configuration lookups would see.
    """
    import openlineage.client.transport  # noqa: PLC0415, F401  (the spark extra: its loggers)
    from openlineage.client import OpenLineageClient  # noqa: PLC0415

    # Its loggers print the configuration, the URL with its credentials among it.
    scrub_logs_under("openlineage")
    before = dict(os.environ)
    try:
        client = OpenLineageClient()
        return client.transport, client.config.transport or {}
    finally:
        for name in set(os.environ) - set(before):
            del os.environ[name]
        for name, value in before.items():
            if os.environ.get(name) != value:
                os.environ[name] = value


def wire_event(event: dict[str, Any]) -> dict[str, Any]:
    """The event for openlineage-python's transports, with its JSON nulls intact.

    Their serializer drops every None, which would erase the null partition (a dimension whose
    value is JSON null). It passes an Enum member's value through untouched, so a dataset list
    that holds a null travels as the value of a one-off Enum member. Making an Enum class costs
    about 0.1 ms, so lists without a null go as they are.

    >>> wire_event({"inputs": [{"name": "a"}]})["inputs"]
    [{'name': 'a'}]
    >>> wire_event({"outputs": [{"dimensions": {"country": None}}]})["outputs"].value
    [{'dimensions': {'country': None}}]
    """
    wrapped = dict(event)
    for key in ("inputs", "outputs"):
        if key in wrapped and _holds_null(wrapped[key]):
            Verbatim: Any = Enum("Verbatim", {"value": wrapped[key]})
            wrapped[key] = Verbatim["value"]
    return wrapped


def _holds_null(value: object) -> bool:
    """Whether a JSON value holds a null anywhere (iteratively: no depth limit to hit)."""
    pending = [value]
    while pending:
        item = pending.pop()
        if item is None:
            return True
        if isinstance(item, dict):
            pending.extend(item.values())
        elif isinstance(item, list):
            pending.extend(item)
    return False


def to_json(event: Any) -> str:
    """An event of openlineage-python's classes (``RunEvent``...) as its JSON text."""
    from openlineage.client.serde import Serde  # noqa: PLC0415  (the spark extra)

    return str(Serde.to_json(event))


def new_run_id() -> str:
    """A new run id: a UUIDv7, time-ordered, from openlineage-python."""
    from openlineage.client.uuid import generate_new_uuid  # noqa: PLC0415  (the spark extra)

    return str(generate_new_uuid())
