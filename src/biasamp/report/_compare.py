"""Several result folders side by side (``biasamp compare``)."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import numpy as np
import pandas as pd

from .._conventions import DIRECTION_LABELS
from .._errors import BiasampError
from .._validation import SubsetOf, validate_params
from ..results import ProbeResult
from ._format import CSS, format_value, html_table, markdown_table

__all__ = ["COMPARE_FORMATS", "compare_dirs", "compare_table"]

#: Files :func:`compare_dirs` can write.
COMPARE_FORMATS = ("md", "csv", "html")

_INTRO = "mean ± std [bootstrap CI] over templates; compare each direction only with itself."


def compare_table(result_dirs: Sequence) -> pd.DataFrame:
    """Long table of several results: model, result_dir, and the summary columns.

    Raises :class:`~biasamp.BiasampError` when fewer than one directory is given.
    """
    if not result_dirs:
        raise BiasampError("result_dirs must name at least one result directory; got none")
    frames = []
    for rd in result_dirs:
        res = ProbeResult.load(rd, tables=False)
        s = res.summary.drop(columns=["per_template"])
        s.insert(0, "result_dir", str(rd))
        s.insert(0, "model", str(res.provenance.get("model")))
        frames.append(s)
    return pd.concat(frames, ignore_index=True)


def _wide(long: pd.DataFrame) -> pd.DataFrame:
    # two dirs with the same model id: tell them apart by their folder
    dup = long.groupby("model")["result_dir"].transform("nunique") > 1
    labels = np.where(dup, long["model"] + " (" + long["result_dir"] + ")", long["model"])
    long = long.assign(label=labels)
    cells = long.assign(cell=[format_value(m, s, (lo, hi)) for m, s, lo, hi in
                              zip(long["mean"], long["std"], long["ci_low"], long["ci_high"])])
    order = list(dict.fromkeys(cells["label"]))
    wide = cells.pivot_table(index=["base_rates", "direction"], columns="label", values="cell",
                             aggfunc="first", sort=False)
    wide = wide.reindex(columns=order).fillna("—").reset_index()
    wide["direction"] = wide["direction"].map(lambda d: DIRECTION_LABELS.get(d, d))
    wide.columns.name = None
    return wide


@validate_params({"formats": SubsetOf(COMPARE_FORMATS)})
def compare_dirs(result_dirs: Sequence, *, out=None,
                 formats: Sequence[str] | str = ("md", "csv")) -> pd.DataFrame:
    """Side-by-side comparison of several result directories.

    Parameters
    ----------
    result_dirs : list of path
        Folders written by a probe (each with ``results.json``).
    out : path, optional
        Write ``comparison.md`` / ``comparison.csv`` / ``comparison.html`` here.
    formats : list of str or comma-separated str
        Any of ``md``, ``csv``, ``html``.

    Returns
    -------
    DataFrame
        The wide table: one row per (base_rates, direction), one column per model, cells
        ``mean ± std [ci_low, ci_high]``.
    """
    long = compare_table(result_dirs)
    wide = _wide(long)
    if out is not None:
        d = Path(out)
        d.mkdir(parents=True, exist_ok=True)
        if "csv" in formats:
            long.to_csv(d / "comparison.csv", index=False)
        if "md" in formats:
            (d / "comparison.md").write_text(
                f"# BiasAmp→ comparison\n\n{_INTRO}\n\n" + markdown_table(wide) + "\n",
                encoding="utf-8")
        if "html" in formats:
            (d / "comparison.html").write_text(
                "<!DOCTYPE html><html lang='en'><head><meta charset='utf-8'><title>BiasAmp→ "
                f"comparison</title><style>{CSS}</style></head><body><h1>BiasAmp→ comparison"
                f"</h1><p>{_INTRO}</p>{html_table(wide)}</body></html>\n", encoding="utf-8")
    return wide
