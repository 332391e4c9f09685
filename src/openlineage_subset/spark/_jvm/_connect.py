"""Spark Connect as the JVM knows it: which client session a query ran in, and that session's
settings and end; the server's port, and stopping it.

A Spark Connect server runs each client session in a session of its own
(``SessionHolder.session``); the server's session manager knows the client's user and session
ids and when the session was last used. ``SparkConnectService`` is asked only in an application
configured with Connect's plugin (``spark.plugins``): a classic application pays one look at
its conf per session.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from openlineage_subset.spark._handles import QueryExecution
from openlineage_subset.spark._jvm._bridge import JavaObject, java_class

SERVICE = "org.apache.spark.sql.connect.service.SparkConnectService$"
MANAGER = "org.apache.spark.sql.connect.service.SparkConnectSessionManager"
SESSION_CLOSED = "org.apache.spark.sql.connect.service.SparkListenerConnectSessionClosed"
PLUGIN = "org.apache.spark.sql.connect.SparkConnectPlugin"
"""The Spark plugin that starts a Connect server with the application."""
TIMEOUT_CONF = "spark.connect.session.manager.defaultSessionTimeout"
DEFAULT_TIMEOUT = "60m"


@dataclass(frozen=True)
class ConnectSession:
    """A client's session as the server's session manager keeps it."""

    user_id: str
    session_id: str
    started_ms: int
    last_access_ms: int
    timeout_ms: int
    """How long the session may stay unused before the server closes it."""


def session_uuid(query_execution: QueryExecution) -> str:
    """The id of the server-side session a query ran in (one round trip)."""
    handle: Any = query_execution
    return str(handle.sparkSession().sessionUUID())


@dataclass(frozen=True)
class ConnectServer:
    """The Spark Connect server of an application, as capture asks it about sessions."""

    manager: JavaObject
    """Its ``SparkConnectSessionManager``."""
    timeout_ms: int
    """How long a session may stay unused before the server closes it, unless it says."""


def connect_service(spark: Any) -> ConnectServer | None:
    """The Spark Connect server running in the application of ``spark`` (a classic session);
    None when no server runs there. Raises for a Spark without Connect's classes (PySpark
    3.5).

    ``SparkConnectService`` cannot be asked through py4j's reflection (listing its methods
    loads gRPC classes the application's class loader lacks, a fatal error): its members are
    reached one by one through method handles.
    """
    conf = spark.sparkContext._jsc.sc().conf()
    if PLUGIN not in str(conf.get("spark.plugins", "")).split(","):
        return None
    manager = _service_member(spark, "sessionManager", _class(spark, MANAGER))
    return ConnectServer(manager, int(conf.getTimeAsMs(TIMEOUT_CONF, DEFAULT_TIMEOUT)))


def _class(spark: Any, name: str) -> JavaObject:
    loader = spark.sparkContext._jsc.sc().getClass().getClassLoader()
    return java_class("java.lang.Class").forName(name, False, loader)


def _service_member(
    spark: Any, name: str, returns: JavaObject, *parameters: tuple[JavaObject, Any]
) -> Any:
    """``SparkConnectService.<name>(...)``, through a method handle; ``parameters``: (declared
    class, value) of each argument."""
    gateway = spark.sparkContext._gateway
    service = _class(spark, SERVICE)
    types = gateway.new_array(java_class("java.lang.Class"), len(parameters))
    values = gateway.new_array(java_class("java.lang.Object"), 1 + len(parameters))
    values[0] = service.getField("MODULE$").get(None)
    for index, (declared, value) in enumerate(parameters):
        types[index] = declared
        values[index + 1] = value
    signature = java_class("java.lang.invoke.MethodType").methodType(returns, types)
    lookup = java_class("java.lang.invoke.MethodHandles").publicLookup()
    return lookup.findVirtual(service, name, signature).invokeWithArguments(values)


def find_session(server: ConnectServer, server_session_id: str) -> ConnectSession | None:
    """The client session whose server-side session is ``server_session_id``, open or closed
    lately; None for a session of the server's own (not a client's)."""
    manager = server.manager
    for listing in (manager.listActiveSessions(), manager.listClosedSessions()):
        for index in range(listing.size()):
            info = listing.apply(index)
            if str(info.serverSessionId()) == server_session_id:
                return _session(info, server.timeout_ms)
    return None


def closed_session(server: ConnectServer, user_id: str, session_id: str) -> ConnectSession | None:
    """A session the server closed, as its session manager remembers it."""
    listing = server.manager.listClosedSessions()
    for index in range(listing.size()):
        info = listing.apply(index)
        if str(info.userId()) == user_id and str(info.sessionId()) == session_id:
            return _session(info, server.timeout_ms)
    return None


def _session(info: JavaObject, default_timeout_ms: int) -> ConnectSession:
    custom = info.customInactiveTimeoutMs()
    return ConnectSession(
        user_id=str(info.userId()),
        session_id=str(info.sessionId()),
        started_ms=int(info.startTimeMs()),
        last_access_ms=int(info.lastAccessTimeMs()),
        timeout_ms=int(custom.get()) if custom.isDefined() else default_timeout_ms,
    )


def session_conf(query_execution: QueryExecution, prefix: str) -> dict[str, str]:
    """The runtime conf of the session a query ran in whose keys start with ``prefix``, and
    ``spark.app.name``: what a client set on its session (``spark.conf.set``)."""
    handle: Any = query_execution
    entries = handle.sparkSession().conf().getAll()
    found = {}
    iterator = entries.iterator()
    while iterator.hasNext():
        entry = iterator.next()
        key = str(entry._1())
        if key.startswith(prefix) or key == "spark.app.name":
            found[key] = str(entry._2())
    return found


def stop_connect_server(spark: Any) -> None:
    """Stop the Connect server of the application of ``spark``: no new session or operation
    is taken (those running are let finish)."""
    if connect_service(spark) is None:
        return
    none = _class(spark, "scala.None$").getField("MODULE$").get(None)
    option = _class(spark, "scala.Option")
    _service_member(
        spark, "stop", java_class("java.lang.Void").TYPE, (option, none), (option, none)
    )


def connect_server_port(spark: Any) -> int | None:
    """The port the Connect server of the application of ``spark`` listens on; None when none
    runs."""
    if connect_service(spark) is None:
        return None
    return int(_service_member(spark, "localPort", java_class("java.lang.Integer").TYPE))
