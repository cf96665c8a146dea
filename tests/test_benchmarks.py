"""The benchmark scripts still run against the current code (on tiny inputs: their numbers
are measured by running them for real, see each script's docstring)."""

from __future__ import annotations

import importlib.util
import math
from pathlib import Path

import pytest

BENCH = Path(__file__).resolve().parents[1] / "benchmarks"


def _load(name):
    import sys

    sys.path.insert(0, str(BENCH))  # the scripts import their siblings
    try:
        spec = importlib.util.spec_from_file_location(f"_bench_{name}", BENCH / f"{name}.py")
        mod = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(mod)
        return mod
    finally:
        sys.path.remove(str(BENCH))


@pytest.mark.usefixtures("one_torch_thread")
def test_bench_pipeline_runs_on_a_tiny_model(tiny_bert_dir, capsys):
    out = _load("bench_pipeline").main(["--model", str(tiny_bert_dir), "--repeats", "1"])
    stages = ("import", "prepare", "load", "score", "evaluate", "save", "report")
    assert all(out[f"{k}_s"] > 0 for k in stages) and out["whole_s"] > out["score_s"]
    assert "whole / score" in capsys.readouterr().out


def test_bench_resample_runs():
    out = _load("bench_resample").main(["--repeats", "1", "--n-resamples", "200"])
    assert set(out["seconds"]) == {"fixed", "resample", "resample, --resample both"}
    assert out["resample / fixed"] > 0


def test_sim_base_coverage_runs():
    rows = _load("sim_base_coverage").main(
        ["--truths", "1", "--datasets", "4", "--resamples", "50"]
    )
    assert len(rows) == 8
    for r in rows:
        assert all(0 <= v <= 1 for v in r["coverage"].values()) and 0 <= r["flagged"] <= 1
        assert math.isfinite(r["mean_base_bias"])
