"""Project promises: the README's commands are what CI runs; the wheel carries everything; the
README stays a front page (short, its links lead somewhere)."""

from __future__ import annotations

import importlib
import os
import re
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

from openlineage_subset_generated import custom as custom_facets

from openlineage_subset import spec
from tests.helpers import ROOT

README_MAX_LINES = 250
"""The README is a front page: the reference lives in docs/ (the site ``nox -s docs`` builds)."""


def _readme_commands() -> list[str]:
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    block = re.search(r"```(?:bash|sh)\n(.*?)```", text, re.DOTALL)
    assert block, "the README starts with a shell block of set-up commands"
    return [line for line in block.group(1).splitlines() if line and not line.startswith("#")]


def test_readme_starts_with_two_commands_and_ci_runs_the_test_one() -> None:
    commands = _readme_commands()
    assert len(commands) == 2, commands
    ci = (ROOT / ".ci" / "run").read_text(encoding="utf-8")
    assert commands[1] in ci.splitlines(), "'.ci/run' must run the README's test command"
    assert "ol-subset" in commands[0]


def test_wheel_carries_package_generated_models_and_schemas(tmp_path: Path) -> None:
    done = subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "--no-deps", "-q", "-w", str(tmp_path), str(ROOT)],
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    (wheel,) = tmp_path.glob("openlineage_subset-*.whl")
    names = set(zipfile.ZipFile(wheel).namelist())
    newest = spec().module
    package = newest.__name__.replace(".", "/")
    custom = [
        importlib.import_module(module)
        for versions in custom_facets.MODULES.values()
        for module in versions.values()
    ]
    assert custom, "the custom facets' modules are in the wheel too"
    for expected in (
        "openlineage_subset/__init__.py",
        "openlineage_subset/py.typed",
        f"{package}/models.py",
        f"{package}/validators.py",
        *(f"openlineage_subset_generated/{source}" for source in newest.SCHEMA_FILES),
        *(f"{module.__name__.replace('.', '/')}/validators.py" for module in custom),
        *(f"openlineage_subset_generated/{module.SCHEMA_FILES[0]}" for module in custom),
    ):
        assert expected in names, expected
    assert not any(name.startswith(("codegen/", "tests/")) for name in names)
    # The files the code reads beside itself: the report's templates, the service's static files.
    package = ROOT / "src" / "openlineage_subset"
    beside = [p for p in package.rglob("*.*") if p.suffix in (".html", ".svg", ".css", ".js")]
    assert any(path.parent.name == "templates" for path in beside)
    for path in beside:
        assert f"openlineage_subset/{path.relative_to(package).as_posix()}" in names, path
    # The listener of every Spark session: compiled by the build hook wherever javac is.
    forwarder = "openlineage_subset/spark/_jvm/classes/openlineage_subset/jvm/"
    home = os.environ.get("JAVA_HOME")
    if shutil.which("javac") or (home and Path(home, "bin", "javac").is_file()):
        assert f"{forwarder}ListenerEventForwarder.class" in names


def test_readme_ten_line_example_runs() -> None:
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    section = text.split("## Ten lines", 1)[1].split("\n## ", 1)[0]
    (block,) = re.findall(r"```python\n(.*?)```", section, re.DOTALL)
    assert len(block.strip().splitlines()) <= 10
    exec(compile(block, "README.md", "exec"), {})


def test_readme_is_a_front_page_not_the_manual() -> None:
    lines = (ROOT / "README.md").read_text(encoding="utf-8").count("\n")
    assert lines <= README_MAX_LINES, (
        f"README.md has {lines} lines (at most {README_MAX_LINES}): move reference material "
        "to a page under docs/ and link it"
    )


def _without_code_blocks(markdown: str) -> str:
    return re.sub(r"^```.*?^```", "", markdown, flags=re.DOTALL | re.MULTILINE)


def _anchors(markdown: str) -> set[str]:
    """The anchors GitHub gives a Markdown file's headings (lower case, punctuation dropped)."""
    headings = re.findall(r"^#+ (.+)$", _without_code_blocks(markdown), re.MULTILINE)
    return {re.sub(r"[^\w\- ]", "", heading.lower()).replace(" ", "-") for heading in headings}


def test_every_relative_link_of_the_readme_leads_to_a_file() -> None:
    readme = ROOT / "README.md"
    text = _without_code_blocks(readme.read_text(encoding="utf-8"))
    links = re.findall(r"\]\(([^)\s]+)\)", text)
    relative = [link for link in links if not re.match(r"[a-z][a-z0-9+.-]*:", link)]
    assert relative, "the README links its docs pages with relative paths"
    broken = []
    for link in relative:
        path, _, anchor = link.partition("#")
        target = (ROOT / path) if path else readme
        if not target.is_file():
            broken.append(f"{link}: no file {path}")
        elif anchor and anchor not in _anchors(target.read_text(encoding="utf-8")):
            broken.append(f"{link}: no heading #{anchor} in {path or 'README.md'}")
    assert not broken, f"README.md links to what does not exist: {broken}"
