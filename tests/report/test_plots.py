"""Tests of the PNG plots (biasamp.report._plots): nothing cut off, no text over another,
labels clear of points, every colour explained, undefined rows marked, the bars of Fig. 5
saying what they are, the base-rate panel sized from its content."""

from __future__ import annotations

import dataclasses
import itertools

import numpy as np
import pytest

pytest.importorskip("matplotlib")

from biasamp import UndefinedCellsWarning
from biasamp.pipeline import evaluate_tables
from biasamp.report._plots import (
    DPI,
    LABEL_GID,
    _base_rate_figure,
    _fig5_figure,
    _forest_figure,
    _spread,
    plot,
    save,
)
from biasamp.results import ProbeResult
from conftest import FixedSource

#: the 40 WinoBias occupations: the crowded case of the issue
WINOBIAS = [
    "driver",
    "supervisor",
    "janitor",
    "cook",
    "mover",
    "laborer",
    "construction worker",
    "chief",
    "developer",
    "carpenter",
    "manager",
    "lawyer",
    "farmer",
    "salesperson",
    "physician",
    "guard",
    "analyst",
    "mechanic",
    "sheriff",
    "CEO",
    "attendant",
    "cashier",
    "teacher",
    "nurse",
    "assistant",
    "secretary",
    "auditor",
    "cleaner",
    "receptionist",
    "clerk",
    "counselor",
    "designer",
    "hairdresser",
    "writer",
    "housekeeper",
    "baker",
    "accountant",
    "editor",
    "librarian",
    "tailor",
]
N_UNDEFINED = 4  # tasks of the "skewed" source without base data (all-zero rows)


def _crowded(golden: ProbeResult, *, bound: bool) -> ProbeResult:
    """40 tasks, P(he | task) of the model crowded in 0.6-0.8 (as the tiny WinoBias run),
    a source whose bases crowd near 1 with four all-zero rows, and the uniform source."""
    rng = np.random.default_rng(7)
    n_t, m = len(WINOBIAS), 6
    he = np.clip(rng.normal(0.7, 0.06, size=(m, n_t)), 0.01, 0.99)
    ta = np.stack([he, 1 - he], axis=2)
    at = rng.dirichlet(np.ones(n_t), size=(m, 2)).transpose(0, 2, 1)
    share = np.concatenate([rng.uniform(0.9, 0.995, 30), rng.uniform(0.05, 0.6, 10)])
    counts = np.column_stack([share, 1 - share]) * 200.0
    counts[[3, 11, 23, 37]] = 0.0
    kw = {}
    if bound:  # each template bound to its own tasks: pooled per task
        kw["template_tasks"] = [WINOBIAS[i::m] for i in range(m)]
    with pytest.warns(UndefinedCellsWarning, match="8 of 80 .* cells are undefined"):
        ev = evaluate_tables(
            at,
            ta,
            WINOBIAS,
            ["he", "she"],
            ["uniform", FixedSource("skewed", counts)],
            template_ids=[f"t{i}" for i in range(m)],
            n_resamples=60,
            **kw,
        )
    gp = golden.provenance
    prov = gp.model_copy(
        update={
            "model": gp.model.model_copy(update={"name": "crowded-model"}),
            "base_rates": ev.base_provenance,
            "bootstrap": gp.bootstrap.model_copy(update={"confidence": 0.9}),
        }
    )
    return dataclasses.replace(
        golden,
        summary=ev.summary,
        by_pair=ev.by_pair,
        per_template=ev.per_template,
        sign_agreement=ev.sign_agreement,
        provenance=prov,
    )


@pytest.fixture(scope="module", params=["crossed", "bound"])
def crowded(request, golden_result):
    result = _crowded(golden_result, bound=request.param == "bound")
    assert set(result.summary["aggregation"]) == {
        "pooled" if request.param == "bound" else "templates"
    }
    return result


@pytest.fixture(autouse=True)
def _close_figures():
    yield
    import matplotlib.pyplot as plt

    plt.close("all")


BUILDERS = {"fig5": _fig5_figure, "forest": _forest_figure, "base_rates": _base_rate_figure}


def _texts(fig):
    """Every text drawn: visible, not empty, not the label of a tick outside the view
    (matplotlib keeps such labels but does not draw them)."""
    from matplotlib.text import Text

    hidden = set()
    for ax in fig.axes:
        for axis in (ax.xaxis, ax.yaxis):
            lo, hi = sorted(axis.get_view_interval())
            for tick in [*axis.get_major_ticks(), *axis.get_minor_ticks()]:
                if not lo - 1e-9 <= tick.get_loc() <= hi + 1e-9:
                    hidden |= {id(tick.label1), id(tick.label2)}
    return [
        t
        for t in fig.findobj(Text)
        if t.get_visible() and t.get_text().strip() and id(t) not in hidden
    ]


def _boxes(fig):
    """Window extents (pixels) of every drawn text, after one draw (an annotation's text
    alone, without its leader line)."""
    from matplotlib.text import Text

    fig.canvas.draw()
    renderer = fig.canvas.get_renderer()
    return [(t, Text.get_window_extent(t, renderer)) for t in _texts(fig)]


def _overlaps(boxes, *, slack: float = 0.5):
    """Pairs of texts whose boxes overlap by more than ``slack`` pixels each way."""
    out = []
    for (ta, a), (tb, b) in itertools.combinations(boxes, 2):
        w = min(a.x1, b.x1) - max(a.x0, b.x0)
        h = min(a.y1, b.y1) - max(a.y0, b.y0)
        if w > slack and h > slack:
            out.append((ta.get_text(), tb.get_text()))
    return out


def test_the_overlap_check_finds_an_overlap():
    from biasamp.report._plots import figure

    fig, axes = figure(3, 2, "t")
    axes[0, 0].text(0.5, 0.5, "one label")
    axes[0, 0].text(0.52, 0.51, "another")
    axes[0, 0].text(0.5, 0.1, "apart")
    assert _overlaps(_boxes(fig)) == [("one label", "another")]
    fig.text(0.99, 0.5, "runs off the right edge")
    fig.canvas.draw()
    assert _outside(fig) == ["runs off the right edge"]


def _outside(fig) -> list[str]:
    """Texts not wholly inside the figure (half a pixel of slack)."""
    box = fig.bbox
    return [
        t.get_text()
        for t, b in _boxes(fig)
        if not (
            b.x0 >= box.x0 - 0.5
            and b.x1 <= box.x1 + 0.5
            and b.y0 >= box.y0 - 0.5
            and b.y1 <= box.y1 + 0.5
        )
    ]


@pytest.mark.parametrize("kind", list(BUILDERS))
def test_nothing_cut_off_and_no_text_over_another(crowded, kind, tmp_path):
    import matplotlib.image as mpimg

    fig = BUILDERS[kind](crowded)
    boxes = _boxes(fig)
    assert len(boxes) > 20
    assert _outside(fig) == []
    assert _overlaps(boxes) == []
    width, height = fig.get_size_inches()
    path = save(fig, tmp_path / f"{kind}.png")
    img = mpimg.imread(path)
    # the saved PNG is the figure checked above, and nothing drawn touches its border
    assert abs(img.shape[0] - height * DPI) < 1 and abs(img.shape[1] - width * DPI) < 1
    rgb = img[..., :3]
    for edge in (rgb[:2], rgb[-2:], rgb[:, :2], rgb[:, -2:]):
        assert edge.min() == 1.0
    assert rgb.min() < 0.5  # something was drawn


def test_fig5_labels_sit_clear_of_points_titles_and_legends(crowded):
    fig = _fig5_figure(crowded)
    boxes = _boxes(fig)
    labels = [(t, b) for t, b in boxes if t.get_gid() == LABEL_GID]
    for ax in fig.axes[:2]:  # as many as the panel's title says, most of the 8 asked for
        n = sum(t.axes is ax for t, _ in labels)
        assert n >= 6
        assert f"labelled: {n} of the 8 tasks furthest from model = base" in ax.get_title()
    # leader lines cross no other label and no other leader line
    leaders = [(t, t.arrow_patch.get_path()) for t, _ in labels if t.arrow_patch is not None]
    assert leaders
    for t, path in leaders:
        assert not any(path.intersects_bbox(b) for u, b in labels if u is not t), t.get_text()
    for (_, p), (_, q) in itertools.combinations(leaders, 2):
        assert not p.intersects_path(q, filled=False)
    others = [(t, b) for t, b in boxes if t.get_gid() != LABEL_GID]
    renderer = fig.canvas.get_renderer()
    for t, b in labels:
        ax = t.axes
        area = ax.get_window_extent(renderer)
        assert area.x0 <= b.x0 and b.x1 <= area.x1 and area.y0 <= b.y0 and b.y1 <= area.y1
        assert not any(b.overlaps(o) for _, o in others), t.get_text()
        for coll in ax.collections:
            if coll.get_offsets().size and coll.get_gid() is None:
                xy = ax.transData.transform(coll.get_offsets())
                assert not any(b.contains(x, y) for x, y in xy), t.get_text()
    assert _overlaps(labels) == []
    # the same result, the same picture
    names = sorted((t.get_text(), *np.round(b.bounds, 6)) for t, b in labels)
    again = sorted(
        (t.get_text(), *np.round(b.bounds, 6))
        for t, b in _boxes(_fig5_figure(crowded))
        if t.get_gid() == LABEL_GID
    )
    assert names == again


def _legend_colors(fig) -> set[tuple]:
    from matplotlib.colors import to_rgba

    legends = [*fig.legends, *(ax.get_legend() for ax in fig.axes if ax.get_legend())]
    return {
        to_rgba(h.get_color())
        for leg in legends
        for h in leg.legend_handles
        if hasattr(h, "get_color")
    }


def _point_colors(fig) -> set[tuple]:
    from matplotlib.colors import to_rgba

    return {
        to_rgba(c)
        for ax in fig.axes
        for coll in ax.collections
        if coll.get_offsets().size
        for c in coll.get_facecolors()
    }


@pytest.mark.parametrize("kind", ["fig5", "forest"])
def test_every_colour_is_in_a_legend(crowded, kind):
    fig = BUILDERS[kind](crowded)
    colors = _point_colors(fig)
    assert len(colors) >= 2
    assert colors <= _legend_colors(fig)


def test_forest_marks_undefined_rows(crowded):
    fig = _forest_figure(crowded)
    ax = next(a for a in fig.axes if a.get_title() == "T\u2192A vs skewed")
    crosses = [c for c in ax.collections if c.get_paths() and len(c.get_offsets()) == N_UNDEFINED]
    assert len(crosses) == 1
    rows = sorted(crosses[0].get_offsets()[:, 1])
    # rows are drawn top-down: task i at y = 39 - i
    assert rows == sorted(39.0 - i for i in (3, 11, 23, 37))
    grey = [t.get_text() for t in ax.get_yticklabels() if t.get_color() == "0.45"]
    assert grey == [WINOBIAS[i] for i in (3, 11, 23, 37)]
    labels = [t.get_text() for t in fig.legends[0].get_texts()]
    assert "undefined base: no \u0394 for this task" in labels
    assert "90% bootstrap CI of \u0394" in labels  # the result's own level


def test_fig5_bars_say_what_they_are(golden_result):
    """Golden T->A, source 'golden', task t1: templates a and b give P(he | t1) = 0.8 and
    30/40 = 0.75, so the point is (0.75, 0.775) and the bar ± std 0.025: 0.75 to 0.80."""
    fig = _fig5_figure(golden_result)
    ax = fig.axes[0]
    assert ax.get_ylabel() == "model P(he | task), mean over templates"
    legend = [t.get_text() for t in fig.axes[1].get_legend().get_texts()]
    assert legend[-1] == "bars: ± std over templates"
    segs = ax.collections[0].get_segments()  # the error bars, in task order
    np.testing.assert_allclose(segs[0], [[0.75, 0.75], [0.75, 0.80]], atol=1e-12)


def test_fig5_bars_of_a_pooled_set_are_the_ci_of_delta(golden_result):
    result = _crowded(golden_result, bound=True)
    fig = _fig5_figure(result)
    ax = fig.axes[1]  # the "skewed" source
    assert ax.get_ylabel() == "model P(he | task), pooled over each task's templates"
    legend = [t.get_text() for t in fig.axes[3].get_legend().get_texts()]
    assert legend[-1] == "bars: 90% bootstrap CI of \u0394 = model \u2212 base"
    bp = result.by_pair
    rows = bp[
        (bp["base_rates"] == "skewed")
        & (bp["direction"] == "task_to_attribute")
        & (bp["attribute"] == "he")
    ]
    rows = rows[np.isfinite(rows["p_base"])]
    segs = np.array(ax.collections[0].get_segments())
    lo = np.minimum(rows["p_base"] + rows["delta_ci_low"], rows["p_model"])
    hi = np.maximum(rows["p_base"] + rows["delta_ci_high"], rows["p_model"])
    np.testing.assert_allclose(segs[:, 0, 1], lo, atol=1e-12)
    np.testing.assert_allclose(segs[:, 1, 1], hi, atol=1e-12)
    np.testing.assert_allclose(segs[:, 0, 0], rows["p_base"], atol=1e-12)


def test_uniform_panel_spreads_its_points_deterministically(crowded):
    fig = _fig5_figure(crowded)
    ax = fig.axes[0]
    assert ax.get_xlabel() == "base P(he | task): uniform"
    x = ax.collections[-1].get_offsets()[:, 0]  # the points (drawn after the bars)
    assert len(np.unique(np.round(x, 9))) == len(WINOBIAS)
    assert np.all(np.abs(x - 0.5) <= 0.1 + 1e-12)
    np.testing.assert_array_equal(x, 0.5 + _spread(np.full(len(WINOBIAS), 0.5)))
    assert "points spread ±0.1 sideways" in ax.get_title()
    # the lines at 0.5 lie beneath the bars and the points
    lines = [ln for ln in ax.get_lines() if ln.get_color() == "tab:red"]
    assert lines and max(ln.get_zorder() for ln in lines) < ax.collections[0].get_zorder()
    assert _spread(np.array([0.2, 0.5, np.nan])) is None  # differing bases: not spread
    spread = fig.axes[1].collections[-1].get_offsets()[:, 0]
    bp = crowded.by_pair
    skewed = bp[
        (bp["base_rates"] == "skewed")
        & (bp["direction"] == "task_to_attribute")
        & (bp["attribute"] == "he")
    ]
    np.testing.assert_array_equal(spread, skewed["p_base"].dropna())


def _renamed(result: ProbeResult, names: dict) -> ProbeResult:
    def ren(df):
        df = df.copy()
        for c in ("base_rates", "source_a", "source_b"):
            if c in df:
                df[c] = df[c].replace(names)
        return df

    return dataclasses.replace(
        result,
        summary=ren(result.summary),
        by_pair=ren(result.by_pair),
        sign_agreement=ren(result.sign_agreement),
    )


def test_base_rate_panel_reads_horizontally_and_is_sized_from_its_names(crowded):
    fig = _base_rate_figure(crowded)
    w0, h0 = fig.get_size_inches()
    assert all(t.get_rotation() == 0 for t in _texts(fig))
    ticks = [t for ax in fig.axes[:3] for t in ax.get_yticklabels() if t.get_text()]
    assert {t.get_text() for t in ticks} == {"uniform", "skewed"}
    assert min(t.get_fontsize() for t in ticks) >= 10
    long = _renamed(crowded, {"skewed": "a-much-longer-source-name-2016"})
    fig = _base_rate_figure(long)
    w1, h1 = fig.get_size_inches()
    assert w1 > w0 + 1.0 and h1 >= h0  # the long name also wraps onto more lines
    assert _overlaps(_boxes(fig)) == [] and _outside(fig) == []


@pytest.mark.parametrize("kind", list(BUILDERS))
def test_a_long_model_path_is_wrapped_not_cut_off(golden_result, kind):
    path = "/home/someone/.cache/huggingface/hub/models--org--a-rather-long-model-name/x"
    gp = golden_result.provenance
    result = dataclasses.replace(
        golden_result,
        provenance=gp.model_copy(update={"model": gp.model.model_copy(update={"name": path})}),
    )
    fig = BUILDERS[kind](result)
    assert _outside(fig) == [] and _overlaps(_boxes(fig)) == []


def test_plot_fig5_writes_the_same_png_twice(golden_result, tmp_path):
    a = plot(golden_result, "fig5", tmp_path).read_bytes()
    b = plot(golden_result, "fig5", tmp_path).read_bytes()
    assert a[:8] == b"\x89PNG\r\n\x1a\n" and a == b


def test_forest_shows_every_group_with_more_than_two(golden_result):
    """Three groups: a row of panels per (source, group), each drawing that group's Δ (by_pair);
    with two attributes (the golden he/she) the first alone (the second's T->A Δ is its
    mirror)."""
    rng = np.random.default_rng(3)
    tasks, groups, m = WINOBIAS[:5], ["white", "black", "asian"], 3
    ta = rng.dirichlet(np.ones(3), size=(m, 5))
    at = rng.dirichlet(np.ones(5), size=(m, 3)).transpose(0, 2, 1)
    counts = rng.uniform(1, 100, size=(5, 3))
    ev = evaluate_tables(
        at,
        ta,
        tasks,
        groups,
        [FixedSource("labor", counts)],
        template_ids=["a", "b", "c"],
        n_resamples=20,
    )
    gp = golden_result.provenance
    result = dataclasses.replace(
        golden_result,
        summary=ev.summary,
        by_pair=ev.by_pair,
        per_template=ev.per_template,
        sign_agreement=ev.sign_agreement,
        provenance=gp.model_copy(update={"base_rates": ev.base_provenance}),
    )
    fig = _forest_figure(result)
    panels = {a.get_title(): a for a in fig.axes if a.get_title()}
    assert list(panels) == [f"{d} vs labor, {g}" for g in groups for d in ("A\u2192T", "T\u2192A")]
    bp = ev.by_pair
    for g in groups:
        for d, direction in (("A\u2192T", "attribute_to_task"), ("T\u2192A", "task_to_attribute")):
            ax = panels[f"{d} vs labor, {g}"]
            (points,) = [c for c in ax.collections if len(c.get_offsets()) == 5 and c.get_paths()]
            want = bp[(bp["attribute"] == g) & (bp["direction"] == direction)]
            by_y = dict(zip(points.get_offsets()[:, 1], points.get_offsets()[:, 0]))
            got = [by_y[4.0 - i] for i in range(5)]  # task i at y = 4 - i
            np.testing.assert_array_equal(got, want.set_index("task").loc[tasks, "delta"])
    two = [a.get_title() for a in _forest_figure(golden_result).axes if a.get_title()]
    assert two and not any(", " in t for t in two)  # he/she: the first, unnamed, as before
