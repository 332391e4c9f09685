"""Print the time of each nox session of a CI run, from nox's JSON report, and the totals.

    python3 .ci/times.py REPORT SECONDS

REPORT is the file nox wrote (noxfile.py sets .nox/report.json), SECONDS the wall time of the
whole of .ci/run. A missing or unreadable report is said, not hidden (nox died before writing).
"""

from __future__ import annotations

import json
import sys
from pathlib import Path


def main(report: str, total: str) -> int:
    try:
        sessions = json.loads(Path(report).read_text(encoding="utf-8"))["sessions"]
    except (OSError, ValueError, KeyError) as error:
        print(f"no session times: the report {report} could not be read ({error})")
        return 1
    rows = [(_name(s), s["result"], round(float(s.get("duration") or 0))) for s in sessions]
    rows.append(("sessions, together", "", sum(seconds for _, _, seconds in rows)))
    rows.append((".ci/run, whole", "", int(total)))
    width = max(len(name) for name, _, _ in rows)
    print(f"{'session':<{width}}  {'result':<8}  {'seconds':>7}  {'m:ss':>5}")
    for name, result, seconds in rows:
        print(f"{name:<{width}}  {result:<8}  {seconds:>7}  {seconds // 60:>2}:{seconds % 60:02}")
    return 0


def _name(entry: dict[str, object]) -> str:
    """The session as nox lists it: sdk-3.10, spark(pyspark='4')."""
    signatures = entry.get("signatures")
    if isinstance(signatures, list) and signatures:
        return str(signatures[0])
    return str(entry.get("name", "?"))


if __name__ == "__main__":
    sys.exit(main(*sys.argv[1:3]))
