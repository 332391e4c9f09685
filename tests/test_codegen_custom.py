"""python -m codegen on this project's custom facets (``schemas/custom/``): their ``$id`` is where
the file is served from, each gets a module of its own, and the subset registry never lists them.

Expected values come from the schema files on disk (their paths and ``$id``), not from codegen.
"""

from __future__ import annotations

import importlib
import json
import shutil
from pathlib import Path
from typing import Any

import openlineage_subset_generated as subset_registry
import pytest
from openlineage_subset_generated import custom as custom_registry

from codegen import _bundle
from codegen._errors import CodegenError
from codegen._package import PACKAGE, custom_facet_module, render_package
from codegen._store import load_store
from openlineage_subset import spec_versions
from tests.helpers import ROOT, run_codegen

RAW = "https://raw.githubusercontent.com/openlineage-subset/openlineage-subset/main/"
"""Where the repository's files are served from: a custom schema's ``$id`` is RAW + its path."""
CUSTOM = ROOT / "schemas" / "custom"
CUSTOM_FACETS = sorted((CUSTOM / "facets").glob("*/*.json"))
MAPPING = max(
    (path for path in CUSTOM_FACETS if path.stem == "PartitionMappingOutputDatasetFacet"),
    key=lambda path: tuple(int(part) for part in path.parent.name.split("-")),
)


def _schema(path: Path) -> dict[str, Any]:
    loaded: dict[str, Any] = json.loads(path.read_text(encoding="utf-8"))
    return loaded


def _copy_schemas(tmp_path: Path) -> Path:
    target = tmp_path / "schemas"
    shutil.copytree(ROOT / "schemas", target)
    return target


def _module_of(path: Path) -> str:
    """The generated module a custom facet file should get, read from its registry entry."""
    schema = _schema(path)
    (key,) = schema["properties"]
    return custom_registry.MODULES[key][path.parent.name]


def test_every_custom_schema_id_is_where_the_file_is_served_from() -> None:
    assert CUSTOM_FACETS, "schemas/custom/facets/ holds the custom facet schemas"
    for path in sorted(CUSTOM.rglob("*.json")):
        assert _schema(path)["$id"] == RAW + path.relative_to(ROOT).as_posix(), path


def test_each_custom_facet_version_has_a_module_and_the_subset_registry_lists_none() -> None:
    for path in CUSTOM_FACETS:
        schema = _schema(path)
        (key,) = schema["properties"]
        module = importlib.import_module(_module_of(path))
        assert key == module.FACET_KEY
        assert schema["$id"] == module.FACET_SCHEMA_URL
        assert f"{schema['$id']}#/$defs/{path.stem}" == module.FACET_DEF_URL
        assert tuple(schema["$defs"]) == module.FACET_DEFS
        assert hasattr(module.models, path.stem)
        assert path.stem in module.validators.VALIDATORS
        assert path.stem in module.strict_validators.VALIDATORS
        assert schema["$id"] not in subset_registry.SCHEMA_IDS
    assert not any("custom" in module for module in subset_registry.MODULES.values())
    assert set(spec_versions()) == set(subset_registry.SPEC_VERSIONS)


def test_a_custom_module_holds_the_facet_and_what_it_extends_not_the_event_model() -> None:
    module = importlib.import_module(_module_of(MAPPING))
    core_file = module.CORE_SCHEMA_URL.removeprefix("https://openlineage.io/")
    core = _schema(ROOT / "schemas" / core_file)["$defs"]
    reached = set(module.validators.VALIDATORS) - set(module.FACET_DEFS) - {module.FACET_ROOT}
    assert reached == {"BaseFacet", "OutputDatasetFacet"}
    assert reached < set(core)
    assert not hasattr(module.models, "RunEvent")


def test_check_names_a_stale_or_missing_custom_module(tmp_path: Path) -> None:
    output = tmp_path / "generated"
    shutil.copytree(ROOT / "generated", output, ignore=shutil.ignore_patterns("__pycache__"))
    folder = output / Path(*_module_of(MAPPING).split("."))
    models = folder / "models.py"
    models.write_text(models.read_text(encoding="utf-8") + "\n# edited by hand\n")
    (folder / "strict_validators.py").unlink()
    done = run_codegen("--check", "--output", str(output))
    assert done.returncode == 1
    relative = folder.relative_to(output).as_posix()
    assert f"{relative}/models.py" in done.stderr
    assert f"{relative}/strict_validators.py" in done.stderr
    assert run_codegen("--output", str(output)).returncode == 0
    assert run_codegen("--check", "--output", str(output)).returncode == 0


@pytest.mark.parametrize(
    ("new_id", "fragment"),
    [
        (lambda uri: uri.replace("/1-0-0/", "/9-9-9/"), "served from"),
        (lambda uri: uri.replace("/main/", "/v0.1/"), "served from"),
        (lambda uri: "https://openlineage.io/spec/" + uri.rsplit("/", 1)[-1], "served from"),
    ],
)
def test_a_custom_schema_whose_id_does_not_mirror_its_path_is_refused(
    tmp_path: Path, new_id: Any, fragment: str
) -> None:
    schemas = _copy_schemas(tmp_path)
    path = schemas / MAPPING.relative_to(ROOT / "schemas")
    schema = _schema(path)
    schema["$id"] = new_id(schema["$id"])
    path.write_text(json.dumps(schema), encoding="utf-8")
    with pytest.raises(CodegenError, match="mirrors its \\$id") as raised:
        load_store(schemas)
    assert fragment in str(raised.value) and str(path) in str(raised.value)


def test_a_schema_outside_custom_with_a_custom_id_is_refused(tmp_path: Path) -> None:
    schemas = _copy_schemas(tmp_path)
    moved = schemas / "spec" / "facets" / MAPPING.parent.name / MAPPING.name
    shutil.move(schemas / MAPPING.relative_to(ROOT / "schemas"), moved)
    with pytest.raises(CodegenError, match=r"mirror https://openlineage\.io/"):
        load_store(schemas)


def test_a_custom_schema_error_is_reported_without_traceback(tmp_path: Path) -> None:
    schemas = _copy_schemas(tmp_path)
    path = schemas / MAPPING.relative_to(ROOT / "schemas")
    schema = _schema(path)
    schema["properties"]["another"] = {"type": "string"}
    path.write_text(json.dumps(schema), encoding="utf-8")
    done = run_codegen("--schemas", str(schemas), "--output", str(tmp_path / "out"))
    assert done.returncode == 2
    assert "one property, the facet key" in done.stderr and "Traceback" not in done.stderr


@pytest.mark.parametrize(
    ("edit", "fragment"),
    [
        (lambda s: s["properties"].clear(), "one property, the facet key"),
        (
            lambda s: s["properties"].update(
                {next(iter(s["properties"])): {"$ref": "#/$defs/PartitionMapping"}}
            ),
            "the definition named as the file",
        ),
    ],
)
def test_the_root_must_name_the_facet_key(tmp_path: Path, edit: Any, fragment: str) -> None:
    schemas = _copy_schemas(tmp_path)
    path = schemas / MAPPING.relative_to(ROOT / "schemas")
    schema = _schema(path)
    edit(schema)
    path.write_text(json.dumps(schema), encoding="utf-8")
    with pytest.raises(CodegenError, match=fragment):
        render_package(load_store(schemas))


def _row_count_facet(version: str) -> dict[str, Any]:
    relative = f"schemas/custom/facets/{version}/RowCountOutputDatasetFacet.json"
    return {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "$id": RAW + relative,
        "type": "object",
        "properties": {"olsubset_rowCount": {"$ref": "#/$defs/RowCountOutputDatasetFacet"}},
        "$defs": {
            "RowCountOutputDatasetFacet": {
                "allOf": [
                    {
                        "$ref": "https://openlineage.io/spec/2-0-2/OpenLineage.json"
                        "#/$defs/OutputDatasetFacet"
                    },
                    {
                        "type": "object",
                        "required": ["rows"],
                        "properties": {"rows": {"type": "integer"}},
                    },
                ]
            }
        },
    }


def test_a_new_custom_facet_is_a_file_and_a_root_name(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A second custom facet gets its module and its registry entry, once its root has a class
    name in special_cases.json; the subset facet's registry still lists none."""
    schemas = _copy_schemas(tmp_path)
    version = MAPPING.parent.name
    path = schemas / "custom" / "facets" / version / "RowCountOutputDatasetFacet.json"
    path.write_text(json.dumps(_row_count_facet(version)), encoding="utf-8")
    with pytest.raises(CodegenError, match="root_names"):
        render_package(load_store(schemas))

    cases = json.loads(_bundle._SPECIAL_CASES.read_text(encoding="utf-8"))
    cases["root_names"][path.name] = "RowCountFacetMap"
    special = tmp_path / "special_cases.json"
    special.write_text(json.dumps(cases), encoding="utf-8")
    monkeypatch.setattr(_bundle, "_SPECIAL_CASES", special)
    files = render_package(load_store(schemas))
    folder = f"{PACKAGE}/custom/row_count/v{version.replace('-', '_')}"
    assert {f"{folder}/{name}.py" for name in ("__init__", "models", "validators")} <= set(files)
    assert "class RowCountOutputDatasetFacet(OutputDatasetFacet)" in files[f"{folder}/models.py"]
    registry = files[f"{PACKAGE}/custom/__init__.py"]
    assert '"olsubset_rowCount"' in registry and '"olsubset_partitionMapping"' in registry
    assert "RowCount" not in files[f"{PACKAGE}/__init__.py"]


def test_a_custom_facet_module_is_named_after_the_facet_without_its_kind() -> None:
    assert custom_facet_module("PartitionMappingOutputDatasetFacet") == "partition_mapping"
    assert custom_facet_module("S3LocationDatasetFacet") == "s3_location"
    assert custom_facet_module("RetriesRunFacet") == "retries"
    with pytest.raises(CodegenError, match="must be a facet's name"):
        custom_facet_module("RowCounts")
