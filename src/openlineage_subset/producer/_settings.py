"""Where capture takes the job namespace, the application's name and its parent run from.

Users of openlineage-spark configure lineage in Spark conf (``spark.openlineage.*``), and
orchestrators pass the run a Spark application belongs to there (Airflow) or in the
environment (the ``namespace/job_name/run_id`` form dbt's OpenLineage integration reads).
:func:`lineage_settings` reads all of them; for each value the first place that sets it wins:

- job namespace: ``enable(namespace=...)`` (``ol-subset run --namespace``), then
  ``spark.openlineage.namespace``, then ``$OPENLINEAGE_NAMESPACE``, else ``default``;
- application job name: ``enable(app_name=...)``, then ``spark.openlineage.appName``, then
  the Spark app name (``spark.app.name``); always normalized as openlineage-spark does
  (``Daily Sales`` is ``daily_sales``), ``unknown`` when nothing is left;
- application run id: ``spark.openlineage.applicationRunId``, else a new UUID;
- parent run: ``enable(parent="namespace/job_name/run_id")``, then
  ``spark.openlineage.parentJobNamespace`` + ``parentJobName`` + ``parentRunId``, then
  ``$OPENLINEAGE_PARENT_ID``, else none;
- root parent run: from the same place as the parent (``enable(root_parent=...)``,
  ``spark.openlineage.rootParentJobNamespace`` + ``rootParentJobName`` + ``rootParentRunId``,
  ``$OPENLINEAGE_ROOT_PARENT_ID``), else the parent itself.

Spark conf is the SparkContext's, as openlineage-spark reads it: ``spark-submit --conf`` or the
builder's ``.config(...)`` when it starts Spark (``spark.conf.set`` at runtime does not reach
it). A blank value counts as not set. A setting from Spark conf or the environment that is
incomplete or invalid (a run id that is not a UUID, a parent name without its namespace) is
ignored, as if not set, and said in one warning; an invalid ``enable()`` argument is a
``ValueError``. The module is pure: the caller reads the Spark conf and the environment.
"""

from __future__ import annotations

import uuid
from collections.abc import Mapping
from dataclasses import dataclass, field

from openlineage_subset import OpenLineageSubsetWarning
from openlineage_subset.producer._events import UNKNOWN_APPLICATION, JobRef, normalize_name
from openlineage_subset.producer._secrets import scrub_text

CONF_PREFIX = "spark.openlineage."
DEFAULT_NAMESPACE = "default"
MAX_NAME_CHARACTERS = 512
"""The longest namespace or job name taken (an Airflow ``dag_id.task_id`` fits): a longer
namespace or application name is cut, ending in a marker; a longer parent run name is invalid.
Every event names several of them, and must fit its byte budget."""
NAME_CUT_MARKER = "_cut"
"""The end of a name cut to :data:`MAX_NAME_CHARACTERS` (it survives normalizing)."""
_RUN_FORM = "namespace/job_name/run_id"
_EXAMPLE = "airflow/daily_sales.load/0190f4a7-1c2b-7d3e-8f4a-5b6c7d8e9f00"


class LineageSettingsWarning(OpenLineageSubsetWarning):
    """A lineage setting (Spark conf, environment, transport configuration) that is ignored
    because it is invalid or cannot be used; what is used instead is in the message, which is
    scrubbed of credentials (:func:`~openlineage_subset.producer._secrets.scrub_text`).

    >>> str(LineageSettingsWarning("cannot use http://etl:s3cr3t@lineage/"))
    'cannot use http://***@lineage/'
    """

    def __init__(self, message: object = "") -> None:
        super().__init__(scrub_text(str(message)))


@dataclass(frozen=True)
class LineageSettings:
    """What capture names its runs after, and the run they belong to.

    ``sources`` says where each value came from (``namespace``, ``application_name``,
    ``application_run_id``, ``parent``, ``root``): an ``enable()`` argument, a Spark conf key,
    an environment variable, or the default. ``ignored`` holds one message per invalid setting.
    """

    namespace: str
    application_name: str
    application_run_id: str | None
    """From ``spark.openlineage.applicationRunId``; None: the application gets a new run id."""
    parent: JobRef | None
    """The run this application is a child of, with its ``root`` when one was configured."""
    sources: Mapping[str, str] = field(default_factory=dict)
    ignored: tuple[str, ...] = ()

    @property
    def root(self) -> JobRef | None:
        """The run at the top of the configured hierarchy: the root parent, else the parent."""
        if self.parent is None:
            return None
        return self.parent.root if self.parent.root is not None else self.parent

    def application(self, new_run_id: str) -> JobRef:
        """The application's run; ``new_run_id`` unless a run id was configured.

        Its ``root`` (what the parent facets of its actions name as root) is the configured
        root, else the parent, else none: the application is the root itself.

        >>> settings = lineage_settings("Daily Sales", {}, {"OPENLINEAGE_NAMESPACE": "etl"})
        >>> settings.application("0190f4a7-1c2b-7d3e-8f4a-5b6c7d8e9f00")
        JobRef(namespace='etl', name='daily_sales', run_id='0190f4a7-...', root=None)
        """
        run_id = self.application_run_id or new_run_id
        return JobRef(self.namespace, self.application_name, run_id, self.root)


@dataclass(frozen=True)
class _RunSetting:
    """What one place says about a run: nothing, a run, or why its setting is ignored."""

    run: JobRef | None = None
    problem: str | None = None

    @property
    def given(self) -> bool:
        return self.run is not None or self.problem is not None


def lineage_settings(
    spark_app_name: str,
    spark_conf: Mapping[str, str],
    environ: Mapping[str, str],
    *,
    namespace: str | None = None,
    app_name: str | None = None,
    parent: str | None = None,
    root_parent: str | None = None,
) -> LineageSettings:
    """The settings from ``enable()``'s arguments, ``spark.openlineage.*`` conf and environment.

    ``spark_conf`` holds the Spark conf entries whose keys start with ``spark.openlineage.``
    (other keys are not looked at); ``parent`` and ``root_parent`` are
    ``namespace/job_name/run_id``. Precedence as in the module docstring.

    >>> conf = {
    ...     "spark.openlineage.namespace": "lake",
    ...     "spark.openlineage.parentJobNamespace": "airflow",
    ...     "spark.openlineage.parentJobName": "daily_sales.load",
    ...     "spark.openlineage.parentRunId": "0190f4a7-1c2b-7d3e-8f4a-5b6c7d8e9f00",
    ... }
    >>> settings = lineage_settings("DailySales", conf, {"OPENLINEAGE_NAMESPACE": "etl"})
    >>> settings.namespace, settings.application_name, settings.parent.name
    ('lake', 'daily_sales', 'daily_sales.load')
    >>> settings.sources["namespace"], settings.sources["parent"]
    ('spark.openlineage.namespace', 'spark.openlineage.parentJob*')
    """
    ignored: list[str] = []
    sources: dict[str, str] = {}

    def first(*candidates: tuple[str, str | None]) -> tuple[str, str] | None:
        for source, value in candidates:
            if value is not None and value.strip():
                return source, value
        return None

    chosen = first(
        ("enable(namespace=...)", _argument("namespace", namespace)),
        (CONF_PREFIX + "namespace", spark_conf.get(CONF_PREFIX + "namespace")),
        ("$OPENLINEAGE_NAMESPACE", environ.get("OPENLINEAGE_NAMESPACE")),
    )
    sources["namespace"], job_namespace = chosen or ("default", DEFAULT_NAMESPACE)
    job_namespace = _bounded(job_namespace, "namespace", sources["namespace"], ignored)

    chosen = first(
        ("enable(app_name=...)", _argument("app_name", app_name)),
        (CONF_PREFIX + "appName", spark_conf.get(CONF_PREFIX + "appName")),
        ("spark.app.name", spark_app_name),
    )
    sources["application_name"], name = chosen or ("default", "")
    application_name = normalize_name(name) or UNKNOWN_APPLICATION
    application_name = _bounded(
        application_name, "application name", sources["application_name"], ignored
    )

    application_run_id = None
    sources["application_run_id"] = "new"
    run_id_key = CONF_PREFIX + "applicationRunId"
    configured_run_id = spark_conf.get(run_id_key, "").strip()
    if configured_run_id:
        application_run_id = _uuid(configured_run_id)
        if application_run_id is None:
            ignored.append(
                f"{run_id_key} is {_shown(configured_run_id)}, not a UUID: it is ignored and the "
                "application gets a new run id; set it to a UUID, or unset it"
            )
        else:
            sources["application_run_id"] = run_id_key

    if _argument("root_parent", root_parent) and not _argument("parent", parent):
        raise ValueError(
            "enable(root_parent=...) is given without enable(parent=...): give the parent run "
            "too (the root parent is the top of the parent's hierarchy)"
        )
    places = [
        (
            "enable(parent=...)",
            _argument_run("parent", parent),
            "enable(root_parent=...)",
            _argument_run("root_parent", root_parent),
        ),
        (
            CONF_PREFIX + "parentJob*",
            _conf_run(spark_conf, "parent", "parent run"),
            CONF_PREFIX + "rootParentJob*",
            _conf_run(spark_conf, "rootParent", "root parent run"),
        ),
        (
            "$OPENLINEAGE_PARENT_ID",
            _environment_run(environ, "OPENLINEAGE_PARENT_ID", "parent run"),
            "$OPENLINEAGE_ROOT_PARENT_ID",
            _environment_run(environ, "OPENLINEAGE_ROOT_PARENT_ID", "root parent run"),
        ),
    ]
    parent_run = None
    sources["parent"] = sources["root"] = "none"
    for parent_source, parent_reading, root_source, root_reading in places:
        if parent_reading.problem is not None:
            also = f" (and {root_source} with it)" if root_reading.given else ""
            ignored.append(parent_reading.problem + also)
            continue
        if parent_reading.run is None:
            if root_reading.given:
                ignored.append(
                    f"{root_source} is set without {parent_source}: it is ignored; set the "
                    "parent run too (the root parent is the top of the parent's hierarchy)"
                )
            continue
        parent_run = parent_reading.run
        sources["parent"] = sources["root"] = parent_source
        if root_reading.problem is not None:
            ignored.append(f"{root_reading.problem} (the parent run is taken as the root)")
        elif root_reading.run is not None:
            parent_run = JobRef(
                parent_run.namespace, parent_run.name, parent_run.run_id, root_reading.run
            )
            sources["root"] = root_source
        break
    return LineageSettings(
        namespace=job_namespace,
        application_name=application_name,
        application_run_id=application_run_id,
        parent=parent_run,
        sources=sources,
        ignored=tuple(ignored),
    )


def _bounded(name: str, what: str, source: str, ignored: list[str]) -> str:
    """``name`` cut to :data:`MAX_NAME_CHARACTERS`, ending in the marker, when longer (said in
    ``ignored``)."""
    if len(name) <= MAX_NAME_CHARACTERS:
        return name
    kept = name[: MAX_NAME_CHARACTERS - len(NAME_CUT_MARKER)].rstrip("_") + NAME_CUT_MARKER
    ignored.append(
        f"the {what} from {source} has {len(name)} characters: it is cut to "
        f"{MAX_NAME_CHARACTERS} (ending in {NAME_CUT_MARKER!r}) to keep events within their "
        "size budget; give a shorter one"
    )
    return kept


def _too_long(namespace: str, name: str) -> str | None:
    """What is wrong with a run's names when one is longer than events can carry."""
    for what, text in (("namespace", namespace), ("job name", name)):
        if len(text) > MAX_NAME_CHARACTERS:
            return (
                f"has a {what} of {len(text)} characters, over the {MAX_NAME_CHARACTERS} "
                "events can carry"
            )
    return None


def _argument(name: str, value: object) -> str | None:
    """An ``enable()`` argument; None when not given or blank."""
    if value is not None and not isinstance(value, str):
        raise TypeError(f"enable({name}=...) takes a str, got {type(value).__name__}: {value!r}")
    return value if value and value.strip() else None


def _argument_run(name: str, value: object) -> _RunSetting:
    text = _argument(name, value)
    if text is None:
        return _RunSetting()
    run = _run_from_path(text)
    if isinstance(run, str):
        raise ValueError(f"enable({name}=...) {run}; give it as {_RUN_FORM}, e.g. {_EXAMPLE!r}")
    return _RunSetting(run)


def _environment_run(environ: Mapping[str, str], variable: str, what: str) -> _RunSetting:
    text = environ.get(variable, "")
    if not text.strip():
        return _RunSetting()
    run = _run_from_path(text)
    if isinstance(run, str):
        return _RunSetting(
            problem=f"${variable} {run}: the {what} is ignored; set it as {_RUN_FORM} "
            f"(e.g. {_EXAMPLE}), or unset it"
        )
    return _RunSetting(run)


def _run_from_path(text: str) -> JobRef | str:
    """``namespace/job_name/run_id`` split as dbt's OpenLineage integration splits it; else
    what is wrong with it."""
    parts = text.split("/")
    if len(parts) != 3 or not all(part.strip() for part in parts):
        return f"is {_shown(text)}, not {_RUN_FORM} (three parts, none empty)"
    job_namespace, name, run_id = parts
    too_long = _too_long(job_namespace, name)
    if too_long is not None:
        return f"is {_shown(text)}, which {too_long}"
    canonical = _uuid(run_id)
    if canonical is None:
        return f"is {_shown(text)}, whose run id {_shown(run_id)} is not a UUID"
    return JobRef(job_namespace, name, canonical)


def _shown(text: str) -> str:
    """``text`` quoted for a message, its middle left out when long."""
    if len(text) <= 200:
        return repr(text)
    return f"{text[:100]!r}...{text[-60:]!r} ({len(text)} characters)"


def _conf_run(spark_conf: Mapping[str, str], kind: str, what: str) -> _RunSetting:
    """A run from ``spark.openlineage.{kind}JobNamespace``, ``...JobName`` and ``...RunId``."""
    keys = [f"{CONF_PREFIX}{kind}{part}" for part in ("JobNamespace", "JobName", "RunId")]
    values = [spark_conf.get(key, "") for key in keys]
    given = [key for key, value in zip(keys, values, strict=True) if value.strip()]
    if not given:
        return _RunSetting()
    if len(given) < len(keys):
        missing = [key for key in keys if key not in given]
        return _RunSetting(
            problem=f"{' and '.join(given)} {'is' if len(given) == 1 else 'are'} set without "
            f"{' and '.join(missing)}: the {what} is ignored; set all three of "
            f"{', '.join(keys)}, or none"
        )
    job_namespace, name, run_id = values
    too_long = _too_long(job_namespace, name)
    if too_long is not None:
        return _RunSetting(
            problem=f"the {what} of {', '.join(keys)} {too_long}: it is ignored; set it to the "
            f"{what}'s own names"
        )
    canonical = _uuid(run_id)
    if canonical is None:
        return _RunSetting(
            problem=f"{keys[2]} is {_shown(run_id)}, not a UUID: the {what} is ignored; set it to "
            f"the run id of the {what}"
        )
    return _RunSetting(JobRef(job_namespace, name, canonical))


def _uuid(text: str) -> str | None:
    """``text`` as a UUID in its canonical form (lower case, with hyphens); None if it is not."""
    try:
        return str(uuid.UUID(text.strip()))
    except ValueError:
        return None
