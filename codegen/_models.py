"""Generate the dataclass models of one bundle with datamodel-code-generator.

The generator runs as a subprocess on a bundle with no remote references (so it never touches
the network), with the template in ``templates/`` and per-class data (each class's schema URL).
"""

from __future__ import annotations

import json
import subprocess
import sys
import tempfile
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path

from codegen._bundle import Bundle, allowed_values, model_defs, special_cases
from codegen._errors import CodegenError

TEMPLATES = Path(__file__).with_name("templates")
SUPPORT_MODULE = "openlineage_subset_generated._support"
REQUIRED_TOOLS = {"datamodel-code-generator": "0.89.0", "ruff": "0.17.6"}
"""The tool versions the committed output was made with (the models' generator and the
formatter of every generated module); output differs between versions."""


def check_generator_version() -> None:
    """Fail early, with the install command, when a pinned tool of the generator is missing."""
    for tool, required in REQUIRED_TOOLS.items():
        try:
            found = version(tool)
        except PackageNotFoundError:
            found = None
        if found != required:
            raise CodegenError(
                f"codegen needs {tool}=={required} (found {found}); "
                "install it with: pip install -e '.[codegen]'"
            )


def generate_models(bundle: Bundle, header: str, *, enums_as_literals: bool = False) -> str:
    """Python source of the dataclasses for every definition in ``bundle``.

    With ``enums_as_literals`` a property's ``enum`` becomes a ``Literal`` of its values, not an
    ``Enum`` class: the custom facets' values are codes (``yyyy-MM``, ``dayOfMonth``) that make
    poor member names (``YYYY_M_MDD``), and a literal string is what their users write.
    """
    cases = special_cases()
    defs = model_defs(bundle)
    root_name = bundle.roots[bundle.facet.uri]
    document = dict(defs.pop(root_name))
    document["$schema"] = "https://json-schema.org/draft/2020-12/schema"
    document["$defs"] = defs
    extra: dict[str, dict[str, object]] = {
        name: {"schema_url": origin} for name, origin in bundle.origins.items()
    }
    for rule in allowed_values(bundle):
        extra[rule.enum_name] = {"schema_url": bundle.origins[rule.def_name]}
    union = bundle.defs.get(cases["condition_union"], {})
    members = [ref["$ref"].removeprefix("#/$defs/") for ref in union.get("oneOf", [])]
    base_classes = dict.fromkeys(members, SUPPORT_MODULE + ".SubsetCondition")
    # A base the runtime defines, the same class in every version, so isinstance checks hold
    # across versions: in place of JsonObject, or second to the schema's own parent (allOf).
    imports = ["typing.ClassVar"]
    for name, base in cases["version_independent_bases"].items():
        if name not in bundle.defs:
            continue
        if "allOf" in bundle.defs[name]:
            extra[name]["extra_bases"] = [base]
            imports.append(f"{SUPPORT_MODULE}.{base}")
        else:
            base_classes[name] = f"{SUPPORT_MODULE}.{base}"
    with tempfile.TemporaryDirectory(prefix="ol-subset-codegen-") as tmp:
        work = Path(tmp)
        (work / "bundle.json").write_text(json.dumps(document, indent=2), encoding="utf-8")
        (work / "extra.json").write_text(json.dumps(extra), encoding="utf-8")
        command = [
            sys.executable,
            "-m",
            "datamodel_code_generator",
            "--input",
            str(work / "bundle.json"),
            "--input-file-type",
            "jsonschema",
            "--output",
            str(work / "models.py"),
            "--output-model-type",
            "dataclasses.dataclass",
            "--target-python-version",
            "3.10",
            "--formatters",
            "builtin",
            "--disable-timestamp",
            "--custom-file-header",
            header.rstrip("\n"),
            "--custom-template-dir",
            str(TEMPLATES),
            "--extra-template-data",
            str(work / "extra.json"),
            "--class-name",
            root_name,
            "--base-class",
            SUPPORT_MODULE + ".JsonObject",
            "--base-class-map",
            json.dumps(base_classes),
            "--aliases",
            json.dumps(cases["field_names"]),
            "--additional-imports",
            ",".join(imports),
            "--snake-case-field",
            "--capitalise-enum-members",
            "--use-subclass-enum",
            "--keyword-only",
            "--use-one-literal-as-default",
            "--use-union-operator",
            "--use-standard-collections",
            "--use-schema-description",
            "--use-field-description",
        ]
        if enums_as_literals:
            command += ["--enum-field-as-literal", "all"]
        result = subprocess.run(command, capture_output=True, text=True, check=False)
        if result.returncode != 0:
            raise CodegenError(
                f"datamodel-code-generator failed on {bundle.facet.path}:\n{result.stderr.strip()}"
            )
        return (work / "models.py").read_text(encoding="utf-8")
