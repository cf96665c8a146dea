"""PNG plots of a probe result (matplotlib imported lazily, Agg backend).

Every function takes a :class:`~biasamp.results.ProbeResult` (in memory or loaded from its
folder) and writes one PNG; none needs a model or torch.
"""

from __future__ import annotations

import logging
from pathlib import Path

import numpy as np
import pandas as pd

from .._conventions import (
    ATTRIBUTE_TO_TASK,
    DIRECTION_LABELS,
    DIRECTIONS,
    TASK_TO_ATTRIBUTE,
)
from ..results import ProbeResult
from ._agreement import sign_agreement

__all__ = ["PLOT_FILES", "PLOT_KINDS", "PLOT_TITLES", "plot_all", "plot_base_rate_panel",
           "plot_fig5", "plot_forest"]

log = logging.getLogger(__name__)

#: The plot kinds, in report order.
PLOT_KINDS = ("fig5", "forest", "base_rates")
#: File names of the plots, by kind.
PLOT_FILES = {"fig5": "fig5_p_attribute_given_task.png", "forest": "forest_delta.png",
              "base_rates": "base_rate_panel.png"}
#: Titles of the plots in the reports, by kind.
PLOT_TITLES = {"fig5": "Model vs base P(attribute | task) (Fig. 5 analogue)",
               "forest": "Per-task \u0394 with bootstrap CIs",
               "base_rates": "Base-rate comparison"}


def _plt():
    import matplotlib
    matplotlib.use("Agg", force=True)
    import matplotlib.pyplot as plt
    return plt


def _by_pair(result: ProbeResult) -> pd.DataFrame:
    df = result.by_pair.copy()
    for col in ("task", "attribute", "base_rates", "direction"):
        df[col] = df[col].astype(str)
    return df


def _order(result: ProbeResult, key: str) -> list[str]:
    return list(dict.fromkeys(result.by_pair[key].astype(str)))


def _save(plt, fig, path, title: str) -> Path:
    """Title, tight layout, write the PNG, close the figure."""
    fig.suptitle(title, fontsize=11)
    fig.tight_layout()
    path = Path(path)
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return path


def plot_fig5(result: ProbeResult, path) -> Path:
    """The paper's Fig. 5 analogue: model vs base ``P(first attribute | task)``.

    One panel per base-rate source (T->A direction): x = the base source's
    ``P(a | task)``, y = the model's mean over templates (bars: population std over
    templates), the diagonal (no amplification) and the parity lines at
    ``1 / n_attributes`` (0.5 for he/she).
    """
    plt = _plt()
    df = _by_pair(result)
    attributes = _order(result, "attribute")
    first = attributes[0]
    sources = _order(result, "base_rates")
    sub = df[(df["direction"] == TASK_TO_ATTRIBUTE) & (df["attribute"] == first)]
    n = len(sources)
    fig, axes = plt.subplots(1, n, figsize=(5.2 * n, 5.2), squeeze=False)
    parity = 1.0 / len(attributes)
    for ax, src in zip(axes[0], sources):
        s = sub[sub["base_rates"] == src]
        x = s["p_base"].to_numpy(dtype=float)
        y = s["p_model"].to_numpy(dtype=float)
        err = s["p_model_std"].to_numpy(dtype=float) if "p_model_std" in s else None
        ax.plot([0, 1], [0, 1], color="0.5", lw=1, ls="--", label="model = base")
        ax.axhline(parity, color="tab:red", lw=0.8, ls=":", label=f"parity ({parity:.2g})")
        ax.axvline(parity, color="tab:red", lw=0.8, ls=":")
        colors = np.where(s["association"].to_numpy(dtype=float) > 0, "tab:blue", "tab:orange")
        ax.errorbar(x, y, yerr=err, fmt="none", ecolor="0.7", lw=0.8, zorder=1)
        ax.scatter(x, y, c=colors, s=22, zorder=2)
        for xi, yi, t in zip(x, y, s["task"]):
            ax.annotate(t, (xi, yi), fontsize=6, xytext=(2, 2), textcoords="offset points")
        ax.set_xlim(-0.02, 1.02)
        ax.set_ylim(-0.02, 1.02)
        ax.set_aspect("equal")
        ax.set_xlabel(f"base P({first} | task): {src}")
        ax.set_ylabel(f"model P({first} | task), mean ± std over templates")
        missing = int((~np.isfinite(x)).sum())
        note = f"\n{missing} task(s) without base data (all-zero row) not shown" if missing else ""
        ax.set_title(f"{src}: blue = associated with {first}{note}", fontsize=9)
        ax.legend(loc="upper left", fontsize=7)
    return _save(plt, fig, path, f"P({first} | task): model vs base source ({result.model})")


def plot_forest(result: ProbeResult, path, *, source: str | None = None) -> Path:
    """Per-task Δ (model − base) for the first attribute, with bootstrap CIs, both directions.

    Δ is in the units of each direction (P(task | a) for A->T, P(a | task) for T->A),
    so the two panels have their own x axes.
    """
    plt = _plt()
    df = _by_pair(result)
    attributes = _order(result, "attribute")
    first = attributes[0]
    source = source or _order(result, "base_rates")[0]
    tasks = _order(result, "task")
    fig, axes = plt.subplots(1, 2, figsize=(11, max(3.0, 0.22 * len(tasks) + 1.4)), squeeze=False)
    ypos = np.arange(len(tasks))[::-1]
    for ax, direction in zip(axes[0], DIRECTIONS):
        s = df[(df["direction"] == direction) & (df["attribute"] == first)
               & (df["base_rates"] == source)].set_index("task").reindex(tasks)
        d = s["delta"].to_numpy(dtype=float)
        lo = s["delta_ci_low"].to_numpy(dtype=float)
        hi = s["delta_ci_high"].to_numpy(dtype=float)
        colors = np.where(s["association"].to_numpy(dtype=float) > 0, "tab:blue", "tab:orange")
        ax.hlines(ypos, lo, hi, color="0.4", lw=1)
        ax.scatter(d, ypos, c=colors, s=18, zorder=3)
        ax.axvline(0, color="0.3", lw=0.8)
        ax.set_yticks(ypos)
        ax.set_yticklabels(tasks, fontsize=7)
        unit = f"P(task | {first})" if direction == ATTRIBUTE_TO_TASK else f"P({first} | task)"
        ax.set_xlabel(f"\u0394 = model \u2212 base of {unit}")
        ax.set_title(f"{DIRECTION_LABELS[direction]} vs {source} (blue: base associates task "
                     f"with {first})", fontsize=9)
    return _save(plt, fig, path, f"Per-task \u0394 with bootstrap CIs over templates ({first})")


def plot_base_rate_panel(result: ProbeResult, path) -> Path:
    """Same model, every base source, both directions (mean, CI), plus sign agreement."""
    plt = _plt()
    summ = result.summary
    sources = list(dict.fromkeys(summ["base_rates"].astype(str)))
    agree = sign_agreement(result.by_pair)
    fig, axes = plt.subplots(1, 3, figsize=(15, 4.2), gridspec_kw={"width_ratios": [1, 1, 1.1]})
    for ax, direction in zip(axes[:2], DIRECTIONS):
        s = summ[summ["direction"] == direction].set_index("base_rates").reindex(sources)
        m = s["mean"].to_numpy(dtype=float)
        # a pooled value (bound templates) may sit a rounding error outside its interval
        lo = np.clip(m - s["ci_low"].to_numpy(dtype=float), 0.0, None)
        hi = np.clip(s["ci_high"].to_numpy(dtype=float) - m, 0.0, None)
        x = np.arange(len(sources))
        ax.bar(x, m, color="tab:blue", alpha=0.7)
        ax.errorbar(x, m, yerr=np.vstack([lo, hi]), fmt="none", ecolor="k", capsize=4)
        ax.axhline(0, color="0.3", lw=0.8)
        ax.set_xticks(x)
        ax.set_xticklabels(sources, rotation=20, ha="right", fontsize=8)
        ax.set_ylabel("BiasAmp\u2192 (mean over templates, bootstrap CI)")
        ax.set_title(f"{DIRECTION_LABELS[direction]} by base source", fontsize=10)
    ax = axes[2]
    n = len(sources)
    mat = np.full((n, n), np.nan)
    for i in range(n):
        mat[i, i] = 1.0
    for rec in agree[agree["direction"] == TASK_TO_ATTRIBUTE].to_dict("records"):
        i, j = sources.index(rec["source_a"]), sources.index(rec["source_b"])
        mat[j, i] = rec["agreement"]  # lower triangle: T->A
    for rec in agree[agree["direction"] == ATTRIBUTE_TO_TASK].to_dict("records"):
        i, j = sources.index(rec["source_a"]), sources.index(rec["source_b"])
        mat[i, j] = rec["agreement"]  # upper triangle: A->T
    im = ax.imshow(mat, vmin=0, vmax=1, cmap="viridis")
    for i in range(n):
        for j in range(n):
            if np.isfinite(mat[i, j]):
                ax.text(j, i, f"{mat[i, j]:.2f}", ha="center", va="center",
                        color="w" if mat[i, j] < 0.6 else "k", fontsize=8)
    ax.set_xticks(range(n))
    ax.set_xticklabels(sources, rotation=20, ha="right", fontsize=8)
    ax.set_yticks(range(n))
    ax.set_yticklabels(sources, fontsize=8)
    ax.set_title("sign agreement of the association\n(upper: A\u2192T, lower: T\u2192A)",
                 fontsize=10)
    fig.colorbar(im, ax=ax, fraction=0.046)
    return _save(plt, fig, path, f"Base-rate comparison ({result.model})")


_PLOTTERS = {"fig5": plot_fig5, "forest": plot_forest, "base_rates": plot_base_rate_panel}


def plot_all(result: ProbeResult, out_dir, kinds=PLOT_KINDS) -> dict[str, Path]:
    """Write the plots of ``kinds`` (default: every kind) into ``out_dir``.

    Returns
    -------
    dict mapping kind to the written path, in :data:`PLOT_KINDS` order.
    """
    out_dir = Path(out_dir)
    return {kind: _PLOTTERS[kind](result, out_dir / PLOT_FILES[kind])
            for kind in PLOT_KINDS if kind in kinds}
