"""Secrets never leave: one set of credential rules for locations and for free text.

Names and locations are cleaned by ``_naming`` (user information, query strings and fragments
removed). Free text the adapter emits (exception messages, stack traces, quarantine reasons)
may quote a location or a connection string with its credentials: :func:`scrub_text` replaces
each secret it recognises with :data:`MARKER` and keeps the rest readable. Both use
:func:`user_info_end` to tell where the user information of ``scheme://...`` ends. The package
logs only through :func:`scrubbed_logger`, whose records are scrubbed before any handler sees
them.

Every rule is a left-to-right scan or a regular expression without nested or overlapping
repetition, and a line is searched for a missing closing quote at most once per kind of quote,
so scrubbing takes time linear in the text, however hostile.
"""

from __future__ import annotations

import bisect
import logging
import re
from collections.abc import Callable

MARKER = "***"
"""What a secret is replaced with."""

OBJECT_STORE_SCHEMES = frozenset({"s3", "s3a", "s3n", "gs", "abfs", "abfss", "wasb", "wasbs"})
"""Schemes whose authority is a bucket or an Azure container, names that cannot hold ``:``."""
AZURE_SCHEMES = frozenset({"abfs", "abfss", "wasb", "wasbs"})
"""Schemes whose user information without ``:`` is the container, not a credential."""

_SCHEME_CHARACTERS = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789+.-")
_LONGEST_SCHEME = 32
# Where a quoted location or connection string ends in free text.
_TOKEN_END = re.compile(r"[\s\"'<>`]")
_AT = re.compile("@")
_JDBC = re.compile(r"jdbc:", re.IGNORECASE)
# The sub-protocols of a JDBC URL (``oracle:thin:``): no "/" or "@", each one ends with ":".
_JDBC_SUBPROTOCOLS = re.compile(r"(?:[A-Za-z][A-Za-z0-9+._-]*:)*")
# Where its user information may end: before "//" (the host of Oracle's "user/pass@//host") or
# ";" (properties).
_JDBC_HEAD_END = re.compile(r"//|;")
_ACCESS_KEY_ID = re.compile(r"(?:AKIA|ASIA)[A-Z0-9]{16}")
# A parameter: a name, where a name starts, then what assigns it: "name=", "name = " or Scala's
# "name -> "; or a quoted name and ":" (a Python dict's repr, JSON, JSON inside a JSON string).
_NAME = r"[A-Za-z0-9_.\-]+"
_PARAMETER = re.compile(
    rf"(?<![A-Za-z0-9_.\-])(?P<name>{_NAME})(?P<assign>=|[ \t]+=[ \t]*|\s->\s)"
    rf"|(?P<quote>\\?[\"'])(?P<key>{_NAME})(?P=quote)[ \t]*:[ \t]*"
)
# Where a value without quotes ends, by what assigned it.
_VALUE_END = {
    "=": re.compile(r"[&;\s\"'<>`]"),
    "->": re.compile(r"[,)\s]"),
    ":": re.compile(r"[,}\]\s]"),
}
# Punctuation after a value assigned by "=": Java's "{password=x, user=y}", "(password=x)".
_TRAILING_PUNCTUATION = ",)]}"
# Where a quoted value ends, by how it opens: at its closing quote on the same line, a quote
# escaped with a backslash being part of it; at "]" for a list. Inside a string quoted once more
# (JSON in a JSON string: \"...\") it ends at a backslash and the quote, and its own escapes are
# written twice: \\\" a quote, \\\\ a backslash. At each character one alternative at most
# matches, so a search backtracks in linear time.
_B = r"\\"  # one backslash, in a regular expression
_QUOTED_VALUE = {
    "'": re.compile(rf"(?:[^'{_B}\n]|{_B}.)*'"),
    '"': re.compile(rf'(?:[^"{_B}\n]|{_B}.)*"'),
    **{
        "\\" + q: re.compile(
            rf"(?:[^{_B}\n]|{_B * 4}|{_B * 3}{q}|{_B * 2}[^{_B}{q}\n]|{_B}[^{_B}{q}\n])*{_B}{q}"
        )
        for q in "'\""
    },
    "[": re.compile(r"[^\]\n]*\]"),
}
# Names holding a secret, compared without the "_", "-" and "." between their parts
# ("api_key", "api-key", "x-api-key", "fs.s3a.access.key", "private-key").
_SECRET_NAME_PARTS = (
    "token",
    "secret",
    "password",
    "passwd",
    "credential",
    "signature",
    "authorization",
    "apikey",
    "accesskey",
    "accountkey",
    "privatekey",
)
_NAME_SEPARATORS = str.maketrans("", "", "_-.")
_SECRET_NAMES = frozenset({"pwd"})
# Secrets (or parts of a SAS) by a short name: only as a parameter of a query string, fragment or
# property list, where such names mean that; elsewhere "key=" or "code=" is ordinary text.
_PARAMETER_SECRET_NAMES = frozenset(
    {"sig", "code", "key", "sv", "se", "sp", "st", "sr", "spr", "skoid", "sktid", "skt", "ske"}
)
_PARAMETER_STARTS = frozenset("?&#;")


def user_info_end(scheme: str, rest: str) -> int:
    """Where the user information of ``scheme://rest`` ends: the index of its ``@``, or -1.

    The rules, from what Hadoop does with such a location (it may not parse it at all), failing
    closed where the location is ambiguous:

    1. Hadoop reads the authority up to the first ``/``. If that holds an ``@``, the user
       information ends at its last one: a ``?`` or ``#`` before it is part of the secret.
    2. Otherwise a ``/`` came first: the authority a URI reads (up to the first ``/``, ``?`` or
       ``#``) may be what is left of ``key:secret`` whose unencoded secret holds a ``/``, ``?``
       or ``#`` (Hadoop then takes the key for the host, or finds no host). When it cannot be
       a host, the user information runs past the first ``@`` after it, to the last ``@``
       before the next ``/``. It cannot be a host when it holds a ``:`` on an object store
       (bucket and container names cannot), or elsewhere a ``:`` not followed by a port
       number, or more than one ``:`` outside an IPv6 address's brackets.

    >>> rest = "AKIAIOSFODNN7EXAMPLE:wJalr/XUtnFEMI@bucket/key"
    >>> rest[user_info_end("s3a", rest) + 1 :]
    'bucket/key'
    >>> user_info_end("hdfs", "namenode:8020/user/alice@EXAMPLE.COM")
    -1
    """
    return _user_info_end(scheme.lower(), rest, 0, len(rest), lambda a, b: rest.find("@", a, b))


def _user_info_end(
    scheme: str, text: str, start: int, end: int, first_at: Callable[[int, int], int]
) -> int:
    """:func:`user_info_end` on ``text[start:end]``, returning an index into ``text``.

    Everything scanned here lies before the first ``/`` (or ``end``), so scanning each
    ``://`` of a text in turn stays linear; ``first_at(a, b)`` finds the first ``@`` in
    ``text[a:b]`` without rescanning.
    """
    slash = text.find("/", start, end)
    if slash < 0:
        slash = end
    at = text.rfind("@", start, slash)
    if at >= 0:
        return at
    host_end = min(
        (i for i in (text.find("?", start, slash), text.find("#", start, slash)) if i >= 0),
        default=slash,
    )
    if not _cannot_be_host(scheme, text[start:host_end]):
        return -1
    at = first_at(host_end, end)
    if at < 0:
        return -1
    # Then, as in rule 1, the last "@" before the next "/".
    slash = text.find("/", at, end)
    return text.rfind("@", at, slash if slash >= 0 else end)


def _cannot_be_host(scheme: str, authority: str) -> bool:
    if ":" not in authority:
        return False
    if scheme in OBJECT_STORE_SCHEMES:
        return True
    if authority.startswith("["):  # an IPv6 address, then maybe ":port"
        after = authority[authority.find("]") + 1 :] if "]" in authority else "?"
        if not after:
            return False
        port = after[1:] if after.startswith(":") else "?"
    else:
        host, _, port = authority.rpartition(":")
        if ":" in host:  # "key:secret:1": a host holds one ":" at most, before its port
            return True
    return not (port.isascii() and port.isdigit())


def scrub_text(text: str) -> str:
    """``text`` with every credential it quotes replaced by ``***``: for messages, stack traces
    and quarantine reasons, which must not carry what names and locations never do.

    Rules, applied in this order:

    - the value of a parameter whose name says it holds a secret, written ``name=value``,
      ``name = value``, Scala's ``name -> value``, or with the name quoted and a colon, as a
      Python dict's repr and JSON print it (``'name': value``, ``"name": value``, and
      ``\\"name\\": value`` inside a JSON string). A quoted value (``'...'``, ``"..."``,
      ``\\'...\\'``, ``\\"...\\"``; after a colon also a list ``[...]``) ends at its closing quote
      on the same line, an escaped quote being part of it; one not closed on its line is taken
      as a value without quotes, which ends at ``&``, ``;``, a space or a quote after ``=``
      (its trailing ``,``, ``)``, ``]`` and ``}`` are punctuation, as in Java's
      ``{password=x, user=y}``), at ``,`` or ``)`` after ``->``, at ``,``, ``}``, ``]`` or a
      space after a colon. An object after a colon stays: its own names are looked at. A name
      is a secret's when, in any case and without the ``_``, ``-`` and ``.`` between its parts,
      it contains ``token``, ``secret``, ``password``, ``passwd``, ``credential``,
      ``signature``, ``authorization``, ``apikey``, ``accesskey``, ``accountkey`` or
      ``privatekey``, or is ``pwd`` (``X-Amz-Signature``, ``X-Amz-Security-Token``,
      ``access_token``, ``fs.s3a.secret.key``, ``private-key``, ``x-api-key``); after ``?``,
      ``&``, ``#`` or ``;`` (a query string, a fragment, JDBC properties) also ``sig``,
      ``code``, ``key`` and the other fields of an Azure SAS (``sv``, ``se``, ``sp``, ``st``,
      ``sr``, ``spr``, ``skoid``, ``sktid``, ``skt``, ``ske``), which elsewhere are ordinary
      words;
    - the user information of ``scheme://...`` for any scheme (``s3a``, ``gs``, ``abfss``,
      ``https``, ``jdbc:postgresql``, ``mongodb+srv``...), which ends where
      :func:`user_info_end` says, the rule the name cleaner uses, so that a secret holding an
      unencoded ``/``, ``?`` or ``#`` goes whole; the ``container@`` of an Azure location is
      not a credential and stays;
    - the user information of a JDBC URL that comes before any ``//`` (Oracle's
      ``jdbc:oracle:thin:scott/tiger@host:1521:orcl``): from the sub-protocols to the last
      ``@`` before ``//`` or ``;``, as :func:`~openlineage_subset.producer._jdbc.jdbc_namespace`
      removes it;
    - AWS access key ids on their own: ``AKIA`` or ``ASIA`` and 16 capitals or digits.

    It is idempotent: scrubbing scrubbed text changes nothing.

    Limits: a secret is found by its place or its name, not by its look (beyond access key
    ids): a password in prose, a bare secret key, a name without quotes before a colon (YAML,
    an HTTP header: ``Authorization: Bearer ...``) are kept. On a scheme other than the object
    stores, an unencoded secret made of digits then a ``/`` (``hdfs://etl:123/x@host``) reads as
    ``host:port/path`` and is kept. A quoted location ends at a space or a quote. A value
    without quotes that holds a space keeps what follows the space; one that ends with ``,``,
    ``)``, ``]`` or ``}`` after ``=`` keeps those.

    >>> scrub_text("Path does not exist: s3a://AKIAIOSFODNN7EXAMPLE:wJalr/XUtnFEMI@bucket/x")
    'Path does not exist: s3a://***@bucket/x'
    >>> scrub_text("GET https://host/f.csv?sv=2022-11-02&sig=Z%2FRH&x=1 failed")
    'GET https://host/f.csv?sv=***&sig=***&x=1 failed'
    >>> scrub_text("jdbc:postgresql://db:5432/sales;user=etl;password=hunter2")
    'jdbc:postgresql://db:5432/sales;user=etl;password=***'
    >>> scrub_text("key AKIAIOSFODNN7EXAMPLE, container abfss://c@account.dfs.core.windows.net/x")
    'key ***, container abfss://c@account.dfs.core.windows.net/x'
    >>> scrub_text("{'password': 'hunter 2', 'user': 'etl'} {private-key=MIIEv, port=5432}")
    "{'password': '***', 'user': 'etl'} {private-key=***, port=5432}"
    """
    if not isinstance(text, str):
        raise TypeError(f"scrub_text() takes a string, got {type(text).__name__}")
    text = _scrub_parameters(text)
    text = _scrub_uri_user_info(text)
    text = _scrub_jdbc_user_info(text)
    return _ACCESS_KEY_ID.sub(MARKER, text)


def is_secret_name(name: str) -> bool:
    """Whether ``name`` (of a parameter, a setting, a variable) says it holds a secret, as
    :func:`scrub_text` reads names, short names aside.

    >>> is_secret_name("OPENLINEAGE__TRANSPORT__AUTH__API_KEY"), is_secret_name("key")
    (True, False)
    """
    lowered = name.lower()
    joined = lowered.translate(_NAME_SEPARATORS)
    return lowered in _SECRET_NAMES or any(part in joined for part in _SECRET_NAME_PARTS)


def _is_secret_parameter(name: str, preceding: str) -> bool:
    if is_secret_name(name):
        return True
    return name.lower() in _PARAMETER_SECRET_NAMES and preceding in _PARAMETER_STARTS


class _QuotedValues:
    """Finds where quoted values end, each line searched at most once per kind of quote that
    is left open on it: scrubbing stays linear however many unclosed quotes a line holds."""

    def __init__(self, text: str) -> None:
        self._text = text
        self._open_until: dict[str, int] = {}  # kind: the end of a line where it is not closed

    def end(self, kind: str, start: int) -> int:
        """Where the value opened by ``kind`` before ``start`` ends (its closing quote, or
        ``]``), or -1 when it is not closed on its line."""
        if start < self._open_until.get(kind, -1):
            return -1
        closed = _QUOTED_VALUE[kind].match(self._text, start)
        if closed:
            return closed.end() - len(kind.replace("[", "]"))
        line_end = self._text.find("\n", start)
        self._open_until[kind] = line_end if line_end >= 0 else len(self._text)
        return -1


def _value_end(text: str, start: int, assign: str, quoted: _QuotedValues) -> tuple[int, int]:
    """Where the value assigned at ``start`` begins and ends: inside its quotes, or up to the
    end ``assign`` gives a value without quotes."""
    kind = next((q for q in ("\\'", '\\"', "'", '"', "[") if text.startswith(q, start)), "")
    if kind == "[" and assign != ":":
        kind = ""
    if kind:
        end = quoted.end(kind, start + len(kind))
        if end >= 0:
            return start + len(kind), end
        start += len(kind)  # not closed on its line: a value without quotes, after the quote
    elif assign == ":" and text.startswith("{", start):
        return start, start  # an object: its own names say which of its values are secrets
    found = _VALUE_END[assign].search(text, start)
    end = found.start() if found else len(text)
    if assign == "=":
        while end > start and text[end - 1] in _TRAILING_PUNCTUATION:
            end -= 1
    return start, end


def _scrub_parameters(text: str) -> str:
    quoted = _QuotedValues(text)
    pieces = []
    done = 0
    for match in _PARAMETER.finditer(text):
        if match.start() < done:
            continue  # inside a value already replaced
        if match.group("key") is not None:
            name, preceding, assign = match.group("key"), "", ":"
        else:
            name, assign = match.group("name"), match.group("assign").strip()
            preceding = text[match.start() - 1] if match.start() else ""
        if not _is_secret_parameter(name, preceding):
            continue
        start, end = _value_end(text, match.end(), assign, quoted)
        if end > start:
            pieces += [text[done:start], MARKER]
            done = end
    return "".join([*pieces, text[done:]])


class _Positions:
    """The positions of one pattern's matches in a text, to find the next one in O(log n)."""

    def __init__(self, pattern: re.Pattern[str], text: str) -> None:
        self._starts = [match.start() for match in pattern.finditer(text)]
        self._length = len(text)

    def first(self, start: int, end: int | None = None) -> int:
        """The first match in ``[start, end)``: its position, or -1 (``end`` defaults to the
        end of the text, and then a miss gives the text's length)."""
        index = bisect.bisect_left(self._starts, start)
        found = self._starts[index] if index < len(self._starts) else self._length
        if end is None:
            return found
        return found if found < end else -1


def _scheme_before(text: str, colon: int) -> str:
    start = colon
    while start > max(0, colon - _LONGEST_SCHEME) and text[start - 1] in _SCHEME_CHARACTERS:
        start -= 1
    return text[start:colon].lower()


def _scrub_uri_user_info(text: str) -> str:
    token_ends, ats = _Positions(_TOKEN_END, text), _Positions(_AT, text)
    pieces = []
    done = 0
    separator = text.find("://")
    while separator >= 0:
        start = separator + 3
        if separator >= done:  # else the "://" is part of user information already replaced
            scheme = _scheme_before(text, separator)
            at = _user_info_end(scheme, text, start, token_ends.first(start), ats.first)
            user_info = text[start:at] if at >= 0 else ""
            if user_info and not (scheme in AZURE_SCHEMES and ":" not in user_info):
                pieces += [text[done:start], MARKER]
                done = at
        separator = text.find("://", start)
    return "".join([*pieces, text[done:]])


def _scrub_jdbc_user_info(text: str) -> str:
    token_ends = _Positions(_TOKEN_END, text)
    pieces = []
    done = scanned = 0
    for match in _JDBC.finditer(text):
        if match.start() < scanned:
            continue  # looked at with an earlier "jdbc:" of the same URL
        subprotocols = _JDBC_SUBPROTOCOLS.match(text, match.end())
        start = subprotocols.end() if subprotocols else match.end()
        scanned = start
        if text.startswith("//", start):
            continue  # a URL with an authority: its user information is a URI's
        end = token_ends.first(start)
        head_end = _JDBC_HEAD_END.search(text, start, end)
        scanned = head_end.start() if head_end else end
        at = text.rfind("@", start, scanned)
        if at > start:
            pieces += [text[done:start], MARKER]
            done = at
    return "".join([*pieces, text[done:]])


class ScrubbingFilter(logging.Filter):
    """Scrubs a log record of credentials, in place, before any handler sees it: its message
    (formatted with its arguments), its exception's traceback and its stack.

    The exception itself is dropped from the record (its scrubbed text stays in ``exc_text``,
    which ``logging.Formatter`` prints): a handler formatting it anew would print it unscrubbed.
    """

    def filter(self, record: logging.LogRecord) -> bool:
        record.msg, record.args = scrub_text(record.getMessage()), None
        if record.exc_info and not record.exc_text:
            record.exc_text = _TRACEBACKS.formatException(record.exc_info)
        record.exc_info = None
        if record.exc_text:
            record.exc_text = scrub_text(record.exc_text)
        if record.stack_info:
            record.stack_info = scrub_text(record.stack_info)
        return True


_TRACEBACKS = logging.Formatter()
_FILTER = ScrubbingFilter()


def scrubbed_logger(name: str) -> logging.Logger:
    """The logger ``name``, its records scrubbed of credentials (:class:`ScrubbingFilter`):
    the only way this package gets a logger.

    >>> log = scrubbed_logger("openlineage_subset.example")
    >>> any(isinstance(f, ScrubbingFilter) for f in log.filters)
    True
    """
    logger = logging.getLogger(name)
    if _FILTER not in logger.filters:
        logger.addFilter(_FILTER)
    return logger


def scrub_logs_under(prefix: str) -> None:
    """Scrub the records of every logger that exists now named ``prefix`` or under it: for a
    library this package drives (openlineage-python logs the whole ``OPENLINEAGE_URL``, its
    credentials included, when it reads its configuration). Loggers made later are not
    covered: call it after importing the library's modules.
    """
    names = [
        name
        for name in list(logging.root.manager.loggerDict)
        if name == prefix or name.startswith(prefix + ".")
    ]
    for name in [prefix, *names]:
        scrubbed_logger(name)
