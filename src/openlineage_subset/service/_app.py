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
import os
import zlib
from collections.abc import Awaitable, Callable
from typing import Any

from starlette.applications import Starlette
from starlette.concurrency import run_in_threadpool
from starlette.middleware.gzip import GZipMiddleware
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route
from starlette.types import ASGIApp, Receive, Scope, Send

from openlineage_subset._validate import validate
from openlineage_subset.lineage._arguments import LineageQueryError, partition_from_text
from openlineage_subset.lineage._catalog import datasets, runs
from openlineage_subset.lineage._events import parse
from openlineage_subset.lineage._history import dataset_partitions, history
from openlineage_subset.lineage._impact import impact
from openlineage_subset.lineage._provenance import provenance
from openlineage_subset.lineage._store import LineageDatabaseError
from openlineage_subset.producer._secrets import scrubbed_logger
from openlineage_subset.service._sink import EventSink
from openlineage_subset.service._ui import UiGate, ui_routes

_BOM = b"\xef\xbb\xbf"
_LOG = scrubbed_logger(__name__)
_STATUS = {"stored": 201, "duplicate": 200, "skipped": 200, "invalid": 400, "failed": 503}


class TooLarge(Exception):
    pass


def make_app(
    db: str | os.PathLike[str],
    sink: EventSink,
    *,
    api_key: str | None = None,
    max_body: int,
) -> ASGIApp:
    """The application over the database ``db``: events go to ``sink`` (which writes ``db``),
    queries read ``db`` with connections of their own. ``max_body``: the most bytes a request's
    body may have, and its content once decompressed."""
    path = os.fspath(db)

    @_json_on_failure
    async def lineage(request: Request) -> Response:
        encoding = request.headers.get("content-encoding", "identity").strip().lower()
        if encoding not in ("identity", "gzip"):
            return _error(415, f"Content-Encoding {encoding!r} is not read; send gzip or none")
        try:
            body = await _body(request, max_body)
            if encoding == "gzip":
                body = _gunzip(body, max_body)
        except TooLarge as error:
            return _error(413, str(error))
        except ValueError as error:
            return _error(400, str(error))
        if body.startswith(_BOM):
            body = body[len(_BOM) :]  # as ingest reads a file that starts with one
        if not body.strip():
            return _error(400, "the body is empty; send one OpenLineage event as JSON")
        client = request.client
        source = "POST /api/v1/lineage" + (f" from {client.host}" if client else "")
        outcome = await sink.store(body, source)
        answer: dict[str, Any] = {"outcome": outcome.kind}
        if outcome.run_id is not None:
            answer["runId"] = outcome.run_id
        if outcome.message is not None:
            answer["error"] = outcome.message
        if outcome.kind == "invalid":
            answer["issues"] = await run_in_threadpool(_issues, body, outcome.message)
        if outcome.kind == "skipped":
            answer["note"] = "a DatasetEvent or JobEvent: partition lineage keeps run events only"
        return JSONResponse(answer, _STATUS[outcome.kind])

    def query(
        allowed: tuple[str, ...], ask: Callable[[_Arguments], Any]
    ) -> Callable[[Request], Any]:
        @_json_on_failure
        async def answer(request: Request) -> Response:
            try:
                arguments = _Arguments(request, allowed)
                report = await run_in_threadpool(ask, arguments)
            except LineageQueryError as error:
                return _error(400, str(error))
            except LineageDatabaseError as error:
                return _error(503, str(error))
            return JSONResponse(report.as_json())

        return answer

    dataset = ("dataset", "namespace")
    routes = [
        Route("/api/v1/lineage", lineage, methods=["POST"]),
        Route(
            "/api/v1/impact",
            query(
                (*dataset, "partition", "since", "depth"),
                lambda a: impact(
                    path,
                    a.dataset(),
                    partition=a.partition(),
                    since=a.one("since"),
                    depth=a.number("depth"),
                    namespace=a.one("namespace"),
                ),
            ),
        ),
        Route(
            "/api/v1/provenance",
            query(
                (*dataset, "partition", "depth"),
                lambda a: provenance(
                    path,
                    a.dataset(),
                    partition=a.partition(),
                    depth=a.number("depth"),
                    namespace=a.one("namespace"),
                ),
            ),
        ),
        Route(
            "/api/v1/history",
            query(
                (*dataset, "partition"),
                lambda a: history(
                    path, a.dataset(), partition=a.partition(), namespace=a.one("namespace")
                ),
            ),
        ),
        Route(
            "/api/v1/partitions",
            query(
                dataset,
                lambda a: dataset_partitions(path, a.dataset(), namespace=a.one("namespace")),
            ),
        ),
        Route("/api/v1/datasets", query((), lambda a: datasets(path))),
        Route(
            "/api/v1/runs",
            query(
                ("job", "limit"),
                lambda a: runs(path, job=a.one("job"), limit=a.number("limit", 100)),
            ),
        ),
        *ui_routes(path, api_key),  # the web UI: docs/serve.md#the-web-ui
    ]
    app: ASGIApp = _GzipReads(Starlette(routes=routes))
    if api_key is not None:
        app = UiGate(app, _KeyCheck(app, api_key), api_key)
    return app


class _GzipReads:
    """Answers to GET and HEAD compressed for a client that accepts gzip: a dataset's page
    of years of partitions is megabytes of HTML, mostly alike. The answers to posted events
    (a few bytes each, the hot path) are left as they are."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app
        self.zipped = GZipMiddleware(app, minimum_size=1024, compresslevel=6)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http" and scope["method"] in ("GET", "HEAD"):
            await self.zipped(scope, receive, send)
        else:
            await self.app(scope, receive, send)


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

    def partition(self) -> dict[str, str] | None:
        return partition_from_text(self.params.getlist("partition"), "partition")

    def number(self, name: str, default: int | None = None) -> int | None:
        text = self.one(name)
        if text is None:
            return default
        try:
            return int(text)
        except ValueError:
            raise LineageQueryError(f"{name} must be a whole number, got {text!r}") from None


def _issues(body: bytes, message: str | None) -> list[str]:
    """Every issue the validation finds in an event ingest would not store (it names the
    first); its one message when the body is not a JSON object to validate."""
    try:
        document = parse(body.decode("utf-8"))
    except (UnicodeDecodeError, ValueError):
        document = None
    found = [str(issue) for issue in validate(document)] if isinstance(document, dict) else []
    return found or [message or "not an OpenLineage RunEvent"]


async def _body(request: Request, limit: int) -> bytes:
    declared = request.headers.get("content-length")
    if declared is not None and declared.isdigit() and int(declared) > limit:
        raise TooLarge(f"the body has {declared} bytes, over the limit of {limit}")
    parts = []
    size = 0
    async for part in request.stream():
        size += len(part)
        if size > limit:
            raise TooLarge(f"the body is over the limit of {limit} bytes")
        parts.append(part)
    return b"".join(parts)


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
            where = f"{request.method} {request.url.path}"
            _LOG.exception("%s failed unexpectedly", where)
            return _error(
                500,
                f"{where} failed unexpectedly ({type(error).__name__}: {error}); the server's "
                "log has the details",
            )

    return answer


def _error(status: int, message: str) -> JSONResponse:
    return JSONResponse({"error": message}, status)


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
                response = JSONResponse(
                    {"error": "an API key is needed: send Authorization: Bearer KEY"},
                    401,
                    headers={"WWW-Authenticate": "Bearer"},
                )
                await response(scope, receive, send)
                return
        await self.app(scope, receive, send)
