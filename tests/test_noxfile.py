"""The noxfile's sessions describe themselves in whole sentences: ``nox -l`` shows the first
line of each session's docstring, so that line must be a complete sentence of its own."""

from __future__ import annotations

import ast

from tests.helpers import ROOT


def _sessions() -> dict[str, str]:
    """Each function decorated with ``nox.session`` and its docstring ('' when it has none)."""
    tree = ast.parse((ROOT / "noxfile.py").read_text(encoding="utf-8"))
    return {
        node.name: ast.get_docstring(node) or ""
        for node in tree.body
        if isinstance(node, ast.FunctionDef)
        and any("nox.session" in ast.unparse(decorator) for decorator in node.decorator_list)
    }


def test_every_session_says_what_it_does_in_a_first_line_of_its_own() -> None:
    sessions = _sessions()
    assert "tests" in sessions and "cluster" in sessions
    cut = {}
    for name, doc in sessions.items():
        first, _, rest = doc.partition("\n")
        if not first.endswith(".") or rest[:1] not in {"", "\n"}:
            cut[name] = first
    assert not cut, f"first docstring lines that are not a whole sentence of their own: {cut}"
