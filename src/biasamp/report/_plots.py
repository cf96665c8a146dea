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
    fig.tight_layout(rect=(0, 0, 1, 1 - 0.45 / fig.get_figheight()))  # room for the title
    path = Path(path)
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return path


#: tasks labelled per panel of Fig. 5 (the largest |model - base| deviations)
_N_LABELS = 8


def _marginal(result: ProbeResult, source: str, attribute: str) -> float | None:
    """The base marginal P(attribute) of a source's T->A table (None for given signs)."""
    bp = result.provenance.base_rate(source, TASK_TO_ATTRIBUTE)
    if bp is None or bp.association_given or attribute not in bp.marginal:
        return None
    return float(bp.marginal[attribute])


def _spread_labels(ax, xs, ys, names, *, gap: float = 0.045) -> None:
    """Label points without piling up: labels sit right of their point and are pushed
    apart vertically (at least ``gap`` in data units) when their points are close."""
    placed: list[tuple[float, float]] = []
    for i in np.argsort(ys, kind="stable"):
        lx, ly = xs[i] + 0.02, ys[i]
        for px, py in sorted(placed, key=lambda p: p[1]):
            if abs(px - lx) < 0.25 and abs(py - ly) < gap:
                ly = py + gap
        placed.append((lx, ly))
        ax.annotate(names[i], (xs[i], ys[i]), xytext=(min(lx, 0.9), ly), textcoords="data",
                    fontsize=6, arrowprops={"arrowstyle": "-", "color": "0.6", "lw": 0.5})


def plot_fig5(result: ProbeResult, path) -> Path:
    """The paper's Fig. 5 analogue: model vs base ``P(first attribute | task)``.

    One panel per base-rate source (T->A direction): x = the base source's
    ``P(a | task)``, y = the model's mean over templates (bars: population std over
    templates), the diagonal (no amplification), the line that decides the association,
    ``P(a | task) = P(a)`` (the base marginal; a task right of it is associated with
    ``a``), and the parity lines at ``1 / n_attributes``. Only the tasks furthest from the
    diagonal are labelled, so labels do not pile up.
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
        marginal = _marginal(result, src, first)
        if marginal is not None:
            ax.axvline(marginal, color="tab:green", lw=1.1, ls="-.",
                       label=f"base P({first}) = {marginal:.3g}: decides the association")
        colors = np.where(s["association"].to_numpy(dtype=float) > 0, "tab:blue", "tab:orange")
        ax.errorbar(x, y, yerr=err, fmt="none", ecolor="0.7", lw=0.8, zorder=1)
        ax.scatter(x, y, c=colors, s=22, zorder=2)
        dev = np.where(np.isfinite(x) & np.isfinite(y), np.abs(y - x), -1.0)
        pick = [i for i in np.argsort(-dev, kind="stable")[:_N_LABELS] if dev[i] >= 0]
        _spread_labels(ax, x[pick], y[pick], s["task"].to_numpy()[pick])
        ax.set_xlim(-0.02, 1.02)
        ax.set_ylim(-0.02, 1.02)
        ax.set_aspect("equal")
        ax.set_xlabel(f"base P({first} | task): {src}")
        ax.set_ylabel(f"model P({first} | task), mean ± std over templates")
        missing = int((~np.isfinite(x)).sum())
        note = f"\n{missing} task(s) without base data (all-zero row) not shown" if missing else ""
        ax.set_title(f"{src}: blue = associated with {first}; the {_N_LABELS} largest "
                     f"deviations labelled{note}", fontsize=8)
        ax.legend(loc="upper left", fontsize=7)
    return _save(plt, fig, path, f"P({first} | task): model vs base source ({result.model})")


def plot_forest(result: ProbeResult, path, *, sources=None) -> Path:
    """Per-task Δ (model − base) for the first attribute, with bootstrap CIs: one row of two
    panels (A->T, T->A) per base-rate source (default: every source of the result).

    Δ is in the units of each direction (P(task | a) for A->T, P(a | task) for T->A),
    so the two panels have their own x axes.
    """
    plt = _plt()
    df = _by_pair(result)
    attributes = _order(result, "attribute")
    first = attributes[0]
    sources = list(sources or _order(result, "base_rates"))
    tasks = _order(result, "task")
    height = max(3.0, 0.2 * len(tasks) + 1.2)
    fig, axes = plt.subplots(len(sources), 2, figsize=(11, height * len(sources)),
                             squeeze=False)
    ypos = np.arange(len(tasks))[::-1]
    for row, source in zip(axes, sources):
        _forest_row(row, df, source, first, tasks, ypos)
    return _save(plt, fig, path, f"Per-task \u0394 with bootstrap CIs over templates ({first})")


def _forest_row(axes, df, source, first, tasks, ypos) -> None:
    for ax, direction in zip(axes, DIRECTIONS):
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


def plot_base_rate_panel(result: ProbeResult, path) -> Path:
    """Same model, every base source, both directions (mean, CI), plus sign agreement."""
    plt = _plt()
    summ = result.summary
    sources = list(dict.fromkeys(summ["base_rates"].astype(str)))
    agree = result.sign_agreement
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
