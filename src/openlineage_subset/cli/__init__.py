"""The ``ol-subset`` command: argument parsing and each command's front.

The fronts turn arguments into calls of the rooms below (the SDK, ``spark``, ``lineage``,
``delivery``) and their answers into output and exit statuses; no rule of lineage or capture
lives here. ``python -m openlineage_subset`` runs the same :func:`main`.

Besides :func:`main`, the face is internal to the package: ``ol-subset run``'s pieces
(:func:`run_script`, its :func:`summary`, :data:`CONNECT_NOT_CAPTURED`) for the tests of the
rooms it drives.
"""

from openlineage_subset.cli._main import main
from openlineage_subset.cli._run import CONNECT_NOT_CAPTURED, run_script, summary

__all__ = ["main"]
# Internal to the package: not user API (the module's docstring).
__all__ += ["CONNECT_NOT_CAPTURED", "run_script", "summary"]
