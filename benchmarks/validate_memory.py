"""Peak memory of ``ol-subset validate`` on a large JSON Lines file, against its longest line.

Writes a JSON Lines file of about ``--megabytes`` MB (the example events, each with its own run
id, and one event of about ``--long-line`` MB listing many partitions), then validates it in a
child process and reads that process's peak resident memory (``ru_maxrss``). The same command on
a one-line file gives the memory of the interpreter and the package; the script prints both and
the ratio (peak - that) / longest line. Reading line by line keeps the ratio flat as the file
grows; reading the file whole would make it grow with the file.

    python benchmarks/validate_memory.py [--megabytes 200] [--long-line 8]
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
import uuid
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
EXAMPLES = ROOT / "examples" / "daily_sales_events.jsonl"
MB = 1024 * 1024


def write_events(path: Path, megabytes: float, long_line_megabytes: float) -> tuple[int, int]:
    """Write the file; returns (lines, length of the longest line in bytes)."""
    templates = EXAMPLES.read_text(encoding="utf-8").splitlines()
    run_id = json.loads(templates[0])["run"]["runId"]
    long_line = json.dumps(_long_event(json.loads(templates[0]), long_line_megabytes))
    lines, longest, written = 0, len(long_line) + 1, 0
    with path.open("w", encoding="utf-8") as out:
        while written < megabytes * MB:
            template = templates[lines % len(templates)]
            line = template.replace(run_id, str(uuid.UUID(int=lines, version=4))) + "\n"
            out.write(line)
            written += len(line)
            lines += 1
            if lines == 1000:  # the long line early: what follows must not pile up behind it
                out.write(long_line + "\n")
                written += len(long_line) + 1
                lines += 1
    return lines, longest


def _long_event(event: Any, megabytes: float) -> Any:
    """The event, its input reading as many partitions as make its JSON about that long."""
    condition = event["inputs"][0]["inputFacets"]["subset"]["inputCondition"]

    def partition(i: int) -> dict[str, Any]:
        return {"dimensions": {"business_date": f"2024-10-{i % 28 + 1:02d}", "shard": str(i)}}

    count = int(megabytes * MB / (len(json.dumps(partition(10**6))) + 2))
    condition["partitions"] = [partition(i) for i in range(count)]
    return event


def peak_megabytes(path: Path) -> tuple[float, float, int]:
    """Peak resident memory (MB) and seconds of ``ol-subset validate PATH``, and its status."""
    start = time.perf_counter()
    child = subprocess.Popen(
        [sys.executable, "-m", "openlineage_subset", "validate", str(path)],
        stdout=subprocess.DEVNULL,
    )
    _, status, usage = os.wait4(child.pid, 0)
    seconds = time.perf_counter() - start
    child.returncode = os.waitstatus_to_exitcode(status)
    # ru_maxrss is in kilobytes on Linux, in bytes on macOS.
    scale = 1 if sys.platform == "darwin" else 1024
    return usage.ru_maxrss * scale / MB, seconds, child.returncode


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--megabytes", type=float, default=200, help="size of the file")
    parser.add_argument("--long-line", type=float, default=8, help="MB of the longest line")
    parser.add_argument("--write", metavar="PATH", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.write:
        print(json.dumps(write_events(Path(args.write), args.megabytes, args.long_line)))
        return
    with tempfile.TemporaryDirectory() as folder:
        small, big = Path(folder, "one.jsonl"), Path(folder, "events.jsonl")
        small.write_text(EXAMPLES.read_text(encoding="utf-8").splitlines()[0] + "\n")
        # Written by a child: a child's peak memory counts its parent's at the fork, so this
        # process stays small.
        writer = [sys.executable, __file__, "--write", str(big)]
        options = ["--megabytes", str(args.megabytes), "--long-line", str(args.long_line)]
        done = subprocess.run([*writer, *options], capture_output=True, text=True, check=True)
        lines, longest = json.loads(done.stdout)
        size = big.stat().st_size / MB
        baseline, _, _ = peak_megabytes(small)
        peak, seconds, status = peak_megabytes(big)
    assert status == 0, f"ol-subset validate exited with {status}"
    print(f"file: {size:,.0f} MB, {lines:,} lines, the longest {longest / MB:.2f} MB")
    print(f"peak memory validating it:          {peak:8,.0f} MB ({seconds:.0f} s)")
    print(f"peak memory validating one line:    {baseline:8,.0f} MB")
    print(f"(peak - one line) / longest line:   {(peak - baseline) / (longest / MB):8.1f}")
    print(f"peak / file size:                   {peak / size:8.2f}")


if __name__ == "__main__":
    main()
