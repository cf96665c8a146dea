"""Tests of biasamp.report: rendering from results.json alone, plots, compare."""

from __future__ import annotations

import base64
import dataclasses
import html
import json
import re
import shutil
import subprocess
import sys

import numpy as np
import pandas as pd
import pytest

from biasamp import BiasampError
from biasamp.pipeline.evaluate import agreement_table
from biasamp.pipeline.resample import Resampling
from biasamp.report import (
    FORMATS,
    build_report,
    compare_dirs,
    compare_table,
    format_value,
    markdown_table,
    render,
    report_text,
)
from biasamp.results import ProbeResult

PNGS = {
    "fig5": "fig5_p_attribute_given_task.png",
    "forest": "forest_delta.png",
    "base_rates": "base_rate_panel.png",
}


@pytest.fixture
def result_dir(tmp_path, golden_result):
    return golden_result.save(tmp_path / "res")


def _load(result_dir) -> ProbeResult:
    return ProbeResult.load(result_dir, tables=False)


def test_build_report_writes_every_format(result_dir):
    written = build_report(result_dir, formats="md,html,json,model-card")
    for name in (
        "report.md",
        "report.html",
        "report.json",
        "model_card.md",
        "fig5_p_attribute_given_task.png",
        "forest_delta.png",
        "base_rate_panel.png",
    ):
        assert (result_dir / name).is_file(), name
    assert set(written) == {"md", "html", "json", "model-card", "fig5", "forest", "base_rates"}
    for png in ("fig5", "forest", "base_rates"):
        assert written[png].read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_markdown_headline_numbers(result_dir):
    md = report_text(_load(result_dir))
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
    assert card.startswith("---\nmodel-index:\n")
    assert "\n---\n\n## Bias, Risks, and Limitations" in card
    assert "(fig5_p_attribute_given_task.png)" in card
    assert "| golden | T→A | 0.0063 ± 0.0063 |" in card
    assert "depends on the base-rate source" in card
    assert "T→A and A→T values are not comparable to each other" in card
    assert "Provenance" in card and "biasamp 0.1.0" in card


def test_report_rebuilds_from_results_json_alone_without_torch(result_dir, tmp_path):
    alone = tmp_path / "alone"
    alone.mkdir()
    shutil.copy(result_dir / "results.json", alone / "results.json")
    code = (
        "import sys; from biasamp.cli import main; "
        f"rc = main(['-q', 'report', {str(alone)!r}, '--format', 'md,html,json,model-card']);"
        " bad = [m for m in ('torch', 'transformers') if m in sys.modules];"
        " print('IMPORTED', bad) if bad else None; sys.exit(rc or (3 if bad else 0))"
    )
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert {p.name for p in alone.iterdir()} >= {
        "report.md",
        "report.html",
        "report.json",
        "model_card.md",
        "forest_delta.png",
    }
    rep = json.loads((alone / "report.json").read_text())
    assert rep["summary"] == json.loads((result_dir / "results.json").read_text())["summary"]


def test_sign_agreement_exact():
    # 4 tasks x 1 attribute. u: +1 on every task; w: +1, -1, +1 and undefined on the 4th,
    # which is left out -> 2 of 3 cells agree. w's four base replicates agree on 2, 3, 1, 2
    # of the 3 cells.
    u = np.ones((4, 1))
    w = np.array([[1.0], [-1.0], [1.0], [1.0]])
    defined_w = np.array([[True], [True], [True], [False]])
    w_rep = np.array([[1, -1, 1, 1], [1, 1, 1, 1], [-1, -1, 1, 1], [1, -1, 1, 1]], dtype=float)[
        :, :, None
    ]
    signs = {
        ("u", "attribute_to_task"): (
            u,
            np.ones((4, 1), bool),
            np.repeat(u[None], 4, 0),
            np.ones((4, 4, 1), bool),
        ),
        ("w", "attribute_to_task"): (w, defined_w, w_rep, np.repeat(defined_w[None], 4, 0)),
    }
    ag = agreement_table(signs, ["u", "w"], Resampling(n_resamples=4, confidence=0.9))
    lo, hi = np.percentile([2 / 3, 1, 1 / 3, 2 / 3], [5, 95])
    assert ag.to_dict("records") == [
        {
            "direction": "attribute_to_task",
            "source_a": "u",
            "source_b": "w",
            "agreement": 2 / 3,
            "ci_low": lo,
            "ci_high": hi,
            "n_cells": 3,
        }
    ]
    # exact sources: the interval is the point itself
    fixed = {
        k: (y, d, np.repeat(y[None], 4, 0), np.repeat(d[None], 4, 0))
        for k, (y, d, _, _) in signs.items()
    }
    rec = agreement_table(fixed, ["u", "w"], Resampling(n_resamples=4)).iloc[0]
    assert rec["ci_low"] == rec["ci_high"] == rec["agreement"] == 2 / 3


def test_compare_two_dirs(tmp_path, golden_result):
    a = golden_result.save(tmp_path / "a")
    gp = golden_result.provenance
    res_b = dataclasses.replace(
        golden_result,
        provenance=gp.model_copy(
            update={"model": gp.model.model_copy(update={"name": "other-model"})}
        ),
        summary=golden_result.summary.assign(mean=golden_result.summary["mean"] + 0.5),
    )
    b = res_b.save(tmp_path / "b")
    wide = compare_dirs([a, b], out=tmp_path / "cmp", formats="md,csv,html")
    assert list(wide.columns) == ["base rates", "direction", "golden-model", "other-model"]
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


def test_reports_read_through_probe_result_load(tmp_path):
    # build_report and compare_table read results.json with ProbeResult.load (one reader)
    for read in (build_report, lambda d: compare_table([d])):
        (tmp_path / "results.json").unlink(missing_ok=True)
        with pytest.raises(BiasampError, match=r"has no results.json \(run `biasamp probe"):
            read(tmp_path)
        (tmp_path / "results.json").write_text("{not json")
        with pytest.raises(BiasampError, match="is not valid JSON"):
            read(tmp_path)
        (tmp_path / "results.json").write_text('{"summary": []}')
        with pytest.raises(BiasampError, match="schema_version None is not supported"):
            read(tmp_path)
        (tmp_path / "results.json").write_text('{"schema_version": 4, "complete": true}')
        with pytest.raises(
            BiasampError,
            match=r"lacks the keys \['summary', 'by_pair', "
            r"'per_template', 'by_group', 'sign_agreement', "
            r"'audit', 'mass', 'provenance', 'config', "
            r"'data_sha256'\]",
        ):
            read(tmp_path)
        (tmp_path / "results.json").write_text(
            json.dumps(
                {
                    "schema_version": 4,
                    "summary": [{"mean": 1}],
                    "by_pair": [],
                    "per_template": [],
                    "by_group": [],
                    "sign_agreement": [],
                    "audit": [],
                    "mass": {},
                    "provenance": {},
                    "config": {},
                    "data_sha256": {},
                    "complete": True,
                }
            )
        )
        with pytest.raises(BiasampError, match=r"summary\[0\] lacks the keys \['base_rates'"):
            read(tmp_path)


def test_format_errors(result_dir):
    with pytest.raises(
        BiasampError,
        match=r"formats must be some of 'md', 'html', 'json', "
        r"'model-card'; got 'htm' \(did you mean 'html'",
    ):
        build_report(result_dir, formats="md,htm")
    with pytest.raises(BiasampError, match="formats must name at least 1 of"):
        build_report(result_dir, formats="")
    with pytest.raises(
        BiasampError,
        match=r"formats must be some of 'md', 'csv', 'html'; "
        r"got 'xls'",
    ):
        compare_dirs([result_dir], formats="md,xls")
    with pytest.raises(BiasampError, match="compare needs at least one RESULT_DIR"):
        compare_table([])
    assert not (result_dir / "report.md").exists()  # validated before anything is written


def test_fig5_says_how_many_tasks_have_no_base_data(result_dir, tmp_path, monkeypatch):
    import matplotlib.pyplot as plt

    from biasamp.report._plots import plot

    results = _load(result_dir)
    rows = results.by_pair.copy()
    ta = rows["direction"] == "task_to_attribute"
    task = rows.loc[ta, "task"].iloc[0]
    # an all-zero base row: P(a | task) undefined
    rows.loc[ta & (rows["task"] == task), "p_base"] = float("nan")
    results = dataclasses.replace(results, by_pair=rows)
    titles = []
    real_close = plt.close

    def close(fig=None):
        titles.extend(ax.get_title() for ax in fig.axes)
        real_close(fig)

    monkeypatch.setattr(plt, "close", close)
    path = plot(results, "fig5", tmp_path)
    assert any("1 task(s) without base data (all-zero row) not shown" in t for t in titles)
    assert path.read_bytes()[:4] == b"\x89PNG"


def _pngs(d) -> set[str]:
    return {p.name for p in d.glob("*.png")}


def test_format_json_draws_no_png(result_dir):
    from biasamp.cli import main

    assert main(["-q", "report", str(result_dir), "--format", "json"]) == 0
    assert (result_dir / "report.json").is_file()
    assert _pngs(result_dir) == set()
    assert build_report(result_dir, formats="json").keys() == {"json"}
    assert _pngs(result_dir) == set()


def test_model_card_alone_draws_only_fig5(result_dir):
    written = build_report(result_dir, formats=["model-card"])
    assert written.keys() == {"fig5", "model-card"}
    assert _pngs(result_dir) == {PNGS["fig5"]}
    # md (or html) shows all three plots: drawn when asked for
    assert build_report(result_dir, formats="md,json").keys() == {*PNGS, "md", "json"}
    assert _pngs(result_dir) == set(PNGS.values())


def test_formats_registry():
    assert FORMATS.names() == ["md", "html", "json", "model-card"]
    assert [FORMATS.get(n).file for n in FORMATS] == [
        "report.md",
        "report.html",
        "report.json",
        "model_card.md",
    ]
    assert FORMATS.get("json").plots == () and FORMATS.get("model-card").plots == ("fig5",)
    with pytest.raises(BiasampError, match=r"unknown report format 'htlm' \(did you mean"):
        FORMATS.get("htlm")


def _md_rows(text: str, header: str) -> list[list[str]]:
    lines = text.splitlines()
    start = lines.index(header)
    rows = []
    for line in lines[start + 2 :]:
        if not line.startswith("|"):
            break
        rows.append([c.strip() for c in line.strip("|").split(" | ")])
    return rows


def _html_first_table(text: str) -> list[list[str]]:
    table = re.search(r"<tbody>(.*?)</tbody>", text).group(1)
    return [
        [html.unescape(c) for c in re.findall(r"<td>(.*?)</td>", row)]
        for row in re.findall(r"<tr>(.*?)</tr>", table)
    ]


def test_markdown_html_and_model_card_share_the_sections(result_dir):
    build_report(result_dir, formats="md,html,json,model-card")
    header = "| base rates | direction | BiasAmp→ mean ± std | 95% CI | CI covers | templates |"
    md = _md_rows((result_dir / "report.md").read_text(), header)
    card = _md_rows((result_dir / "model_card.md").read_text(), header)
    page = _html_first_table((result_dir / "report.html").read_text())
    assert md == card == page
    # A->T per template [-9/520, 0], T->A [1/80, 0]: two templates, so the percentile CI
    # runs from one to the other
    assert md == [
        ["golden", "A→T", "-0.0087 ± 0.0087", "[-0.0173, 0.0000]", "templates", "2"],
        ["golden", "T→A", "0.0063 ± 0.0063", "[0.0000, 0.0125]", "templates", "2"],
    ]
    # the same caveats and provenance lines in every format
    text = {n: (result_dir / n).read_text() for n in ("report.md", "model_card.md")}
    assert "- model: `golden-model` (revision: `default`)" in text["report.md"]
    assert "- model: `golden-model` (revision: `default`)" in text["model_card.md"]
    assert (
        "<li>model: <code>golden-model</code> (revision: <code>default</code>)</li>"
        in (result_dir / "report.html").read_text()
    )
    rep = json.loads((result_dir / "report.json").read_text())
    assert [r["mean"] for r in rep["summary"]] == pytest.approx([-9 / 1040, 1 / 160], abs=1e-15)


def test_render_computes_the_sections_once(result_dir, monkeypatch):
    from biasamp import report

    calls = []
    real = report.build_sections
    monkeypatch.setattr(report, "build_sections", lambda r: calls.append(1) or real(r))
    report.render(_load(result_dir), result_dir, "md,html,json,model-card", plots=False)
    assert len(calls) == 1
    assert _pngs(result_dir) == set()
    assert "## Plots" not in (result_dir / "report.md").read_text()


def test_in_memory_and_loaded_results_render_the_same(golden_result, result_dir, tmp_path):
    loaded = _load(result_dir)
    for fmt, plots in (("md", None), ("model-card", {"fig5": "x.png"}), ("html", None)):
        assert report_text(golden_result, fmt, plots=plots) == report_text(loaded, fmt, plots=plots)
    a = render(golden_result, tmp_path / "a", ["json"])
    b = render(loaded, tmp_path / "b", "json")
    assert a["json"].read_text() == b["json"].read_text()


def test_markdown_table_is_public():
    df = pd.DataFrame({"a": ["x|y"], "b": [1]})
    assert markdown_table(df) == "| a | b |\n|---|---|\n| x\\|y | 1 |"
