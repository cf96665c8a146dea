"""The report layouts (biasamp/report/templates/*.j2) write the files byte for byte as
checked in under golden/: the Markdown report, the HTML page, the model card and the
comparison (md, html) of the golden result with a note and missing weights, so that every
kind of part shows. The files were written by the layouts before they became templates; a
layout changed on purpose is checked in again after reading the diff."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pandas as pd
import pytest

from biasamp.report import report_text, write_comparison
from biasamp.report._format import render_template

GOLDEN = Path(__file__).parent / "golden"


@pytest.fixture(scope="module")
def noted(golden_result):
    p = golden_result.provenance
    return dataclasses.replace(
        golden_result,
        provenance=p.model_copy(
            update={
                "note": "a <i>note</i> with `code` | and *em*",
                "model": p.model.model_copy(
                    update={"missing_weights": tuple(f"w{i}" for i in range(9))}
                ),
            }
        ),
    )


def _same(name: str, text: str):
    assert text == (GOLDEN / name).read_text(encoding="utf-8"), name


def test_the_reports_are_written_as_checked_in(noted):
    links = {"fig5": "fig5.png", "forest": "forest.png", "base_rates": "panel.png"}
    _same("report.md", report_text(noted, "md", plots=links))
    _same("report.html", report_text(noted, "html"))
    _same("model_card.md", report_text(noted, "model-card", plots={"fig5": "fig5.png"}))


def test_the_comparison_is_written_as_checked_in(golden_result, tmp_path):
    p = golden_result.provenance
    other = dataclasses.replace(
        golden_result,
        provenance=p.model_copy(
            update={
                "model": p.model.model_copy(update={"name": "other <model>"}),
                "scorer": p.scorer.model_copy(update={"estimator": "pll"}),
            }
        ),
        summary=golden_result.summary.assign(mean=golden_result.summary["mean"] + 0.5),
    )
    paired = pd.DataFrame(
        {
            "base_rates": ["golden"],
            "direction": ["task_to_attribute"],
            "model_a": ["golden-model"],
            "model_b": ["other <model>"],
            "difference": [-0.5],
            "ci_low": [-0.6],
            "ci_high": [-0.4],
            "p_sign": [1.0],
            "n_templates": [2],
        }
    )
    write_comparison(
        [golden_result, other],
        ["a", "b"],
        tmp_path,
        formats=["md", "html"],
        paired=paired,
    )
    for name in ("comparison.md", "comparison.html"):
        _same(name, (tmp_path / name).read_text(encoding="utf-8"))


def test_html_layouts_escape_what_they_are_given_and_markdown_ones_do_not():
    table = pd.DataFrame({"a": ["<b>"]})
    given = {
        "differing": ["<x>"],
        "setup": table,
        "intro": "1 < 2",
        "wide": table,
        "paired_intro": "",
        "paired": None,
    }
    page = render_template("comparison.html.j2", **given)
    assert "1 &lt; 2" in page and "&lt;x&gt;" in page and "<td>&lt;b&gt;</td>" in page
    assert "<b>" not in page and "<x>" not in page
    text = render_template("comparison.md.j2", **given)
    assert "1 < 2" in text and "differ in <x>" in text and "| <b> |" in text
