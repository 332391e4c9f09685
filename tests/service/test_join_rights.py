"""Who may join datasets on a running ``lineage serve`` (docs/serve.md, "Who may join datasets"):
an event whose ``symlinks`` facet names another team's dataset joins the two only when the server
stores it: never without the key, with the key unless the store's ``other_names`` setting is
``ignore`` (read at each write, so set while the server runs). Sent with openlineage-python's
``HttpTransport``, as producers send them."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from openlineage_subset.lineage import OTHER_NAMES, LineageStore, set_setting
from tests.lineage.events import day, run
from tests.service.conftest import Server
from tests.service.helpers import dataset_names

http = pytest.importorskip("openlineage.client.transport.http", reason="openlineage-python")
pytest.importorskip("requests", reason="openlineage-python's HTTP client")

KEY = "team-key"
SALES = "/data/lake/sales"  # the team's dataset (tests.lineage.events names under /data/lake)


def _claiming(number: int, name: str) -> dict[str, Any]:
    """A run writing ``name`` whose ``symlinks`` facet says it is the table at SALES."""
    _, end = run(number, 10, 11, writes=[(name, day("2024-11-03"))])
    end["outputs"][0]["facets"] = {
        "symlinks": {
            "_producer": end["producer"],
            "_schemaURL": "https://openlineage.io/spec/facets/1-0-1/SymlinksDatasetFacet.json",
            "identifiers": [{"namespace": "file", "name": SALES, "type": "LOCATION"}],
        }
    }
    return end


def test_only_key_holders_join_datasets_and_never_where_the_store_ignores_other_names(
    serve: Callable[..., Server],
) -> None:
    server = serve("--api-key", KEY)
    producer = http.HttpTransport(
        http.HttpConfig.from_dict({"url": server.url, "auth": {"type": "api_key", "apiKey": KEY}})
    )
    stranger = http.HttpTransport(http.HttpConfig.from_dict({"url": server.url}))
    for event in run(1, 0, 1, writes=[("sales", day("2024-11-03"))]):
        assert producer.emit(event).status_code == 201
    # Without the key: refused before the body is read, nothing joined.
    with pytest.raises(Exception, match="401"):
        stranger.emit(_claiming(2, "attacker_x"))
    assert dataset_names(server.db) == {SALES}
    # A key holder may: one dataset, named by its table (the claiming name).
    assert producer.emit(_claiming(3, "sales_table")).status_code == 201
    assert dataset_names(server.db) == {"/data/lake/sales_table"}
    # The store told to leave other names alone, while the server runs: no key holder joins.
    with LineageStore.open(server.db) as store:
        set_setting(store, OTHER_NAMES, "ignore")
    assert producer.emit(_claiming(4, "other_team")).status_code == 201
    assert dataset_names(server.db) == {"/data/lake/sales_table", "/data/lake/other_team"}
