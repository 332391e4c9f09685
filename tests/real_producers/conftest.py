"""Real producers posting to a real ``ol-subset lineage serve``: the service tests' server
fixture (a subprocess on 127.0.0.1, stopped by its process id), and the answers asked of it."""

from __future__ import annotations

import json
import subprocess
import urllib.parse
from typing import Any

from tests.service.conftest import Server, command, environment, serve

__all__ = ["api", "lineage_text", "serve"]


def api(server: Server, route: str, **params: str) -> Any:
    """The JSON answer of ``GET /api/v1/ROUTE?PARAMS``, which must be 200."""
    status, answer = server.get(f"/api/v1/{route}?{urllib.parse.urlencode(params)}")
    assert status == 200, (route, params, answer)
    return answer


def lineage_text(server: Server, *args: str) -> str:
    """What ``ol-subset lineage ARGS --db`` (the server's database) prints, which must exit 0."""
    done = subprocess.run(
        command("lineage", *args, "--db", server.db),
        capture_output=True,
        text=True,
        env=environment(),
        check=False,
    )
    assert done.returncode == 0, (args, done.stdout, done.stderr)
    return done.stdout


def runs_of(server: Server) -> list[dict[str, Any]]:
    """Every run the server stored, from ``/api/v1/runs``."""
    answer = api(server, "runs", limit="1000")
    assert answer["total"] == len(answer["runs"]), json.dumps(answer)[:300]
    return list(answer["runs"])
