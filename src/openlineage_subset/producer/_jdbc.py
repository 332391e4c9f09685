"""A database table read or written through JDBC, named as the OpenLineage naming spec says.

:func:`jdbc_dataset` gives the ``(namespace, name)`` of a table from the JDBC URL of its database
(https://openlineage.io/docs/spec/naming, as openlineage-java's JDBC extractors apply it, so that
the names match those openlineage-spark gives the same tables). The namespace is the database
server; the name is the table's name as written (quotes removed), after the database the URL
names, where the database is part of the name:

=================================================  ================================  ==============
URL (after ``jdbc:``)                              namespace                         name
=================================================  ================================  ==============
``postgresql://h[:p][,h2..]/db``                   ``postgres://h:5432[,h2:5432]``   ``db.s.t``
``postgresql:db`` (the local server)               ``postgres://localhost:5432``     ``db.s.t``
``mysql[+srv][:kind]://h[:p]/db``                  ``mysql://h:3306``                ``db.t`` (1)
``sqlserver://h[\\inst][:p];databaseName=db``      ``sqlserver://h[:p][/inst]``      ``db.s.t``
``oracle:thin:[u/p]@[//]h[:p][/service|:sid]``     ``oracle://h:1521``               ``service.s.t``
``oracle:thin:@(DESCRIPTION=...)`` and ``@ldap:``  ``oracle://h:p[,h2:p2]``          ``service.s.t``
``teradata://h/DATABASE=db,DBS_PORT=p``            ``teradata://h:1025``             ``db.t``
``db2``, ``trino``, ``crate``, ``oceanbase``,      ``scheme://h:<default port>``     ``db.s.t``
``clickhouse`` (``ch``), ``cassandra``
``derby:[directory:]path`` (embedded)              ``file:/absolute/path``           ``s.t``
``derby:memory:db``                                ``derby:memory:db``               ``s.t``
``scheme://h[:p]/db`` (any other)                  ``scheme://h[:p]``                ``db.s.t``
anything else (``h2:mem:x``, ``sqlite:/f.db``)     the URL without its properties    ``s.t``
=================================================  ================================  ==============

(1) MySQL and ClickHouse have no schemas: a qualified name (``db.t``) is the whole name, and the
URL's database comes first only for a bare table name. Default ports are those openlineage-java
adds (db2 6789, trino 443, crate 5432, oceanbase 2881, clickhouse 8123, cassandra 9042). Host
names are lower-cased; database and table names keep their case. An embedded Derby database
named by a relative path lies under ``derby.system.home`` (else the working directory), as
Derby resolves it; one in memory has no file, so it keeps the namespace of the generic form
(openlineage-java names both ``<home>/metastore_db``, which is not the database used).

Credentials never reach a namespace or a name: user information (``user:password@``, Oracle's
``user/password@``), query strings and properties (``;password=...``) are dropped, and a host,
database or service that does not look like one (a password holding ``,``, ``/`` or ``@``, say)
makes the URL fall back to the generic form (:func:`jdbc_namespace`): cleaned by the rules of
:func:`~openlineage_subset.producer._secrets.user_info_end`, scrubbed, and cut before anything
left that may still be part of a credential.
"""

from __future__ import annotations

import posixpath
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from openlineage_subset.producer._secrets import MARKER, scrub_text, user_info_end

_JDBC_PREFIX = re.compile(r"^jdbc:", re.IGNORECASE)
_SUBPROTOCOLS = re.compile(r"(?:[A-Za-z][A-Za-z0-9+._-]*:)*")
_HOST = re.compile(r"(?:\[[0-9A-Fa-f:.]+\]|[A-Za-z0-9_~%-]+(?:\.[A-Za-z0-9_~%-]+)*)(?::\d+)?")
_BRACKETED_PORT = re.compile(r"(\[.*\]|[^:\]]+)(?::(\d*))?")
_DEFAULT_PORTS = {
    "postgres": "5432",
    "mysql": "3306",
    "oracle": "1521",
    "teradata": "1025",
    "db2": "6789",
    "trino": "443",
    "crate": "5432",
    "oceanbase": "2881",
    "clickhouse": "8123",
    "cassandra": "9042",
}
"""openlineage-java's default ports, added to a host that has none."""
_SCHEMES = {
    "postgresql": "postgres",
    "postgres": "postgres",
    "mysql": "mysql",
    "db2": "db2",
    "trino": "trino",
    "crate": "crate",
    "oceanbase": "oceanbase",
    "clickhouse": "clickhouse",
    "ch": "clickhouse",
    "cassandra": "cassandra",
}
"""The first sub-protocol of the URLs written ``scheme://hosts/database``, and their namespace's
scheme."""
_DATABASE_ONLY_FOR_BARE_NAMES = frozenset({"mysql", "clickhouse"})
_DERBY_DEFAULT_DATABASE = "metastore_db"
_TNS_HOST = re.compile(r"\(\s*HOST\s*=\s*([^()\s]+)\s*\)", re.IGNORECASE)
_TNS_PORT = re.compile(r"\(\s*PORT\s*=\s*(\d+)\s*\)", re.IGNORECASE)
_TNS_SERVICE = re.compile(
    r"\(\s*(SERVICE_NAME|SID|INSTANCE_NAME)\s*=\s*([^()\s]+)\s*\)", re.IGNORECASE
)
_QUOTES = {'"': '"', "`": "`", "[": "]"}
_DATABASE = re.compile(r"[^\s@=:;,/?#()]+")
"""What a database, service or SID name in a URL may hold: never what surrounds a credential."""
_GROUP = re.compile(r"\(([^()]*)\)")
_ADDRESS_KEYS = frozenset({"host", "port", "protocol"})
"""What a parenthesized host specification (MySQL's ``address=(host=h)(port=p)``) keeps."""
_KEY = re.compile(r"([A-Za-z_][\w.-]*)\s*=")
_ADDRESS_ITEM = re.compile(r"(?:[^,()]|\([^()]*\))+")
_ADDRESS = re.compile(
    r"(?:address=)?(?:\((?:host|port|protocol)=[\w.:%\[\]-]+"
    r"(?:,(?:host|port|protocol)=[\w.:%\[\]-]+)*\))+"
)


@dataclass(frozen=True)
class _TableHome:
    """Where a table lives: its namespace, and the database its name starts with (if any)."""

    namespace: str
    database: str | None = None
    database_only_for_bare_names: bool = False

    def name(self, parts: Sequence[str]) -> str:
        if self.database is None or (self.database_only_for_bare_names and len(parts) > 1):
            return ".".join(parts)
        return ".".join((self.database, *parts))


def jdbc_dataset(
    url: str,
    table: str | Sequence[str],
    *,
    properties: Mapping[str, str] | None = None,
    derby_home: str | None = None,
) -> tuple[str, str]:
    """The OpenLineage ``(namespace, name)`` of ``table`` in the database of a JDBC ``url``.

    ``table``: the name as the JDBC source was given it (``sales.orders``, ``"APP"."T1"``) or
    its parts. ``properties``: connection properties that name the database where the URL
    does not (SQL Server's ``databaseName``, ``serverName``, ``portNumber``, ``instanceName``).
    ``derby_home``: where an embedded Derby database's relative path starts.

    >>> jdbc_dataset("jdbc:postgresql://etl:hunter2@DB.example.com/sales?ssl=true", "public.t")
    ('postgres://db.example.com:5432', 'sales.public.t')
    >>> jdbc_dataset("jdbc:sqlserver://db:1433;databaseName=shop;password=x", '"dbo"."t"')
    ('sqlserver://db:1433', 'shop.dbo.t')
    >>> jdbc_dataset("jdbc:oracle:thin:scott/tiger@//db:1522/orcl", "hr.emp")
    ('oracle://db:1522', 'orcl.hr.emp')
    >>> jdbc_dataset("jdbc:derby:memory:lineage;create=true", "APP.T1")
    ('derby:memory:lineage', 'APP.T1')
    """
    parts = table_parts(table) if isinstance(table, str) else tuple(table)
    text = _JDBC_PREFIX.sub("", url)
    location = _location(text, {k.lower(): v for k, v in (properties or {}).items()}, derby_home)
    if location is None:
        return jdbc_namespace(url), ".".join(parts)
    return location.namespace, location.name(parts)


def table_parts(name: str) -> tuple[str, ...]:
    """A table's name split into its parts, each without its quotes (``"``, backticks or
    ``[...]``, a doubled quote inside standing for one).

    >>> table_parts('"APP"."My.Table"'), table_parts("[dbo].[t]"), table_parts(" s.t ")
    (('APP', 'My.Table'), ('dbo', 't'), ('s', 't'))
    """
    parts: list[str] = []
    index, text = 0, name.strip()
    while index <= len(text):
        opening = text[index : index + 1]
        if opening in _QUOTES:
            closing, part, index = _QUOTES[opening], [], index + 1
            while index < len(text):
                if text[index] == closing and text[index + 1 : index + 2] == closing:
                    part.append(closing)
                    index += 2
                elif text[index] == closing:
                    break
                else:
                    part.append(text[index])
                    index += 1
            else:
                return tuple(text.split("."))  # not closed: the name as written
            parts.append("".join(part))
            index += 1
            if index < len(text) and text[index] != ".":
                return tuple(text.split("."))
        else:
            end = text.find(".", index)
            end = len(text) if end < 0 else end
            parts.append(text[index:end])
            index = end
        index += 1
    return tuple(parts)


def jdbc_namespace(url: str) -> str:
    """The generic namespace of a JDBC database: its URL without ``jdbc:``, properties or
    credentials, for URLs no rule of :func:`jdbc_dataset` reads.

    User information after ``//`` ends where a location's does (see
    :func:`~openlineage_subset.producer._naming.clean_location`); before any ``//`` (Oracle's
    ``scott/tiger@host``) it runs from the sub-protocols to the last ``@`` before ``//`` or
    ``;`` (for Oracle, the last ``@``). What is left is cut before anything that may
    still be part of a credential (see :func:`_failing_closed`).

    >>> jdbc_namespace("jdbc:postgresql://bob:se/cret@db.example.com:5432/sales?password=x")
    'postgresql://db.example.com:5432/sales'
    >>> jdbc_namespace("jdbc:derby:memory:lineage;create=true;user=app")
    'derby:memory:lineage'
    >>> jdbc_namespace("jdbc:oracle:thin:scott/tiger@//db.example.com:1521/sales")
    'oracle:thin:@//db.example.com:1521/sales'
    """
    text = _JDBC_PREFIX.sub("", url)
    slashes = text.find("//")
    if text[:7].lower() == "oracle:":
        at = text.rfind("@")  # see _oracle: its user information ends at the last "@"
    else:
        at = text.rfind("@", 0, slashes if slashes >= 0 else _end_of(text, ";"))
    if at >= 0:
        subprotocols = _SUBPROTOCOLS.match(text)
        text = text[: subprotocols.end() if subprotocols else 0] + text[at:]
        slashes = text.find("//")
    if slashes >= 0:
        start = slashes + 2
        at = user_info_end(text[:slashes].rstrip(":").rpartition(":")[2], text[start:])
        text = text[:start] + text[start + at + 1 :]
    return _failing_closed(scrub_text(_address_keys_only(text[: _end_of(text, ";?")])))


def _failing_closed(text: str) -> str:
    """``text`` up to the first thing left that may be part of a credential: a secret
    ``scrub_text`` found, a ``key=value`` other than a host's, parentheses that do not pair."""
    cuts = [text.find(MARKER)]
    cuts += [m.start() for m in _KEY.finditer(text) if m[1].lower() not in _ADDRESS_KEYS]
    depth = 0
    for character in text:
        depth += {"(": 1, ")": -1}.get(character, 0)
        if depth < 0:
            break
    if depth != 0:
        cuts.append(text.find("("))
    found = [cut for cut in cuts if cut >= 0]
    return text[: min(found)].rstrip("(,") if found else text


def _address_keys_only(text: str) -> str:
    """``text`` with only the host, port and protocol of each parenthesized ``key=value``
    list (``(host=h,user=u)`` is ``(host=h)``; ``(password=p)`` goes whole)."""

    def kept(group: re.Match[str]) -> str:
        items = [
            item
            for item in group[1].split(",")
            if item.partition("=")[0].strip().lower() in _ADDRESS_KEYS
        ]
        return f"({','.join(items)})" if items else ""

    return _GROUP.sub(kept, text)


def _end_of(text: str, characters: str, start: int = 0) -> int:
    """The first position of one of ``characters`` in ``text`` from ``start``, else its end."""
    positions = [text.find(c, start) for c in characters]
    return min((p for p in positions if p >= 0), default=len(text))


def _location(text: str, properties: dict[str, str], derby_home: str | None) -> _TableHome | None:
    """The location of the database a URL (without ``jdbc:``) names; None when no rule reads
    it for sure."""
    first = text.partition(":")[0].lower()
    if first == "jtds" and text[5:].lower().startswith("sqlserver:"):
        return _sql_server(text[5:], properties)
    if first == "sqlserver":
        return _sql_server(text, properties)
    if first == "oracle":
        return _oracle(text)
    if first == "teradata":
        return _teradata(text)
    if first == "derby" and not text[6:].startswith("//"):
        return _derby(text[6:], derby_home)
    if first == "postgresql" and not text[11:].startswith("//"):
        return _postgres_local(text[11:])
    return _authority_location(first, text)


def _postgres_local(rest: str) -> _TableHome | None:
    """PgJDBC's short forms: "postgresql:db" and "postgresql:/" name the local server."""
    local = rest.split("?", 1)[0].lstrip("/")
    if local and not _DATABASE.fullmatch(local):
        return None
    return _TableHome("postgres://localhost:5432", local or None)


def _authority_location(first: str, text: str) -> _TableHome | None:
    """The location of a URL of the form ``scheme://hosts/database?...`` (``first`` its
    first part, lower case); None when it has another form or a host does not look like
    one."""
    scheme = _SCHEMES.get(re.split(r"[^a-z0-9]", first, maxsplit=1)[0])
    separator = text.find("://")
    if separator < 0 or not re.fullmatch(r"[A-Za-z][A-Za-z0-9+._:-]*", text[:separator]):
        return None
    if scheme is None and (":" in text[:separator] or "+" in text[:separator]):
        return None  # "mariadb:sequential://", say: no rule says which parts name what
    named = scheme or text[:separator].lower()
    rest = text[separator + 3 :]
    if named == "cassandra":
        rest = rest.replace("--", ",")
    hosts, database = _hosts_and_database(named, rest)
    if hosts is None:
        return None
    return _TableHome(
        f"{named}://{','.join(hosts)}",
        database,
        database_only_for_bare_names=named in _DATABASE_ONLY_FOR_BARE_NAMES,
    )


def _hosts_and_database(scheme: str, rest: str) -> tuple[list[str] | None, str | None]:
    """The hosts (with the scheme's default port where they have none) and the database of
    ``hosts/database?...``, after any user information; (None, None) when a host does not
    look like one."""
    if scheme == "mysql" and "(" in rest.partition("/")[0]:
        # MySQL's "address=(host=h)(port=p)" and "(host=h,port=p)" forms, kept as written.
        authority_end = _end_of(rest, "/?#;")
        hosts = _ADDRESS_ITEM.findall(_address_keys_only(rest[:authority_end].lower()))
        if not hosts or not all(_ADDRESS.fullmatch(item) for item in hosts):
            return None, None
    else:
        at = user_info_end(scheme, rest)
        authority_end = _end_of(rest, "/?#;", at + 1)
        hosts = []
        for written in rest[at + 1 : authority_end].split(","):
            host = written.rpartition("@")[2]  # MySQL allows user information per host
            if not _HOST.fullmatch(host):
                return None, None
            hosts.append(_with_port(host.lower(), _DEFAULT_PORTS.get(scheme)))
    database = None
    if rest[authority_end : authority_end + 1] == "/":
        segment = rest[authority_end + 1 : _end_of(rest, "/?#;", authority_end + 1)]
        if segment and not _DATABASE.fullmatch(segment):
            return None, None
        database = segment or None
    return hosts, database


def _with_port(host: str, default: str | None) -> str:
    match = _BRACKETED_PORT.fullmatch(host)
    if default is None or match is None or match[2]:
        return host
    return f"{match[1]}:{default}"


def _sql_server(text: str, properties: dict[str, str]) -> _TableHome | None:
    """``sqlserver://[host][\\instance][:port][;key=value...]``: the URL's parts first, then its
    properties, then the connection's (keys in any case)."""
    match = re.fullmatch(
        r"sqlserver://([^\\:;/]*)(?:\\([^:;/]*))?(?::(\d+))?(?:/([^;]*))?(;.*)?",
        text,
        re.IGNORECASE | re.DOTALL,
    )
    if match is None:
        return None
    found = dict(properties)
    for item in (match[5] or "").split(";"):
        key, equals, value = item.partition("=")
        if equals and value:
            found[key.strip().lower()] = value.strip().strip("{}")
    host = match[1] or found.get("servername")
    port = match[3] or found.get("portnumber") or found.get("port")
    instance = match[2] or found.get("instancename") or found.get("instance")
    database = found.get("databasename") or found.get("database") or match[4] or None
    if not host:
        return None
    if ":" in host and not host.startswith("["):
        host = f"[{host}]"  # an IPv6 address
    if not _HOST.fullmatch(host) or (port and not port.isdigit()):
        return None
    if (database and not _DATABASE.fullmatch(database)) or (
        instance and not _DATABASE.fullmatch(instance)
    ):
        return None
    namespace = f"sqlserver://{host.lower()}" + (f":{port}" if port else "")
    return _TableHome(namespace + (f"/{instance}" if instance else ""), database)


def _oracle(text: str) -> _TableHome | None:
    """Oracle's URLs: ``oracle:<driver>:[user/password]@`` then ``[//]host[:port][/service]``,
    ``host:port:sid``, a TNS descriptor ``(DESCRIPTION=...)`` or a directory ``ldap://...``."""
    # The user information ends at the last "@": a password may hold "@", "/", ";" or "(",
    # the address after it (a host, a TNS descriptor, a directory URL) holds no "@".
    at = text.rfind("@")
    if at < 0:
        return None
    rest = re.sub(r"^(?://)?(?:tcps?://)?", "", text[at + 1 :], flags=re.IGNORECASE)
    rest = rest.split("?", 1)[0]
    if rest.lstrip().startswith("("):
        addresses = [f"{host.lower()}:{port or '1521'}" for host, port in _tns_addresses(rest)]
        described = _TNS_SERVICE.search(rest)
        if not addresses or not all(_HOST.fullmatch(a) for a in addresses):
            return None
        if described and not _DATABASE.fullmatch(described[2]):
            return None
        return _TableHome(f"oracle://{','.join(addresses)}", described[2] if described else None)
    if rest.lower().startswith("ldap"):
        first = rest.split()[0]
        address = re.sub(r"^ldaps?:(?://)?", "", first, flags=re.IGNORECASE)
        segments = address.split("/")
        database = segments[-1].split(",")[0] if len(segments) > 1 else None
        rest = segments[0] + (f"/{database}" if database else "")
    service: str | None = None
    if "/" in rest:
        rest, _, service = rest.partition("/")
    else:
        head, colon, last = rest.rpartition(":")
        if colon and not last.isdigit() and "]" not in last:
            rest, service = head, last  # host:port:sid
    hosts, _ = _hosts_and_database("oracle", rest)
    if hosts is None or (service and not _DATABASE.fullmatch(service)):
        return None
    return _TableHome(f"oracle://{','.join(hosts)}", service or None)


def _tns_addresses(descriptor: str) -> list[tuple[str, str | None]]:
    """(host, port) of each ``ADDRESS`` of a TNS descriptor, in order."""
    found = []
    for block in re.split(r"\(\s*ADDRESS\s*=", descriptor, flags=re.IGNORECASE)[1:]:
        host, port = _TNS_HOST.search(block), _TNS_PORT.search(block)
        if host is not None:
            found.append((host[1], port[1] if port else None))
    return found


def _teradata(text: str) -> _TableHome | None:
    """``teradata://host[/KEY=value,...]``: ``DBS_PORT`` and ``DATABASE`` among the keys."""
    match = re.fullmatch(r"teradata://([^/]+)(?:/(.*))?", text, re.IGNORECASE | re.DOTALL)
    if match is None or not _HOST.fullmatch(match[1]):
        return None
    found = {}
    for item in (match[2] or "").split(","):
        key, equals, value = item.partition("=")
        if equals:
            found[key.strip().upper()] = value.strip()
    port = found.get("DBS_PORT") or _DEFAULT_PORTS["teradata"]
    host = _BRACKETED_PORT.fullmatch(match[1].lower())
    database = found.get("DATABASE") or None
    if host is None or not port.isdigit() or (database and not _DATABASE.fullmatch(database)):
        return None
    return _TableHome(f"teradata://{host[1]}:{port}", database)


def _derby(text: str, derby_home: str | None) -> _TableHome | None:
    """An embedded Derby database: ``[directory:]path`` or ``memory:name``, then
    ``;attribute=value`` (``databaseName`` names it too)."""
    subname, *attributes = text.split(";")
    named = [a.partition("=")[2] for a in attributes if a.partition("=")[0] == "databaseName"]
    kind, colon, path = subname.partition(":")
    if not colon or len(kind) == 1:  # no sub-subprotocol (a Windows drive is a path)
        kind, path = "directory", subname
    path = named[-1] if named else path
    if kind == "memory":
        return _TableHome(f"derby:memory:{path}") if path else None
    if kind != "directory":
        return None  # classpath: and jar: databases are read-only archives, no directory
    path = path or _DERBY_DEFAULT_DATABASE
    if not path.startswith("/"):
        if derby_home is None:
            return None
        path = derby_home.rstrip("/") + "/" + path
    return _TableHome("file:" + posixpath.normpath(path))
