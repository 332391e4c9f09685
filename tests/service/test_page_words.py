"""What a dataset page offers to type and its buttons say: the dataset's own columns, or the
form alone where it has none (never another dataset's), and what each button will ask."""

from __future__ import annotations

import html
import re
from pathlib import Path

import pytest

from openlineage_subset.lineage import ingest
from tests.lineage.events import LAKE, day, run, write_events

pytest.importorskip("starlette", reason="the serve extra: pip install 'openlineage-subset[serve]'")


def _dataset_page(db: Path, name: str) -> str:
    from urllib.parse import urlencode

    from openlineage_subset.service import EventSink, _app
    from tests.service.helpers import asgi_call

    sink = EventSink(db)
    try:
        app = _app.make_app(db, sink, max_body=1_000_000)
        query = urlencode({"namespace": "file", "name": f"{LAKE}/{name}"})
        status, _, body = asgi_call(app, "GET", f"/dataset?{query}")
    finally:
        sink.close()
    assert status == 200, body
    return body.decode("utf-8")


def test_what_to_type_is_of_the_dataset_s_own_columns_and_the_buttons_say_what_they_ask(
    tmp_path: Path,
) -> None:
    db = tmp_path / "lineage.db"
    events = [
        *run(1, 0, 1, writes=[("orders", day("2024-10-15", "DE"))]),
        *run(2, 2, 3, reads=[("orders", None)], writes=[("jdbc_table", None)]),
    ]
    ingest([write_events(tmp_path / "events.jsonl", events)], db)
    for name, expected in (("orders", "day=2024-10-15, country=DE"), ("jdbc_table", None)):
        page = _dataset_page(db, name)
        (typed,) = re.findall(r'name="ask"[^>]*placeholder="([^"]*)"', page)
        typed = html.unescape(typed)
        if expected is not None:
            assert typed == expected
        else:  # written whole, no column known: the form alone
            assert "day" not in typed and "country" not in typed and "=" in typed
        buttons = [html.unescape(b) for b in re.findall(r"<button[^>]*>([^<]*)</button>", page)]
        assert "Impact of the partitions ticked or typed (none: of the whole dataset)" in buttons
        assert (
            "Provenance of the partitions ticked or typed (none: of the whole dataset)" in buttons
        )


def test_a_dataset_page_s_cells_name_their_partition_in_the_dataset_s_column_order(
    tmp_path: Path,
) -> None:
    # region first in its partitions' paths, shop with more values: shops go down, and a cell
    # still says region=..., shop=...
    from tests.lineage.events import parts

    shops = parts(
        *({"region": region, "shop": f"s{n}"} for region in ("eu", "us") for n in range(6))
    )
    db = tmp_path / "lineage.db"
    ingest([write_events(tmp_path / "events.jsonl", run(1, 0, 1, writes=[("shops", shops)]))], db)
    page = _dataset_page(db, "shops")
    titles = [
        html.unescape(title).split("\n")[0]
        for title in re.findall(r'<td class="[a-z]+" title="([^"]*)"', page)
    ]
    assert len(titles) == 12
    assert all(re.fullmatch(r"region=(eu|us), shop=s\d", title) for title in titles), titles
