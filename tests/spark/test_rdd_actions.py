"""RDD actions as runs: a Spark job outside SQL that reads files through a Hadoop input format
or writes files is one run, with the paths it read and wrote as subsets of their datasets.

Expected names and subsets come from the files the tests lay out and Spark writes on disk.
"""

from __future__ import annotations

import glob
import json
import textwrap
from pathlib import Path
from typing import Any

import pytest
from pyspark.sql import SparkSession

from openlineage_subset import validate
from tests.spark.conftest import Capture, data_files, dims, ol_subset

pytestmark = pytest.mark.spark

APP = "openlineage_subset_tests"


def _words(path: Path) -> str:
    return str(path).strip("/").replace("/", "_").replace("-", "_").replace(".", "_").lower()


def _one_run(capture: Capture) -> tuple[dict[str, Any], dict[str, Any]]:
    runs = capture.runs()
    assert len(runs) == 1, [events[-1]["job"]["name"] for events in runs.values()]
    (events,) = runs.values()
    start, end = events
    for event in events:
        assert validate(event, strict=True) == []
    assert start["run"]["runId"] == end["run"]["runId"]
    return start, end


def _ended(capture: Capture) -> list[dict[str, Any]]:
    """The last event of each run captured since the last call, in the order they started."""
    runs = sorted(capture.runs().values(), key=lambda events: events[0]["eventTime"])
    return [events[-1] for events in runs]


def _subset(dataset: dict[str, Any]) -> dict[str, Any] | None:
    facets = dataset.get("inputFacets") or dataset.get("outputFacets") or {}
    facet = facets.get("subset")
    if facet is None:
        return None
    return facet.get("inputCondition") or facet.get("outputCondition")


def _lines(folder: Path, name: str, lines: list[str]) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / name).write_text("".join(f"{line}\n" for line in lines), encoding="utf-8")
    return folder


def _written_lines(folder: Path) -> list[str]:
    return sorted(
        line
        for path in data_files(folder)
        for line in Path(path).read_text(encoding="utf-8").splitlines()
    )


def test_text_file_to_save_as_text_file_is_one_run_of_the_paths_read_and_written(
    spark: SparkSession, tmp_path: Path, capture: Capture
) -> None:
    logs, out = tmp_path / "logs", tmp_path / "out"
    _lines(logs / "2024" / "10" / "14", "a.txt", ["old"])
    read = _lines(logs / "2024" / "10" / "15", "a.txt", ["x", "y"])
    _lines(read, "b.txt", ["z"])
    written = out / "2024" / "10" / "15"
    spark.sparkContext.textFile(str(read)).map(str.upper).saveAsTextFile(str(written))

    start, end = _one_run(capture)
    assert (start["eventType"], end["eventType"]) == ("START", "COMPLETE")
    assert end["job"]["name"] == f"{APP}.save_as_text_file.{_words(out)}"
    facets = end["run"]["facets"]
    assert facets["parent"]["run"]["runId"] == capture.handle.application.run_id
    assert facets["processing_engine"]["version"] == spark.version
    (source,) = end["inputs"]
    assert (source["namespace"], source["name"]) == ("file", str(logs)), "named after the root"
    assert _subset(source) == {"type": "location", "locations": [f"file:{read}"]}
    (target,) = end["outputs"]
    assert (target["namespace"], target["name"]) == ("file", str(out))
    assert _subset(target) == {"type": "location", "locations": [f"file:{written}"]}
    assert _written_lines(out) == ["X", "Y", "Z"], "every file written lies in the location"
    assert "outputFacets" not in start["outputs"][0], "what was written is known at the end"


def test_a_glob_reads_exactly_the_files_it_matched(
    spark: SparkSession, tmp_path: Path, capture: Capture
) -> None:
    folder = _lines(tmp_path / "in", "a.txt", ["1"])
    _lines(folder, "b.txt", ["2"])
    _lines(folder, "c.csv", ["3"])
    pattern = str(folder / "*.txt")
    assert spark.sparkContext.textFile(pattern).count() == 2

    _, end = _one_run(capture)
    assert end["job"]["name"] == f"{APP}.count.{_words(folder)}"
    (source,) = end["inputs"]
    assert source["name"] == str(folder) and end["outputs"] == []
    matched = sorted(f"file:{path}" for path in glob.glob(pattern))
    assert _subset(source) == {"type": "location", "locations": matched}


def test_a_parallelized_collection_is_no_input(
    spark: SparkSession, tmp_path: Path, capture: Capture
) -> None:
    out = tmp_path / "numbers"
    spark.sparkContext.parallelize(range(10), 2).map(str).saveAsTextFile(str(out))
    assert spark.sparkContext.parallelize(range(10)).map(lambda n: n * 2).count() == 10

    _, end = _one_run(capture)
    assert end["inputs"] == []
    (target,) = end["outputs"]
    assert target["name"] == str(out) and _subset(target) is None, "the whole dataset written"
    assert _written_lines(out) == sorted(str(n) for n in range(10))


def test_partition_directories_read_and_written_are_partitions(
    spark: SparkSession, tmp_path: Path, capture: Capture
) -> None:
    table, copy = tmp_path / "events", tmp_path / "copy"
    for day in ("2024-10-14", "2024-10-15", "2024-10-16"):
        _lines(table / f"day={day}", "part.txt", [day])
    read = [table / "day=2024-10-14", table / "day=2024-10-16"]
    rdd = spark.sparkContext.textFile(",".join(map(str, read)))
    rdd.saveAsTextFile(str(copy / "day=2024-10-17"))

    _, end = _one_run(capture)
    (source,) = end["inputs"]
    assert source["name"] == str(table)
    partitions = _subset(source)["partitions"]  # type: ignore[index]
    expected = [path.relative_to(table).as_posix() for path in read]
    assert [p["identifier"] for p in partitions] == expected
    assert [p["dimensions"] for p in partitions] == [dims(path) for path in expected]
    (target,) = end["outputs"]
    assert target["name"] == str(copy)
    assert _subset(target)["partitions"] == [  # type: ignore[index]
        {"dimensions": {"day": "2024-10-17"}, "identifier": "day=2024-10-17"}
    ]
    assert {Path(p).parent.name for p in data_files(copy)} == {"day=2024-10-17"}


def test_pickle_and_sequence_files_are_runs_one_per_action(
    spark: SparkSession, tmp_path: Path, capture: Capture
) -> None:
    sc = spark.sparkContext
    pickled, sequence, text = tmp_path / "pickled", tmp_path / "sequence", tmp_path / "text"
    _lines(text, "a.txt", ["a", "b"])
    sc.parallelize(range(20)).saveAsPickleFile(str(pickled))
    assert sc.pickleFile(str(pickled)).count() == 20
    # PySpark looks at a first element (one or two short jobs) before a Hadoop save.
    sc.textFile(str(text)).map(lambda line: (line, 1)).saveAsSequenceFile(str(sequence))
    assert sorted(sc.sequenceFile(str(sequence)).collect()) == [("a", 1), ("b", 1)]

    ended = _ended(capture)
    shapes = [
        (
            end["job"]["name"].split(".")[1],
            [d["name"] for d in end["inputs"]],
            [d["name"] for d in end["outputs"]],
        )
        for end in ended
    ]
    assert shapes == [
        ("save_as_object_file", [], [str(pickled)]),
        ("count", [str(pickled)], []),
        ("save_as_hadoop_file", [str(text)], [str(sequence)]),
        ("collect", [str(sequence)], []),
    ]
    assert all(end["eventType"] == "COMPLETE" for end in ended)


def test_a_failing_rdd_action_is_a_fail_run_with_the_error(
    spark: SparkSession, tmp_path: Path, capture: Capture
) -> None:
    text, out = _lines(tmp_path / "text", "a.txt", ["1", "0"]), tmp_path / "ratios"

    def invert(line: str) -> str:
        return str(1 / int(line))

    with pytest.raises(Exception, match="ZeroDivisionError"):
        spark.sparkContext.textFile(str(text)).map(invert).saveAsTextFile(str(out))

    start, end = _one_run(capture)
    assert (start["eventType"], end["eventType"]) == ("START", "FAIL")
    error = end["run"]["facets"]["errorMessage"]
    assert "ZeroDivisionError" in error["message"] + error["stackTrace"]
    assert [d["name"] for d in end["inputs"]] == [str(text)]
    assert [d["name"] for d in end["outputs"]] == [str(out)]
    assert capture.handle.counts["errors"] == 0, "the user's error is not ours"


def test_rdd_jobs_inside_a_dataframe_action_are_no_second_run(
    spark: SparkSession, tmp_path: Path, capture: Capture
) -> None:
    sc = spark.sparkContext
    text, parquet, json_lines = tmp_path / "text", tmp_path / "parquet", tmp_path / "json"
    _lines(text, "a.txt", ["a", "b", "c"])
    _lines(json_lines, "a.json", [json.dumps({"n": n}) for n in range(3)])
    lines = spark.createDataFrame(sc.textFile(str(text)).map(lambda line: (line,)), "line string")
    lines.write.parquet(str(parquet))
    inferred = spark.read.json(str(json_lines))  # Spark reads it all to infer a schema
    assert inferred.columns == ["n"]

    _, end = _one_run(capture)
    assert end["job"]["name"] == f"{APP}.write.{_words(parquet)}"
    assert [d["name"] for d in end["inputs"]] == [str(text)], "what the RDD read"
    assert [d["name"] for d in end["outputs"]] == [str(parquet)]


def test_openlineage_rdd_scripts_give_the_runs_their_tests_expect(
    spark: SparkSession, tmp_path: Path, capture: Capture
) -> None:
    """The four RDD runs of OpenLineage's own PySpark test scripts (``spark_rdd_to_table.py``,
    ``spark_single_input_rdd.py``, ``spark_input_only_rdd.py``, ``spark_rdd_with_parquet.py``),
    with their paths under ``tmp_path``."""
    sc = spark.sparkContext
    # spark_rdd_to_table.py: a parallelized RDD saved as text, then read as csv by SQL.
    csv_dir, table = tmp_path / "rdd_to_csv_output", tmp_path / "rdd_to_table"
    words = sc.parallelize([(f"word{n} other{n}", n) for n in range(100)])
    words.setName("list of random words and numbers")
    words.map(lambda row: ",".join(map(str, row))).saveAsTextFile(str(csv_dir))
    schema = "name string, age int"
    people = spark.read.option("header", False).schema(schema).csv(str(csv_dir))
    people.where("age > 20 AND age < 65").write.mode("overwrite").parquet(str(table))
    to_csv, to_table = _ended(capture)
    assert (to_csv["inputs"], [d["name"] for d in to_csv["outputs"]]) == ([], [str(csv_dir)])
    assert [d["name"] for d in to_table["inputs"]] == [str(csv_dir)]
    assert [d["name"] for d in to_table["outputs"]] == [str(table)]

    # spark_single_input_rdd.py: a text file mapped and saved into a date directory.
    rdd_input, rdd_output = tmp_path / "rdd_input", tmp_path / "rdd_output"
    _lines(rdd_input, "sample.txt", ["hello world", "hello pyspark rdd", "hello again world"])
    rdd_output.mkdir()
    sc.textFile(str(rdd_input)).map(lambda line: line).saveAsTextFile(str(rdd_output / "20251030"))
    _, single = _one_run(capture)
    assert [d["name"] for d in single["inputs"]] == [str(rdd_input)]
    (output,) = single["outputs"]
    assert output["name"] == str(rdd_output)
    assert _subset(output) == {"type": "location", "locations": [f"file:{rdd_output}/20251030"]}

    # spark_input_only_rdd.py: an RDD of a DataFrame, repartitioned. A repartition runs
    # nothing (OpenLineage's run there is Spark's job reading parquet footers, a parallelized
    # list of files); once an action runs on it, its run reads the input and writes nothing.
    input_rdd = tmp_path / "input_rdd"
    spark.createDataFrame([{"a": "x", "b": "z"}, {"a": "y", "b": "z"}]).write.parquet(
        str(input_rdd)
    )
    capture.runs()
    repartitioned = spark.read.parquet(str(input_rdd)).rdd.map(lambda x: (x["a"] + x["b"],))
    repartitioned = repartitioned.repartition(2)
    assert capture.runs() == {}
    assert repartitioned.count() == 2
    _, input_only = _one_run(capture)
    assert [d["name"] for d in input_only["inputs"]] == [str(input_rdd)]
    assert input_only["outputs"] == []

    # spark_rdd_with_parquet.py: RDDs of two parquet datasets, a union, a map, written as
    # parquet (into a date directory) through a DataFrame: the SQL write is the one run.
    rdd_a, rdd_b, rdd_c = tmp_path / "rdd_a", tmp_path / "rdd_b", tmp_path / "rdd_c"
    frame = spark.createDataFrame([{"a": "x", "b": "z"}, {"a": "y", "b": "z"}])
    frame.write.parquet(str(rdd_a))
    frame.write.parquet(str(rdd_b))
    capture.runs()
    union = spark.read.parquet(str(rdd_a)).rdd.union(spark.read.parquet(str(rdd_b)).rdd)
    (rdd_c / "20251030").mkdir(parents=True)
    mapped = union.map(lambda x: (x["a"] + x["b"],)).toDF()
    mapped.write.mode("overwrite").parquet(str(rdd_c / "20251030"))
    _, with_parquet = _one_run(capture)
    assert sorted(d["name"] for d in with_parquet["inputs"]) == [str(rdd_a), str(rdd_b)]
    assert [d["name"] for d in with_parquet["outputs"]] == [str(rdd_c)]


SCRIPT = textwrap.dedent(
    """
    import os, sys
    from pyspark.sql import SparkSession
    master = os.environ.get("OL_SUBSET_TEST_MASTER", "local[1]")
    spark = (SparkSession.builder.master(master).appName("rdd script")
             .config("spark.ui.enabled", "false").getOrCreate())
    sc = spark.sparkContext
    source, copy, failed = sys.argv[1:4]
    sc.textFile(source).map(str.upper).saveAsTextFile(copy)
    print("numbers", sc.parallelize(range(5)).count())
    try:
        sc.textFile(source).map(lambda line: 1 / 0).saveAsTextFile(failed)
    except Exception:
        print("failed on purpose")
    spark.stop()
    """
)


def test_rdd_actions_under_ol_subset_run_leave_no_lineage_line(tmp_path: Path) -> None:
    script, events_file = tmp_path / "job.py", tmp_path / "events.jsonl"
    script.write_text(SCRIPT, encoding="utf-8")
    source = _lines(tmp_path / "source", "a.txt", ["a", "b"])
    copy, failed = tmp_path / "copy", tmp_path / "failed"
    done = ol_subset(
        "run", "--output", str(events_file), str(script), str(source), str(copy), str(failed),
        cwd=tmp_path,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr[-3000:]
    assert "numbers 5" in done.stdout and "failed on purpose" in done.stdout
    events = [json.loads(line) for line in events_file.read_text().splitlines()]
    assert all(validate(event, strict=True) == [] for event in events)
    ends = {
        e["job"]["name"]: e["eventType"]
        for e in events
        if e["eventType"] in ("COMPLETE", "FAIL") and "parent" in e["run"]["facets"]
    }
    assert ends == {
        f"rdd_script.save_as_text_file.{_words(copy)}": "COMPLETE",
        f"rdd_script.save_as_text_file.{_words(failed)}": "FAIL",
    }
    lines = done.stderr.splitlines()
    (summary,) = [line for line in lines if line.startswith("ol-subset run:")]
    assert summary.startswith("ol-subset run: 2 action(s) captured; ")
    ours = [line for line in lines if "lineage" in line.lower() or "openlineage" in line.lower()]
    assert ours == [], ours
