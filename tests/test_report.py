"""Tests of biasamp.report: rendering from results.json alone, plots, compare."""

from __future__ import annotations

import base64
import json
import re
import shutil
import subprocess
import sys

import numpy as np
import pandas as pd
import pytest

from biasamp import BiasampError
from biasamp.report import (
    build_report,
    compare_dirs,
    compare_table,
    format_value,
    load_results,
    render_markdown,
)
from biasamp.report._plots import sign_agreement

from test_probe import _result  # noqa: E402 - the golden ProbeResult (tests dir is on sys.path)


@pytest.fixture
def result_dir(tmp_path):
    return _result().save(tmp_path / "res", formats=[])


def test_build_report_writes_every_format(result_dir):
    written = build_report(result_dir, formats="md,html,json,model-card")
    for name in ("report.md", "report.html", "report.json", "model_card.md",
                 "fig5_p_attribute_given_task.png", "forest_delta.png", "base_rate_panel.png"):
        assert (result_dir / name).is_file(), name
    assert set(written) == {"md", "html", "json", "model-card", "fig5", "forest", "base_rates"}
    for png in ("fig5", "forest", "base_rates"):
        assert written[png].read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_markdown_headline_numbers(result_dir):
    md = render_markdown(load_results(result_dir))
    # golden: A->T per template [-9/520, 0] -> mean -9/1040 = -0.008654, std 9/1040
    assert "| golden | A→T | -0.0087 ± 0.0087 |" in md
    # T->A per template [1/80, 0] -> mean 1/160 = 0.00625, std 0.00625
    assert "| golden | T→A | 0.0063 ± 0.0063 |" in md
    assert "jan ##itor" in md  # the audit lists the multi-piece candidate
    assert "not comparable to each other" in md
    assert "golden-model" in md


def test_html_is_self_contained(result_dir):
    build_report(result_dir, formats=["html"])
    text = (result_dir / "report.html").read_text()
    srcs = re.findall(r"src='([^']*)'", text) + re.findall(r'src="([^"]*)"', text)
    assert len(srcs) == 3
    for s in srcs:
        assert s.startswith("data:image/png;base64,")
        assert base64.b64decode(s.split(",", 1)[1])[:4] == b"\x89PNG"
    assert "<link" not in text and "<script" not in text and "http://" not in text
    assert "<style>" in text


def test_model_card_section(result_dir):
    build_report(result_dir, formats=["model-card"])
    card = (result_dir / "model_card.md").read_text()
    assert card.startswith("## Bias, Risks, and Limitations")
    assert "(fig5_p_attribute_given_task.png)" in card
    assert "| golden | T→A | 0.0063 ± 0.0063 |" in card
    assert "depends on the base-rate source" in card
    assert "T→A and A→T values are not comparable to each other" in card
    assert "Provenance" in card and "biasamp 0.1.0" in card


def test_report_rebuilds_from_results_json_alone_without_torch(result_dir, tmp_path):
    alone = tmp_path / "alone"
    alone.mkdir()
    shutil.copy(result_dir / "results.json", alone / "results.json")
    code = ("import sys; from biasamp.cli import main; "
            f"rc = main(['-q', 'report', {str(alone)!r}, '--format', 'md,html,json,model-card']);"
            " bad = [m for m in ('torch', 'transformers') if m in sys.modules];"
            " print('IMPORTED', bad) if bad else None; sys.exit(rc or (3 if bad else 0))")
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          timeout=120)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert {p.name for p in alone.iterdir()} >= {"report.md", "report.html", "report.json",
                                                  "model_card.md", "forest_delta.png"}
    rep = json.loads((alone / "report.json").read_text())
    assert rep["summary"] == json.loads((result_dir / "results.json").read_text())["summary"]


def test_sign_agreement_exact():
    # source u: he +1 on x, y, z; w: +1, -1, +1 -> 2 of 3 cells agree
    recs = [{"base_rates": s, "direction": "attribute_to_task", "task": t, "attribute": "he",
             "association": v}
            for s, vals in (("u", (1, 1, 1)), ("w", (1, -1, 1))) for t, v in zip("xyz", vals)]
    ag = sign_agreement({"by_pair": recs})
    assert ag.to_dict("records") == [{"direction": "attribute_to_task", "source_a": "u",
                                      "source_b": "w", "agreement": 2 / 3, "n_cells": 3}]


def test_compare_two_dirs(tmp_path):
    a = _result().save(tmp_path / "a", formats=[])
    res_b = _result()
    res_b.provenance = {**res_b.provenance, "model": "other-model"}
    res_b.summary = res_b.summary.assign(mean=res_b.summary["mean"] + 0.5)
    b = res_b.save(tmp_path / "b", formats=[])
    wide = compare_dirs([a, b], out=tmp_path / "cmp", formats="md,csv,html")
    assert list(wide.columns) == ["base_rates", "direction", "golden-model", "other-model"]
    assert len(wide) == 2
    # -9/1040 + 0.5 = 0.491346 -> 0.4913
    assert wide.loc[wide["direction"] == "A→T", "other-model"].iloc[0].startswith("0.4913 ± 0.0087")
    long = pd.read_csv(tmp_path / "cmp" / "comparison.csv")
    assert len(long) == 4 and set(long["model"]) == {"golden-model", "other-model"}
    assert (tmp_path / "cmp" / "comparison.md").read_text().count("| golden |") == 2
    assert (tmp_path / "cmp" / "comparison.html").is_file()
    # the same model in two folders: columns are told apart by folder
    wide2 = compare_dirs([a, a])
    assert len(wide2.columns) == 3


def test_format_value_nan():
    assert format_value(float("nan"), 0.1) == "n/a ± 0.1000"
    assert format_value(np.float64(0.5)) == "0.5000"


def test_load_results_errors(tmp_path):
    with pytest.raises(BiasampError, match=r"has no results.json \(run `biasamp probe"):
        load_results(tmp_path)
    (tmp_path / "results.json").write_text("{not json")
    with pytest.raises(BiasampError, match="is not valid JSON"):
        load_results(tmp_path)
    (tmp_path / "results.json").write_text('{"summary": []}')
    with pytest.raises(BiasampError, match=r"lacks the keys \['by_pair', 'provenance'\]"):
        load_results(tmp_path)
    (tmp_path / "results.json").write_text(
        '{"summary": [{"mean": 1}], "by_pair": [], "provenance": {}}')
    with pytest.raises(BiasampError, match="summary records must have the keys"):
        load_results(tmp_path)


def test_format_errors(result_dir):
    with pytest.raises(BiasampError, match=r"format must be some of .*; got 'htm' \(did you mean"):
        build_report(result_dir, formats="md,htm")
    with pytest.raises(BiasampError, match="format must name at least one"):
        build_report(result_dir, formats="")
    with pytest.raises(BiasampError, match="result_dirs must name at least one"):
        compare_table([])


def test_fig5_says_how_many_tasks_have_no_base_data(result_dir, tmp_path, monkeypatch):
    import matplotlib.pyplot as plt

    from biasamp.report._plots import plot_fig5

    results = load_results(result_dir)
    rows = results["by_pair"]
    ta = [r for r in rows if r["direction"] == "task_to_attribute"]
    task = ta[0]["task"]
    for r in ta:
        if r["task"] == task:
            r["p_base"] = float("nan")  # an all-zero base row: P(a | task) undefined
    titles = []
    real_close = plt.close

    def close(fig=None):
        titles.extend(ax.get_title() for ax in fig.axes)
        real_close(fig)

    monkeypatch.setattr(plt, "close", close)
    plot_fig5(results, tmp_path / "fig5.png")
    assert any("1 task(s) without base data (all-zero row) not shown" in t for t in titles)
    assert (tmp_path / "fig5.png").read_bytes()[:4] == b"\x89PNG"
