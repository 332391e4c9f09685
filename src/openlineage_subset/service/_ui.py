"""The web UI at ``/``: the routes, the API key as a cookie, the Content-Security-Policy.

- ``GET /``: the incidents (the partitions whose last write failed, the latest failed runs,
  each linked to its impact and backfill plan), then the datasets, the most recently written
  first (``?q=`` filters them);
- ``GET /dataset?namespace=NS&name=NAME``: its partitions as a grid (a calendar for dates,
  :mod:`._partition_grid`), each a checkbox of a form that asks the answer page, its latest runs;
- ``GET /answer?namespace=&name=&query=impact|provenance&p=JSON...``: the answer for each
  partition selected (``p``, a JSON object of column to value; ``ask``: ``COL=VALUE, ...``;
  none: the whole dataset): the report's run graph and grids, the backfill plan to copy; an
  answer of more runs than a page draws, its counts and a page of its runs (``start``: from
  that place), with links to the others;
- ``GET /runs``, ``GET /run?id=RUN``: the runs, one run's reads, writes and events;
- ``GET|POST /login``, ``POST /logout``: with an API key, the key once in a form, then a
  cookie (HttpOnly, SameSite=Strict) holding a token derived from it;
- ``GET /static/ui.css|ui.js``: the package's own style sheet and script, nothing else.

Each page queries the database when asked, so new events show without a restart. A page's
handler is a plain function on its route (Starlette runs it in its thread pool, as it waits on
SQLite): it reads the database and the key from the application's state (:func:`served`) and
answers the :class:`~._pages.Page` it makes; a database that cannot be read is a 503 page
(:func:`database_unavailable`, the application's handler of ``LineageDatabaseError``). Every
response has a Content-Security-Policy: scripts and styles from the server alone (the report's
``<style>`` by its hash), no inline script, no frame, forms posted only to the server.
"""

from __future__ import annotations

import base64
import dataclasses
import hashlib
import hmac
import json
from collections.abc import Mapping, Sequence
from importlib import resources
from typing import Any
from urllib.parse import parse_qs, quote, urlencode

from markupsafe import Markup
from starlette.datastructures import Headers, QueryParams
from starlette.requests import Request
from starlette.responses import HTMLResponse, RedirectResponse, Response
from starlette.routing import Route
from starlette.types import ASGIApp, Receive, Scope, Send

from openlineage_subset import printable_json
from openlineage_subset.lineage import (
    AnswerTooLarge,
    DatasetRef,
    ImpactQuery,
    ImpactReport,
    Lineage,
    LineageQueryError,
    PartitionSet,
    PartitionsQuery,
    ProvenanceQuery,
    ProvenanceReport,
    RunDetails,
    RunPartitions,
    RunsQuery,
    count_from_text,
    incidents,
    indented_json,
    latest_history,
    part_heading,
    partition_from_text,
    provenance_text,
    run_partitions,
    unseen_note,
)
from openlineage_subset.report import STYLE as REPORT_STYLE
from openlineage_subset.report import answer_picture
from openlineage_subset.report import body as report_body
from openlineage_subset.service import _pages
from openlineage_subset.service._answer_runs import (
    ANSWER_RUNS,
    ImpactRuns,
    ProvenanceRuns,
    Summary,
    impact_runs,
    listed,
    provenance_runs,
    runs_behind,
    start_from_text,
)
from openlineage_subset.service._links import LINKS, dataset_link
from openlineage_subset.service._partition_grid import NoRowsBefore, drawn_partitions
from openlineage_subset.service._tasks_section import tasks_copy

COOKIE = "ol_subset_key"
MAX_SELECTED = 24
"""Partitions one answer page answers for at most (each is a query of its own)."""
_STATIC = {"ui.css": "text/css; charset=utf-8", "ui.js": "text/javascript; charset=utf-8"}
_OPEN_PATHS = ("/login", "/logout")


@dataclasses.dataclass(frozen=True)
class Served:
    """What the application serves, kept on its state (``request.app.state.served``) for its
    handlers: the database's path, the API key (None: none), and the most of a dataset a
    question about the whole of it may start from (None: any; see ``make_app``)."""

    database: str
    api_key: str | None
    max_whole: int | None = None


def served(request: Request) -> Served:
    """What the application that ``request`` came to serves."""
    found: Served = request.app.state.served
    return found


def policy(styles: Sequence[str] = ()) -> str:
    """The Content-Security-Policy of a UI response; ``styles``: inline ``<style>`` contents
    it allows (by hash)."""
    hashes = "".join(
        f" 'sha256-{base64.b64encode(hashlib.sha256(style.encode()).digest()).decode()}'"
        for style in styles
    )
    return (
        "default-src 'self'; script-src 'self'; "
        f"style-src 'self'{hashes}; img-src 'self' data:; object-src 'none'; base-uri 'none'; "
        "form-action 'self'; frame-ancestors 'none'; frame-src 'none'"
    )


def _headers(styles: Sequence[str] = ()) -> dict[str, str]:
    return {
        "Content-Security-Policy": policy(styles),
        "X-Content-Type-Options": "nosniff",
        "Referrer-Policy": "no-referrer",
        "Cache-Control": "no-store",
    }


def _respond(page: _pages.Page) -> HTMLResponse:
    return HTMLResponse(page.html, page.status, headers=_headers(page.styles))


def token(key: str) -> str:
    """What the UI's cookie holds: derived from the key, so the key itself is not stored."""
    return hmac.new(key.encode("utf-8"), b"ol-subset lineage serve: web UI", "sha256").hexdigest()


def _local(path: str) -> str:
    """``path`` when it is a path on this server, else ``/``: a login never sends elsewhere."""
    if path.startswith("/") and not path.startswith(("//", "/\\")):
        return path
    return "/"


def _unnamed() -> HTMLResponse:
    return _respond(_pages.error_page(400, "name the dataset: ?namespace=NS&name=NAME"))


def front(request: Request) -> Response:
    """``GET /``: the incidents, then the datasets (``q``: those whose name has its words)."""
    with Lineage(served(request).database) as lineage:
        found = lineage.datasets()
        failed = incidents(lineage.store)
    return _respond(_pages.front_page(found, request.query_params.get("q", ""), failed))


def dataset(request: Request) -> Response:
    """``GET /dataset``: a dataset's partitions (``p``: those ticked; ``before``: its rows
    before that value), latest runs and facets."""
    ref = _named(request)
    if ref is None:
        return _unnamed()
    selected = request.query_params.getlist("p")
    before = request.query_params.get("before") or None  # the page's link to older rows
    try:
        showing = _pages.selected_partitions(selected)
    except ValueError:
        showing = []  # not drawn with its row, then: the answer it asks for says why
    with Lineage(served(request).database) as lineage:
        try:  # what the page draws only: the partitions of its grid, its latest runs
            drawn = drawn_partitions(lineage, ref, before=before, showing=showing)
            query = PartitionsQuery(ref.name, ref.namespace)
            past, total = latest_history(lineage.store, query, _pages.MAX_HISTORY)
        except NoRowsBefore as error:  # the dataset is known: the way back to it
            return _respond(_pages.error_page(404, str(error), ref))
        except LineageQueryError as error:
            return _respond(_pages.error_page(404, str(error)))
        summary = lineage.dataset_summary(ref)
        facets = lineage.dataset_facets(ref)
    return _respond(
        _pages.dataset_page(ref, summary, drawn, past, selected, facets=facets, history_total=total)
    )


def answer(request: Request) -> Response:
    """``GET /answer``: the impact or provenance of the partitions selected."""
    ref = _named(request)
    if ref is None:
        return _unnamed()
    serving = served(request)
    try:
        return _respond(_answer_page(serving, ref, request.query_params))
    except AnswerTooLarge as error:  # the whole dataset, at a size this server does not work out
        return _respond(_pages.error_page(422, str(error), ref))
    except LineageQueryError as error:
        return _respond(_pages.error_page(400, str(error), ref))


def runs(request: Request) -> Response:
    """``GET /runs``: the latest runs."""
    with Lineage(served(request).database) as lineage:
        found = lineage.runs(RunsQuery(limit=200))
    return _respond(_pages.runs_page(found))


def run(request: Request) -> Response:
    """``GET /run?id=RUN``: one run."""
    run_id = request.query_params.get("id", "")
    before = request.query_params.get("before") or None
    details: RunDetails | None = None
    covered: tuple[RunPartitions, ...] = ()
    if run_id:  # covered: what each read and write may cover, its partitions as links
        with Lineage(served(request).database) as lineage:
            try:
                details = lineage.run_details(run_id, before=before)
            except LineageQueryError as error:
                return _respond(_pages.error_page(400, str(error)))
            if details is not None:
                covered = run_partitions(lineage.store, run_id)
    if details is None:
        return _respond(_pages.error_page(404, f"no run {run_id!r} in the database"))
    return _respond(_pages.run_page(details, covered))


async def login(request: Request) -> Response:
    """``GET /login``: the form; ``POST``: the key checked, then the cookie set."""
    api_key = served(request).api_key
    if request.method == "GET" or api_key is None:
        next_path = _local(request.query_params.get("next", "/"))
        return _respond(_pages.login_page(next_path, None, api_key is not None))
    body = await request.body()
    form = parse_qs(body.decode("utf-8", "replace")) if len(body) < 8192 else {}
    given = (form.get("key") or [""])[0]
    next_path = _local((form.get("next") or ["/"])[0])
    if not hmac.compare_digest(given.encode("utf-8"), api_key.encode("utf-8")):
        return _respond(_pages.login_page(next_path, "That is not the server's key.", True))
    response = RedirectResponse(next_path, 303, headers=_headers())
    response.set_cookie(
        COOKIE,
        token(api_key),
        httponly=True,
        samesite="strict",
        secure=request.url.scheme == "https",
    )
    return response


async def logout(request: Request) -> Response:
    """``POST /logout``: the cookie removed."""
    response = RedirectResponse("/login", 303, headers=_headers())
    response.delete_cookie(COOKIE, httponly=True, samesite="strict")
    return response


async def static(request: Request) -> Response:
    """``GET /static/NAME``: the package's style sheet or script."""
    name = request.path_params["name"]
    if name not in _STATIC:
        return Response("not found", 404, headers=_headers(), media_type="text/plain")
    content = (resources.files(__package__) / "static" / name).read_bytes()
    headers = {**_headers(), "Cache-Control": "no-cache"}
    return Response(content, headers=headers, media_type=_STATIC[name])


async def database_unavailable(request: Request, error: Exception) -> Response:
    """A page's answer when the database cannot be read (locked, gone): 503, the reason."""
    return _respond(_pages.error_page(503, str(error)))


UI_ROUTES = [
    # the pages: plain functions, run in Starlette's thread pool (each reads SQLite)
    Route("/", front),
    Route("/dataset", dataset),
    Route("/answer", answer),
    Route("/runs", runs),
    Route("/run", run),
    # what a visitor needs before (or without) the key
    Route("/login", login, methods=["GET", "POST"]),
    Route("/logout", logout, methods=["POST"]),
    Route("/static/{name}", static),
]
"""The UI's routes; each handler reads the database and the key from :func:`served`."""


def _named(request: Request) -> DatasetRef | None:
    """The dataset the request names (``namespace`` and ``name``); None: it names none."""
    namespace = request.query_params.get("namespace")
    name = request.query_params.get("name")
    if not namespace or not name:
        return None
    return DatasetRef(namespace, name)


def _answer_page(serving: Served, ref: DatasetRef, params: QueryParams) -> _pages.Page:
    """The answer page the parameters ``params`` ask of ``ref`` in the database served;
    raises ``LineageQueryError`` for parameters it cannot answer (``AnswerTooLarge`` for the
    whole of a dataset past ``serving.max_whole``, or an answer that loads more reads and
    writes)."""
    path = serving.database
    query = params.get("query", "impact")
    if query not in ("impact", "provenance"):
        raise LineageQueryError(f"query is impact or provenance, got {query!r}")
    try:
        asked: list[Any] = _pages.selected_partitions(params.getlist("p"))
    except ValueError as error:
        raise LineageQueryError(str(error)) from None
    typed = params.get("ask", "").strip()
    if typed:
        items = [item.strip() for item in typed.split(",") if item.strip()]
        asked.append(partition_from_text(items, "ask"))
    if len(asked) > MAX_SELECTED:
        raise LineageQueryError(
            f"{len(asked)} partitions selected; select at most {MAX_SELECTED} at once"
        )
    since = params.get("since") or None
    depth_text = params.get("depth") or None
    depth = None if depth_text is None else count_from_text("depth", depth_text)
    if query == "provenance" and since is not None:
        raise LineageQueryError("since is for impact; provenance follows the latest writers back")
    start = params.get("start")
    if start is not None and len(asked) > 1:
        raise LineageQueryError("start pages the runs of one answer: select one partition")
    sections, plans, summarised = [], [], 0
    with Lineage(path, most_accesses=serving.max_whole) as lineage:
        for partition in asked or [None]:
            answer: ImpactReport | ProvenanceReport
            question = (
                ImpactQuery(ref.name, partition, since, depth, ref.namespace)
                if query == "impact"
                else ProvenanceQuery(ref.name, partition, depth, ref.namespace)
            )
            if serving.max_whole is not None:
                lineage.check_whole(question, serving.max_whole)  # before it is worked out
            if isinstance(question, ImpactQuery):
                answer = lineage.impact(question)
            else:
                answer = lineage.provenance(question)
            total = _runs_in(answer)
            first = _first_listed(start, total)  # checked for a small answer too
            if total > ANSWER_RUNS:
                sections.append(
                    _summarised(path, ref, answer, partition, params, first, whole=not asked)
                )
                summarised += 1
                continue
            section, backfill = _drawn(lineage, answer)
            sections.append(section)
            plans += [backfill] if backfill is not None else []
    combined: list[tuple[str, str]] = []
    if query == "impact" and len(sections) > 1 and not summarised:
        plan = _pages.merged(part for backfill in plans for part in backfill)
        heading = f"the {len(plans)} partitions selected of {ref}"
        combined = [
            (
                "Backfill plan of all selected (text)",
                _pages.plan_text(plan, f"impact of {heading}"),
            ),
            ("Backfill plan of all selected (JSON)", _pages.plan_json(plan)),
        ]
    elif query == "impact" and len(sections) > 1:
        combined = [
            (
                "Backfill plan of all selected",
                f"# not given here: {summarised} of the {len(sections)} partitions selected "
                "have answers too large for one page (below); each says where its whole "
                "answer is\n",
            )
        ]
    return _pages.answer_page(query, ref, sections, combined, [REPORT_STYLE])


def _runs_in(answer: ImpactReport | ProvenanceReport) -> int:
    """The runs of ``answer`` an answer page lists: affected, or behind the target."""
    if isinstance(answer, ImpactReport):
        return len(answer.runs)
    return len(runs_behind(answer))


def _first_listed(start: str | None, total: int) -> int:
    try:
        return start_from_text(start, total)
    except ValueError as error:
        raise LineageQueryError(str(error)) from None


def _drawn(
    lineage: Lineage, answer: ImpactReport | ProvenanceReport
) -> tuple[_pages.Section, tuple[PartitionSet, ...] | None]:
    """An answer's section, drawn whole (its graph and grids, every run, the text to copy), and
    its backfill plan (None: a provenance)."""
    picture = answer_picture(lineage.store, answer)
    runs: ImpactRuns | ProvenanceRuns
    if isinstance(answer, ImpactReport):
        heading = part_heading(answer.start)
        copies: tuple[tuple[str, str], ...] = (
            tasks_copy(answer.tasks, f"impact of {heading}"),
            ("Backfill plan (text)", _pages.plan_text(answer.backfill, f"impact of {heading}")),
            ("Backfill plan (JSON)", _pages.plan_json(answer.backfill)),
        )
        unseen = None if answer.seen else unseen_note(answer.start)
        runs = impact_runs(answer)
        plan: tuple[PartitionSet, ...] | None = answer.backfill
    else:
        heading = part_heading(answer.target)
        copies = (
            ("Provenance (text)", "\n".join(provenance_text(answer)) + "\n"),
            ("Provenance (JSON)", _json(answer.as_json())),
        )
        unseen = None if answer.seen else unseen_note(answer.target)
        runs = provenance_runs(answer)
        plan = None
    body = Markup(report_body(picture, links=LINKS))
    return _pages.Section(heading, body, unseen, copies, runs), plan


def _summarised(
    path: str,
    ref: DatasetRef,
    answer: ImpactReport | ProvenanceReport,
    partition: Mapping[str, str | None] | None,
    params: QueryParams,
    first: int,
    *,
    whole: bool,
) -> _pages.Section:
    """An answer's section when it holds too many runs to draw: its counts, the runs from
    ``first`` (:data:`ANSWER_RUNS` of them), links to the others; no graph, no grids."""
    runs: ImpactRuns | ProvenanceRuns
    if isinstance(answer, ImpactReport):
        kind, heading, unseen_of = "impact", part_heading(answer.start), answer.start
        total = len(answer.runs)
        shown = listed(answer.runs, first)
        runs = impact_runs(answer, shown)
        counts = _pages.impact_counts(answer)
    else:
        kind, heading, unseen_of = "provenance", part_heading(answer.target), answer.target
        behind = runs_behind(answer)  # the latest ended first, as the JSON API's pages
        total = len(behind)
        shown = listed(behind, first)
        runs = ProvenanceRuns(behind[shown.start : shown.stop])
        counts = _pages.provenance_counts(answer, total)

    def page(at: int) -> str:
        return _answer_path(ref, kind, partition, params, at)

    summary = Summary(
        counts=counts,
        total=total,
        first=first,
        listed=len(shown),
        previous=page(max(first - ANSWER_RUNS, 0)) if first else None,
        next=page(shown.stop) if shown.stop < total else None,
        narrower=dataset_link(ref),
        whole=_pages.whole_answer(kind, ref, partition, params, path, whole=whole),
    )
    unseen = None if answer.seen else unseen_note(unseen_of)
    return _pages.Section(heading, Markup(""), unseen, (), runs, summary)


def _answer_path(
    ref: DatasetRef,
    kind: str,
    partition: Mapping[str, str | None] | None,
    params: QueryParams,
    start: int,
) -> str:
    """The answer page of ``kind`` for ``partition`` of ``ref`` (None: the whole dataset), the
    other parameters of ``params`` kept, listing its runs from ``start``."""
    pairs = [("namespace", ref.namespace), ("name", ref.name), ("query", kind)]
    if partition is not None:
        pairs.append(("p", json.dumps(dict(partition), ensure_ascii=False)))
    pairs += [(name, params[name]) for name in ("since", "depth") if params.get(name)]
    pairs.append(("start", str(start)))
    return "/answer?" + urlencode(pairs)


def _json(value: Any) -> str:
    return printable_json(indented_json(value, ensure_ascii=False)) + "\n"


class UiGate:
    """With an API key: ``/api/...`` goes to ``keyed`` (the Bearer check); a UI page needs the
    Bearer header or the login cookie (else a GET is sent to ``/login``, anything else 401);
    the login form and the static files are open."""

    def __init__(self, app: ASGIApp, keyed: ASGIApp, key: str) -> None:
        self.app = app
        self.keyed = keyed
        self.bearer = b"Bearer " + key.encode("utf-8")
        self.token = token(key)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        path = scope.get("path", "")
        if scope["type"] != "http" or path.startswith("/api/"):
            await self.keyed(scope, receive, send)
            return
        if path in _OPEN_PATHS or path.startswith("/static/") or self._allowed(scope):
            await self.app(scope, receive, send)
            return
        if scope["method"] in ("GET", "HEAD"):
            query = scope.get("query_string", b"").decode("latin-1")
            wanted = path + (f"?{query}" if query else "")
            response: Response = RedirectResponse(
                "/login?next=" + quote(wanted, safe=""), 303, headers=_headers()
            )
        else:
            # A refusal closes its connection: a client without the key holds no slot.
            headers = {**_headers(), "Connection": "close"}
            response = Response("an API key is needed: log in at /login", 401, headers=headers)
        await response(scope, receive, send)

    def _allowed(self, scope: Scope) -> bool:
        headers = Headers(scope=scope)
        given = headers.get("authorization", "").encode("utf-8")
        if given and hmac.compare_digest(given, self.bearer):
            return True
        cookies = Request(scope).cookies
        return hmac.compare_digest(cookies.get(COOKIE, "").encode("utf-8"), self.token.encode())
