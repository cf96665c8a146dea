"""Several result folders side by side (``biasamp compare``): a setup table of what makes the
numbers comparable (results that differ in it are refused unless ``allow_mismatch``, which marks
them), the values, the paired differences; laid out by ``comparison.{md,html}.j2``."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import pandas as pd

from .._errors import BiasampError
from .._output import OutputFolder
from .._validation import SubsetOf, normalised, validate_params
from ..results import ProbeResult
from ._format import direction_label, format_value, markdown_table, render_template

#: Files :func:`compare_dirs` can write.
COMPARE_FORMATS = ("md", "csv", "html")

_INTRO = "mean ± std [bootstrap CI] over templates; compare each direction only with itself."


def _setup(res: ProbeResult) -> dict:
    """What makes the numbers comparable (every row but the model must agree)."""
    p, boot = res.provenance, res.provenance.bootstrap
    tpl, tasks = p.templates, p.tasks
    base_hashes = ", ".join(
        f"{source} {direction_label(direction)} {b.joint_sha256[:12]}"
        for source, by_direction in sorted(p.base_rates.items())
        for direction, b in sorted(by_direction.items())
    )
    return {
        "model": p.model.name,
        "templates": f"{tpl.name} ({tpl.n_templates})",
        "prompts sha256": tpl.prompts_sha256[:16],
        "attributes": ", ".join(p.attributes),
        "tasks": f"{tasks.name} ({len(tasks.words)})",
        "estimator": p.scorer.estimator,
        "compat": p.compat or "none",
        "base rates": base_hashes,
        "CI": f"{boot.confidence}, over {boot.resample}, base {boot.base_uncertainty}"
        + ("" if boot.min_base_count is None else f", min base count {boot.min_base_count}"),
    }


def _setup_table(results: Sequence[ProbeResult], labels: Sequence):
    """One row per setup item (the index), one column per result, ``differs`` marking
    disagreeing rows; and the items that differ."""
    table = pd.DataFrame([_setup(r) for r in results], index=list(labels)).T
    table.index.name = "setup"
    differs = (table.nunique(axis=1) > 1) & (table.index != "model")
    table["differs"] = differs.map({True: "yes", False: ""})
    return table, differs[differs].index.tolist()


def setup_differences(results: Sequence[ProbeResult]) -> list[str]:
    """The setup items (of those that must agree) in which the results differ."""
    return _setup_table(results, range(len(results)))[1]


def _paired_table(paired: pd.DataFrame) -> pd.DataFrame:
    return pd.DataFrame(
        {
            "base rates": paired["base_rates"],
            "direction": paired["direction"].map(direction_label),
            "models": paired["model_b"] + " − " + paired["model_a"],
            "difference [CI]": [
                format_value(-d, ci=(-hi, -lo))
                for d, lo, hi in zip(paired["difference"], paired["ci_low"], paired["ci_high"])
            ],
            "P(sign holds)": paired["p_sign"].map(lambda v: format_value(v, digits=3)),
            "templates": paired["n_templates"],
        }
    )


_PAIRED_INTRO = (
    "Each model minus the first, per source and direction: a paired bootstrap "
    "(the same templates and the same base-count resamples for both models in "
    "every replicate), its CI and the share of replicates in which the "
    "difference has the observed sign."
)


def _load_all(result_dirs) -> list[ProbeResult]:
    """Each folder read once (without the probability tables)."""
    if not result_dirs:
        raise BiasampError("compare needs at least one RESULT_DIR; got none")
    return [ProbeResult.load(rd, tables=False) for rd in result_dirs]


def _labels(results: Sequence[ProbeResult], names: Sequence) -> list[str]:
    """The model of each result, with its folder where two results share a model."""
    models = [r.model for r in results]
    return [m if models.count(m) == 1 else f"{m} ({n})" for m, n in zip(models, names)]


def compare_table(result_dirs: Sequence) -> pd.DataFrame:
    """Long table of several results: model, result_dir, and the summary columns."""
    return _long(_load_all(result_dirs), result_dirs)


def _long(results, result_dirs) -> pd.DataFrame:
    frames = []
    for res, rd in zip(results, result_dirs):
        s = res.summary.drop(columns=["per_template"])
        s.insert(0, "result_dir", str(rd))
        s.insert(0, "model", res.model)
        frames.append(s)
    return pd.concat(frames, ignore_index=True)


def _wide(long: pd.DataFrame, labels: dict) -> pd.DataFrame:
    """One column per result, headed by its label (``labels``: result_dir -> label)."""
    cells = long.assign(
        label=long["result_dir"].map(labels),
        cell=[
            format_value(m, s, (lo, hi))
            for m, s, lo, hi in zip(long["mean"], long["std"], long["ci_low"], long["ci_high"])
        ],
    )
    order = list(dict.fromkeys(cells["label"]))
    wide = cells.pivot_table(
        index=["base_rates", "direction"],
        columns="label",
        values="cell",
        aggfunc="first",
        sort=False,
    )
    wide = wide.reindex(columns=order).fillna("—").reset_index()
    wide["direction"] = wide["direction"].map(direction_label)
    wide.columns.name = None
    return wide.rename(columns={"base_rates": "base rates"})  # headers as in the probe report


def _refuse_mismatch(results: Sequence[ProbeResult], names: Sequence) -> None:
    """Refuse results whose setups differ, naming each item and its values."""
    labels = _labels(results, names)
    setup, differing = _setup_table(results, labels)
    if differing:
        details = "; ".join(
            f"{k}: " + " vs ".join(repr(v) for v in dict.fromkeys(setup.loc[k, labels]))
            for k in differing
        )
        raise BiasampError(
            f"the RESULT_DIRs are not comparable: they differ in {details} "
            "(pass --allow-mismatch / allow_mismatch=True to compare anyway, "
            "marked)"
        )


#: The one check of a comparison's ``formats``.
_FORMATS_PARAM = {"formats": SubsetOf(COMPARE_FORMATS)}


def write_comparison(
    results: Sequence[ProbeResult],
    names: Sequence,
    folder,
    *,
    formats=("md", "csv"),
    paired: pd.DataFrame | None = None,
) -> pd.DataFrame:
    """Write ``comparison.{md,csv,html}`` into an existing folder, the setups' differences
    marked; return the wide table."""
    labels = _labels(results, names)
    setup, differing = _setup_table(results, labels)
    long = _long(results, names)
    wide = _wide(long, dict(zip(map(str, names), labels)))
    formats = normalised(_FORMATS_PARAM, formats=formats)
    has_paired = paired is not None and not paired.empty
    ptable = _paired_table(paired) if has_paired else None
    d = Path(folder)
    if "csv" in formats:
        long.to_csv(d / "comparison.csv", index=False)
        if has_paired:
            paired.to_csv(d / "paired_differences.csv", index=False)
    for fmt in (f for f in ("md", "html") if f in formats):
        (d / f"comparison.{fmt}").write_text(
            render_template(
                f"comparison.{fmt}.j2",
                differing=differing,
                setup=setup.reset_index(),
                intro=_INTRO,
                wide=wide,
                paired_intro=_PAIRED_INTRO,
                paired=ptable,
            ),
            encoding="utf-8",
        )
    return wide


@validate_params(_FORMATS_PARAM)
def compare_dirs(
    result_dirs: Sequence,
    *,
    out=None,
    formats: Sequence[str] | str = ("md", "csv"),
    allow_mismatch: bool = False,
    overwrite: bool = False,
    paired: pd.DataFrame | None = None,
    results: Sequence[ProbeResult] | None = None,
) -> pd.DataFrame:
    """Side-by-side comparison of several result directories.

    Parameters
    ----------
    result_dirs : list of path
        Folders written by a probe (each with a complete ``results.json``).
    out : path, optional
        Write ``comparison.md`` / ``comparison.csv`` / ``comparison.html`` into this new
        folder (refused when it exists and is not empty, unless ``overwrite``).
    formats : list of str or comma-separated str
        Any of ``md``, ``csv``, ``html``.
    allow_mismatch : bool
        Compare results whose setups differ (the differences are marked); refused otherwise.
    overwrite : bool
        Replace a non-empty ``out`` as a whole.
    paired : DataFrame, optional
        Paired differences to show (:func:`biasamp.pipeline.compare.paired_differences`).
    results : list of ProbeResult, optional
        The results of ``result_dirs``, already read (each folder is read once).

    Returns
    -------
    DataFrame: one row per (base_rates, direction), one column per model, cells
    ``mean ± std [ci_low, ci_high]``.
    """
    output = None if out is None else OutputFolder(out, kind="compare", overwrite=overwrite)
    if output is not None:
        output.check()
    if results is None:
        results = _load_all(result_dirs)
    elif len(results) != len(result_dirs):  # pragma: no cover - programming error
        raise ValueError("results must be the results of result_dirs, one each")
    if not allow_mismatch:  # refused before any write
        _refuse_mismatch(results, result_dirs)
    if output is None:
        labels = dict(zip(map(str, result_dirs), _labels(results, result_dirs)))
        return _wide(_long(results, result_dirs), labels)
    with output as staging:
        return write_comparison(results, result_dirs, staging, formats=formats, paired=paired)


def paired_markdown(paired: pd.DataFrame) -> str:
    """The paired differences as a Markdown table (for the terminal)."""
    return markdown_table(_paired_table(paired))
