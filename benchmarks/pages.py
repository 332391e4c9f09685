"""The server time of each page of ``ol-subset lineage serve`` at ten times the benchmark's history.

Builds the history of ``benchmarks/lineage.py`` (``--days``, default 1,095; ``--countries``,
default 300: 328,500 partitions a dataset) once, ingested into a database kept under the
system's temporary folder in a folder named by those parameters (a rerun with the same ones
reuses it), then starts the real server (``python -m openlineage_subset lineage serve --port 0``
on 127.0.0.1, as ``benchmarks/serve.py`` does) over it and asks each page ``--repeat`` times
(default 3), one request at a time. Per page it prints the median wall time of the request
(loopback: the server's time, with the transfer of the page) and the median CPU time the server
process spent on it (``/proc/PID/stat``: what the page cost, whatever else the machine does),
and the page's size.

``--src DIR`` serves the code of another checkout (its ``src`` and ``generated``, put first on
the server's ``PYTHONPATH``): the code before a change, e.g. from
``git archive COMMIT src generated | tar -x -C /tmp/old``. ``--out FILE`` writes the times as
JSON; ``--baseline FILE`` (such a file, of the code before) adds the ratio new / old per page.
``--gzip`` asks for each page compressed, as a browser does (the server's compression
counted, the size the compressed one). ``--save DIR`` writes each page's body (decompressed)
to DIR, one file a page named after it, so that the pages of two versions can be compared.
Run the two back to back, on the same database::

    python benchmarks/pages.py --src /tmp/old --out old.json --save /tmp/pages-old
    python benchmarks/pages.py --out new.json --baseline old.json --save /tmp/pages-new

Each page's line also has the server's peak memory (``VmHWM``) once it was answered: with
``--fresh`` a new server answers each page, so that the peak is that page's alone. ``--only
TEXT`` asks only the pages whose name holds it: ``--only whole`` the answers of a whole
dataset (the UI's buttons with nothing selected, the JSON API without a partition), which the
code before issue 38's item 3 answered whole (the provenance page: 198 MB of HTML)::

    python benchmarks/pages.py --src /tmp/old --only whole --fresh --repeat 1 --out old.json
    python benchmarks/pages.py --only whole --fresh --repeat 1 --baseline old.json

``--db FILE`` asks the pages of a database made already, of the history of ``--days`` and
``--countries`` (``benchmarks/lineage.py --chunk-events N --keep DIR`` makes the largest, ten
million events, as it ingests them)::

    python benchmarks/lineage.py --days 1000000 --countries 3 --shape ours \
        --chunk-events 50000 --keep /tmp/ol-10m
    python benchmarks/pages.py --db /tmp/ol-10m/lineage.db --days 1000000 --countries 3

Target: every page at most 1 s of server time at the default size; the impact and provenance
queries themselves (``benchmarks/lineage_queries.py``) at most 100 ms.
"""

from __future__ import annotations

import argparse
import datetime as dt
import gzip as gzip_format
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path
from urllib.parse import urlencode

sys.path.insert(0, str(Path(__file__).parent))

import lineage as pipeline  # benchmarks/lineage.py: the synthetic history
from serve import _SERVE, cpu_seconds, stop_server  # benchmarks/serve.py: the real server

from openlineage_subset.lineage import ingest

NAMESPACE = pipeline.NAMESPACE


def database(days: int, countries: int, seed: int) -> Path:
    """The history's database, made once per parameters (kept in the temporary folder)."""
    folder = Path(tempfile.gettempdir(), "ol-subset-pages", f"d{days}-c{countries}-s{seed}")
    db = folder / "lineage.db"
    if db.exists():
        return db
    folder.mkdir(parents=True, exist_ok=True)
    events = folder / "events.jsonl"
    print(f"making {db} (once): {days} dates x {countries} countries", flush=True)
    pipeline.write_history(events, pipeline.history(days, countries, seed))
    partial = folder / "partial.db"
    partial.unlink(missing_ok=True)
    report = ingest([events], partial)
    assert report.invalid == 0, report.summary()
    events.unlink()
    partial.rename(db)
    return db


def pages(days: int, run_id: str) -> dict[str, str]:
    """The pages asked, by name: path and query."""
    first = pipeline.FIRST_DAY
    middle = first + dt.timedelta(days=pipeline.start_day(days))
    last = first + dt.timedelta(days=days - 1)
    code = pipeline.CODES[0]

    def dataset(name: str) -> str:
        return "/dataset?" + urlencode({"namespace": NAMESPACE, "name": name})

    def answer(name: str, query: str, day: dt.date) -> str:
        partition = json.dumps({"business_date": day.isoformat(), "country": code})
        asked = {"namespace": NAMESPACE, "name": name, "query": query, "p": partition}
        return "/answer?" + urlencode(asked)

    def api(query: str, name: str, day: dt.date | None) -> str:
        asked = [("dataset", name), ("namespace", NAMESPACE)]
        if day is not None:
            asked += [
                ("partition", f"business_date={day.isoformat()}"),
                ("partition", f"country={code}"),
            ]
        return f"/api/v1/{query}?" + urlencode(asked)

    def whole(name: str, query: str) -> str:
        """The answer page of the whole dataset: the buttons under a grid with nothing
        selected."""
        return "/answer?" + urlencode({"namespace": NAMESPACE, "name": name, "query": query})

    return {
        "home": "/",
        "dataset raw/events": dataset("raw/events"),
        "dataset agg/daily": dataset("agg/daily"),
        "dataset reports/daily": dataset("reports/daily"),
        "dataset raw/events, older rows": dataset("raw/events") + f"&before={middle.isoformat()}",
        "runs": "/runs",
        "run": "/run?" + urlencode({"id": run_id}),
        "impact page raw/events": answer("raw/events", "impact", middle),
        "provenance page reports/daily": answer("reports/daily", "provenance", last),
        "api impact raw/events": api("impact", "raw/events", middle),
        "api provenance reports/daily": api("provenance", "reports/daily", last),
        # The whole dataset (issue 38, item 3): every run downstream, or behind it.
        "impact page raw/events, whole": whole("raw/events", "impact"),
        "provenance page reports/daily, whole": whole("reports/daily", "provenance"),
        "api impact raw/events, whole": api("impact", "raw/events", None),
        "api provenance reports/daily, whole": api("provenance", "reports/daily", None),
    }


def started(db: Path, src: Path | None) -> tuple[subprocess.Popen[str], str]:
    """The server over ``db`` (the code of ``src`` when given), once it is ready."""
    environment = dict(os.environ)
    if src is not None:
        paths = [str(src / "src"), str(src / "generated"), environment.get("PYTHONPATH", "")]
        environment["PYTHONPATH"] = os.pathsep.join(path for path in paths if path)
    import subprocess

    process = subprocess.Popen(
        [*_SERVE, "--db", str(db), "--port", "0"],
        stdout=subprocess.PIPE,
        text=True,
        env=environment,
    )
    assert process.stdout is not None
    line = process.stdout.readline()
    if not line.startswith("ready: "):
        stop_server(process)
        raise SystemExit(f"lineage serve did not start: {line!r}")
    return process, line.removeprefix("ready: ").strip()


def peak_mb(pid: int) -> float:
    """The most memory the process ``pid`` has held so far (resident, MB: ``VmHWM``)."""
    status = Path(f"/proc/{pid}/status").read_text(encoding="utf-8")
    (line,) = [line for line in status.splitlines() if line.startswith("VmHWM:")]
    return int(line.split()[1]) / 1024


def measured(
    base: str, pid: int, path: str, repeat: int, gzip: bool = False, timeout: float = 600
) -> tuple[dict[str, float], bytes]:
    """Median wall and server CPU seconds of ``repeat`` requests of ``path`` and its size
    (compressed, with ``gzip``: asked as a browser asks, the server's compression included),
    and the page itself (decompressed). A request not answered within ``timeout`` seconds
    ends the measure: its figures are those so far, ``timedOut`` 1 and no size. An answer
    other than 200 (a whole dataset past ``--max-whole-answer``: 422) is measured as any, its
    status kept (``status``)."""
    walls, cpus, size, body, status = [], [], 0, b"", 200
    headers = {"Accept-Encoding": "gzip"} if gzip else {}
    for _ in range(repeat):
        cpu, began = cpu_seconds(pid), time.perf_counter()
        request = urllib.request.Request(base + path, headers=headers)
        try:
            with urllib.request.urlopen(request, timeout=timeout) as response:
                body = response.read()
        except urllib.error.HTTPError as error:  # answered, with another status
            response, body, status = error, error.read(), error.code
        except TimeoutError:
            wall, spent = time.perf_counter() - began, cpu_seconds(pid) - cpu
            return {
                "wall": wall,
                "cpu": spent,
                "bytes": 0,
                "peak": peak_mb(pid),
                "timedOut": 1,
            }, b""
        walls.append(time.perf_counter() - began)
        cpus.append(cpu_seconds(pid) - cpu)
        size = len(body)
        if response.headers.get("Content-Encoding") == "gzip":
            body = gzip_format.decompress(body)
    times = {
        "wall": statistics.median(walls),
        "cpu": statistics.median(cpus),
        "bytes": size,
        "peak": peak_mb(pid),
    }
    if status != 200:
        times["status"] = status
    return times, body


def saved_name(page: str) -> str:
    """The file a page is saved as (``--save``): its name, one word, and what it is.

    >>> saved_name("dataset raw/events, older rows"), saved_name("api impact raw/events")
    ('dataset-raw-events-older-rows.html', 'api-impact-raw-events.json')
    """
    word = "-".join("".join(c if c.isalnum() else " " for c in page).split())
    return word + (".json" if page.startswith("api ") else ".html")


def _arguments() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--days", type=int, default=1095, help="business dates (default 1095)")
    parser.add_argument("--countries", type=int, default=300, help="countries (default 300)")
    parser.add_argument("--seed", type=int, default=10, help="seed of the failed runs")
    parser.add_argument(
        "--db",
        type=Path,
        help="a database of that history made already (benchmarks/lineage.py --chunk-events "
        "--keep): ten million events are not made here",
    )
    parser.add_argument("--repeat", type=int, default=3, help="requests of each page (median)")
    parser.add_argument("--src", type=Path, help="a checkout whose code to serve")
    parser.add_argument("--out", type=Path, help="write the times as JSON")
    parser.add_argument("--baseline", type=Path, help="times (--out) of the code before")
    parser.add_argument(
        "--gzip", action="store_true", help="ask for gzip as browsers do (compression counted)"
    )
    parser.add_argument("--save", type=Path, help="write each page's body to this folder")
    parser.add_argument(
        "--only",
        action="append",
        help="ask only the pages whose name holds this text (e.g. 'whole'); repeat for more",
    )
    parser.add_argument(
        "--timeout", type=float, default=600, help="seconds a request may take (default 600)"
    )
    parser.add_argument(
        "--fresh",
        action="store_true",
        help="a new server for each page: its peak memory is that page's alone",
    )
    return parser.parse_args()


def main() -> None:
    args = _arguments()
    db = args.db if args.db is not None else database(args.days, args.countries, args.seed)
    run_id = f"00000000-0000-4000-8000-{args.days * 5 // 2:012d}"  # a run in the middle
    baseline = json.loads(args.baseline.read_text()) if args.baseline else {}
    asked = {
        name: path
        for name, path in pages(args.days, run_id).items()
        if args.only is None or any(text in name for text in args.only)
    }
    results: dict[str, dict[str, float]] = {}
    process, base = started(db, args.src)
    try:
        urllib.request.urlopen(base + "/", timeout=600).read()
        print(f"{args.days} dates x {args.countries} countries; load {os.getloadavg()[0]:.1f}")
        print(
            f"{'page':38} {'wall s':>8} {'CPU s':>8} {'KB':>8} {'peak MB':>8}"
            "  ratios new/old: CPU, wall, bytes, peak"
        )
        for name, path in asked.items():
            if args.fresh and results:  # the server's peak memory, this page's alone
                stop_server(process)
                process, base = started(db, args.src)
                urllib.request.urlopen(base + "/", timeout=600).read()
            found, body = measured(base, process.pid, path, args.repeat, args.gzip, args.timeout)
            results[name] = found
            if found.get("timedOut"):  # still at it: a server of its own for the next page
                process.kill()
                process.wait()
                process, base = started(db, args.src)
            if args.save:
                args.save.mkdir(parents=True, exist_ok=True)
                (args.save / saved_name(name)).write_bytes(body)
            print(_line(name, found, baseline.get(name)), flush=True)
    finally:
        try:
            stop_server(process)
        except subprocess.TimeoutExpired:  # a request still under way: stopped all the same
            process.kill()
            process.wait()
        if args.out:  # what was measured, even when a page failed
            args.out.write_text(json.dumps(results, indent=2) + "\n")


def _line(name: str, found: dict[str, float], old: dict[str, float] | None) -> str:
    """A page's figures, and with ``old`` (the code before's) the ratios new / old."""
    size = "timeout" if found.get("timedOut") else f"{found['bytes'] / 1024:.0f}"
    line = f"{name:38} {found['wall']:8.3f} {found['cpu']:8.3f} {size:>8} {found['peak']:8.0f}"
    if found.get("status"):
        line += f"  (status {found['status']:.0f})"
    if old is not None:
        line += f"  {_ratio(found['cpu'], old['cpu'])} {_ratio(found['wall'], old['wall'])}"
        line += f" {_ratio(found['bytes'], old['bytes'])}" if old["bytes"] else "      -"
        line += f" {_ratio(found['peak'], old['peak'])}" if "peak" in old else ""
        was = (
            "no answer within the timeout"
            if old.get("timedOut")
            else f"{old['bytes'] / 1024:.0f} KB"
        )
        line += f" (was {old['cpu']:.3f} / {old['wall']:.3f} s, {was}"
        line += f", {old['peak']:.0f} MB)" if "peak" in old else ")"
    return line


def _ratio(new: float, old: float) -> str:
    """new / old, or what stands for it when the old time rounded to nothing (/proc counts CPU
    in 10 ms steps: a small page may take none)."""
    if old:
        return f"{new / old:6.3f}"
    return f"{'-':>6}" if not new else f"{'>old':>6}"


if __name__ == "__main__":
    main()
