"""Tests of biasamp.results: ProbeResult.save / load and the results.json schema."""

from __future__ import annotations

import json
import re

import numpy as np
import pandas as pd
import pytest

from biasamp import BiasampError
from biasamp.results import SCHEMA_VERSION, SUMMARY_KEYS, ProbeResult


def test_save_writes_results_json_and_nothing_else(golden_result, tmp_path):
    d = golden_result.save(tmp_path / "out")
    assert sorted(p.name for p in d.iterdir()) == [
        ".biasamp.json",
        "by_pair.csv",
        "per_template.csv",
        "results.json",
        "tables.csv",
    ]
    data = json.loads((d / "results.json").read_text())
    assert data["schema_version"] == SCHEMA_VERSION
    assert set(data) >= {"summary", "by_pair", "audit", "mass", "provenance", "config"}
    for rec in data["summary"]:
        assert tuple(rec) == SUMMARY_KEYS
    assert data["summary"][0]["per_template"] == pytest.approx([-9 / 520, 0.0], abs=1e-15)
    back = pd.read_csv(d / "by_pair.csv")
    assert len(back) == len(golden_result.by_pair)
    assert list(pd.read_csv(d / "tables.csv").columns) == [
        "template_id",
        "direction",
        "task",
        "attribute",
        "prob",
        "log_prob",
    ]


def test_load_round_trip(golden_result, tmp_path):
    d = golden_result.save(tmp_path / "out")
    back = ProbeResult.load(d)
    pd.testing.assert_frame_equal(back.summary, golden_result.summary, check_dtype=False)
    pd.testing.assert_frame_equal(back.by_pair, golden_result.by_pair, check_dtype=False)
    pd.testing.assert_frame_equal(back.per_template, golden_result.per_template, check_dtype=False)
    pd.testing.assert_frame_equal(back.tables, golden_result.tables, check_dtype=False)
    assert back.mass == golden_result.mass and back.model == "golden-model"
    assert back.audit["pieces"].tolist() == [["he"], ["jan", "##itor"]]
    assert ProbeResult.load(d / "results.json", tables=False).tables is None
    # a second save of the loaded result writes the same results.json
    d2 = back.save(tmp_path / "again")
    assert (d2 / "results.json").read_text() == (d / "results.json").read_text()


def test_save_parquet_without_pyarrow_has_install_hint(golden_result, tmp_path, monkeypatch):
    import builtins

    real = builtins.__import__

    def fake(name, *a, **k):
        if name == "pyarrow" or name.startswith("pyarrow."):
            raise ImportError("no pyarrow")
        return real(name, *a, **k)

    monkeypatch.setattr(builtins, "__import__", fake)
    with pytest.raises(BiasampError, match=r"needs pyarrow: pip install 'biasamp\[parquet\]'"):
        golden_result.save(tmp_path, tables="parquet")
    assert not (tmp_path / "results.json").exists()


def test_save_errors(golden_result, tmp_path):
    with pytest.raises(BiasampError, match=r"tables must be one of 'csv', 'parquet'; got 'xls'"):
        golden_result.save(tmp_path, tables="xls")


@pytest.mark.parametrize(
    "edit, match",
    [
        (
            lambda d: d.pop("schema_version"),
            r"schema_version None is not supported \(this biasamp "
            r"reads 4\): the folder was written by another biasamp "
            r"version; run `biasamp probe` again$",
        ),
        (lambda d: d.update(schema_version=3), r"schema_version 3 is not supported"),
        (lambda d: d.pop("by_pair"), r"lacks the keys \['by_pair'\]"),
        (lambda d: d["summary"][0].pop("mean"), r"summary\[0\] lacks the keys \['mean'\]"),
        (
            lambda d: d["summary"][0].update(mean="x"),
            r"summary\[0\].mean must be null or a number in \[-2, 2\]; got 'x'",
        ),
        (
            lambda d: d["summary"][0].update(ci_high=2.5),
            r"summary\[0\].ci_high must be null or a number in \[-2, 2\]; got 2.5",
        ),
        (
            lambda d: d["summary"][0].update(direction="up"),
            r"summary\[0\].direction must be one of",
        ),
        (lambda d: d.update(summary=[]), r"summary is empty"),
        (lambda d: d.update(mass=[1]), r"mass must be an object"),
        (
            lambda d: d["by_pair"][3].update(n_templates=1.5),
            r"by_pair\[3\].n_templates must be an "
            r"integer; got 1.5$",
        ),
        (
            lambda d: d["summary"][1]["per_template"].append(-3),
            r"summary\[1\].per_template\[2\] must be null or a number in \[-2, 2\]; got -3$",
        ),
        (
            lambda d: d["sign_agreement"].append([]),
            r"sign_agreement\[0\] must be an object; got \[\]",
        ),
        (lambda d: d.update(by_group="x"), r"by_group must be a list; got 'x'"),
        (
            lambda d: d["summary"][0].update(extra=1),
            r"summary\[0\].extra is not a key of this "
            r"biasamp's layout",
        ),
        (
            lambda d: d["data_sha256"].update({"../x": "0"}),
            r"data_sha256 keys must be one of "
            r"'by_pair.csv', 'per_template.csv'",
        ),
        (lambda d: d.pop("data_sha256"), r"results.json lacks the keys \['data_sha256'\]$"),
    ],
)
def test_load_checks_the_schema(golden_result, tmp_path, edit, match):
    d = golden_result.save(tmp_path / "out")
    data = json.loads((d / "results.json").read_text())
    edit(data)
    (d / "results.json").write_text(json.dumps(data))
    with pytest.raises(BiasampError, match=match):
        ProbeResult.load(d)


def test_load_errors(tmp_path):
    with pytest.raises(BiasampError, match=r"has no results.json"):
        ProbeResult.load(tmp_path)
    (tmp_path / "results.json").write_text("{")
    with pytest.raises(BiasampError, match=r"is not valid JSON"):
        ProbeResult.load(tmp_path)
    (tmp_path / "results.json").write_text("[1]")
    with pytest.raises(BiasampError, match=r"must hold a JSON object"):
        ProbeResult.load(tmp_path)


def test_nan_is_written_as_null(golden_result, tmp_path):
    res = ProbeResult(
        **{
            **golden_result.__dict__,
            "by_pair": golden_result.by_pair.assign(p_base=np.nan),
            "summary": golden_result.summary.assign(base_bias=np.inf),
        }
    )
    d = res.save(tmp_path / "nan")
    text = (d / "results.json").read_text()
    assert not re.search(r"\bNaN\b|Infinity", text)  # JSON has neither token
    data = json.loads(text)
    assert all(r["p_base"] is None for r in data["by_pair"])
    assert [r["base_bias"] for r in data["summary"]] == [None] * len(data["summary"])
    assert ProbeResult.load(d).by_pair["p_base"].isna().all()


@pytest.mark.parametrize(
    "token, key",
    [("NaN", "summary[0].mean"), ("-Infinity", "mass"), ("1e400", "provenance.bootstrap.seed")],
)
def test_load_refuses_numbers_json_does_not_have(golden_result, tmp_path, token, key):
    d = golden_result.save(tmp_path / "out")
    data = json.loads((d / "results.json").read_text())
    if key == "mass":
        data["mass"] = {"a": [0.5, 0.125]}
        key = "mass.a[1]"
    else:
        data["summary"][0]["mean"] = data["provenance"]["bootstrap"]["seed"] = 0.125
    text = json.dumps(data)
    at = text.index("0.125", text.index(key.split(".")[-1].split("[")[0]))
    (d / "results.json").write_text(text[:at] + token + text[at + len("0.125") :])
    with pytest.raises(
        BiasampError,
        match=rf"^{re.escape(str(d / 'results.json'))}: "
        rf"{re.escape(key)} is {token}, not a finite number",
    ):
        ProbeResult.load(d)


def test_a_data_file_changed_after_the_run_is_refused(golden_result, tmp_path):
    d = golden_result.save(tmp_path / "out")
    data = json.loads((d / "results.json").read_text())
    assert set(data["data_sha256"]) == {"by_pair.csv", "per_template.csv", "tables.csv"}
    assert data["complete"] is True and "files" not in data  # the mark lists the files
    (d / "tables.csv").write_text("x\n")
    with pytest.raises(BiasampError, match=r"tables.csv was changed after the run"):
        ProbeResult.load(d)
    (d / "tables.csv").unlink()  # a data file left out is not needed by reports
    assert ProbeResult.load(d, tables=False).model == "golden-model"
    data.pop("complete")
    (d / "results.json").write_text(json.dumps(data))
    with pytest.raises(
        BiasampError,
        match=r"holds no complete result \(results.json has no "
        r"completion mark",
    ):
        ProbeResult.load(d, tables=False)


def test_the_shipped_json_schema_is_the_models(golden_result, tmp_path):
    from biasamp._schema import SCHEMA_FILE, results_schema

    shipped = json.loads(SCHEMA_FILE.read_text())
    assert shipped == results_schema(), "run: python -m biasamp._schema"
    assert shipped["properties"]["schema_version"]["const"] == SCHEMA_VERSION
    # every key results.json holds is declared and required, down to the provenance
    data = json.loads((golden_result.save(tmp_path / "out") / "results.json").read_text())
    assert sorted(shipped["required"]) == sorted(data)
    prov = shipped["$defs"]["Provenance"]
    assert sorted(prov["required"]) == sorted(data["provenance"])
