"""Lay out a generated validator module: its docstring, imports and ``VALIDATORS`` table.

The compilers produce functions and constants by name; this turns them into the text of
``validators.py`` or ``strict_validators.py``. Keeping the module's layout here means that the
imports a generated module needs (the ``_support`` helpers it calls, the lenient checks the strict
module reuses) are decided in one place, from the code itself, and the strict module's docstring
explains how that module is built, with the reason for each definition compiled whole.
"""

from __future__ import annotations

import re
import textwrap
from collections.abc import Sequence

LENIENT_DOC = '"""Validators: the schema as written."""\n\n'
"""The lenient module's docstring."""

LENIENT_ALIAS = "lenient"
"""The name the strict module imports the lenient one as."""


def strict_doc(whole: dict[str, str], *, selects: bool) -> str:
    """The strict module's docstring: how it is built, and why each whole definition is."""
    paragraphs = [
        "Strict validators: the schema plus its prose rules (documented allowed values, formats).",
        "The strict check of a definition is its lenient one, from ``validators``, followed by "
        "``_<location>_extra``: the checks of the extra rules alone, which go down only where an "
        "extra rule lies below. A definition with no extra rule below it is its lenient check, "
        "imported.",
    ]
    if selects:
        paragraphs.append(
            "A ``oneOf`` takes its branch by the schema alone, and adds the extra rules of that "
            "branch only when the value matches exactly one (``selected_extra``): were the rules "
            "to choose too, a value matching two branches under the schema, an issue, could match "
            "one under the rules, and strict mode would accept what the schema rejects."
        )
    if whole:
        paragraphs.append(
            "Defined whole, the schema with the rules compiled in, since lenient issues plus extra "
            "ones would differ from its strict issues:"
        )
    else:
        paragraphs.append(
            "Nothing here is compiled whole: every strict check returns exactly the issues of its "
            "lenient check, then those of the extra rules."
        )
    items = [
        textwrap.fill(f"- ``{name}``: {reason}.", width=96, subsequent_indent="  ")
        for name, reason in whole.items()
    ]
    text = "\n\n".join([*(textwrap.fill(p, width=96) for p in paragraphs), "\n".join(items)])
    return '"""' + text.rstrip() + '\n"""\n\n'


_SUPPORT_NAMES = (
    "closest_branch",
    "describe",
    "json_equal",
    "matches_format",
    "prefixed",
    "selected_extra",
)
"""The helpers of the generated ``_support`` a module imports when its code calls them."""


def render_module(
    header: str,
    own: dict[str, str],
    table: dict[str, str],
    *,
    shared: Sequence[str] = (),
    imported_from: str = "",
    module_import: str = "",
) -> str:
    """A validator module defining ``own``, importing from ``imported_from`` what it uses of
    ``shared``, with ``VALIDATORS`` naming the function of each definition in ``table``."""
    functions = [text for text in own.values() if text.startswith("def ")]
    constants = [text for text in own.values() if not text.startswith("def ")]
    body = "\n\n".join(functions) + "\n\n" + "".join(constants)
    body += "\nVALIDATORS: dict[str, Callable[[Any], list[Issue]]] = {\n"
    body += "".join(f"    {definition!r}: {name},\n" for definition, name in table.items())
    body += "}\n"
    uses = set(re.findall(r"\b\w+\b", body))
    imported = [name for name in shared if name not in own and name in uses]
    support = ["Issue", *(name for name in _SUPPORT_NAMES if name in uses)]
    lines = [header, "from __future__ import annotations\n\n"]
    if "re" in uses:
        lines.append("import re\n")
    lines += ["from collections.abc import Callable\n", "from typing import Any\n\n"]
    lines.append(f"from openlineage_subset_generated._support import {', '.join(support)}\n")
    lines.append(module_import)
    if imported:
        lines.append(f"from {imported_from} import {', '.join(imported)}\n")
    lines.append("\n\n")
    return "".join(lines) + body
