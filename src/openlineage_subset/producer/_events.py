"""OpenLineage run events and the run facets this package writes, built from the generated
models of the newest spec version (pure functions).

The event envelope (run, job, facets, ``schemaURL``) is a generated ``RunEvent``, dumped once;
its dataset lists are given as JSON, since they were dumped and bounded to the event budget
before (see ``_budget``). A core version bump thus changes the events' ``schemaURL`` with no
edit here. The run facets from other OpenLineage schemas (parent, processing engine, error
message) are ``RunFacet`` models whose own properties are their ``additional_properties``.
"""

from __future__ import annotations

import datetime as _dt
import re
import traceback
import unicodedata
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from openlineage_subset_generated.latest import EventType, Job, JobFacet, Run, RunEvent, RunFacet

from openlineage_subset import __version__, dump
from openlineage_subset.producer._secrets import scrub_text

PARENT_SCHEMA = "https://openlineage.io/spec/facets/1-1-0/ParentRunFacet.json#/$defs/ParentRunFacet"
ENGINE_SCHEMA = (
    "https://openlineage.io/spec/facets/1-1-1/ProcessingEngineRunFacet.json"
    "#/$defs/ProcessingEngineRunFacet"
)
ERROR_SCHEMA = (
    "https://openlineage.io/spec/facets/1-0-1/ErrorMessageRunFacet.json#/$defs/ErrorMessageRunFacet"
)
EVENT_TYPES: tuple[str, ...] = tuple(kind.value for kind in EventType)
"""Every ``eventType`` of the spec, in its order (from the generated model)."""
TERMINAL_EVENT_TYPES: tuple[str, ...] = tuple(
    kind.value for kind in (EventType.COMPLETE, EventType.FAIL, EventType.ABORT)
)
"""The ``eventType`` values that end a run: the spec asks for one of them per run."""
FAILED_EVENT_TYPES: tuple[str, ...] = tuple(
    kind.value for kind in (EventType.FAIL, EventType.ABORT)
)
"""The ends of a run that did not complete: what it wrote may be half written."""
UNKNOWN_APPLICATION = "unknown"
"""The application's job name when the app name has nothing left after normalizing (as in
openlineage-spark)."""
_ACTIONS = {
    "collectToPython": "collect",
    "collectAsArrowToPython": "collect",
    "toPandas": "collect",
    "showString": "show",
    "file source write": "write",
    "command": "write",
}


@dataclass(frozen=True)
class JobRef:
    """A job and one of its runs: what a parent facet points at.

    ``root`` is the run at the top of the hierarchy this run belongs to (the orchestrator's
    DAG run, say); None when this run is the top itself.
    """

    namespace: str
    name: str
    run_id: str
    root: JobRef | None = None


def timestamp(nanoseconds: int) -> str:
    """ISO-8601 in UTC with milliseconds and ``Z``.

    >>> timestamp(1_729_000_000_123_456_789)
    '2024-10-15T13:46:40.123Z'
    """
    moment = _dt.datetime.fromtimestamp(nanoseconds / 1e9, tz=_dt.timezone.utc)
    return moment.isoformat(timespec="milliseconds").replace("+00:00", "Z")


def job_name(app_name: str, action: str, datasets: Sequence[dict[str, Any]]) -> str:
    """``{app}.{action}.{main output or input}``, each part normalized by :func:`normalize_name`.

    The action is what Spark calls it (``count``, ``collect``, ``write``...); the last part is
    the first output's name, else the first input's (a table's name, a path's segments).

    >>> job_name("Daily Sales", "collectToPython", [{"namespace": "file", "name": "/lake/sales"}])
    'daily_sales.collect.lake_sales'
    """
    target = normalize_name(datasets[0]["name"]) if datasets else "nothing"
    action_name = normalize_name(_ACTIONS.get(action, action))
    return f"{normalize_name(app_name) or UNKNOWN_APPLICATION}.{action_name}.{target}"


def normalize_name(text: str) -> str:
    """``text`` in snake case, the way openlineage-spark's ``NameNormalizer`` writes job names.

    So that the jobs captured here and by openlineage-spark get the same names: non-word
    characters trimmed at both ends, accents dropped, words split at case changes
    (acronyms kept whole), every run of other characters one ``_``, all lower case.

    >>> normalize_name("MyXMLBasedApplication"), normalize_name("in glue/aws we can have slashes")
    ('my_xml_based_application', 'in_glue_aws_we_can_have_slashes')
    """
    # Java's \w and \d are ASCII-only, Python's are not: the classes are spelled out.
    trimmed = re.sub(r"[^A-Za-z0-9_]+$", "", re.sub(r"^[^A-Za-z0-9_]+", "", text))
    unaccented = "".join(
        char
        for char in unicodedata.normalize("NFKD", trimmed)
        if not unicodedata.category(char).startswith("M")
    )
    words = re.sub(r"([a-z])([A-Z])", r"\1 \2", unaccented)
    words = re.sub(r"(?<!^)([A-Z])([a-z])", r" \1\2", words)
    words = re.sub(r"([0-9])([A-Z])", r"\1 \2", words)
    return re.sub(r"[^a-zA-Z0-9]+", "_", words.lower())


def parent_facet(parent: JobRef, producer: str) -> RunFacet:
    """The ``parent`` run facet of a child of ``parent``; ``root`` is the parent's root, or the
    parent itself when it has none.

    >>> airflow = JobRef("airflow", "daily.load", "r-1")
    >>> facet = dump(parent_facet(JobRef("spark", "daily_load", "r-2", root=airflow), "producer"))
    >>> facet["run"], facet["root"]["run"], facet["root"]["job"]["name"]
    ({'runId': 'r-2'}, {'runId': 'r-1'}, 'daily.load')
    """
    root = parent.root if parent.root is not None else parent
    return RunFacet(
        producer=producer,
        schema_url=PARENT_SCHEMA,
        additional_properties={
            "run": {"runId": parent.run_id},
            "job": {"namespace": parent.namespace, "name": parent.name},
            "root": {
                "run": {"runId": root.run_id},
                "job": {"namespace": root.namespace, "name": root.name},
            },
        },
    )


def engine_facet(spark_version: str, producer: str) -> RunFacet:
    """The ``processing_engine`` run facet: Spark's version, and this package's.

    >>> dump(engine_facet("3.5.3", "p"))["name"]
    'spark'
    """
    return RunFacet(
        producer=producer,
        schema_url=ENGINE_SCHEMA,
        additional_properties={
            "version": spark_version,
            "name": "spark",
            "openlineageAdapterVersion": __version__,
        },
    )


def error_facet(
    message: str, stack_trace: str | None, producer: str, *, language: str = "JAVA"
) -> RunFacet:
    """The ``errorMessage`` run facet, its message and stack trace scrubbed of credentials
    (see :func:`~openlineage_subset.producer._secrets.scrub_text`).

    >>> dump(error_facet("Path does not exist: s3a://AKIAIOSFODNN7EXAMPLE:x@bucket/k", None, "p"))
    ... # doctest: +NORMALIZE_WHITESPACE
    {'_producer': 'p', '_schemaURL': '...ErrorMessageRunFacet',
     'message': 'Path does not exist: s3a://***@bucket/k', 'programmingLanguage': 'JAVA'}
    """
    properties = {"message": scrub_text(message), "programmingLanguage": language}
    if stack_trace:
        properties["stackTrace"] = scrub_text(stack_trace)
    return RunFacet(producer=producer, schema_url=ERROR_SCHEMA, additional_properties=properties)


def python_error_facet(error: BaseException, producer: str) -> RunFacet:
    """The ``errorMessage`` facet of a Python exception: its last traceback line as the message,
    the whole traceback (as Python prints it) as the stack trace, both scrubbed of credentials.

    >>> dump(python_error_facet(ValueError("no data for 2024-10-15"), "p"))["message"]
    'ValueError: no data for 2024-10-15'
    >>> failed = OSError("GET https://bob:hunter2@host/x?token=abc")
    >>> dump(python_error_facet(failed, "p"))["message"]
    'OSError: GET https://***@host/x?token=***'
    """
    message = "".join(traceback.format_exception_only(type(error), error)).strip()
    stack_trace = "".join(traceback.format_exception(type(error), error, error.__traceback__))
    return error_facet(message, stack_trace, producer, language="PYTHON")


def run_event(
    event_type: str,
    *,
    event_time: str,
    job: JobRef,
    producer: str,
    run_facets: Mapping[str, RunFacet] | None = None,
    inputs: Sequence[dict[str, Any]] = (),
    outputs: Sequence[dict[str, Any]] = (),
    job_facets: Mapping[str, JobFacet] | None = None,
) -> dict[str, Any]:
    """A RunEvent of the newest spec version as JSON; ``inputs`` and ``outputs`` are datasets
    as JSON already.

    >>> event = run_event("START", event_time="2024-10-15T00:00:00Z",
    ...                   job=JobRef("lake", "daily.count.sales", "r-1"), producer="p")
    >>> event["eventType"], event["schemaURL"] == RunEvent.SCHEMA_URL, event["run"]
    ('START', True, {'runId': 'r-1'})
    """
    envelope = RunEvent(
        event_type=EventType(event_type),
        event_time=event_time,
        producer=producer,
        schema_url=RunEvent.SCHEMA_URL,
        run=Run(run_id=job.run_id, facets=dict(run_facets) if run_facets else None),
        job=Job(
            namespace=job.namespace,
            name=job.name,
            facets=dict(job_facets) if job_facets else None,
        ),
    )
    event: dict[str, Any] = dump(envelope)
    event["inputs"] = list(inputs)
    event["outputs"] = list(outputs)
    return event


def start_and_end(  # noqa: PLR0913  (keyword-only: each a part of the two events)
    job: JobRef,
    *,
    producer: str,
    run_facets: Mapping[str, RunFacet],
    started_ns: int,
    ended_ns: int,
    inputs: Sequence[dict[str, Any]] = (),
    outputs: Sequence[dict[str, Any]] = (),
    error: RunFacet | None = None,
    job_facets: Mapping[str, JobFacet] | None = None,
) -> list[dict[str, Any]]:
    """The START and COMPLETE events of one run (FAIL, with ``error`` as its ``errorMessage``
    facet, when ``error`` is given). START names the outputs without their output facets: what
    a run wrote is known at its end.

    >>> start, end = start_and_end(JobRef("lake", "daily.save.out", "r-1"), producer="p",
    ...     run_facets={}, started_ns=0, ended_ns=10**9, outputs=[{"namespace": "file",
    ...     "name": "/out", "outputFacets": {}}])
    >>> start["eventType"], start["outputs"], end["eventType"], end["eventTime"]
    ('START', [{'namespace': 'file', 'name': '/out'}], 'COMPLETE', '1970-01-01T00:00:01.000Z')
    """
    start = run_event(
        "START",
        event_time=timestamp(started_ns),
        job=job,
        producer=producer,
        run_facets=run_facets,
        inputs=inputs,
        outputs=[{k: v for k, v in o.items() if k != "outputFacets"} for o in outputs],
        job_facets=job_facets,
    )
    end_facets = dict(run_facets)
    if error is not None:
        end_facets["errorMessage"] = error
    end = run_event(
        "FAIL" if error is not None else "COMPLETE",
        event_time=timestamp(ended_ns),
        job=job,
        producer=producer,
        run_facets=end_facets,
        inputs=inputs,
        outputs=outputs,
        job_facets=job_facets,
    )
    return [start, end]
