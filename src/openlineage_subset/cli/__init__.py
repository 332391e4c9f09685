"""The ``ol-subset`` command: argument parsing and each command's front.

The fronts turn arguments into calls of the rooms below (the SDK, ``spark``, ``lineage``,
``delivery``) and their answers into output and exit statuses; no rule of lineage or capture
lives here. ``python -m openlineage_subset`` runs the same :func:`main`.
"""

from openlineage_subset.cli._main import main

__all__ = ["main"]
