"""CLI tests: end to end on a tiny local model, exit codes, README coverage."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from biasamp.cli import build_parser, main

ROOT = Path(__file__).resolve().parents[1]
FILES = (
    "results.json",
    "by_pair.csv",
    "per_template.csv",
    "tables.csv",
    "report.md",
    "report.html",
    "report.json",
    "model_card.md",
    "fig5_p_attribute_given_task.png",
    "forest_delta.png",
    "base_rate_panel.png",
)


@pytest.fixture(scope="module")
def tiny(tiny_bert_dir, tiny_bert2_dir):
    return tiny_bert_dir, tiny_bert2_dir


@pytest.fixture(scope="module")
def probed(tiny, tmp_path_factory):
    out = tmp_path_factory.mktemp("run") / "bert"
    rc = main(
        [
            "-q",
            "probe",
            "--model",
            str(tiny[0]),
            "--templates",
            "adjectives",
            "--max-templates",
            "2",
            "--base-rates",
            "uniform,labor-2016",
            "--n-resamples",
            "200",
            "--seed",
            "3",
            "--format",
            "md,html,json,model-card",
            "--out",
            str(out),
        ]
    )
    assert rc == 0
    return out


def test_probe_writes_every_file(probed, tiny):
    for name in FILES:
        assert (probed / name).is_file(), name
    data = json.loads((probed / "results.json").read_text())
    assert [(r["base_rates"], r["direction"]) for r in data["summary"]] == [
        ("uniform", "attribute_to_task"),
        ("uniform", "task_to_attribute"),
        ("labor-2016", "attribute_to_task"),
        ("labor-2016", "task_to_attribute"),
    ]
    for rec in data["summary"]:
        assert set(rec) == {
            "base_rates",
            "direction",
            "mean",
            "std",
            "ci_low",
            "ci_high",
            "n_templates",
            "per_template",
            "aggregation",
            "resample",
            "base_resampled",
            "base_bias",
            "n_tasks_unsupported",
            "n_tasks_excluded",
        }
        assert rec["aggregation"] == "templates" and rec["resample"] == "templates"
        # neither source is counts: nothing to resample, no sign support to measure
        assert rec["base_resampled"] is False and rec["n_tasks_unsupported"] is None
        assert rec["n_tasks_excluded"] == 0
        assert rec["n_templates"] == 2 and len(rec["per_template"]) == 2
        assert rec["mean"] == pytest.approx(np.mean(rec["per_template"]), abs=1e-15)
        assert rec["std"] == pytest.approx(np.std(rec["per_template"]), abs=1e-15)
    prov = data["provenance"]
    for key in ("model", "scorer", "bootstrap", "templates", "base_rates", "versions", "timestamp"):
        assert key in prov, key
    assert {"biasamp", "torch", "transformers", "numpy", "pandas"} <= set(prov["versions"])
    assert prov["bootstrap"]["seed"] == 3 and prov["scorer"]["estimator"] == "word"
    assert prov["model"]["name"] == str(tiny[0]) and prov["model"]["revision"] is None
    assert set(prov["base_rates"]) == {"uniform", "labor-2016"}
    assert all(
        set(d) == {"attribute_to_task", "task_to_attribute"} for d in prov["base_rates"].values()
    )
    assert len(prov["templates"]["prompts_sha256"]) == 64
    assert "seed" not in data["config"] and "n_resamples" not in data["config"]  # once
    assert prov["bootstrap"] == {
        "n_resamples": 200,
        "confidence": 0.95,
        "seed": 3,
        "resample": "templates",
        "base_uncertainty": "resample",
        "min_base_count": None,
        "method": "percentile bootstrap over templates; count-based base rates resampled "
        "jointly (multinomial over their counted sentences)",
    }
    assert set(data["mass"]) == {"attribute_to_task", "task_to_attribute"}
    # 2 templates x 2 prompts (he, she) for A->T and 2 x 32 occupations for T->A
    assert data["mass"]["attribute_to_task"]["n_prompts"] == 4
    assert data["mass"]["task_to_attribute"]["n_prompts"] == 64
    assert {"candidate", "n_pieces"} <= set(data["audit"][0])


def test_saved_tables_reproduce_the_summary(probed):
    """results.json follows from tables.csv alone (invariant across the stage boundary)."""
    from biasamp import evaluate_tables

    tables = pd.read_csv(probed / "tables.csv")
    assert list(tables.columns) == [
        "template_id",
        "direction",
        "task",
        "attribute",
        "prob",
        "log_prob",
    ]
    assert len(tables) == 2 * 2 * 32 * 2
    tasks = list(dict.fromkeys(tables["task"]))
    attrs = list(dict.fromkeys(tables["attribute"]))
    tpl = list(dict.fromkeys(tables["template_id"]))
    arr = {}
    for d, g in tables.groupby("direction"):
        p = g.set_index(["template_id", "task", "attribute"])["prob"]
        arr[d] = np.array([[[p[(k, t, a)] for a in attrs] for t in tasks] for k in tpl])
    assert np.allclose(arr["attribute_to_task"].sum(axis=1), 1.0)
    assert np.allclose(arr["task_to_attribute"].sum(axis=2), 1.0)
    assert np.allclose(np.exp(tables["log_prob"]) > 0, True)
    ev = evaluate_tables(
        arr["attribute_to_task"],
        arr["task_to_attribute"],
        tasks,
        attrs,
        ["uniform", "labor-2016"],
        template_ids=tpl,
        n_resamples=200,
        seed=3,
    )
    data = json.loads((probed / "results.json").read_text())
    for rec, mine in zip(data["summary"], ev.summary.to_dict("records")):
        assert rec["per_template"] == pytest.approx(mine["per_template"], abs=1e-12)
        assert rec["ci_low"] == pytest.approx(mine["ci_low"], abs=1e-12)


def test_report_rebuilds_from_results_json_alone(probed, tmp_path):
    alone = tmp_path / "alone"
    alone.mkdir()
    (alone / "results.json").write_bytes((probed / "results.json").read_bytes())
    assert main(["-q", "report", str(alone), "--format", "md,html,json,model-card"]) == 0
    for name in (
        "report.md",
        "report.html",
        "report.json",
        "model_card.md",
        "fig5_p_attribute_given_task.png",
        "forest_delta.png",
        "base_rate_panel.png",
    ):
        assert (alone / name).is_file(), name
    assert (alone / "report.md").read_text() == (probed / "report.md").read_text()


def test_compare_two_result_dirs(probed, tiny, tmp_path, capsys):
    other = tmp_path / "bert2"
    assert (
        main(
            [
                "-q",
                "probe",
                "--model",
                str(tiny[1]),
                "--max-templates",
                "2",
                "--base-rates",
                "uniform,labor-2016",
                "--n-resamples",
                "200",
                "--format",
                "md",
                "--out",
                str(other),
            ]
        )
        == 0
    )
    assert (
        main(
            [
                "compare",
                str(probed),
                str(other),
                "--out",
                str(tmp_path / "cmp"),
                "--format",
                "md,csv,html",
            ]
        )
        == 0
    )
    printed = capsys.readouterr().out
    assert "tiny-bert-2" in printed and "| uniform | A→T |" in printed
    long = pd.read_csv(tmp_path / "cmp" / "comparison.csv")
    assert len(long) == 8 and long["model"].nunique() == 2
    assert (tmp_path / "cmp" / "comparison.html").is_file()


def test_several_models_and_config_file(tiny, tmp_path):
    cfg = tmp_path / "probe.toml"
    cfg.write_text(
        f'[probe]\nmodels = ["{tiny[0]}", "{tiny[1]}"]\nbase-rates = ["uniform"]\n'
        f'max_templates = 1\nn_resamples = 50\nseed = 1\nformats = ["md"]\n'
        f'out = "{tmp_path / "ignored"}"\n'
    )
    out = tmp_path / "many"
    assert main(["-q", "probe", "--config", str(cfg), "--seed", "5", "--out", str(out)]) == 0
    for slug in ("tiny-bert", "tiny-bert-2"):
        data = json.loads((out / slug / "results.json").read_text())
        assert data["provenance"]["bootstrap"]["seed"] == 5  # the flag overrides the file
        # the file overrides the default
        assert data["provenance"]["bootstrap"]["n_resamples"] == 50
        assert (out / slug / "report.md").is_file()
    assert (out / "comparison.md").is_file() and (out / "comparison.csv").is_file()
    assert not (tmp_path / "ignored").exists()


@pytest.mark.parametrize(
    "extra, message",
    [
        (["--model", "MISSING"], r"model '.*does-not-exist': no such folder"),
        (
            ["--templates", "adjectivs"],
            r"unknown template set 'adjectivs' \(did you mean 'adjectives'",
        ),
        (
            ["--base-rates", "uniform,wikitxt103-valtest"],
            r"unknown base-rate source 'wikitxt103-valtest' \(did you mean 'wikitext103-valtest'",
        ),
        (
            ["--tasks", "TASKFILE", "--base-rates", "labor-2016"],
            r"tasks \['astronaut'\] not in base-rate source 'labor-2016'",
        ),
        (["--tasks", "EMPTYFILE"], r"empty"),
        (["--compat", "wang"], r"compat must be one of 'wang2021'; got 'wang'"),
        (["--format", "md,pdf"], r"--format must be some of 'md', .*; got 'pdf'"),
        (["--no-out"], r"--out is required"),
    ],
)
def test_probe_input_errors_exit_2(tiny, tmp_path, capsys, extra, message):
    (tmp_path / "tasks.txt").write_text("nurse\njanitor\nastronaut\n")
    (tmp_path / "empty.txt").write_text("")
    argv = ["probe", "--model", str(tiny[0]), "--out", str(tmp_path / "o")]
    if extra == ["--no-out"]:
        argv = argv[:3]
    else:
        if extra[0] == "--model":
            argv[2] = str(tmp_path / "does-not-exist")
            extra = []
        extra = [
            {"TASKFILE": str(tmp_path / "tasks.txt"), "EMPTYFILE": str(tmp_path / "empty.txt")}.get(
                e, e
            )
            for e in extra
        ]
        argv += extra
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert err.startswith("error: ") and err.count("\n") == 1, err
    assert "Traceback" not in err
    assert re.search(message, err), err


def test_report_and_compare_input_errors_exit_2(tmp_path, capsys):
    assert main(["report", str(tmp_path)]) == 2
    assert "has no results.json" in capsys.readouterr().err
    assert main(["compare", str(tmp_path)]) == 2
    assert "has no results.json" in capsys.readouterr().err
    assert main(["report", str(tmp_path), "--format", "pdf"]) == 2
    assert "formats must be some of" in capsys.readouterr().err


def test_verbose_shows_traceback(tmp_path, capsys):
    assert main(["-v", "report", str(tmp_path)]) == 2
    assert "Traceback" in capsys.readouterr().err


def test_python_m_biasamp_help():
    proc = subprocess.run(
        [sys.executable, "-m", "biasamp", "--help"], capture_output=True, text=True, timeout=120
    )
    assert proc.returncode == 0, proc.stderr
    for name in ("probe", "report", "compare"):
        assert name in proc.stdout


@pytest.mark.parametrize("argv, most", [(["--help"], 20), (["probe", "--help"], None)])
def test_help_imports_little(argv, most):
    """``biasamp --help`` builds no subcommand's options: neither pandas nor torch, at most 20
    biasamp modules; ``biasamp probe --help`` builds probe's (ProbeConfig's), still no torch.
    The modules are read from ``sys.modules`` at exit (``-X importtime`` does not show what
    ``importlib.import_module`` imports, the registry's lazy entries)."""
    code = (
        "import atexit, json, runpy, sys\n"
        "atexit.register(lambda: sys.stderr.write('MODULES '\n"
        "                                         + json.dumps(sorted(sys.modules))))\n"
        "runpy.run_module('biasamp', run_name='__main__')\n"
    )
    proc = subprocess.run(
        [sys.executable, "-c", code, *argv], capture_output=True, text=True, timeout=120
    )
    assert proc.returncode == 0, proc.stderr
    imported = json.loads(proc.stderr.rpartition("MODULES ")[2])
    ours = [m for m in imported if m == "biasamp" or m.startswith("biasamp.")]
    tops = {m.split(".")[0] for m in imported}
    assert "biasamp.cli" in ours and "torch" not in tops and "transformers" not in tops
    if most is not None:
        assert "pandas" not in tops and len(ours) <= most, ours
    else:
        assert "biasamp.commands.model" in ours and "biasamp.pipeline.config" in ours


def _subcommands():
    parser = build_parser()
    sub = next(a for a in parser._actions if a.__class__.__name__ == "_SubParsersAction")
    return sub.choices


def test_every_option_in_help():
    for name, p in _subcommands().items():
        text = p.format_help()
        for action in p._actions:
            for opt in action.option_strings:
                assert opt in text, (name, opt)


def test_every_subcommand_and_option_in_readme():
    from biasamp.pipeline.config import options_markdown  # the docs' generated options page

    pages = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
    readme = "\n".join([*(p.read_text(encoding="utf-8") for p in pages), options_markdown()])
    missing = []
    for name, p in _subcommands().items():
        if not re.search(rf"biasamp (?:-\S+ )*{re.escape(name)}\b", readme):
            missing.append(f"subcommand `biasamp {name}`")
        for action in p._actions:
            longs = [o for o in action.option_strings if o.startswith("--") and o != "--help"]
            if longs and not any(re.search(rf"{re.escape(o)}(?![\w-])", readme) for o in longs):
                missing.append(f"`biasamp {name} {longs[0]}`")
    assert not missing, "README.md and docs/ do not mention: " + "; ".join(missing)


def test_verbosity_flags_after_the_subcommand(tmp_path, capsys):
    argv = ["probe", "--model", str(tmp_path / "nowhere"), "--out", str(tmp_path / "o")]
    assert main(argv[:1] + ["-v"] + argv[1:]) == 2
    assert "Traceback" in capsys.readouterr().err
    assert main(argv[:1] + ["-q"] + argv[1:]) == 2
    err = capsys.readouterr().err
    assert "Traceback" not in err and "no such folder" in err


def test_parquet_tables(tiny, tmp_path):
    pytest.importorskip("pyarrow")
    out = tmp_path / "pq"
    assert (
        main(
            [
                "-q",
                "probe",
                "--model",
                str(tiny[0]),
                "--max-templates",
                "1",
                "--base-rates",
                "uniform",
                "--n-resamples",
                "20",
                "--tables",
                "parquet",
                "--format",
                "json",
                "--out",
                str(out),
            ]
        )
        == 0
    )
    t = pd.read_parquet(out / "tables.parquet")
    assert list(t.columns) == ["template_id", "direction", "task", "attribute", "prob", "log_prob"]
    assert len(t) == 1 * 2 * 32 * 2 and not (out / "tables.csv").exists()


def test_unknown_hub_model_is_one_line_exit_2(tmp_path):
    import os

    env = {**os.environ, "HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1"}
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "biasamp",
            "-q",
            "probe",
            "--model",
            "biasamp-test/no-such-model",
            "--max-templates",
            "1",
            "--base-rates",
            "uniform",
            "--out",
            str(tmp_path / "o"),
        ],
        capture_output=True,
        text=True,
        timeout=300,
        env=env,
        cwd=tmp_path,
    )
    assert proc.returncode == 2, proc.stderr
    assert proc.stderr.startswith("error: ") and proc.stderr.count("\n") == 1, proc.stderr
    assert "biasamp-test/no-such-model" in proc.stderr and "Traceback" not in proc.stderr


def test_the_model_options_are_declared_once():
    """probe, score and pairs load a model with the same options, help and defaults (the
    defaults are ProbeConfig's; probe's are None so that a --config file's value stands)."""
    from biasamp.cli import build_parser
    from biasamp.pipeline import ProbeConfig

    sub = next(a for a in build_parser()._actions if a.dest == "command").choices
    seen = {}
    for name in ("probe", "score", "pairs"):
        group = next(g for g in sub[name]._action_groups if g.title == "loading the model")
        seen[name] = {
            a.option_strings[0]: (a.dest, a.help, a.default) for a in group._group_actions
        }
    assert set(seen["score"]) == set(seen["probe"]) == set(seen["pairs"]) | {"--score-cache"}
    fields = ProbeConfig.model_fields
    for flag, (dest, text, default) in seen["score"].items():
        assert default == fields[dest].default, flag
        assert seen["probe"][flag] == (dest, text, None), flag
        if flag in seen["pairs"]:
            assert seen["pairs"][flag] == (dest, text, default), flag


def test_ctrl_c_at_any_moment_is_one_line_and_exit_130(monkeypatch, capsys):
    """Ctrl-C while the options are read (the subcommand's modules imported) too: no
    traceback, the one line ``interrupted``."""
    from biasamp import cli

    def interrupted(*args, **kwargs):
        raise KeyboardInterrupt

    monkeypatch.setattr(cli, "build_parser", interrupted)
    assert cli.main(["count", "--help"]) == 130
    assert capsys.readouterr().err == "interrupted\n"
