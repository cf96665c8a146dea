"""PNG plots of a probe result (matplotlib imported lazily, Agg backend): Fig. 5, the forest
plot, the base-rate panel, and what they share (figure, colours, label placement).

long on purpose: the three figures of a report and their one layout: constrained layout,
frozen after a first draw so that task labels are placed in final pixels, by a deterministic
greedy search that keeps them clear of each other, of the points and of the axes' edges.
"""

from __future__ import annotations

import itertools
import re
import textwrap
from pathlib import Path

import numpy as np
import pandas as pd

from .._conventions import ATTRIBUTE_TO_TASK, DIRECTIONS, TASK_TO_ATTRIBUTE
from ..results import ProbeResult
from ._format import direction_label

#: The plot kinds, in report order.
PLOT_KINDS = ("fig5", "forest", "base_rates")
#: File names of the plots, by kind.
PLOT_FILES = {
    "fig5": "fig5_p_attribute_given_task.png",
    "forest": "forest_delta.png",
    "base_rates": "base_rate_panel.png",
}
#: Titles of the plots in the reports, by kind.
PLOT_TITLES = {
    "fig5": "Model vs base P(attribute | task) (Fig. 5 analogue)",
    "forest": "Per-task \u0394 with bootstrap CIs",
    "base_rates": "Base-rate comparison",
}
#: Resolution of the figures and of the saved PNGs (pixels in the layout are pixels in the file).
DPI = 110
#: ``gid`` of the task labels placed by :func:`place_labels` (the tests find them by it).
LABEL_GID = "task-label"

_BLUE, _ORANGE, _GREY = "tab:blue", "tab:orange", "0.55"
#: line styles of Fig. 5, drawn and explained in its legend with the same values
_DIAGONAL = {"color": "0.5", "lw": 1, "ls": "--"}
_PARITY = {"color": "tab:red", "lw": 0.8, "ls": ":"}
_MARGINAL = {"color": "tab:green", "lw": 1.1, "ls": "-."}
#: sizes of the base-rate panel
_NAME_SIZE = 10  # source names (tick labels), points
_CELL_SIZE = 10  # agreement values in the cells, points
_TITLE_SIZE = 11  # panel titles, points
_BAR_WIDTH = 3.0  # inches of each bar panel
#: tasks labelled per panel of Fig. 5 (the largest |model - base| deviations)
_N_LABELS = 8
#: half-width of the horizontal spread of the points of a panel whose base is one value
_SPREAD = 0.1
#: radii (pixels) and directions (degrees; right of the point first) tried for each label
_RADII = (6, 11, 18, 27, 38, 51, 66, 83, 102, 124, 148, 175)
_ANGLES = (0, 30, -30, 60, -60, 90, -90, 120, -120, 150, -150, 180)


def pyplot():
    """matplotlib.pyplot on the Agg backend."""
    import matplotlib

    matplotlib.use("Agg", force=True)
    import matplotlib.pyplot as plt

    return plt


def figure(width: float, height: float, title: str, **subplots):
    """A titled figure (constrained layout; a title wider than it wrapped) and its 2-d axes."""
    fig, axes = pyplot().subplots(
        figsize=(width, height), dpi=DPI, layout="constrained", squeeze=False, **subplots
    )
    size = 12
    chars = max(20, int(len(title) * (width - 0.4) / max(text_width([title], size), 1e-9)))
    fig.suptitle("\n".join(textwrap.wrap(title, chars)), fontsize=size)
    return fig, axes


def save(fig, path) -> Path:
    """Write the PNG (at :data:`DPI`) and close the figure."""
    path = Path(path)
    fig.savefig(path, dpi=DPI)
    pyplot().close(fig)
    return path


def text_width(texts, fontsize: float) -> float:
    """Width in inches of the widest of ``texts`` at ``fontsize`` (0 for none)."""
    from matplotlib.font_manager import FontProperties
    from matplotlib.textpath import TextPath

    prop = FontProperties(size=fontsize)
    return max(
        (TextPath((0, 0), str(t), prop=prop).get_extents().width / 72 for t in texts), default=0.0
    )


def _entry(label: str, **style):
    """A legend entry: a line or marker of ``style``."""
    from matplotlib.lines import Line2D

    return Line2D([], [], label=label, **style)


def association_colors(association) -> np.ndarray:
    """Colour per row: blue associated, orange against, grey for a tie or undefined."""
    y = np.asarray(association, dtype=float)
    return np.where(y > 0, _BLUE, np.where(y < 0, _ORANGE, _GREY))


def association_entries(association, first: str, attributes) -> list:
    """Legend entries explaining each colour :func:`association_colors` gave."""
    y = np.asarray(association, dtype=float)
    other = [a for a in attributes if a != first]
    against = (
        f"base associates task with {other[0]}"
        if len(other) == 1
        else f"base does not associate task with {first}"
    )
    kinds = [
        (y > 0, _BLUE, f"base associates task with {first}"),
        (y < 0, _ORANGE, against),
        (y == 0, _GREY, "tie: no association"),
    ]
    return [_entry(label, ls="", marker="o", color=c) for mask, c, label in kinds if mask.any()]


def _anchor(angle: float) -> tuple[str, str, float, float]:
    """Alignment of a label at ``angle`` from its point, and its box's share left/below."""
    c, s = np.cos(np.radians(angle)), np.sin(np.radians(angle))
    ha, fx = ("left", 0.0) if c > 0.3 else ("right", 1.0) if c < -0.3 else ("center", 0.5)
    va, fy = ("bottom", 0.0) if s > 0.3 else ("top", 1.0) if s < -0.3 else ("center", 0.5)
    return ha, va, fx, fy


def place_labels(ax, renderer, *, points, picked, names, fontsize: float = 7.5) -> int:
    """Label the points ``picked`` (indices into ``points``, (n, 2) data units, most important
    first) with ``names`` where they fit (one away from its point gets a leader line); return
    how many were placed. Call once the layout is frozen."""
    from matplotlib.transforms import Bbox

    xy = ax.transData.transform(np.asarray(points, dtype=float))
    half = 4.0  # half the side of a marker's box, pixels (s=22 is about 7 px at 110 dpi)
    taken = [
        Bbox.from_extents(px - half, py - half, px + half, py + half)
        for px, py in xy
        if np.isfinite(px) and np.isfinite(py)
    ]
    area = ax.get_window_extent(renderer).padded(-2)
    labels, leaders = [], []
    pt = 72.0 / ax.figure.dpi
    for i, name in zip(picked, names):
        probe = ax.text(0, 0, str(name), fontsize=fontsize, transform=None)
        box = probe.get_window_extent(renderer)
        probe.remove()
        size = (box.width + 2, box.height + 2)
        hit = _position(xy[i], size, taken, area, labels=labels, leaders=leaders)
        if hit is None:
            continue
        ha, va, (fx, fy), (ox, oy), cand, leader = hit
        # the leader line leaves the label at its anchor
        arrow = dict(arrowstyle="-", color="0.45", lw=0.6, shrinkA=0, shrinkB=3, relpos=(fx, fy))
        ax.annotate(
            str(name),
            tuple(np.asarray(points, dtype=float)[i]),
            xytext=(ox * pt, oy * pt),
            textcoords="offset points",
            ha=ha,
            va=va,
            fontsize=fontsize,
            arrowprops=arrow if leader is not None else None,
            zorder=4,
            gid=LABEL_GID,
        )
        taken.append(cand)
        labels.append(cand)
        if leader is not None:
            leaders.append(leader)
    return len(labels)


def _position(point, size, taken, area, *, labels, leaders):
    """The first free position of a label of ``size`` (w, h) of ``point`` (pixels), nearest first:
    (ha, va, anchor fractions, offset, box, leader path or None), or None where none is free.
    A box must lie inside ``area``, clear of the ``taken`` boxes and the ``leaders``; a
    leader line may cross no other label and no other leader line."""
    from matplotlib.path import Path as Line
    from matplotlib.transforms import Bbox

    (px, py), (w, h) = point, size
    for r, angle in itertools.product(_RADII, _ANGLES):
        ha, va, fx, fy = _anchor(angle)
        ox, oy = r * np.cos(np.radians(angle)), r * np.sin(np.radians(angle))
        x0, y0 = px + ox - fx * w, py + oy - fy * h
        cand = Bbox.from_extents(x0, y0, x0 + w, y0 + h)
        if not (
            area.contains(cand.x0, cand.y0)
            and area.contains(cand.x1, cand.y1)
            and not any(cand.overlaps(t) for t in taken)
            and not any(line.intersects_bbox(cand) for line in leaders)
        ):
            continue
        leader = Line([(px, py), (px + ox, py + oy)]) if r > _RADII[1] else None
        if leader is not None and (
            any(leader.intersects_bbox(b) for b in labels)
            or any(leader.intersects_path(other, filled=False) for other in leaders)
        ):
            continue
        return ha, va, (fx, fy), (ox, oy), cand, leader
    return None


def _by_pair(result: ProbeResult) -> tuple:
    """``by_pair`` with its keys as strings; its attributes, those drawn (of two, the first says
    it all: P(second | task) = 1 - P(first | task)), sources and tasks, in order."""
    df = result.by_pair.astype(dict.fromkeys(("task", "attribute", "base_rates", "direction"), str))
    attributes, sources, tasks = (
        list(dict.fromkeys(df[k])) for k in ("attribute", "base_rates", "task")
    )
    return df, attributes, attributes[:1] if len(attributes) == 2 else attributes, sources, tasks


def _pooled(result: ProbeResult, source: str, direction: str) -> bool:
    """Whether the summary's value of (source, direction) is pooled (bound templates)."""
    s = result.summary
    rows = s[(s["base_rates"].astype(str) == source) & (s["direction"] == direction)]
    return not rows.empty and rows["aggregation"].iloc[0] == "pooled"


def _marginal(result: ProbeResult, source: str, attribute: str) -> float | None:
    """The base marginal P(attribute) of a source's T->A table (None for given signs)."""
    bp = result.provenance.base_rate(source, TASK_TO_ATTRIBUTE)
    if bp is None or bp.association_given or attribute not in bp.marginal:
        return None
    return float(bp.marginal[attribute])


def _spread(x: np.ndarray) -> np.ndarray | None:
    """Sideways offsets (golden-ratio sequence) when every defined base is one value."""
    finite = x[np.isfinite(x)]
    if finite.size < 2 or np.ptp(finite) > 1e-12:
        return None
    golden = (np.sqrt(5.0) - 1.0) / 2.0
    return ((np.arange(x.size) * golden) % 1.0 - 0.5) * 2.0 * _SPREAD


def _fig5_bars(s: pd.DataFrame, pooled: bool) -> np.ndarray:
    """Error bars of Fig. 5: ± std over templates, or (pooled) the CI of Δ at the point."""
    if not pooled:
        std = s["p_model_std"].to_numpy(dtype=float)
        return np.nan_to_num(np.vstack([std, std]))
    d, low, high = s[["delta", "delta_ci_low", "delta_ci_high"]].to_numpy(dtype=float).T
    return np.clip(np.nan_to_num(np.vstack([d - low, high - d])), 0.0, None)  # rounding: never < 0


def _labelled(shown: int, picked: int) -> str:
    return f"labelled: {shown} of the {picked} tasks furthest from model = base"


def _fig5_figure(result: ProbeResult):
    """The paper's Fig. 5 analogue, model vs base ``P(attribute | task)``."""
    df, attributes, rows_of, sources, _ = _by_pair(result)
    t2a = df[df["direction"] == TASK_TO_ATTRIBUTE]
    panels = [  # row by row, as the panels' axes
        (a, src, t2a[(t2a["base_rates"] == src) & (t2a["attribute"] == a)])
        for a in rows_of
        for src in sources
    ]
    legends = [_fig5_legend(result, panel, attributes) for panel in panels]
    legend_h = 0.19 * max(map(len, legends)) + 0.15
    first = rows_of[0] if len(rows_of) == 1 else "attribute"
    fig, axes = figure(
        5.6 * len(sources),
        (6.6 + legend_h) * len(rows_of),
        f"P({first} | task): model vs base source ({result.model})",
        nrows=2 * len(rows_of),
        ncols=len(sources),
        gridspec_kw={"height_ratios": [6.0, legend_h] * len(rows_of)},
    )
    labels = []  # each panel's axes above its legend's
    for ax, leg, panel, handles in zip(axes[::2].flat, axes[1::2].flat, panels, legends):
        labels.append(_fig5_panel(ax, result, panel, attributes))
        leg.axis("off")
        leg.legend(handles=handles, loc="upper center", fontsize=8, frameon=False)
    # draw once (constrained layout places everything), then keep those positions: labels are
    # placed in final pixels; the titles keep their lines, only a count may change
    fig.canvas.draw()
    fig.set_layout_engine("none")
    renderer = fig.canvas.get_renderer()
    for ax, points, pick, names in labels:
        shown = place_labels(ax, renderer, points=points, picked=pick, names=names)
        ax.set_title(
            ax.get_title().replace(_labelled(len(pick), len(pick)), _labelled(shown, len(pick)), 1),
            fontsize=9,
        )
    return fig


def _shown(s: pd.DataFrame) -> np.ndarray:
    """Rows of a Fig. 5 panel that have a point (base and model defined)."""
    return np.isfinite(s[["p_base", "p_model"]].to_numpy(dtype=float)).all(axis=1)


def _fig5_legend(result: ProbeResult, panel: tuple, attributes) -> list:
    """The legend entries of one Fig. 5 panel: every line, every colour drawn, the bars."""
    (first, src, s), parity = panel, 1.0 / len(attributes)
    handles = [
        _entry("model = base (no amplification)", **_DIAGONAL),
        _entry(f"parity: 1 / {len(attributes)} attributes = {parity:.2g}", **_PARITY),
    ]
    marginal = _marginal(result, src, first)
    if marginal is not None:
        said = f"base P({first}) = {marginal:.3g}: tasks right of it are associated with {first}"
        handles.append(_entry(said, **_MARGINAL))
    association = s["association"].to_numpy(dtype=float)[_shown(s)]
    handles += association_entries(association, first, attributes)
    bars = (
        f"{result.provenance.bootstrap.confidence:.0%} bootstrap CI of \u0394 = model \u2212 base"
        if _pooled(result, src, TASK_TO_ATTRIBUTE)
        else "± std over templates"
    )
    handles.append(_entry(f"bars: {bars}", color="0.6", marker="|", ls="", markersize=9))
    return handles


def _fig5_panel(ax, result: ProbeResult, panel: tuple, attributes) -> tuple:
    """Draw one Fig. 5 panel (attribute, source, rows); returns what place_labels needs."""
    (first, src, s), parity = panel, 1.0 / len(attributes)
    shown = _shown(s)
    x, y = s.loc[shown, ["p_base", "p_model"]].to_numpy(dtype=float).T
    pooled = _pooled(result, src, TASK_TO_ATTRIBUTE)
    offsets = _spread(x)
    xs = x if offsets is None else x + offsets
    ax.plot([0, 1], [0, 1], **_DIAGONAL, zorder=0.5)
    ax.axhline(parity, **_PARITY, zorder=0.4)
    ax.axvline(parity, **_PARITY, zorder=0.4)
    marginal = _marginal(result, src, first)
    if marginal is not None:
        ax.axvline(marginal, **_MARGINAL, zorder=0.6)
    if offsets is not None and abs(x[0] - parity) > 1e-9:  # model = base for every task
        ax.axhline(x[0], **_DIAGONAL, zorder=0.5)
    ax.errorbar(
        xs, y, yerr=_fig5_bars(s[shown], pooled), fmt="none", ecolor="0.6", lw=0.8, zorder=1.5
    )
    ax.scatter(
        xs, y, c=association_colors(s["association"].to_numpy(dtype=float)[shown]), s=22, zorder=2
    )
    ax.set(xlim=(-0.02, 1.02), ylim=(-0.02, 1.02), aspect="equal")
    ax.set_xlabel(f"base P({first} | task): {src}", fontsize=10)
    mean = "pooled over each task's templates" if pooled else "mean over templates"
    ax.set_ylabel(f"model P({first} | task), {mean}", fontsize=10)
    pick = list(np.argsort(-np.abs(y - x), kind="stable")[:_N_LABELS])
    notes = []
    if (~shown).any():
        notes.append(f"{int((~shown).sum())} task(s) without base data (all-zero row) not shown.")
    if offsets is not None:
        notes.append(
            f"Every task's base is {x[0]:.2g}: points spread ±{_SPREAD:g} sideways "
            f"(by task order) so that their bars show; read them against y = {x[0]:.2g}."
        )
    ax.set_title(
        "\n".join([src, _labelled(len(pick), len(pick)), *textwrap.wrap(" ".join(notes), 78)]),
        fontsize=9,
    )
    return ax, np.column_stack([xs, y]), pick, s["task"].to_numpy()[shown][pick]


def _forest_figure(result: ProbeResult):
    """Per-task Δ (model − base) with bootstrap CIs, a row per source and attribute."""
    df, attributes, each, sources, tasks = _by_pair(result)
    first = attributes[0] if len(each) == 1 else "the panel's attribute"
    height = max(2.6, 0.21 * len(tasks) + 1.3)
    fig, axes = figure(
        11,
        height * len(sources) * len(each) + 1.1,
        f"Per-task \u0394 = model \u2212 base of {', '.join(each)}, with bootstrap CIs "
        f"({result.model})",
        nrows=len(sources) * len(each),
        ncols=2,
    )
    ypos = np.arange(len(tasks))[::-1]
    shown = [  # a row of axes per source and attribute
        _forest_row(row, df, source=source, first=a, tasks=tasks, ypos=ypos, named=len(each) > 1)
        for row, (source, a) in zip(axes, itertools.product(sources, each))
    ]
    handles = association_entries(np.concatenate([a for a, _ in shown]), first, attributes)
    if any(u for _, u in shown):
        undefined = "undefined base: no \u0394 for this task"
        handles.append(_entry(undefined, ls="", marker="x", color="0.35"))
    confidence = result.provenance.bootstrap.confidence
    handles += [
        _entry(f"{confidence:.0%} bootstrap CI of \u0394", color="0.4", lw=1),
        _entry("\u0394 = 0: model = base", color="0.3", lw=0.8),
    ]
    fig.legend(handles=handles, loc="outside lower center", ncol=3, fontsize=9, frameon=False)
    return fig


def _forest_row(axes, df, *, source, first, tasks, ypos, named) -> tuple[np.ndarray, int]:
    """Draw one row's two panels; returns the associations drawn and the rows undefined."""
    from matplotlib.transforms import blended_transform_factory

    drawn, n_undefined = [], 0
    for ax, direction in zip(axes, DIRECTIONS):
        keys = df[["direction", "attribute", "base_rates"]]
        s = df[(keys == [direction, first, source]).all(axis=1)].set_index("task").reindex(tasks)
        columns = ["delta", "delta_ci_low", "delta_ci_high", "association"]
        d, lo, hi, association = s[columns].to_numpy(dtype=float).T
        defined = np.isfinite(d)
        ax.hlines(ypos, lo, hi, color="0.4", lw=1)
        ax.scatter(
            d[defined], ypos[defined], c=association_colors(association[defined]), s=18, zorder=3
        )
        drawn.append(association[defined])
        if not defined.all():
            edge = blended_transform_factory(ax.transAxes, ax.transData)
            ax.scatter(
                np.full(int((~defined).sum()), 0.025),
                ypos[~defined],
                marker="x",
                color="0.35",
                s=20,
                transform=edge,
                zorder=3,
            )
            n_undefined += int((~defined).sum())
        ax.axvline(0, color="0.3", lw=0.8)
        ax.set_yticks(ypos, tasks, fontsize=8)
        ax.set_ylim(-0.8, len(tasks) - 0.2)
        for tick in itertools.compress(ax.get_yticklabels(), ~defined):
            tick.set_color("0.45")
        unit = f"P(task | {first})" if direction == ATTRIBUTE_TO_TASK else f"P({first} | task)"
        ax.set_xlabel(f"\u0394 = model \u2212 base of {unit}", fontsize=9)
        named_as = f", {first}" if named else ""
        ax.set_title(f"{direction_label(direction)} vs {source}{named_as}", fontsize=10)
    return np.concatenate(drawn), n_undefined


def _base_rate_figure(result: ProbeResult):
    """Every source's value and CI in both directions, beside their sign agreement."""
    from matplotlib.ticker import MaxNLocator

    summ = result.summary
    sources = list(dict.fromkeys(summ["base_rates"].astype(str)))
    confidence = result.provenance.bootstrap.confidence
    n = len(sources)
    wrapped = [_wrapped(s) for s in sources]
    name_w = text_width(sources, _NAME_SIZE)
    cell = max(0.75, text_width([ln for w in wrapped for ln in w.split("\n")], _NAME_SIZE) + 0.2)
    lines = max(w.count("\n") + 1 for w in wrapped)
    title = (
        f"sign agreement: share of (task,\nattribute) associations of the\nsame sign; "
        f"upper: {direction_label(ATTRIBUTE_TO_TASK)}, "
        f"lower: {direction_label(TASK_TO_ATTRIBUTE)}"
    )
    heat_w = max(n * cell, text_width(title.split("\n"), _TITLE_SIZE))
    fig, axes = figure(
        name_w + 2 * _BAR_WIDTH + name_w + heat_w + 1.6,
        max(1.4, 0.55 * n) + 2.6 + 0.17 * (lines - 1),  # titles, labels: 2.6 in
        f"Base-rate comparison ({result.model})",
        ncols=3,
        gridspec_kw={"width_ratios": [_BAR_WIDTH, _BAR_WIDTH, heat_w]},
    )
    axes = axes[0]
    y = np.arange(n)[::-1]
    for k, (ax, direction) in enumerate(zip(axes[:2], DIRECTIONS)):
        s = summ[summ["direction"] == direction].set_index("base_rates").reindex(sources)
        m = s["mean"].to_numpy(dtype=float)
        # a pooled value (bound templates) may sit a rounding error outside its interval
        lo = np.clip(m - s["ci_low"].to_numpy(dtype=float), 0.0, None)
        hi = np.clip(s["ci_high"].to_numpy(dtype=float) - m, 0.0, None)
        ax.barh(y, m, color="tab:blue", alpha=0.7, height=0.6)
        ax.errorbar(
            m, y, xerr=np.nan_to_num(np.vstack([lo, hi])), fmt="none", ecolor="k", capsize=4, lw=1
        )
        ax.axvline(0, color="0.3", lw=0.8)
        ax.set_yticks(y, sources if k == 0 else [], fontsize=_NAME_SIZE)
        ax.set_ylim(-0.6, n - 0.4)
        ax.tick_params(axis="x", labelsize=9)
        ax.xaxis.set_major_locator(MaxNLocator(nbins=4))  # tick labels never run together
        value = "pooled" if _pooled(result, sources[0], direction) else "mean"
        ax.set_xlabel(
            f"BiasAmp\u2192, {value} over templates\nbars: {confidence:.0%} bootstrap CI",
            fontsize=10,
        )
        ax.set_title(f"{direction_label(direction)} by base source", fontsize=_TITLE_SIZE)
    ax = axes[2]
    mat = _agreement(result, sources)
    im = ax.imshow(mat, vmin=0, vmax=1, cmap="viridis", aspect="auto")
    for (i, j), v in np.ndenumerate(mat):
        if np.isfinite(v):
            color = "w" if v < 0.6 else "k"
            ax.text(j, i, f"{v:.2f}", ha="center", va="center", color=color, fontsize=_CELL_SIZE)
    ax.set_xticks(range(n), wrapped, fontsize=_NAME_SIZE)
    ax.set_yticks(range(n), sources, fontsize=_NAME_SIZE)
    ax.set_title(title, fontsize=_TITLE_SIZE)
    fig.colorbar(im, ax=ax, fraction=0.08, pad=0.03).ax.tick_params(labelsize=9)
    return fig


def _wrapped(name: str, width: int = 12) -> str:
    """A source name broken after ``-:_.`` into lines of about ``width`` characters."""
    lines, line = [], ""
    for piece in re.findall(r"[^-:_.]+[-:_.]?|[-:_.]", name):
        if line and len(line) + len(piece) > width:
            lines.append(line)
            line = ""
        line += piece
    return "\n".join([*lines, line])


def _agreement(result: ProbeResult, sources: list[str]) -> np.ndarray:
    """Sign agreement of each two sources: upper triangle A->T, lower T->A."""
    n = len(sources)
    mat = np.full((n, n), np.nan)
    np.fill_diagonal(mat, 1.0)
    for rec in result.sign_agreement.to_dict("records"):  # each direction fills its own triangle
        i, j = sorted((sources.index(str(rec["source_a"])), sources.index(str(rec["source_b"]))))
        mat[(i, j) if rec["direction"] == ATTRIBUTE_TO_TASK else (j, i)] = rec["agreement"]
    return mat


_FIGURES = {"fig5": _fig5_figure, "forest": _forest_figure, "base_rates": _base_rate_figure}


def plot(result: ProbeResult, kind: str, out_dir) -> Path:
    """Write the plot ``kind`` (of :data:`PLOT_KINDS`) into ``out_dir``; return its path."""
    return save(_FIGURES[kind](result), Path(out_dir) / PLOT_FILES[kind])
