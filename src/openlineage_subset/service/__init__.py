"""Partition lineage as a service: an OpenLineage endpoint and the lineage queries over HTTP.

Needs the ``serve`` extra (Starlette, uvicorn); imported by ``ol-subset lineage serve`` only.

- :mod:`._app`: the ASGI application (``POST /api/v1/lineage``, ``GET /api/v1/...``);
- :mod:`._sink`: the one writer thread storing posted events as ``ingest`` does;
- :mod:`._run`: listening, the ready line, a clean stop on SIGTERM or SIGINT;
- :mod:`._guard`: the Host, Origin and Content-Type every request is checked for first;
- :mod:`._connections`: uvicorn's HTTP protocol with bounded heads, time and connections;
- :mod:`._ui`: the web UI at ``/`` (``static/``: its style sheet and script), whose pages
  :mod:`._pages` makes from the templates of ``templates/`` in the environment of
  :mod:`._templates`, with :mod:`._partition_grid` (a dataset's partitions),
  :mod:`._answer_runs` and :mod:`._tasks_section` (an answer's runs, and the orchestrator tasks
  to re-run), and :mod:`._links` (where each page links a run, a dataset, a partition).

docs/serve.md describes the endpoints.
"""

from openlineage_subset.service._app import make_app
from openlineage_subset.service._connections import ConnectionLimits
from openlineage_subset.service._guard import AllowedHosts
from openlineage_subset.service._run import ServiceError, listen, serve
from openlineage_subset.service._sink import EventSink, NotStored, Posted

__all__ = [
    "AllowedHosts",
    "ConnectionLimits",
    "EventSink",
    "NotStored",
    "Posted",
    "ServiceError",
    "listen",
    "make_app",
    "serve",
]
