"""The service's ASGI application: the OpenLineage endpoint and the JSON queries.

- ``POST /api/v1/lineage``: one OpenLineage event, as Marquez takes it (so openlineage-python's
  ``HttpTransport`` with ``url=http://HOST:PORT`` sends to it unchanged), plain or
  ``Content-Encoding: gzip``; 201 once stored (committed), 200 when it was stored before or is
  a DatasetEvent or JobEvent (not kept), 400 for an invalid event (``error``: what ingest
  says of it; ``issues``: every issue the validation finds), 413 for a
  body (or its decompressed content) over the limit, 503 when the database refused the write;
- ``GET /api/v1/impact|provenance|history|partitions|datasets|runs``: the same JSON as
  ``ol-subset lineage QUERY --format json``, the query parameters named as its options
  (``partition`` repeated); 400 with a message for an argument it cannot answer.

An error nothing above expects (a fault of this code, or of the disk) is logged with its
traceback once, and answered 500 with a JSON ``error``, as every other answer of the API.

With an API key, every request needs ``Authorization: Bearer KEY`` (401 without); the web UI
(:mod:`._ui`, at ``/``) also takes the cookie its ``/login`` form sets.
"""

from __future__ import annotations

import functools
import hmac
import json
import os
import zlib
from collections.abc import Awaitable, Callable
from typing import Any, TypeVar

from starlette.applications import Starlette
from starlette.concurrency import run_in_threadpool
from starlette.middleware.gzip import GZipMiddleware
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route
from starlette.types import ASGIApp, Receive, Scope, Send

from openlineage_subset import (
    OpenLineageSubsetError,
    input_start,
    is_blank,
    printable,
    printable_json,
)
from openlineage_subset.lineage import (
    AlreadyStored,
    AnswerTooLarge,
    HistoryQuery,
    ImpactQuery,
    Invalid,
    Lineage,
    LineageDatabaseError,
    LineageQueryError,
    PartitionsQuery,
    ProvenanceQuery,
    RunsQuery,
    Skipped,
    Stored,
    Unreadable,
)
from openlineage_subset.producer import scrubbed_logger
from openlineage_subset.service._paging import (
    Query,
    checked_limit,
    cursor_key,
    fingerprint,
    impact_page,
    provenance_page,
)
from openlineage_subset.service._sink import EventSink, NotStored, Posted
from openlineage_subset.service._ui import UI_ROUTES, Served, UiGate, database_unavailable, served

_LOG = scrubbed_logger(__name__)
_LINEAGE = "/api/v1/lineage"
_SOURCE = "POST " + _LINEAGE
_JSON_HEADERS = b"content-type", b"application/json"


_Query = TypeVar("_Query")


_UNREAD = (413, 415)
"""Refusals answered before the body was read whole: the connection is closed after them, or
the client would hold it for as long as it sends the rest."""


class TooLarge(OpenLineageSubsetError):
    pass


def make_app(
    db: str | os.PathLike[str],
    sink: EventSink,
    *,
    api_key: str | None = None,
    max_body: int,
    max_whole: int | None = None,
) -> ASGIApp:
    """The application over the database ``db``: events go to ``sink`` (which writes ``db``),
    queries read ``db`` with connections of their own. ``max_body``: the most bytes a request's
    body may have, and its content once decompressed. ``max_whole``: the most reads, writes or
    partitions of a dataset the impact, provenance, history or partitions of the whole of it
    may start from (more: 422, see :func:`~openlineage_subset.lineage.queries.check_whole`;
    None: any), and the most times any of their answers may load a read or write of a run as
    it is worked out (more: 422 as well, see :class:`~openlineage_subset.lineage.Lineage`)."""

    def query(
        allowed: tuple[str, ...],
        make: Callable[[_Arguments], _Query],
        ask: Callable[[Lineage, _Query], Any],
    ) -> Callable[[Request], Any]:
        def answered(path: str, arguments: _Arguments, most: int | None) -> Any:
            asked = make(arguments)  # checked before the database is opened
            with Lineage(path, most_accesses=most) as lineage:
                question = asked.question if isinstance(asked, _Paged) else asked
                if most is not None and isinstance(question, _WHOLE):
                    lineage.check_whole(question, most)  # before it is worked out
                found = ask(lineage, asked)
                # made JSON here, in the thread: a large answer does not hold up the loop
                return found if isinstance(found, dict) else found.as_json()

        @_json_on_failure
        async def answer(request: Request) -> Response:
            try:
                arguments = _Arguments(request, allowed)
                serving = served(request)
                report = await run_in_threadpool(
                    answered, serving.database, arguments, serving.max_whole
                )
            except AnswerTooLarge as error:
                return _error(422, str(error))
            except LineageQueryError as error:
                return _error(400, str(error))
            except LineageDatabaseError as error:
                return _error(503, str(error))
            return _JsonAnswer(report)

        return answer

    dataset = ("dataset", "namespace")
    routes = [
        Route(
            "/api/v1/impact",
            query(
                (*dataset, "partition", "since", "depth", "location", *_PAGE),
                lambda a: _Paged(
                    a,
                    "impact",
                    ImpactQuery.from_text(
                        a.dataset(),
                        a.partitions(),
                        since=a.one("since"),
                        depth=a.one("depth"),
                        namespace=a.one("namespace"),
                        option="partition",
                        location=a.one("location"),
                    ),
                ),
                lambda lineage, asked: asked.impact(lineage),
            ),
        ),
        Route(
            "/api/v1/provenance",
            query(
                (*dataset, "partition", "depth", *_PAGE),
                lambda a: _Paged(
                    a,
                    "provenance",
                    ProvenanceQuery.from_text(
                        a.dataset(),
                        a.partitions(),
                        depth=a.one("depth"),
                        namespace=a.one("namespace"),
                        option="partition",
                    ),
                ),
                lambda lineage, asked: asked.provenance(lineage),
            ),
        ),
        Route(
            "/api/v1/history",
            query(
                (*dataset, "partition"),
                lambda a: HistoryQuery.from_text(
                    a.dataset(), a.partitions(), namespace=a.one("namespace"), option="partition"
                ),
                lambda lineage, asked: lineage.history(asked),
            ),
        ),
        Route(
            "/api/v1/partitions",
            query(
                dataset,
                lambda a: PartitionsQuery(a.dataset(), a.one("namespace")),
                lambda lineage, asked: lineage.partitions(asked),
            ),
        ),
        Route(
            "/api/v1/datasets",
            query((), lambda a: None, lambda lineage, _: lineage.datasets()),
        ),
        Route(
            "/api/v1/runs",
            query(
                ("job", "limit"),
                lambda a: RunsQuery.from_text(a.one("job"), a.one("limit")),
                lambda lineage, asked: lineage.runs(asked),
            ),
        ),
        *UI_ROUTES,  # the web UI: docs/serve.md#the-web-ui
    ]
    # POST /api/v1/lineage is answered before Starlette's routing (_EventEndpoint); any other
    # method on it goes on to the router, which answers 405.
    routes.append(Route(_LINEAGE, _not_allowed, methods=["POST"]))
    # The JSON queries answer a database they cannot read themselves (503 and JSON): what
    # reaches this handler is a page's.
    routed = Starlette(
        routes=routes, exception_handlers={LineageDatabaseError: database_unavailable}
    )
    routed.state.served = Served(os.fspath(db), api_key, max_whole)
    app: ASGIApp = _EventEndpoint(_GzipReads(routed), sink, max_body)
    if api_key is not None:
        app = UiGate(app, _KeyCheck(app, api_key), api_key)
    return app


class _GzipReads:
    """Answers to GET and HEAD compressed for a client that accepts gzip: a dataset's page
    of years of partitions is megabytes of HTML, mostly alike. The answers to posted events
    (a few bytes each, the hot path) are answered before it (``_EventEndpoint``)."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app
        self.zipped = GZipMiddleware(app, minimum_size=1024, compresslevel=6)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http" and scope["method"] in ("GET", "HEAD"):
            await self.zipped(scope, receive, send)
        else:
            await self.app(scope, receive, send)


class _EventEndpoint:
    """``POST /api/v1/lineage`` answered by itself, everything else by ``app``.

    The endpoint every producer's event goes through: read straight from the ASGI messages and
    answered with the JSON bytes, without the router, a ``Request`` and a ``JSONResponse`` (a
    quarter of the CPU uvicorn's thread spent per event). The answers are the ones they gave:
    the same statuses, JSON and headers.
    """

    def __init__(self, app: ASGIApp, sink: EventSink, max_body: int) -> None:
        self.app = app
        self.sink = sink
        self.max_body = max_body

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or scope["path"] != _LINEAGE or scope["method"] != "POST":
            await self.app(scope, receive, send)
            return
        try:
            answered = await self._answer(scope, receive)
        except Exception as error:
            _LOG.exception("%s failed unexpectedly", _SOURCE)
            answered = (
                500,
                {
                    "error": f"{_SOURCE} failed unexpectedly ({type(error).__name__}: "
                    f"{error}); the server's log has the details"
                },
            )
        if answered is None:
            return  # the client went away before its body arrived: nobody to answer
        status, answer = answered
        content = _json_bytes(answer)
        headers = [(b"content-length", str(len(content)).encode()), _JSON_HEADERS]
        if status in _UNREAD:
            headers.append((b"connection", b"close"))
        await send({"type": "http.response.start", "status": status, "headers": headers})
        await send({"type": "http.response.body", "body": content})

    async def _answer(self, scope: Scope, receive: Receive) -> tuple[int, dict[str, Any]] | None:
        encoding, declared = _body_headers(scope)
        if encoding not in ("identity", "gzip"):
            return 415, {"error": f"Content-Encoding {encoding!r} is not read; send gzip or none"}
        limit = self.max_body
        try:
            if declared is not None and declared.isdigit() and int(declared) > limit:
                raise TooLarge(f"the body has {declared} bytes, over the limit of {limit}")
            body = await _read_body(receive, limit)
            if body is None:
                return None
            if encoding == "gzip":
                body = _gunzip(body, limit)
        except TooLarge as error:
            return 413, {"error": str(error)}
        except ValueError as error:
            return 400, {"error": str(error)}
        if is_blank(input_start(body)[0]):  # a byte order mark may start it, as any input
            return 400, {"error": "the body is empty; send one OpenLineage event as JSON"}
        client = scope.get("client")
        source = _SOURCE + (f" from {client[0]}" if client else "")
        return posted_answer(await self.sink.store(body, source))


def _body_headers(scope: Scope) -> tuple[str, str | None]:
    """The request's Content-Encoding (lower case, ``identity`` when none) and its
    Content-Length as written (None when none): the first of each header, as Starlette's
    Headers read it."""
    encoding = declared = None
    for name, value in scope["headers"]:
        if name == b"content-encoding" and encoding is None:
            encoding = value.decode("latin-1").strip().lower()
        elif name == b"content-length" and declared is None:
            declared = value.decode("latin-1")
    return ("identity" if encoding is None else encoding), declared


async def _read_body(receive: Receive, limit: int) -> bytes | None:
    """The request's body, never more than ``limit`` bytes of it; None when the client
    disconnected first."""
    parts = []
    size = 0
    while True:
        message = await receive()
        if message["type"] != "http.request":
            return None  # http.disconnect
        part = message.get("body", b"")
        size += len(part)
        if size > limit:
            raise TooLarge(f"the body is over the limit of {limit} bytes")
        parts.append(part)
        if not message.get("more_body", False):
            return parts[0] if len(parts) == 1 else b"".join(parts)


def _json_bytes(content: Any) -> bytes:
    """``content`` as :class:`~starlette.responses.JSONResponse` spells it, but each character
    that does not print as itself written as its escape (the same JSON value): an answer shown
    in a browser or a terminal does not reorder or hide text."""
    encoded = json.dumps(
        content, ensure_ascii=False, allow_nan=False, indent=None, separators=(",", ":")
    )
    return printable_json(encoded).encode("utf-8")


class _JsonAnswer(JSONResponse):
    """A JSON answer, spelled as :func:`_json_bytes` spells it."""

    def render(self, content: Any) -> bytes:
        return _json_bytes(content)


async def _not_allowed(request: Request) -> Response:  # pragma: no cover - never routed to
    raise AssertionError("POST /api/v1/lineage is answered by _EventEndpoint")


_WHOLE = (ImpactQuery, ProvenanceQuery, HistoryQuery, PartitionsQuery)
"""The questions that may be about the whole of a dataset (``--max-whole-answer``)."""
_PAGE = ("limit", "cursor")
"""The parameters of a page of an impact or provenance answer (:mod:`._paging`)."""


class _Paged:
    """An impact or provenance question and the page of its answer asked for: ``limit`` and
    ``cursor`` checked with the question, before the database is opened."""

    def __init__(
        self, arguments: _Arguments, kind: Query, question: ImpactQuery | ProvenanceQuery
    ) -> None:
        self.question = question
        self.limit = checked_limit(arguments.one("limit"), kind)
        self.fingerprint = fingerprint(list(arguments.params.multi_items()))
        self.after = cursor_key(arguments.one("cursor"), kind, self.fingerprint)

    def impact(self, lineage: Lineage) -> dict[str, Any]:
        assert isinstance(self.question, ImpactQuery)
        report = lineage.impact(self.question)
        return impact_page(report, self.limit, self.after, self.fingerprint)

    def provenance(self, lineage: Lineage) -> dict[str, Any]:
        assert isinstance(self.question, ProvenanceQuery)
        report = lineage.provenance(self.question)
        whole = not self.question.partition
        return provenance_page(report, self.limit, self.after, self.fingerprint, whole=whole)


class _Arguments:
    """A query's parameters, as its command-line options: each once, but ``partition``."""

    def __init__(self, request: Request, allowed: tuple[str, ...]) -> None:
        self.params = request.query_params
        unknown = sorted(set(self.params) - set(allowed))
        if unknown:
            known = ", ".join(allowed) or "none"
            raise LineageQueryError(
                f"unknown query parameter {unknown[0]!r}; this query takes: {known}"
            )
        for name in set(self.params) - {"partition"}:
            if len(self.params.getlist(name)) > 1:
                raise LineageQueryError(f"the query parameter {name!r} is given more than once")

    def one(self, name: str) -> str | None:
        return self.params.get(name)

    def dataset(self) -> str:
        found = self.one("dataset")
        if not found:
            raise LineageQueryError("name the dataset: ?dataset=NAME (or its end after a '/')")
        return found

    def partitions(self) -> list[str]:
        """The ``partition`` parameters, each ``COLUMN=VALUE``."""
        return self.params.getlist("partition")


def _gunzip(body: bytes, limit: int) -> bytes:
    """The content of a gzip body, never more than ``limit`` bytes of it (no zip bomb)."""
    reader = zlib.decompressobj(wbits=16 + zlib.MAX_WBITS)
    try:
        content = reader.decompress(body, limit + 1)
    except zlib.error as error:
        raise ValueError(f"the body is not gzip data ({error}); send it plain or gzipped") from None
    if len(content) > limit:
        raise TooLarge(f"the body decompresses to over the limit of {limit} bytes")
    if not reader.eof:
        raise ValueError("the gzip body ends before its data does; send it whole")
    if reader.unused_data:
        raise ValueError("the gzip body holds more than one member; send one event")
    return content


def _json_on_failure(
    handler: Callable[[Request], Awaitable[Response]],
) -> Callable[[Request], Awaitable[Response]]:
    """``handler``, answering 500 with a JSON ``error`` (and logging it with its traceback)
    what it raises unexpectedly: Starlette's own answer would be plain text."""

    @functools.wraps(handler)
    async def answer(request: Request) -> Response:
        try:
            return await handler(request)
        except Exception as error:
            where = printable(f"{request.method} {request.url.path}")
            _LOG.exception("%s failed unexpectedly", where)
            return _error(
                500,
                f"{where} failed unexpectedly ({type(error).__name__}: {error}); the server's "
                "log has the details",
            )

    return answer


def _error(status: int, message: str) -> JSONResponse:
    return _JsonAnswer({"error": message}, status)


class _KeyCheck:
    """Every HTTP request needs ``Authorization: Bearer KEY``; compared in constant time."""

    def __init__(self, app: ASGIApp, key: str) -> None:
        self.app = app
        self.expected = b"Bearer " + key.encode("utf-8")

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http":
            given = next(
                (value for name, value in scope["headers"] if name == b"authorization"), b""
            )
            if not hmac.compare_digest(given, self.expected):
                # Closed after the answer: a client without the key, its body unread, would
                # otherwise hold the connection for as long as it trickles the body.
                response = _JsonAnswer(
                    {"error": "an API key is needed: send Authorization: Bearer KEY"},
                    401,
                    headers={"WWW-Authenticate": "Bearer", "Connection": "close"},
                )
                await response(scope, receive, send)
                return
        await self.app(scope, receive, send)


def posted_answer(outcome: Posted) -> tuple[int, dict[str, Any]]:
    """The HTTP status and JSON answer of one posted event, from what became of it: the one
    place an ingest outcome becomes a status."""
    match outcome:
        case Stored(event):
            return 201, {"outcome": "stored", "runId": event.run_id}
        case AlreadyStored(event):  # stored before: nothing changed
            return 200, {"outcome": "duplicate", "runId": event.run_id}
        case Skipped():
            return 200, {
                "outcome": "skipped",
                "note": "a DatasetEvent or JobEvent: partition lineage keeps run events only",
            }
        case Invalid(message=message, issues=issues):
            # checked once, by the writer: every issue it found
            return 400, {
                "outcome": "invalid",
                "error": message,
                "issues": list(issues) or [message],
            }
        case Unreadable(message=message):  # pragma: no cover - a posted body is one Line
            return 400, {"outcome": "invalid", "error": message, "issues": [message]}
        case NotStored(message=message):
            return 503, {"outcome": "failed", "error": message}
