"""Tests of how reports write numbers and notes: one CI format (``[low, high]``, ``n/a``), no
negative zeros, notes said once, and the HTML report's Markdown (lists, code spans, escaping)
read back with the standard library's HTML parser."""

from __future__ import annotations

import dataclasses
import warnings
from html.parser import HTMLParser

import numpy as np
import pandas as pd
import pytest

from biasamp.base_rates import get_source
from biasamp.pipeline import evaluate_tables
from biasamp.report import format_value, report_text
from biasamp.report._format import degenerate_ci, format_ci, markdown_html, plain_text
from biasamp.results import ProbeResult

TASKS, ATTRS = ["x", "y", "z"], ["he", "she"]
T2A, A2T = "task_to_attribute", "attribute_to_task"


# ---------------------------------------------------------------- format_value, format_ci


@pytest.mark.parametrize(
    "args, kwargs, expected",
    [
        ((-0.0,), {}, "0.0000"),  # a negative zero
        ((-0.00004,), {}, "0.0000"),  # rounds to a negative zero
        ((-0.00006,), {}, "-0.0001"),  # a real negative stays negative
        ((-0.004, 0.0, (-0.00001, 0.2)), {"digits": 2}, "0.00 ± 0.00 [0.00, 0.20]"),
        ((None,), {}, "n/a"),
        ((float("nan"), 0.1), {}, "n/a ± 0.1000"),
        ((float("inf"),), {}, "n/a"),
        ((0.5, None, (float("nan"), float("nan"))), {}, "0.5000 [n/a]"),  # unavailable
        ((0.5, None, (0.4, None)), {}, "0.5000 [n/a]"),  # one end missing
        ((0.97, None, (0.97, 0.97)), {"digits": 2}, "0.97 [n/a]"),  # zero width
        ((-0.2394, 0.0373, (-0.2557, -0.22341)), {}, "-0.2394 ± 0.0373 [-0.2557, -0.2234]"),
        ((1.0,), {"digits": 0, "sign": True}, "+1"),
        ((-1.0,), {"digits": 0, "sign": True}, "-1"),
        ((-0.0,), {"digits": 0, "sign": True}, "0"),  # neither -0 nor +0
        ((-0.0637,), {"sign": True}, "-0.0637"),
    ],
)
def test_format_value_cases(args, kwargs, expected):
    assert format_value(*args, **kwargs) == expected


def test_format_ci_alone():
    assert format_ci(-0.2557, -0.2234) == "[-0.2557, -0.2234]"
    assert format_ci(-0.00001, 0.0012) == "[0.0000, 0.0012]"
    assert format_ci(0.1547, 0.1547) == "n/a"
    assert format_ci(float("nan"), 0.1) == "n/a"
    assert format_ci(None, None) == "n/a"


def test_zero_width_is_equality_up_to_rounding_error_not_up_to_the_digits_shown():
    assert degenerate_ci(0.1, 0.1)
    assert degenerate_ci(0.1 + 0.2, 0.3)  # 0.30000000000000004 vs 0.3: one sum order
    assert degenerate_ci(0.0, 0.0) and degenerate_ci(-0.0, 0.0)
    assert not degenerate_ci(0.0010, 0.0010 + 1e-6)  # real, only narrower than 4 digits
    assert format_value(0.001, ci=(0.001, 0.001 + 1e-6)) == "0.0010 [0.0010, 0.0010]"
    assert not degenerate_ci(float("nan"), float("nan"))  # unavailable, not degenerate
    assert not degenerate_ci(None, 0.1)


def test_format_value_matches_a_naive_rounding_on_random_numbers():
    # naive: Python's round (correctly rounded, as format is) and + 0.0, which turns a
    # rounded -0.0 into 0.0; the numbers straddle zero at the scale of the last digit
    rng = np.random.default_rng(0)
    values = np.concatenate([rng.normal(0, 1e-4, 2000), rng.normal(0, 1, 2000)])
    for v in values:
        naive = f"{round(float(v), 4) + 0.0:.4f}"
        assert format_value(v) == naive
        assert not format_value(v).startswith("-0.0000")


# ---------------------------------------------------------------- Markdown to HTML


class _Tree(HTMLParser):
    """A small element tree: each element a dict of tag, attrs, children (dicts or text)."""

    VOID = {"meta", "img", "br", "hr", "link", "input"}

    def __init__(self, text):
        super().__init__(convert_charrefs=True)
        self.root = {"tag": "#root", "attrs": {}, "children": []}
        self._stack = [self.root]
        self.feed(text)
        self.close()

    def handle_starttag(self, tag, attrs):
        node = {"tag": tag, "attrs": dict(attrs), "children": []}
        self._stack[-1]["children"].append(node)
        if tag not in self.VOID:
            self._stack.append(node)

    def handle_endtag(self, tag):
        assert self._stack[-1]["tag"] == tag, f"</{tag}> closes <{self._stack[-1]['tag']}>"
        self._stack.pop()

    def handle_data(self, data):
        self._stack[-1]["children"].append(data)


def _all(node, tag):
    for child in node["children"]:
        if isinstance(child, dict):
            if child["tag"] == tag:
                yield child
            yield from _all(child, tag)


def _text(node) -> str:
    return "".join(c if isinstance(c, str) else _text(c) for c in node["children"])


def test_markdown_html_renders_lists_code_links_and_escapes_html():
    tree = _Tree(
        markdown_html(
            "- a `x < y` **b**\n- <script>alert(1)</script> "
            "[site](https://example.org) [bad](javascript:alert(1))\n"
        )
    )
    (ul,) = _all(tree.root, "ul")
    items = list(_all(ul, "li"))
    assert len(items) == 2
    assert [_text(c) for c in _all(items[0], "code")] == ["x < y"]
    assert [_text(s) for s in _all(items[0], "strong")] == ["b"]
    assert list(_all(tree.root, "script")) == []
    assert "<script>alert(1)</script>" in _text(items[1])  # shown, as text
    assert [a["attrs"]["href"] for a in _all(items[1], "a")] == ["https://example.org"]
    assert "`" not in _text(tree.root)
    assert plain_text("BiasAmp→ report: `m<1>` **x**") == "BiasAmp→ report: m<1> x"


# ---------------------------------------------------------------- a report with notes


@pytest.fixture(scope="module")
def sources(tmp_path_factory):
    d = tmp_path_factory.mktemp("sources")
    # sparse counts: the signs of x and y rest on one or two sentences in both directions
    (d / "sparse.csv").write_text(
        "task,attribute,count\nx,he,1\nx,she,0\ny,he,1\ny,she,2\nz,he,30\nz,she,1\n"
    )
    (d / "exact_a.csv").write_text("task,he,she\nx,0.2,0.8\ny,0.7,0.3\nz,0.3,0.7\n")
    (d / "exact_b.csv").write_text("task,he,she\nx,0.3,0.7\ny,0.6,0.4\nz,0.6,0.4\n")
    return [get_source(f"file:{d / n}") for n in ("sparse.csv", "exact_a.csv", "exact_b.csv")]


@pytest.fixture(scope="module")
def noted(sources, provenance):
    rng = np.random.default_rng(0)
    x = rng.random((4, 3, 2)) + 0.1
    at, ta = x / x.sum(axis=1, keepdims=True), x / x.sum(axis=2, keepdims=True)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        ev = evaluate_tables(at, ta, TASKS, ATTRS, sources, n_resamples=2000, seed=1)
    return ProbeResult(
        summary=ev.summary,
        by_pair=ev.by_pair,
        per_template=ev.per_template,
        tables=None,
        audit=pd.DataFrame(),
        mass={},
        provenance=provenance(
            base_rates=ev.base_provenance,
            bootstrap=ev.bootstrap,
            note="tiny <b>model</b>, see `notes.txt`",
        ),
        config={},
        sign_agreement=ev.sign_agreement,
    )


def _note_lists(page: str) -> dict[str, dict]:
    """The note boxes of a report page: bold title -> its <ul>."""
    out = {}
    for div in _all(_Tree(page).root, "div"):
        if div["attrs"].get("class") == "note":
            titles = [_text(s) for s in _all(div, "strong")]
            lists = list(_all(div, "ul"))
            if titles and lists:
                out[titles[0]] = lists[0]
    return out


def test_unsupported_associations_of_two_directions_are_explained_once(noted, sources):
    sparse = sources[0].name
    s = noted.summary[noted.summary["base_rates"] == sparse].set_index("direction")
    n = s["n_tasks_unsupported"]
    assert n[A2T] > 0 and n[T2A] > 0  # both directions of the sparse source
    md = report_text(noted)
    explanation = "the CI of a value with unsupported associations is indicative only"
    assert md.count(explanation) == 1
    assert md.count("Associations not supported by the counts") == 1
    assert (
        f"(the sign holds in fewer than 95% of the base resamples): "
        f"{sparse}, A→T: {int(n[A2T])} of 3 tasks; {sparse}, T→A: {int(n[T2A])} of 3 "
        "tasks. These cells are marked `sign_supported = false` in `by_pair.csv`"
    ) in md


def test_html_notes_are_lists_with_code_and_nothing_raw(noted):
    page = report_text(noted, "html")
    notes = _note_lists(page)
    ul = notes["Evidence behind the base associations."]
    items = list(_all(ul, "li"))
    assert 1 <= len(items) <= 3  # one bullet per kind of note, not per direction
    codes = [_text(c) for li in items for c in _all(li, "code")]
    assert codes[:2] == ["sign_supported = false", "by_pair.csv"]
    tree = _Tree(page)
    assert "`" not in _text(tree.root)  # every code span rendered
    assert list(_all(tree.root, "b")) == []  # the run's note: raw HTML shown as text
    assert "tiny <b>model</b>, see notes.txt" in _text(tree.root)
    (title,) = _all(tree.root, "title")
    assert _text(title) == "BiasAmp→ report: m"


def test_zero_width_intervals_are_na_with_one_note(noted, sources):
    _, a, b = (src.name for src in sources)
    agree = noted.sign_agreement
    exact = agree[(agree["source_a"] == a) & (agree["source_b"] == b)]
    # two exact sources: nothing is resampled, the interval is the point
    assert len(exact) == 2 and (exact["ci_low"] == exact["ci_high"]).all()
    # P(he) = 0.4 in a, 0.5 in b (equal task weights); he is associated with the tasks above
    # it: a: y; b: y, z. x and y agree, z does not: 4 of 6 cells, in both directions
    assert exact["agreement"].tolist() == pytest.approx([4 / 6, 4 / 6], abs=1e-15)
    md = report_text(noted)
    assert md.count(f"| {a} | {b} | 0.67 [n/a] |") == 2
    n_shown = sum(degenerate_ci(lo, hi) for lo, hi in zip(agree["ci_low"], agree["ci_high"]))
    assert n_shown == 2
    assert md.count("Intervals of zero width shown as n/a") == 1
    assert f"sign-agreement CIs: 2 of {len(agree)}" in md
    notes = _note_lists(report_text(noted, "html"))
    assert "Intervals of zero width" in _text(notes["Unavailable intervals."])


def test_no_negative_zero_in_a_report(golden_result):
    s = golden_result.summary.copy()
    s["ci_high"] = s["ci_high"].where(s["ci_high"] != 0, -0.0)  # the A->T CI ends at -0.0
    s.loc[s["direction"] == T2A, "mean"] = -1e-6
    res = dataclasses.replace(golden_result, summary=s)
    md, page = report_text(res), report_text(res, "html")
    assert "| golden | A→T | -0.0087 ± 0.0087 | [-0.0173, 0.0000] |" in md
    assert "| golden | T→A | 0.0000 ± 0.0063 | [0.0000, 0.0125] |" in md
    for text in (md, page):
        assert "-0.0000" not in text and "–" not in text


def test_a_pooled_summary_row_shows_no_std(golden_result):
    """Templates bound to their tasks are pooled: T->A has no std over templates, so the
    summary shows the value alone (not '± n/a'); a row with a std keeps its '± std'."""
    s = golden_result.summary.copy()
    s.loc[0, ["aggregation", "std"]] = ["pooled", np.nan]
    md = report_text(dataclasses.replace(golden_result, summary=s))
    rows = [line for line in md.splitlines() if line.startswith("| golden |")][:2]
    assert "± n/a" not in md
    assert f"| {format_value(s['mean'][0])} |" in rows[0]
    assert f"| {format_value(s['mean'][1], s['std'][1])} |" in rows[1]


def test_the_unsupported_mark_is_explained_only_where_shown(golden_result, noted):
    """The contributions footer explains "(unsupported)" only when a shown row carries it."""
    why = "the counts do not support the sign of this association"
    assert why not in report_text(golden_result)  # exact tables: nothing unsupported
    md = report_text(noted)
    assert "(unsupported)" in md.split("## Largest contributions")[1].split("##")[0]
    assert md.count(why) == 1
