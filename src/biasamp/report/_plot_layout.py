"""What every plot of :mod:`biasamp.report._plots` shares: the figure, its layout and saving,
the association colours and their legend entries, text sizes, and the label placement.

Layout is matplotlib's constrained layout, frozen after the first draw so that labels can be
placed in final display coordinates; labels are placed by a deterministic greedy search
(:func:`place_labels`) that never lets a label overlap another label, a point or anything
outside its axes (the title and legends sit outside the axes).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

__all__ = [
    "DPI",
    "LABEL_GID",
    "association_entries",
    "association_colors",
    "figure",
    "freeze_layout",
    "place_labels",
    "pyplot",
    "save",
    "text_width",
]

#: Resolution of the figures and of the saved PNGs (one value: pixels in the layout are
#: pixels in the file).
DPI = 110
#: ``gid`` of the task labels placed by :func:`place_labels` (the tests find them by it).
LABEL_GID = "task-label"

_BLUE, _ORANGE, _GREY = "tab:blue", "tab:orange", "0.55"


def pyplot():
    """matplotlib.pyplot on the Agg backend (imported on first use)."""
    import matplotlib

    matplotlib.use("Agg", force=True)
    import matplotlib.pyplot as plt

    return plt


def figure(width: float, height: float, title: str, **subplots):
    """A titled figure of ``width`` x ``height`` inches (constrained layout) and its axes
    grid (a 2-d array, keywords of ``pyplot.subplots``). A title wider than the figure (a
    long model path) is wrapped onto more lines."""
    import textwrap

    fig, axes = pyplot().subplots(
        figsize=(width, height), dpi=DPI, layout="constrained", squeeze=False, **subplots
    )
    size = 12
    chars = max(20, int(len(title) * (width - 0.4) / max(text_width([title], size), 1e-9)))
    fig.suptitle("\n".join(textwrap.wrap(title, chars)), fontsize=size)
    return fig, axes


def freeze_layout(fig) -> object:
    """Draw once (constrained layout places everything), then keep those positions; return
    the renderer, in whose pixels the layout now stays put."""
    fig.canvas.draw()
    fig.set_layout_engine("none")
    return fig.canvas.get_renderer()


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


def association_colors(association) -> np.ndarray:
    """Colour per row: blue where the base associates the task with the attribute, orange
    where it associates it against, grey for a tie (0) or an undefined association."""
    y = np.asarray(association, dtype=float)
    return np.where(y > 0, _BLUE, np.where(y < 0, _ORANGE, _GREY))


def association_entries(association, first: str, attributes, *, undefined: bool = True):
    """Legend handles explaining each colour :func:`association_colors` gave ``association``
    (with two attributes "against the first" is "with the second", and says so)."""
    from matplotlib.lines import Line2D

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
    if undefined:
        kinds.append((np.isnan(y), _GREY, "association undefined"))
    return [
        Line2D([], [], ls="", marker="o", color=color, label=label)
        for mask, color, label in kinds
        if mask.any()
    ]


def _free(box, taken, area, leaders) -> bool:
    """Whether ``box`` lies inside ``area`` and clear of the ``taken`` boxes and the
    ``leaders`` (paths of the leader lines drawn)."""
    return (
        area.x0 <= box.x0
        and box.x1 <= area.x1
        and area.y0 <= box.y0
        and box.y1 <= area.y1
        and not any(box.overlaps(t) for t in taken)
        and not any(line.intersects_bbox(box) for line in leaders)
    )


#: radii (pixels) and directions (degrees; right of the point first) tried for each label
_RADII = (6, 11, 18, 27, 38, 51, 66, 83, 102, 124, 148, 175)
_ANGLES = (0, 30, -30, 60, -60, 90, -90, 120, -120, 150, -150, 180)


def _anchor(angle: float) -> tuple[str, str, float, float]:
    """Alignment of a label placed at ``angle`` from its point, and the fraction of its
    width and height left/below of its anchor."""
    c, s = np.cos(np.radians(angle)), np.sin(np.radians(angle))
    ha, fx = ("left", 0.0) if c > 0.3 else ("right", 1.0) if c < -0.3 else ("center", 0.5)
    va, fy = ("bottom", 0.0) if s > 0.3 else ("top", 1.0) if s < -0.3 else ("center", 0.5)
    return ha, va, fx, fy


def place_labels(ax, renderer, *, points, picked, names, fontsize: float = 7.5) -> int:
    """Label the points ``picked`` (indices into ``points``, (n, 2) data units, most important
    first) with ``names`` where they fit; return how many were placed. Call after
    :func:`freeze_layout`.

    Each label goes to the first position, nearest first, whose box lies inside the axes and
    overlaps no other label and no point; one away from its point gets a thin leader line.
    """
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
        hit = _position(
            xy[i],
            box.width + 2,
            box.height + 2,
            taken=taken,
            area=area,
            labels=labels,
            leaders=leaders,
        )
        if hit is None:
            continue
        ha, va, (fx, fy), (ox, oy), cand, leader = hit
        # the leader line leaves the label at its anchor
        arrow = dict(arrowstyle="-", color="0.45", lw=0.6, shrinkA=0, shrinkB=3, relpos=(fx, fy))
        ann = ax.annotate(
            str(name),
            tuple(np.asarray(points, dtype=float)[i]),
            xytext=(ox * pt, oy * pt),
            textcoords="offset points",
            ha=ha,
            va=va,
            fontsize=fontsize,
            arrowprops=arrow if leader is not None else None,
            zorder=4,
        )
        ann.set_gid(LABEL_GID)
        taken.append(cand)
        labels.append(cand)
        if leader is not None:
            leaders.append(leader)
    return len(labels)


def _position(point, w: float, h: float, *, taken, area, labels, leaders):
    """The first free position of a ``w`` x ``h`` label of ``point`` (pixels), nearest
    first: (ha, va, anchor fractions, offset, box, leader path or None), or None where none
    is free. A leader line may cross no other label and no other leader line."""
    from matplotlib.path import Path
    from matplotlib.transforms import Bbox

    px, py = point
    for r in _RADII:
        for angle in _ANGLES:
            ha, va, fx, fy = _anchor(angle)
            ox, oy = r * np.cos(np.radians(angle)), r * np.sin(np.radians(angle))
            x0, y0 = px + ox - fx * w, py + oy - fy * h
            cand = Bbox.from_extents(x0, y0, x0 + w, y0 + h)
            if not _free(cand, taken, area, leaders):
                continue
            leader = Path([(px, py), (px + ox, py + oy)]) if r > _RADII[1] else None
            if leader is not None and (
                any(leader.intersects_bbox(b) for b in labels)
                or any(leader.intersects_path(other, filled=False) for other in leaders)
            ):
                continue
            return ha, va, (fx, fy), (ox, oy), cand, leader
    return None
