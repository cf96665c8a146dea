"""Sign agreement of the base-rate sources' associations (a section and a plot panel use it)."""

from __future__ import annotations

import numpy as np
import pandas as pd

from .._conventions import DIRECTIONS

__all__ = ["AGREEMENT_COLUMNS", "sign_agreement"]

#: Columns of :func:`sign_agreement`'s table.
AGREEMENT_COLUMNS = ("direction", "source_a", "source_b", "agreement", "n_cells")


def sign_agreement(by_pair: pd.DataFrame) -> pd.DataFrame:
    """Fraction of (task, attribute) cells where two sources' associations agree.

    Parameters
    ----------
    by_pair : DataFrame
        :attr:`biasamp.results.ProbeResult.by_pair` (columns ``base_rates``, ``direction``,
        ``task``, ``attribute``, ``association`` and, optionally, ``p_base``).

    Returns
    -------
    DataFrame
        One row per direction and pair of sources: direction, source_a, source_b,
        agreement, n_cells. Cells undefined in a source (``p_base`` NaN/None: all-zero base
        row or column) are left out.

    Examples
    --------
    >>> bp = pd.DataFrame(
    ...   [{"base_rates": s, "direction": "task_to_attribute", "task": t, "attribute": "he",
    ...     "association": v} for s, t, v in
    ...    [("u", "x", 1), ("u", "y", -1), ("w", "x", 1), ("w", "y", 1)]])
    >>> sign_agreement(bp)[["source_a", "source_b", "agreement"]].to_dict("records")
    [{'source_a': 'u', 'source_b': 'w', 'agreement': 0.5}]
    """
    df = by_pair.copy()
    for col in ("task", "attribute", "base_rates", "direction"):
        df[col] = df[col].astype(str)
    sources = list(dict.fromkeys(df["base_rates"]))
    rows = []
    for direction in DIRECTIONS:
        sub = df[df["direction"] == direction]
        if sub.empty:
            continue
        if "p_base" in sub:  # undefined cells (all-zero base row/column) carry no association
            sub = sub[pd.to_numeric(sub["p_base"], errors="coerce").notna()]
        wide = sub.pivot_table(index=["task", "attribute"], columns="base_rates",
                               values="association", aggfunc="first")
        wide = wide.reindex(columns=sources)
        for i, a in enumerate(sources):
            for b in sources[i + 1:]:
                both = wide[[a, b]].dropna()
                agree = (float(np.mean(np.sign(both[a]) == np.sign(both[b]))) if len(both)
                         else float("nan"))
                rows.append({"direction": direction, "source_a": a, "source_b": b,
                             "agreement": agree, "n_cells": len(both)})
    return pd.DataFrame(rows, columns=list(AGREEMENT_COLUMNS))
