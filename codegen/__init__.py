"""The generator: ``python -m codegen`` turns ``schemas/`` into ``generated/``.

Per facet version (``schemas/spec/facets/<version>/BaseSubsetDatasetFacet.json``) it writes a
module with dataclasses (datamodel-code-generator), validators compiled from the schema, and
strict validators that also enforce what the schema says only in prose. No network: remote
``$ref``s resolve to the files under ``schemas/``.
"""
