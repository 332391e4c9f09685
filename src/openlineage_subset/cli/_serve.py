"""``ol-subset lineage serve``: the lineage service's front (the ``serve`` extra).

Checks what it is given before anything listens: the extra installed, one API key at most (an
option, a file or ``OL_SUBSET_API_KEY``), a key for any address but loopback unless
``--insecure``, every number within its bounds, the names of ``--allowed-host``, an address it
can listen on, a usable database. Each refusal is one line on standard error and exit status 2.
"""

from __future__ import annotations

import argparse
import importlib.util
import os
import re
import sys
from typing import Any

from openlineage_subset.cli._output import EXIT_OK, EXIT_UNUSABLE
from openlineage_subset.lineage import LineageDatabaseError
from openlineage_subset.producer import is_loopback

DEFAULT_MAX_BODY = 4 * 1024 * 1024
"""The largest event a request may carry, in bytes, before and after decompression."""
KEY_VARIABLE = "OL_SUBSET_API_KEY"
_EXTRA_HINT = "pip install 'openlineage-subset[serve]'"
# The defaults of service/_connections.py, which needs the extra: a test keeps them equal.
DEFAULT_HEADER_BYTES = 32 * 1024
DEFAULT_HEADER_TIMEOUT = 10
DEFAULT_KEEP_ALIVE = 5
DEFAULT_BODY_TIMEOUT = 120
DEFAULT_CONNECTIONS = 1000
DEFAULT_WHOLE_ANSWER = 20_000
"""The most reads, writes or partitions of a dataset a question about the whole of it may
start from, and the most times any answer may load a read or write of a run
(``--max-whole-answer``): at ten million events the impact of a whole dataset read a million
times is minutes of CPU and gigabytes, for one request; so is the impact of one partition whose
readers' outputs are read a million times. An answer walks about 200 us and 7 KB a read or
write it loads (at a million events, benchmarks/pages.py): 200,000 cost 20 s and 800 MB before
the 422; 20,000, 0.5 s."""
_BOUNDS = {
    "port": (0, 65535),
    "max_body_bytes": (1, 1 << 30),
    "max_header_bytes": (1024, 1 << 20),
    "header_timeout": (1, 3600),
    "keep_alive": (0, 3600),
    "body_timeout": (1, 86_400),
    "max_connections": (1, 100_000),
    "retain_days": (1, 36_500),
    "max_whole_answer": (1, 1_000_000_000),
}
"""Each number option's smallest and largest value."""
_HOST_NAME = re.compile(r"[A-Za-z0-9._-]+(:[0-9]{1,5})?|\[[0-9A-Fa-f:.]+\](:[0-9]{1,5})?")


def add_serve_parser(actions: Any) -> None:
    serve = actions.add_parser(
        "serve",
        help="an OpenLineage endpoint storing events, and the queries over HTTP",
        description=(
            "Serve the lineage database over HTTP: POST /api/v1/lineage takes OpenLineage events "
            "(as Marquez does: openlineage-python's HttpTransport sends to it unchanged) and "
            "stores them as ingest does; GET /api/v1/impact, provenance, history, partitions, "
            "datasets and runs answer as the commands' --format json. Prints 'ready: URL' once "
            f"listening; stops on SIGTERM or Ctrl-C. Needs the serve extra: {_EXTRA_HINT}."
        ),
    )
    serve.add_argument(
        "--db", metavar="PATH", default="lineage.db", help="lineage database (made if missing)"
    )
    serve.add_argument("--host", default="127.0.0.1", help="address to listen on (127.0.0.1)")
    serve.add_argument(
        "--port", type=int, default=5000, help="port to listen on (5000; 0: a free one)"
    )
    serve.add_argument(
        "--allowed-host",
        metavar="NAME",
        action="append",
        default=[],
        help="a name requests may give as Host (and pages as Origin) besides the address "
        "listened on (and localhost, 127.0.0.1, [::1] on loopback): NAME with any port, or "
        "NAME:PORT; repeat for each (a name behind a proxy)",
    )
    key = serve.add_mutually_exclusive_group()
    key.add_argument(
        "--api-key",
        metavar="KEY",
        help=f"every request must send 'Authorization: Bearer KEY' (or set {KEY_VARIABLE})",
    )
    key.add_argument("--api-key-file", metavar="FILE", help="read the API key from FILE")
    serve.add_argument(
        "--insecure",
        action="store_true",
        help="allow listening on an address other than loopback without an API key",
    )
    serve.add_argument(
        "--max-body-bytes",
        metavar="N",
        type=int,
        default=DEFAULT_MAX_BODY,
        help=f"the largest event accepted, before and after gzip (default {DEFAULT_MAX_BODY})",
    )
    serve.add_argument(
        "--max-header-bytes",
        metavar="N",
        type=int,
        default=DEFAULT_HEADER_BYTES,
        help="the largest request line and headers, answered 431 beyond (default "
        f"{DEFAULT_HEADER_BYTES}; at most 100 headers)",
    )
    serve.add_argument(
        "--header-timeout",
        metavar="SECONDS",
        type=int,
        default=DEFAULT_HEADER_TIMEOUT,
        help="close a connection whose request line and headers are not complete this long "
        "after they start, or whose body stops arriving for as long "
        f"(default {DEFAULT_HEADER_TIMEOUT})",
    )
    serve.add_argument(
        "--body-timeout",
        metavar="SECONDS",
        type=int,
        default=DEFAULT_BODY_TIMEOUT,
        help="answer 408 and close a connection whose request body is not complete this long "
        f"after its headers, however it trickles in (default {DEFAULT_BODY_TIMEOUT})",
    )
    serve.add_argument(
        "--keep-alive",
        metavar="SECONDS",
        type=int,
        default=DEFAULT_KEEP_ALIVE,
        help=f"close a connection idle this long between requests (default {DEFAULT_KEEP_ALIVE})",
    )
    serve.add_argument(
        "--max-connections",
        metavar="N",
        type=int,
        default=DEFAULT_CONNECTIONS,
        help="connections open at most (default "
        f"{DEFAULT_CONNECTIONS}, and at most half of ulimit -n); one more closes the one idle "
        "longest",
    )
    serve.add_argument(
        "--retain-days",
        metavar="DAYS",
        type=int,
        help="prune the runs that ended more than DAYS days ago, but the last writers of "
        "partitions, once ready and then every hour (without VACUUM: the space is reused; "
        "see 'lineage prune'); default: keep everything",
    )
    serve.add_argument(
        "--max-whole-answer",
        metavar="N",
        type=int,
        default=DEFAULT_WHOLE_ANSWER,
        help="the impact, provenance, history or partitions of a whole dataset whose answer "
        "starts from more than N of its reads, writes or partitions is refused (422) before it "
        "is worked out, and any of these answers is given up on (422) once it has loaded reads "
        "and writes of runs more than N times (what it reaches fans out): ask about partitions of "
        f"it, with a depth, or use the command line (default {DEFAULT_WHOLE_ANSWER})",
    )
    serve.set_defaults(handler=serve_command)


def serve_command(args: argparse.Namespace) -> int:
    missing = [name for name in ("starlette", "uvicorn") if importlib.util.find_spec(name) is None]
    if missing:
        return _fail(f"needs {' and '.join(missing)}: {_EXTRA_HINT}")
    try:
        api_key = _api_key(args)
    except ValueError as error:
        return _fail(str(error))
    if api_key is None and not args.insecure and not is_loopback(args.host):
        return _fail(
            f"--host {args.host} is reachable from other machines: give an API key "
            f"(--api-key, --api-key-file or {KEY_VARIABLE}), or --insecure to serve without one"
        )
    for name, (low, high) in _BOUNDS.items():
        value = getattr(args, name)
        if value is not None and not low <= value <= high:
            option = "--" + name.replace("_", "-")
            return _fail(f"{option} must be between {low} and {high}, got {value}")
    for name in args.allowed_host:
        if not _HOST_NAME.fullmatch(name):
            return _fail(
                f"--allowed-host takes a host name or address, with a port or not "
                f"(lineage.example.com, lineage.example.com:8443), got {name!r}"
            )
    # Imported here: the other commands run without the serve extra.
    from openlineage_subset.service import (  # noqa: PLC0415
        ConnectionLimits,
        ServiceError,
        listen,
        serve,
    )

    limits = ConnectionLimits(
        header_bytes=args.max_header_bytes,
        header_timeout=args.header_timeout,
        keep_alive=args.keep_alive,
        body_timeout=args.body_timeout,
        connections=args.max_connections,
    )
    try:
        sock = listen(args.host, args.port)
    except ServiceError as error:
        return _fail(str(error))
    try:
        serve(
            args.db,
            sock,
            api_key=api_key,
            max_body=args.max_body_bytes,
            host=args.host,
            allowed_hosts=args.allowed_host,
            limits=limits,
            retain_days=args.retain_days,
            max_whole=args.max_whole_answer,
        )
    except LineageDatabaseError as error:
        return _fail(str(error))
    return EXIT_OK


def _api_key(args: argparse.Namespace) -> str | None:
    if args.api_key is not None:
        key, where = args.api_key, "--api-key"
    elif args.api_key_file is not None:
        where = f"--api-key-file {args.api_key_file}"
        try:
            with open(args.api_key_file, encoding="utf-8") as stream:
                key = stream.read().strip()
        except (OSError, UnicodeDecodeError) as error:
            reason = getattr(error, "strerror", None) or error
            raise ValueError(f"{where}: cannot read the key: {reason}") from None
    elif KEY_VARIABLE in os.environ:
        key, where = os.environ[KEY_VARIABLE], KEY_VARIABLE
    else:
        return None
    if not key or not key.isprintable() or not key.isascii():
        raise ValueError(f"{where}: the API key must be printable ASCII text, not empty")
    return str(key)


def _fail(message: str) -> int:
    print(f"ol-subset lineage serve: {message}", file=sys.stderr)
    return EXIT_UNUSABLE
