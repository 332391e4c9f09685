"""How sure impact and history are that a read touches the units asked about."""

from __future__ import annotations

from collections.abc import Mapping

from openlineage_subset.lineage.engine._engine import Access, Engine
from openlineage_subset.lineage.model import Label, Unit, Values, stronger


def read_label(
    engine: Engine,
    read: Access,
    units: tuple[tuple[Unit, Label], ...],
    known: Mapping[Unit, Values] | None = None,
) -> tuple[Label | None, list[Unit]]:
    """How sure it is that ``read`` overlaps the units, and which it may overlap. ``known``:
    the values of those of the units that are known partitions of the read's dataset, when it
    has a :meth:`~Engine.plain_shape`."""
    known = known or {}
    label: Label | None = None
    matched = []
    listed = None if read.text is None else engine.candidates(read)
    tree = None if read.text is None else engine.compiled(read)
    if tree is not None and tree.kind == "compared":
        # Comparisons decide alike for the partitions that agree on the columns they name: one
        # evaluation per distinct value of those (a day), not per partition (a day's
        # countries). No partition list narrows them (listed is None).
        for group in engine.agreeing(units, tree.fields):
            found = engine.overlap(read, group[0][0])
            if found is False:
                continue
            for unit, unit_label in group:
                matched.append(unit)
                label = stronger(
                    label, "definite" if found and unit_label == "definite" else "possible"
                )
        return label, matched
    for unit, unit_label in units:
        if listed is not None and unit in known and known[unit] not in listed:
            continue  # a known partition the read's partition lists leave out
        found = engine.overlap(read, unit)
        if found is False:
            continue
        matched.append(unit)
        label = stronger(label, "definite" if found and unit_label == "definite" else "possible")
    return label, matched
