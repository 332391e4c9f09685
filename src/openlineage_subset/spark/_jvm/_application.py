"""The application's listener: the actions of every session of a Spark application.

A ``QueryExecutionListener`` belongs to one session's listener manager: ``spark.newSession()``
and the sessions Spark Connect makes for its clients get managers without it. Every session's
executions, though, end on the application's listener bus as ``SparkListenerSQLExecutionEnd``
events, which carry the ``QueryExecution``. :class:`ApplicationListener` listens there, on a
queue of its own (a slow capture never delays Spark's other listeners), through the package's
one Java class (``java/.../ListenerEventForwarder.java``, compiled into ``classes/`` when the
wheel is built): it forwards those events and drops every other one in the JVM, so Python is
called once per action, never once per task. Which executions count as actions is Spark's own
rule for ``QueryExecutionListener``: those with a name (``count``, ``save``, ``command``...)
and a query execution.

Without the compiled class (a wheel built where there was no Java compiler)
:func:`application_listener_available` is False and capture falls back to a session's
:class:`~openlineage_subset.spark._jvm._session.ActionListener`.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, ClassVar

from openlineage_subset.producer import scrubbed_logger
from openlineage_subset.spark._jvm._bridge import (
    JavaObject,
    JvmCallback,
    java_array_type,
    java_class,
    once_per_jvm,
)
from openlineage_subset.spark._jvm._connect import SESSION_CLOSED
from openlineage_subset.spark._jvm._session import OnAction

log = scrubbed_logger("openlineage_subset.spark")

CLASSES = Path(__file__).parent / "classes"
"""Where the build put the compiled Java class (a class path root)."""
FORWARDER = "openlineage_subset.jvm.ListenerEventForwarder"
EXECUTION_END = "org.apache.spark.sql.execution.ui.SparkListenerSQLExecutionEnd"
EXECUTION_START = "org.apache.spark.sql.execution.ui.SparkListenerSQLExecutionStart"
"""Kept in the JVM (never handed over): a stream batch's description, for its executions' ends."""
_STREAM_EVENTS = "org.apache.spark.sql.streaming.StreamingQueryListener$"
QUERY_STARTED = _STREAM_EVENTS + "QueryStartedEvent"
QUERY_TERMINATED = _STREAM_EVENTS + "QueryTerminatedEvent"
LISTENER_INTERFACE = "org.apache.spark.scheduler.SparkListenerInterface"
_NOTHING = object()
"""No second argument: the forwarder handed over an event, not an action's facts."""
QUEUE = "openlineage-subset"
"""The listener bus queue the application listener gets to itself."""

OnError = Callable[[str, BaseException], None]
"""``on_error(what was being done, error)``: how a failure to read an event is reported."""
OnQuery = Callable[[str, str, str | None, "tuple[str, str | None] | None", bool], None]
"""``on_query(query_id, run_id, name, error, started)``: a streaming query started (``started``),
or terminated (``error``: the message and stack trace of the exception that ended it)."""
OnSessionEnd = Callable[[str, str, int], None]
"""``on_session_end(user_id, session_id, at_ms)``: a Spark Connect server closed a client's
session (the client stopped it, or left and its timeout passed)."""


def application_listener_available() -> bool:
    """Whether this installation holds the compiled Java class the listener needs."""
    return (CLASSES / (FORWARDER.replace(".", "/") + ".class")).is_file()


class ApplicationListener(JvmCallback):
    """Hands the end of each action of any session of the application to ``on_action`` (see
    :data:`~openlineage_subset.spark._jvm._session.OnAction`); what cannot be read of an event
    goes to ``on_error``, and the action is then left out.

    Example (``handle_action`` and ``count_error`` as the aliases say)::

        listener = ApplicationListener(handle_action, count_error)
        listener.register(spark)   # from now on: every session of spark's application
        ...
        listener.unregister(spark)
    """

    def __init__(
        self,
        on_action: OnAction,
        on_error: OnError,
        on_session_end: OnSessionEnd | None = None,
        on_query: OnQuery | None = None,
    ) -> None:
        self.on_action = on_action
        self.on_error = on_error
        self.on_session_end = on_session_end
        self.on_query = on_query
        self._proxy: JavaObject = None
        """The ``SparkListenerInterface`` proxy registered on the listener bus."""

    def accept(self, event: JavaObject, held: JavaObject = _NOTHING) -> None:
        """Called by the Java forwarder, on the listener's queue thread: once per action (and
        per stream micro-batch), as ``accept("name NUL duration_ns NUL batch", query_execution)``
        or, for one that failed, ``accept("name NUL 0 NUL batch", [query_execution, failure])``
        (the forwarder reads those facts of the event and drops executions that are no action;
        ``batch`` is the description of the stream batch it ran in, else empty); and once per
        Spark Connect session closed and streaming query started or terminated, as
        ``accept(event)``."""
        try:
            if held is _NOTHING:
                self._other_event(event)
                return
            name, _, rest = str(event).partition("\u0000")
            duration, _, within = rest.partition("\u0000")
            if isinstance(held, java_array_type()):
                failed: Any = held  # [query execution, failure]: two round trips
                action = (name, failed[0], 0, failed[1], within)
            else:
                action = (name, held, int(duration), None, within)
        except Exception as error:
            self.on_error("reading the end of an action from Spark's listener bus", error)
            return
        self.on_action(*action)

    def _other_event(self, event: JavaObject) -> None:
        kind = str(event.getClass().getName())
        if kind == SESSION_CLOSED:
            closed = (str(event.userId()), str(event.sessionId()), int(event.eventTime()))
            if self.on_session_end is not None:
                self.on_session_end(*closed)
        elif kind == QUERY_STARTED and self.on_query is not None:
            name = event.name()
            self.on_query(str(event.id()), str(event.runId()), _text(name), None, True)
        elif kind == QUERY_TERMINATED and self.on_query is not None:
            exception = event.exception()
            error = None
            if exception.isDefined():
                trace = str(exception.get())
                error = (trace.split("\n", 1)[0], trace)
            self.on_query(str(event.id()), str(event.runId()), None, error, False)

    def register(self, spark: Any) -> None:
        """Listen to the application of ``spark`` (a classic session) from now on."""
        events = (EXECUTION_END, EXECUTION_START, SESSION_CLOSED, QUERY_STARTED, QUERY_TERMINATED)
        proxy, _ = forwarder_proxy(spark, self, events)
        spark.sparkContext._jsc.sc().listenerBus().addToQueue(proxy, QUEUE)
        self._proxy = proxy

    def unregister(self, spark: Any) -> None:
        """Stop listening (the one :meth:`register` added)."""
        if self._proxy is not None:
            spark.sparkContext._jsc.sc().listenerBus().removeListener(self._proxy)

    class Java:
        implements: ClassVar[list[str]] = [
            "java.util.function.Consumer",
            "java.util.function.BiConsumer",
        ]


def _text(value: JavaObject) -> str | None:
    """A Java string that may be null, as Python text."""
    return None if value is None else str(value)


def forwarder_proxy(
    spark: Any, consumer: JvmCallback, event_names: Sequence[str], scheduler: JavaObject = None
) -> tuple[JavaObject, JavaObject]:
    """A ``SparkListenerInterface`` proxy handled by the package's Java class, which hands the
    events named (and, given Spark's DAGScheduler, the jobs run outside SQL executions) to
    ``consumer`` (a ``java.util.function.Consumer`` in Python); and that handler.
    """
    from pyspark import java_gateway  # noqa: PLC0415  (pyspark is optional)

    gateway = spark.sparkContext._gateway
    # Typed loosely on purpose: pyspark types the function in some versions, not others.
    start_callback_server: Any = java_gateway.ensure_callback_server_started
    start_callback_server(gateway)
    interface = java_class("java.lang.Class").forName(LISTENER_INTERFACE)
    spark_loader = interface.getClassLoader()

    def load() -> JavaObject:
        urls = gateway.new_array(java_class("java.net.URL"), 1)
        urls[0] = java_class("java.net.URL")(CLASSES.as_uri() + "/")
        return java_class("java.net.URLClassLoader")(urls, spark_loader).loadClass(FORWARDER)

    # One class per JVM: py4j keeps the methods it called by class name, so a second class of
    # the same name (another loader's) would be called with the first one's methods.
    forwarder_class = once_per_jvm(FORWARDER, load)
    names = gateway.new_array(java_class("java.lang.String"), len(event_names))
    for index, name in enumerate(event_names):
        names[index] = name
    arguments = gateway.new_array(java_class("java.lang.Object"), 3)
    # py4j turns a Python object into its JVM proxy in a call, not in an array's element:
    # one call that returns its argument makes the proxy a JVM reference first.
    arguments[0] = java_class("java.util.Objects").requireNonNull(consumer)
    arguments[1] = names
    arguments[2] = scheduler
    constructors = forwarder_class.getConstructors()
    constructor = next(c for c in constructors if c.getParameterCount() == 3)
    forwarder = constructor.newInstance(arguments)
    interfaces = gateway.new_array(java_class("java.lang.Class"), 1)
    interfaces[0] = interface
    proxy = java_class("java.lang.reflect.Proxy").newProxyInstance(
        spark_loader, interfaces, forwarder
    )
    return proxy, forwarder
