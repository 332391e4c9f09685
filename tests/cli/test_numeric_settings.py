"""Numbers given on the command line are checked once, with one clear line and status 2."""

from __future__ import annotations

from pathlib import Path

import pytest

from openlineage_subset.cli import main
from openlineage_subset.delivery._outbox import Outbox


@pytest.mark.parametrize("value", ["nan", "inf", "-1", "1e10", "soon"])
def test_replay_refuses_a_timeout_that_is_not_a_number_of_seconds(
    value: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    with pytest.raises(SystemExit) as ended:
        main(["replay", str(tmp_path / "outbox"), "--timeout", value])
    assert ended.value.code == 2
    said = capsys.readouterr().err
    assert "--timeout" in said and "seconds" in said and value in said


def test_replay_takes_a_timeout_of_seconds(tmp_path: Path) -> None:
    Outbox(tmp_path / "outbox").close(1.0)  # an empty outbox
    status = main(
        [
            "replay",
            str(tmp_path / "outbox"),
            "--timeout",
            "2.5",
            "--output",
            str(tmp_path / "events.jsonl"),
        ]
    )
    assert status == 0
