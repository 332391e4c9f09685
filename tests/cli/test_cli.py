"""ol-subset validate: exit codes, messages naming file, line and path, no tracebacks."""

from __future__ import annotations

import json
import subprocess
import sys
from importlib.metadata import version
from pathlib import Path

import pytest

from openlineage_subset import spec
from openlineage_subset.cli import main
from tests.helpers import INPUT_URL, PRODUCER, ROOT, unknown_version
from tests.strategies import CORE_URL

VALID = {
    "subset": {
        "inputCondition": {"type": "location", "locations": ["s3://b/k"]},
        "_producer": PRODUCER,
        "_schemaURL": INPUT_URL,
    }
}
INVALID = {
    "subset": {"inputCondition": {"type": "nope"}, "_producer": PRODUCER, "_schemaURL": INPUT_URL}
}


def _run(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str]:
    status = main(["validate", *args])
    captured = capsys.readouterr()
    assert "Traceback" not in captured.out + captured.err
    return status, captured.out


def _write(tmp_path: Path, name: str, content: str) -> str:
    path = tmp_path / name
    path.write_text(content, encoding="utf-8")
    return str(path)


def test_valid_files_exit_0(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    status, out = _run(capsys, _write(tmp_path, "ok.json", json.dumps(VALID)))
    assert status == 0
    assert "ok.json: valid" in out and "1 valid, 0 invalid" in out


def test_invalid_file_exit_1_with_path_and_message(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    path = _write(tmp_path, "bad.json", json.dumps(INVALID))
    status, out = _run(capsys, path)
    assert status == 1
    assert f"{path}: $.subset.inputCondition.type: unknown type 'nope'" in out


def test_json_lines_name_the_line(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    lines = [json.dumps(VALID), "", json.dumps(INVALID), "{not json"]
    path = _write(tmp_path, "events.jsonl", "\n".join(lines) + "\n")
    status, out = _run(capsys, path)
    assert status == 2, "an unusable line makes the input unusable"
    assert f"{path}:1: valid" in out
    assert f"{path}:3: $.subset.inputCondition.type" in out
    assert f"{path}:4: error: not valid JSON" in out


def test_json_lines_in_a_json_file_are_recognised(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    path = _write(tmp_path, "events.json", json.dumps(VALID) + "\n" + json.dumps(VALID) + "\n")
    status, out = _run(capsys, path)
    assert status == 0 and f"{path}:2: valid" in out


def test_arrays_of_documents(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    path = _write(tmp_path, "many.json", json.dumps([VALID, INVALID]))
    status, out = _run(capsys, path)
    assert status == 1 and f"{path}[0]: valid" in out and f"{path}[1]: $.subset" in out


@pytest.mark.parametrize(
    ("content", "fragment"),
    [
        ("", "empty file"),
        (
            '{"subset": ',
            "not valid JSON: the text is cut short: it ends at line 1, column 11, inside its JSON "
            "value",
        ),
        ("[]", "empty array"),
        ("[" * 100000 + "]" * 100000, "nested too deeply"),
    ],
)
def test_unusable_inputs_exit_2(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, content: str, fragment: str
) -> None:
    path = _write(tmp_path, "input.json", content)
    status, out = _run(capsys, path)
    assert status == 2
    assert f"{path}: error: " in out and fragment in out


def test_a_line_cut_short_is_said_to_be_cut_short(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    whole = json.dumps(VALID)
    middle_of_a_string = whole.index('"', whole.index("_producer") + 12) + 4
    lines = [whole, whole[:middle_of_a_string], whole[: whole.index(",") + 1], whole]
    path = _write(tmp_path, "cut.jsonl", "\n".join(lines) + "\n")
    status, out = _run(capsys, path)
    assert status == 2
    assert (
        f"{path}:2: error: not valid JSON: the line is cut short: it ends at column "
        f"{middle_of_a_string + 1}, inside its JSON value"
    ) in out
    # Cut after a comma, outside any string: where its text ends, not column 1 of what follows.
    assert (
        f"{path}:3: error: not valid JSON: the line is cut short: it ends at column "
        f"{whole.index(',') + 2}, inside its JSON value"
    ) in out
    assert "control character" not in out


def test_missing_and_binary_files(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    binary = tmp_path / "blob.json"
    binary.write_bytes(b"\x89PNG\r\n\x1a\n")
    status, out = _run(capsys, str(tmp_path / "missing.json"), str(binary))
    assert status == 2
    assert "missing.json: error: no such file" in out
    assert "blob.json: error: not UTF-8 text" in out


def test_folders_are_searched(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    (tmp_path / "nested").mkdir()
    _write(tmp_path / "nested", "a.json", json.dumps(VALID))
    _write(tmp_path, "notes.txt", "ignored")
    status, out = _run(capsys, str(tmp_path))
    assert status == 0 and "a.json: valid" in out and "notes.txt" not in out
    empty = tmp_path / "empty"
    empty.mkdir()
    status, out = _run(capsys, str(empty))
    assert status == 2 and "holds no .json" in out


def test_strict_flag_and_json_output(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    document = json.loads(json.dumps(VALID))
    document["subset"]["_schemaURL"] = INPUT_URL.replace(spec().version, unknown_version())
    path = _write(tmp_path, "docs.json", json.dumps(document))
    status, out = _run(capsys, path)
    assert status == 0 and "warning: _schemaURL" in out
    status, out = _run(capsys, "--strict", "--format", "json", path)
    assert status == 1
    report = json.loads(out)
    (result,) = report["results"]
    assert result["valid"] is False and result["warnings"]
    assert result["issues"][0]["path"] == "$.subset._schemaURL"
    assert result["issues"][0]["rule"] == "strict"
    assert report["summary"] == {
        "documents": 1,
        "valid": 0,
        "invalid": 1,
        "withoutSubsetFacet": 0,
        "unusable": 0,
    }


def test_usage_errors_do_not_trace(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exit_info:
        main(["validate"])
    assert exit_info.value.code == 2
    assert main([]) == 2
    assert "Traceback" not in capsys.readouterr().err


def test_installed_entry_point_reads_stdin_and_the_examples() -> None:
    command = [sys.executable, "-m", "openlineage_subset", "validate"]
    done = subprocess.run(
        [*command, "-"], input=json.dumps(INVALID), capture_output=True, text=True, check=False
    )
    assert done.returncode == 1 and "<stdin>: $.subset.inputCondition.type" in done.stdout
    done = subprocess.run(
        [*command, "--strict", str(ROOT / "examples")], capture_output=True, text=True, check=False
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert "0 invalid" in done.stdout


def test_documents_without_a_subset_facet_are_said_so_and_fail_only_when_required(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    event = {
        "eventType": "START",
        "eventTime": "2024-10-15T10:00:00Z",
        "producer": PRODUCER,
        "schemaURL": CORE_URL,
        "run": {"runId": "0192f3c1-5a4e-7c3d-9b1a-2f6e8d4c0a11"},
        "job": {"namespace": "spark", "name": "daily"},
        "inputs": [{"namespace": "file", "name": "/lake/sales"}],
    }
    schema = {
        "_producer": PRODUCER,
        "_schemaURL": "https://openlineage.io/spec/facets/1-1-1/SchemaDatasetFacet.json",
        "fields": [{"name": "a", "type": "int"}],
    }
    lines = [
        json.dumps(event),
        json.dumps(schema),
        json.dumps({"schema": schema}),
        json.dumps(VALID),
    ]
    path = _write(tmp_path, "mixed.jsonl", "\n".join(lines) + "\n")
    status, out = _run(capsys, "--strict", path)
    assert status == 0, out
    assert f"{path}:1: valid, no subset facet: an OpenLineage event without subset" in out
    assert f"{path}:2: not checked, no subset facet: another facet (https://openlineage" in out
    assert f"{path}:3: not checked, no subset facet: a facet map of other facets ('schema')" in out
    assert f"{path}:4: valid\n" in out
    assert "4 document(s): 1 valid, 0 invalid, 3 without a subset facet" in out
    status, out = _run(capsys, "--require-subset", "--format", "json", path)
    assert status == 1
    report = json.loads(out)
    assert [r["valid"] for r in report["results"]] == [False, False, False, True]
    assert report["results"][1]["issues"][0]["message"].startswith("no subset facet: another")
    assert report["summary"]["invalid"] == 3 and report["summary"]["withoutSubsetFacet"] == 0
    broken = dict(event, run={})  # an event without subset facets is still checked
    status, out = _run(capsys, _write(tmp_path, "broken.json", json.dumps(broken)))
    assert status == 1 and "runId" in out


def test_an_events_partition_mapping_facets_are_checked_too(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    """The custom facet ``olsubset_partitionMapping`` of an event's output, when it names the
    facet's schema, is reported like a subset facet: where, what, under which rule."""
    facets = json.loads((ROOT / "tests/data/partition_mapping/output_facets.json").read_text())
    (key,) = facets
    event = {
        "eventType": "COMPLETE",
        "eventTime": "2024-10-15T10:00:00Z",
        "producer": PRODUCER,
        "schemaURL": CORE_URL,
        "run": {"runId": "0192f3c1-5a4e-7c3d-9b1a-2f6e8d4c0a11"},
        "job": {"namespace": "spark", "name": "monthly"},
        "outputs": [{"namespace": "file", "name": "/lake/monthly", "outputFacets": facets}],
    }
    good = _write(tmp_path, "good.json", json.dumps(event))
    assert _run(capsys, "--strict", good)[0] == 0
    facets[key]["mappings"][1]["steps"][1]["pattern"] = "MM/yyyy"
    facets[key]["_producer"] = "not a URI"
    bad = _write(tmp_path, "bad.json", json.dumps(event))
    status, out = _run(capsys, bad)
    assert status == 1
    where = f"{bad}: $.outputs[0].outputFacets.{key}"
    assert f"{where}.mappings[1].steps[1].pattern: expected one of" in out
    assert "_producer" not in out  # a format: strict mode's
    status, out = _run(capsys, "--strict", "--format", "json", bad)
    (result,) = json.loads(out)["results"]
    rules = {issue["path"].rsplit(".", 1)[-1]: issue["rule"] for issue in result["issues"]}
    assert rules == {"pattern": "schema", "_producer": "strict"}
    facets[key].update(_producer=PRODUCER, _schemaURL="https://example.com/PartitionMapping.json")
    other = _write(tmp_path, "other.json", json.dumps(event))
    assert _run(capsys, "--strict", other)[0] == 0  # another producer's facet under the key


def test_version_is_the_installed_one(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as stopped:
        main(["--version"])
    assert stopped.value.code == 0
    assert capsys.readouterr().out == f"ol-subset {version('openlineage-subset')}\n"


def test_run_without_a_script_asks_for_the_script_alone(
    capsys: pytest.CaptureFixture[str],
) -> None:
    with pytest.raises(SystemExit) as stopped:
        main(["run"])
    assert stopped.value.code == 2
    err = capsys.readouterr().err
    assert "required: SCRIPT.py\n" in err, err
    assert "ARGS ...]" in err, "the usage shows the script's arguments as optional"


@pytest.mark.parametrize(("command", "defaults"), [("run", 2), ("demo", 1), ("connect-server", 6)])
def test_help_states_the_defaults(
    capsys: pytest.CaptureFixture[str], command: str, defaults: int
) -> None:
    with pytest.raises(SystemExit):
        main([command, "--help"])
    out = " ".join(capsys.readouterr().out.split())
    assert out.count("(default:") >= defaults, out


def test_an_events_streaming_batch_facet_is_checked_too(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    """The run facet ``olsubset_streamingBatch`` of a micro-batch's run, when it names the
    facet's schema, is reported like the partition mapping facet."""
    from openlineage_subset_generated.custom.streaming_batch import v1_0_0 as schema

    facet = {
        "_producer": PRODUCER,
        "_schemaURL": schema.FACET_DEF_URL,
        "queryId": "3f1c8e52-6a0b-4d7e-9c21-5b8f0a7d6e14",
        "queryRunId": "0192f3c1-5a4e-7c3d-9b1a-2f6e8d4c0a10",
        "batchId": 4,
        "queryName": "clicks",
    }
    event = {
        "eventType": "COMPLETE",
        "eventTime": "2024-10-15T10:00:00Z",
        "producer": PRODUCER,
        "schemaURL": CORE_URL,
        "run": {
            "runId": "0192f3c1-5a4e-7c3d-9b1a-2f6e8d4c0a11",
            "facets": {schema.FACET_KEY: facet},
        },
        "job": {"namespace": "spark", "name": "app.stream.clicks.batch"},
    }
    good = _write(tmp_path, "good.json", json.dumps(event))
    assert _run(capsys, "--strict", good)[0] == 0
    facet["batchId"] = "four"
    del facet["queryRunId"]
    bad = _write(tmp_path, "bad.json", json.dumps(event))
    status, out = _run(capsys, bad)
    assert status == 1
    where = f"{bad}: $.run.facets.{schema.FACET_KEY}"
    assert f"{where}: missing required property 'queryRunId'" in out
    assert f"{where}.batchId: " in out
    facet["_schemaURL"] = "https://example.com/StreamingBatch.json"  # another producer's
    other = _write(tmp_path, "other.json", json.dumps(event))
    assert _run(capsys, "--strict", other)[0] == 0
