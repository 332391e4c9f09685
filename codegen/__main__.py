"""Command line: ``python -m codegen [--check] [--schemas DIR] [--output DIR]``."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from codegen._errors import CodegenError
from codegen._models import check_generator_version
from codegen._package import render_package, stale_files, write_package
from codegen._store import load_store

ROOT = Path(__file__).resolve().parent.parent


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m codegen",
        description="Regenerate generated/ from schemas/ (models, validators, schema copies).",
    )
    parser.add_argument(
        "--check",
        action="store_true",
        help="write nothing; exit 1 and name the stale files when generated/ is out of date",
    )
    parser.add_argument("--schemas", type=Path, default=ROOT / "schemas", help="schema folder")
    parser.add_argument("--output", type=Path, default=ROOT / "generated", help="output folder")
    args = parser.parse_args(argv)
    try:
        check_generator_version()
        files = render_package(load_store(args.schemas))
    except CodegenError as error:
        print(f"codegen: error: {error}", file=sys.stderr)
        return 2
    if args.check:
        stale = stale_files(files, args.output)
        if stale:
            print(f"codegen: {len(stale)} file(s) in {args.output} are stale:", file=sys.stderr)
            for name in stale:
                print(f"  {name}", file=sys.stderr)
            print("run `python -m codegen` and commit the result", file=sys.stderr)
            return 1
        print(f"codegen: {args.output} is up to date ({len(files)} files)")
        return 0
    changed = write_package(files, args.output)
    print(f"codegen: wrote {len(changed)} changed file(s) to {args.output}")
    for name in changed:
        print(f"  {name}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
