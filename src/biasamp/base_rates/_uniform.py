"""``uniform`` and ``uniform:SOURCE``: an equal joint with an explicit association."""

from __future__ import annotations

import numpy as np
import pandas as pd

from .._conventions import ATTRIBUTES
from .._errors import BiasampError
from ._labor import WINOBIAS_PROVENANCE, groups_for, winobias_file_entry
from ._table import (
    BaseRateSource,
    BaseRateTable,
    MissingEntriesError,
    derive_association,
)

__all__ = ["UniformSource"]

#: Sign of each pronoun per WinoBias group.
_GROUP_SIGNS = {
    "male_biased": {"he": 1, "she": -1, "they": 0},
    "female_biased": {"he": -1, "she": 1, "they": 0},
}


def _signs(table: BaseRateTable) -> pd.DataFrame:
    """The table's association, or the signs derived from its joint."""
    if table.association is not None:
        return table.association
    return derive_association(table.joint)


class UniformSource(BaseRateSource):
    """Equal joint (P(A|T) = 1/|A|, P(T) = 1/|T|) with an explicit association.

    The joint is all ones, so the metric's ratios are exact: ``1.0 / |A|`` and
    ``1 / |T|``. The association comes from the WinoBias groups (male_biased: he +1,
    she -1; female_biased: she +1, he -1; they 0) or, with ``association_source``, from
    the signs of another source (``they`` = 0 when that source has no ``they``).
    """

    name = "uniform"
    description = "equal joint; association from the WinoBias groups"

    def __init__(self, association_source: str | None = None):
        self.association_source = association_source
        if association_source is not None:
            from . import get_source  # the package imports this module

            # resolved where it is named: a missing file is refused here, and read once
            self._other = get_source(association_source)
            if self._other.requires_direction:
                raise BiasampError(
                    f"uniform:SOURCE needs a direction-independent source; "
                    f"{association_source!r} is a compat source"
                )
            self.name = f"uniform:{association_source}"
            self.description = f"equal joint; association from the signs of {association_source!r}"

    def _table(self, tasks, attributes, direction):
        joint = pd.DataFrame(
            np.ones((len(tasks), len(attributes))),
            index=pd.Index(tasks, name="task"),
            columns=pd.Index(attributes, name="attribute"),
        )
        prov = {
            "name": self.name,
            "year": None,
            "license": "n/a (constructed)",
            "method": "joint = 1 for every (task, attribute): P(A|T) = 1/|A|, P(T) = 1/|T|; "
            + self.description,
            "files": [],
        }
        if self.association_source is None:
            assoc = self._group_signs(tasks, attributes)
            prov.update(WINOBIAS_PROVENANCE)
            prov["files"] = [winobias_file_entry()]
        else:
            assoc, prov["association_provenance"] = self._source_signs(tasks, attributes)
        association = pd.DataFrame(
            np.asarray(assoc, dtype=int), index=joint.index, columns=joint.columns
        )
        prov.update(
            kind="constructed",
            about="equal joint (P(A|T) = 1/|A|) with the signs of "
            + (
                "the WinoBias groups"
                if self.association_source is None
                else repr(self.association_source)
            ),
        )
        return BaseRateTable(joint, association, provenance=prov)

    def _group_signs(self, tasks, attributes) -> list[list[int]]:
        bad = [a for a in attributes if a not in ATTRIBUTES]
        if bad:
            raise MissingEntriesError(
                self.name,
                missing_attributes=bad,
                attributes=ATTRIBUTES,
                note="WinoBias groups define signs for he/she/they only",
            )
        return [[_GROUP_SIGNS[g][a] for a in attributes] for g in groups_for(tasks, self.name)]

    def _source_signs(self, tasks, attributes) -> tuple[np.ndarray, dict]:
        other = self._other
        known = [a for a in attributes if a != "they"]
        try:
            base = other.table(tasks, attributes)
            a_df = _signs(base)
        except MissingEntriesError as exc:
            if exc.missing_tasks or exc.missing_attributes != ["they"] or not known:
                raise
            base = other.table(tasks, known)
            a_df = _signs(base).reindex(columns=attributes).fillna(0)
        return a_df.loc[tasks, attributes].to_numpy(dtype=int), base.provenance
