"""The session: its identity, whether it is a Spark Connect one, its conf, and the listener
that hands every action to capture.

:class:`ActionListener` is Spark's ``QueryExecutionListener`` implemented in Python through
py4j's callback server: Spark calls it once per action (never per task), after the action, on
its listener thread; it passes each call on to a plain Python callable.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, ClassVar

from openlineage_subset import OpenLineageSubsetError
from openlineage_subset.spark._handles import QueryExecution
from openlineage_subset.spark._jvm._bridge import JavaObject, JvmCallback

OnAction = Callable[[str, QueryExecution, int, object, str], None]
"""What :class:`ActionListener` calls for each action: ``on_action(func_name, query_execution,
duration_ns, failure, within)``, with ``failure`` the JVM exception of a failed action (and
``duration_ns`` 0), None after one that succeeded; ``within``: Spark's description of the stream
micro-batch the action ran in (by a ``foreachBatch`` function), else empty."""


class SparkConnectNotSupportedError(TypeError, OpenLineageSubsetError):
    """A Spark Connect session or DataFrame was given where capture needs a classic one.

    A Spark Connect client (``SparkSession.builder.remote(...)``, PySpark 3.4 and later) has no
    JVM in the Python process: its query plans live in the Connect server, out of reach.
    """


_CONNECT_HOW = (
    "capture needs a classic SparkSession, whose JVM runs in this Python process; build the "
    "session without .remote() (and without SPARK_REMOTE or SPARK_CONNECT_MODE_ENABLED in the "
    "environment), e.g. SparkSession.builder.master(...).getOrCreate() or a spark-submit'ed "
    "script"
)


def is_spark_connect(subject: object) -> bool:
    """Whether ``subject`` (a session, DataFrame, ...) belongs to a Spark Connect client."""
    return type(subject).__module__.startswith("pyspark.sql.connect")


def require_classic(subject: object, what: str) -> None:
    """Raise :class:`SparkConnectNotSupportedError` when ``subject`` is a Spark Connect object;
    ``what`` names the call (``"enable()"``)."""
    if is_spark_connect(subject):
        kind = type(subject).__name__
        raise SparkConnectNotSupportedError(
            f"{what} was given a Spark Connect {kind} ({type(subject).__module__}): it has no "
            f"JVM in this process, so its query plans cannot be read here; {_CONNECT_HOW}"
        )


def query_execution_of(subject: Any, caller: str) -> tuple[JavaObject, bool]:
    """The JVM ``QueryExecution`` of a DataFrame or QueryExecution, and whether it ran.

    A DataFrame has not necessarily run: only what planning decides is used (static partition
    pruning). A QueryExecution handed over after an action has: runtime decisions such as
    dynamic partition pruning are used too. ``caller`` names the public call in errors.
    """
    from py4j.java_gateway import JavaObject as Py4jObject  # noqa: PLC0415  (pyspark is optional)

    require_classic(subject, caller)
    if isinstance(subject, Py4jObject):
        if str(subject.getClass().getName()).endswith("QueryExecution"):
            return subject, True
    elif getattr(subject, "_jdf", None) is not None:
        return subject._jdf.queryExecution(), False
    raise TypeError(
        "expected a pyspark DataFrame or a JVM QueryExecution (the one a "
        f"QueryExecutionListener receives), got {type(subject).__name__}"
    )


def session_key(spark: Any) -> int:
    """What tells one SparkSession from another: its JVM session (PySpark may wrap one JVM
    session in several Python objects)."""
    return id(spark._jsparkSession)


def conf_with_prefix(spark: Any, prefix: str) -> dict[str, str]:
    """The Spark conf entries whose key starts with ``prefix`` (keys kept whole), in a few round
    trips however large the conf."""
    return {
        prefix + str(entry._1()): str(entry._2())
        for entry in spark.sparkContext._jsc.sc().conf().getAllWithPrefix(prefix)
    }


def is_stopped(spark: Any) -> bool:
    """Whether ``spark`` was stopped (``spark.stop()`` ended its application: its SparkContext
    has no JVM any more)."""
    return getattr(spark.sparkContext, "_jsc", None) is None


def drain_listener_bus(spark: Any) -> None:
    """Wait until Spark's listener bus has delivered every event posted so far (our listener
    has then seen every action that ran)."""
    spark._jsc.sc().listenerBus().waitUntilEmpty()


class ActionListener(JvmCallback):
    """The Python side of ``org.apache.spark.sql.util.QueryExecutionListener``: each action,
    successful or failed, goes to ``on_action`` (see :data:`OnAction`).

    Example (``handle_action`` a function taking what :data:`OnAction` says)::

        listener = ActionListener(handle_action)
        listener.register(spark)
        ...
        listener.unregister(spark)
    """

    def __init__(self, on_action: OnAction) -> None:
        self.on_action = on_action
        self._proxy: JavaObject = None
        """The JVM proxy py4j made for this object when it was registered: py4j makes a new
        one each time a Python object crosses, so unregistering needs the very one registered."""

    def onSuccess(self, func_name: str, query_execution: JavaObject, duration_ns: int) -> None:
        self.on_action(str(func_name), query_execution, int(duration_ns), None, "")

    def onFailure(self, func_name: str, query_execution: JavaObject, exception: JavaObject) -> None:
        self.on_action(str(func_name), query_execution, 0, exception, "")

    def register(self, spark: Any) -> None:
        """Have ``spark``'s session call this listener after every action from now on."""
        from pyspark import java_gateway  # noqa: PLC0415  (pyspark is optional)

        # Typed loosely on purpose: pyspark types the function in some versions, not others.
        start_callback_server: Any = java_gateway.ensure_callback_server_started
        start_callback_server(spark.sparkContext._gateway)
        manager = spark._jsparkSession.listenerManager()
        manager.register(self)
        registered = manager.listListeners()  # in registration order: ours is the last
        self._proxy = registered[len(registered) - 1]

    def unregister(self, spark: Any) -> None:
        """Stop ``spark``'s session calling this listener (the one :meth:`register` added)."""
        spark._jsparkSession.listenerManager().unregister(self._proxy)

    class Java:
        implements: ClassVar[list[str]] = ["org.apache.spark.sql.util.QueryExecutionListener"]
