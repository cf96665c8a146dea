"""Bad input across the CLI and the API: each case gives exit code 2 (or the exception), a
one-line message naming the parameter, and writes nothing (or leaves the previous result
intact). What an output target may be, and interruptions: tests/test_output.py."""

from __future__ import annotations

import json
import re
from pathlib import Path

import numpy as np
import pytest

from biasamp import BiasampError, UnavailableCIWarning
from biasamp.cli import main
from biasamp.results import ProbeResult

pytestmark = pytest.mark.usefixtures("one_torch_thread")

QUICK = ["--max-templates", "2", "--n-resamples", "50", "--format", "md,json"]


def _files(folder: Path) -> list[str]:
    return sorted(p.relative_to(folder).as_posix() for p in folder.rglob("*"))


def _fails(argv, capsys, pattern, *, folder: Path):
    """Run the CLI; assert exit 2, one line naming what is wrong, and nothing written."""
    before = _files(folder)
    rc = main(argv)
    err = capsys.readouterr().err
    lines = [x for x in err.splitlines() if x.startswith("error: ")]
    assert rc == 2, err
    assert len(lines) == 1 and "Traceback" not in err, err
    assert re.search(pattern, lines[0]), lines[0]
    assert _files(folder) == before, "something was written"


@pytest.fixture(scope="module")
def done(tiny_bert_dir, tmp_path_factory):
    """A complete probe result (2 templates) to break in various ways."""
    out = tmp_path_factory.mktemp("done") / "res"
    assert (
        main(
            [
                "-q",
                "probe",
                "--model",
                str(tiny_bert_dir),
                "--base-rates",
                "uniform,labor-2016",
                "--out",
                str(out),
                *QUICK,
            ]
        )
        == 0
    )
    return out


def _copy(done: Path, to: Path) -> Path:
    to.mkdir(parents=True)
    for f in done.iterdir():
        (to / f.name).write_bytes(f.read_bytes())
    return to


# ------------------------------------------------------------------ probe: inputs
def _write(tmp_path, name, text):
    p = tmp_path / name
    p.write_bytes(text if isinstance(text, bytes) else text.encode())
    return str(p)


PROBE_CASES = [
    # (extra argv, pattern) -- files are created by the test from the {name: text} mapping
    (["--templates", "adjectivs"], r"unknown template set 'adjectivs' \(did you mean"),
    (["--templates", "{bad.toml}"], r"malformed template set file"),
    (["--templates", "{slot.toml}"], r"unknown slot \{atribute\}"),
    (["--tasks", "nosuchvocab"], r"tasks: unknown task vocabulary 'nosuchvocab'"),
    (["--tasks", "{empty.txt}"], r"the vocabulary is empty"),
    (["--tasks", "{binary.txt}"], r"not a text file"),
    (["--tasks", "{dup.txt}"], r"duplicate word 'nurse'"),
    (["--attributes", "he"], r"attributes must name at least 2 attributes"),
    (["--attributes", "he,it"], r"attributes must be a subset of .*got 'it'"),
    (["--attributes", "he,he"], r"attributes must not repeat an? attribute"),
    (["--base-rates", "uniform,labor-2061"], r"unknown base-rate source .labor-2061. \(did you"),
    (["--base-rates", "wikipedia"], r"unknown base-rate source 'wikipedia'"),
    (["--base-rates", "file:{nofile.csv}"], r"base-rate CSV not found"),
    (["--base-rates", "file:{zero.csv}"], r"base_rates: source 'file:.*zero.csv' is all zero"),
    (["--base-rates", "file:{nan.csv}"], r"column 'he' must be numeric"),
    (["--base-rates", "file:{neg.csv}"], r"column 'she' must be non-negative"),
    (["--base-rates", "file:{huge.csv}"], r"source 'file:.*huge.csv' overflows when normalised"),
    (["--base-rates", "file:{few.csv}"], r"tasks \[.*'cook'.*\] not in base-rate source"),
    (["--base-rates", "file:{dupcol.csv}"], r"duplicate columns"),
    (
        ["--base-rates", "labor-2016", "--attributes", "he,she,they"],
        r"attributes \['they'\] not in base-rate source 'labor-2016'",
    ),
    (
        ["--compat", "wang2021", "--base-rates", "file:{zero.csv}"],
        r"base_rates: source 'file:.*' has no wang2021 construction",
    ),
    (["--compat", "wang20"], r"compat must be one of 'wang2021'; got 'wang20'"),
    (["--format", "md,pdf"], r"--format must be some of .*got 'pdf'"),
    (["--tables", "xlsx"], r"tables must be one of 'csv', 'parquet'; got 'xlsx'"),
    (["--scoring", "firstpiece"], r"scoring must be one of .*got 'firstpiece' \(did you"),
    (["--batch-size", "0"], r"--batch-size must be a positive integer; got 0"),
    (["--n-resamples", "0"], r"--n-resamples must be a positive integer; got 0"),
    (["--confidence", "1.5"], r"confidence must be a number in \(0, 1\); got 1.5"),
    (["--seed", "-3"], r"seed must be a non-negative integer; got -3"),
    (["--dtype", "fp128"], r"dtype must be one of 'float32', 'bfloat16', 'float16', 'float64'"),
    (["--max-templates", "0"], r"--max-templates must be a positive integer; got 0"),
    (["--resample", "rows"], r"resample must be one of 'templates', 'tasks', 'both'; got 'rows'"),
    (
        ["--base-uncertainty", "maybe"],
        r"--base-uncertainty must be one of 'resample', 'none'; got 'maybe'",
    ),
    (["--min-base-count", "0"], r"--min-base-count must be a positive integer; got 0"),
    # issue 29: an option with nothing to act on is refused, not silently dropped
    (
        ["--min-base-count", "5", "--base-rates", "uniform,labor-2016"],
        r"^error: min_base_count 5 leaves out tasks rarely counted in a count-based source "
        r"\(corpus co-occurrences\); none of base_rates \['uniform', 'labor-2016'\] is one",
    ),
    (["--base-rates", "uniform,file:"], r"^error: base-rate source 'file:' names no file"),
    (["--base-rates", "uniform:file:"], r"^error: base-rate source 'uniform:file:' names no"),
    (["--tasks", "nurse,coo\u200bk"], r"^error: tasks .* entry 2 holds an invisible character"),
    (
        ["--base-rates", "uniform,file:{half.csv}"],
        r"source 'file:.*half.csv': every one of the requested tasks holds the attributes in "
        r"their overall proportion \(P\(T\|A\) = P\(T\), e.g. all 50/50\), so no task is "
        r"associated with an attribute and BiasAmp-> is 0 by construction",
    ),
    (["--config", "{typo.toml}"], r"unknown config option 'modles' \(did you mean 'models'"),
    (["--config", "{nofile.toml}"], r"config file '.*nofile.toml' does not exist"),
    # issue 19, items 7 and 8: degenerate values and unreadable files refused before the model
    (
        ["--tasks", "nurse,"],
        r"^error: tasks must name at least 2 tasks; got 'nurse,' "
        r"\(1: \['nurse'\]\); with one, P\(T=t\|A=a\) = P\(T=t\) = 1",
    ),
    (["--tasks", "{one.txt}"], r"tasks must name at least 2 tasks; got '.*one.txt' \(1: "),
    (["--tasks", "nurse,,cook"], r"^error: tasks 'nurse,,cook': entry 2 is empty$"),
    (["--tasks", ",nurse,cook"], r"^error: tasks ',nurse,cook': entry 1 is empty$"),
    (
        ["--attributes", "he,,she"],
        r"^error: --attributes must not hold an empty attribute; got "
        r"'he,,she' \(name 2 is empty\)$",
    ),
    (
        ["--base-rates", "uniform,file:{noshe.csv}"],
        r"source 'file:.*noshe.csv': attribute 'she' never occurs \(its column is all zero for "
        r"the requested tasks\), so P\(A=she\) = 0",
    ),
    (
        ["--base-rates", "file:{counts.csv}", "--min-base-count", "1000000000"],
        r"^error: min_base_count 1000000000 leaves 0 of the 32 tasks of base-rate source "
        r"'file:.*counts.csv' \(its largest task count is 13\); BiasAmp-> needs at least 2",
    ),
    (
        ["--base-rates", "file:{counts.csv}", "--min-base-count", "13"],
        r"min_base_count 13 leaves 1 of the 32 tasks of base-rate source 'file:.*counts.csv'",
    ),
    (
        ["--base-rates", "file:{counts.csv}", "--min-base-count", "12"],
        r"source 'file:.*counts.csv': attribute 'she' never occurs \(its column is all zero for "
        r"the tasks min_base_count 12 keeps\)",
    ),
    (
        ["--n-resamples", "1000000000"],
        r"^error: n_resamples 1000000000 needs about [\d,]+\.\d GiB for the bootstrap \(32 tasks "
        r"x 2 attributes per replicate\), more than this machine's [\d,.]+ GiB of memory",
    ),
    (
        ["--config", "{latin1.toml}"],
        r"^error: config file '.*latin1.toml' is not UTF-8 text: "
        r"byte 0xe9 at position 23 \(line 2\) cannot be decoded",
    ),
    (
        ["--config", "{latin1.yaml}"],
        r"^error: config file '.*latin1.yaml' is not UTF-8 text: "
        r"byte 0xe9 at position 18 \(line 2\)",
    ),
    (
        ["--templates", "{latin1set.toml}"],
        r"^error: template set file '.*latin1set.toml' is not UTF-8 text: byte 0xe9 at position 8",
    ),
    (
        ["--base-rates", "file:{latin1.csv}"],
        r"^error: base-rate CSV file '.*latin1.csv' is not "
        r"UTF-8 text: byte 0xe9 at position 25 \(line 3\)",
    ),
    (
        ["--base-rates", "file:{provlist.csv}"],
        r"^error: base-rate CSV '.*provlist.csv', line 2 \('# provenance:'\) must hold a JSON "
        r"object .*; got list \[1, 2\]$",
    ),
    (
        ["--base-rates", "file:{provnan.csv}"],
        r"^error: base-rate CSV '.*provnan.csv', line 1 \('# provenance:'\): n_kept is NaN, not a "
        r"finite number",
    ),
    (
        ["--base-rates", "file:{provkept.csv}"],
        r"line 1 \('# provenance:'\): n_kept must be a non-negative integer .*; got 'many'$",
    ),
]
FILES = {
    "bad.toml": "[set\nname = 'x'\n",
    "slot.toml": (
        '[set]\nname = "s"\ndescription = "d"\nsource = "s"\nyear = 2024\n'
        'license = "MIT"\nagreement = true\n[[template]]\nid = "a"\n'
        'text = "{atribute} {be} a {task}."\n'
    ),
    "empty.txt": "",
    "binary.txt": b"nurse\x00\x01\x02cook\n",
    "dup.txt": "nurse\ncook\nnurse\n",
    "nan.csv": "task,he,she\nnurse,nan,1\n",
    "neg.csv": "task,he,she\nnurse,1,-2\n",
    "few.csv": "task,he,she\nnurse,1,2\n",
    "dupcol.csv": "task,he,he\nnurse,1,2\n",
    "typo.toml": "modles = ['x']\n",
    "one.txt": "nurse\n",
    "latin1.toml": "model = 'x'\nnote = 'caf\xe9'\n".encode("latin-1"),
    "latin1.yaml": "model: x\nnote: caf\xe9\n".encode("latin-1"),
    "latin1set.toml": "name = '\xe9'\n".encode("latin-1"),
    "latin1.csv": "task,he,she\nnurse,1,2\ncaf\xe9,1,2\n".encode("latin-1"),
    "provlist.csv": "# a table\n# provenance: [1, 2]\ntask,he,she\nnurse,1,2\n",
    "provnan.csv": '# provenance: {"n_kept": NaN}\ntask,he,she\nnurse,1,2\n',
    "provkept.csv": '# provenance: {"n_kept": "many", "rule": "x"}\ntask,he,she\nnurse,1,2\n',
}


def _table_csv(value: str, she: str | None = None) -> str:
    from biasamp.tasks import load_tasks

    return "task,he,she\n" + "".join(
        f"{t},{value},{value if she is None else she}\n" for t in load_tasks("winobias32").words
    )


def _counts_csv() -> str:
    """Counts of winobias32: 13 and 12 sentences for the first two tasks (all 'he'), 1 per
    attribute for the others."""
    from biasamp.tasks import load_tasks

    words = load_tasks("winobias32").words
    return (
        '# provenance: {"value": "count"}\ntask,he,she\n'
        f"{words[0]},13,0\n{words[1]},12,0\n" + "".join(f"{t},1,1\n" for t in words[2:])
    )


@pytest.mark.parametrize(
    "extra, pattern", PROBE_CASES, ids=[" ".join(c[0])[:40] for c in PROBE_CASES]
)
def test_probe_refuses_bad_input_before_the_model(
    tiny_bert_dir, tmp_path, capsys, extra, pattern, monkeypatch
):
    import biasamp.pipeline.run

    def no_load(*args, **kwargs):
        raise AssertionError("the model was loaded")

    monkeypatch.setattr(biasamp.pipeline.run, "_load_scorer", no_load)  # the one place
    inputs = tmp_path / "inputs"
    inputs.mkdir()
    files = {
        **FILES,
        "huge.csv": _table_csv("1e308"),
        "zero.csv": _table_csv("0"),
        "half.csv": _table_csv("2"),
        "counts.csv": _counts_csv(),
        "noshe.csv": _table_csv("3", "0"),
    }

    def fill(arg):
        return re.sub(
            r"\{([\w.]+)\}",
            lambda m: (
                _write(inputs, m.group(1), files[m.group(1)])
                if m.group(1) in files
                else str(inputs / m.group(1))
            ),
            arg,
        )

    work = tmp_path / "work"
    work.mkdir()
    argv = [
        "probe",
        "--model",
        str(tiny_bert_dir),
        "--out",
        str(work / "o"),
        *QUICK,
        *[fill(a) for a in extra],
    ]
    _fails(argv, capsys, pattern, folder=work)


# ------------------------------------------------------------------ models and their folders
def test_same_model_twice_and_same_folder_names(tiny_bert_dir, tmp_path, capsys):
    _fails(
        [
            "probe",
            "--model",
            f"{tiny_bert_dir},{tiny_bert_dir}",
            "--out",
            str(tmp_path / "o"),
            *QUICK,
        ],
        capsys,
        r"--model must not repeat a model; got .* repeats",
        folder=tmp_path,
    )
    a, b = tmp_path / "a" / "tiny", tmp_path / "b" / "tiny"
    for d in (a, b):
        d.mkdir(parents=True)
        for f in Path(tiny_bert_dir).iterdir():
            (d / f.name).write_bytes(f.read_bytes())
    out = tmp_path / "many"
    assert (
        main(
            [
                "-q",
                "probe",
                "--model",
                str(a),
                "--model",
                str(b),
                "--out",
                str(out),
                "--base-rates",
                "uniform",
                *QUICK,
            ]
        )
        == 0
    )
    assert sorted(p.name for p in out.iterdir() if p.is_dir()) == ["a--tiny", "b--tiny"]
    cmp = (out / "comparison.md").read_text()
    assert str(a) in cmp and str(b) in cmp


# ------------------------------------------------------------------ report / compare
@pytest.mark.parametrize(
    "breakage, pattern",
    [
        ("missing", r"has no results.json"),
        ("notjson", r"is not valid JSON"),
        ("schema", r"summary\[0\] lacks the keys \['mean'\]"),
        ("version", r"schema_version 7 is not supported"),
        ("incomplete", r"holds no complete result \(results.json has no completion mark"),
        ("changed", r"by_pair.csv was changed after the run"),
        # issue 19, item 7: numbers JSON does not have, or no BiasAmp-> value can be
        ("NaN", r"^error: .*results.json: summary\[0\].mean is NaN, not a finite number"),
        ("Infinity", r"^error: .*results.json: summary\[0\].mean is Infinity, not a finite number"),
        ("-Infinity", r"results.json: summary\[0\].mean is -Infinity, not a finite number"),
        ("1e999", r"results.json: summary\[0\].mean is 1e999, not a finite number"),
        (
            "1.7e308",
            r"^error: .*results.json: summary\[0\].mean must be null or a number in "
            r"\[-2, 2\]; got 1.7e\+308$",
        ),
        (
            "1.7e308 by_pair",
            r"results.json: by_pair\[5\].delta_ci_high must be null or a number "
            r"in \[-2, 2\]; got 1.7e\+308$",
        ),
        (
            "1.7e308 per_template",
            r"results.json: summary\[1\].per_template\[1\] must be null or "
            r"a number in \[-2, 2\]; got -1.7e\+308$",
        ),
    ],
)
def test_report_refuses_a_broken_result_and_writes_nothing(
    done, tmp_path, capsys, breakage, pattern
):
    d = _copy(done, tmp_path / "r")
    rj = d / "results.json"
    data = json.loads(rj.read_text())
    if breakage == "missing":
        rj.unlink()
    elif breakage == "notjson":
        rj.write_text("{nope")
    elif breakage == "schema":
        del data["summary"][0]["mean"]
        rj.write_text(json.dumps(data))
    elif breakage == "version":
        rj.write_text(json.dumps({**data, "schema_version": 7}))
    elif breakage == "incomplete":
        rj.write_text(json.dumps({k: v for k, v in data.items() if k != "complete"}))
    elif breakage == "1.7e308 by_pair":
        data["by_pair"][5]["delta_ci_high"] = 1.7e308
        rj.write_text(json.dumps(data))
    elif breakage == "1.7e308 per_template":
        data["summary"][1]["per_template"][1] = -1.7e308
        rj.write_text(json.dumps(data))
    elif breakage[0] in "NI-1":  # a hand edit: the token as typed
        data["summary"][0]["mean"] = 0.125
        rj.write_text(json.dumps(data).replace('"mean": 0.125', f'"mean": {breakage}', 1))
    else:
        (d / "by_pair.csv").write_text((d / "by_pair.csv").read_text() + "x,y\n")
    for f in d.glob("*.png"):
        f.unlink()
    _fails(["report", str(d), "--format", "md,html"], capsys, pattern, folder=tmp_path)
    _fails(["compare", str(d), str(done)], capsys, pattern, folder=tmp_path)


def test_report_out_elsewhere_and_its_refusals(done, tmp_path, capsys):
    before = {p: p.read_bytes() for p in done.iterdir()}
    assert main(["-q", "report", str(done), "--format", "md", "--out", str(tmp_path / "r2")]) == 0
    assert sorted(p.name for p in (tmp_path / "r2").iterdir()) == [
        ".biasamp.json",
        "base_rate_panel.png",
        "fig5_p_attribute_given_task.png",
        "forest_delta.png",
        "report.md",
    ]
    assert {p: p.read_bytes() for p in done.iterdir()} == before  # the result is untouched
    _fails(
        ["report", str(done), "--out", str(tmp_path / "r2")],
        capsys,
        r"--out '.*r2' exists and is not empty",
        folder=tmp_path,
    )
    _fails(
        ["report", str(done), "--format", "pdf"],
        capsys,
        r"formats must be some of",
        folder=tmp_path,
    )


def test_compare_refuses_different_setups_unless_allowed(done, tiny_bert_dir, tmp_path, capsys):
    other = tmp_path / "three"
    assert (
        main(
            [
                "-q",
                "probe",
                "--model",
                str(tiny_bert_dir),
                "--attributes",
                "he,she,they",
                "--base-rates",
                "uniform",
                "--out",
                str(other),
                *QUICK,
            ]
        )
        == 0
    )
    _fails(
        ["compare", str(done), str(other), "--out", str(tmp_path / "cmp")],
        capsys,
        r"the RESULT_DIRs are not comparable: they differ in .*attributes: 'he, she' vs "
        r"'he, she, they'",
        folder=tmp_path,
    )
    assert (
        main(
            [
                "-q",
                "compare",
                str(done),
                str(other),
                "--allow-mismatch",
                "--out",
                str(tmp_path / "cmp"),
            ]
        )
        == 0
    )
    text = (tmp_path / "cmp" / "comparison.md").read_text()
    assert "Not comparable as they stand" in text and "| attributes |" in text
    _fails(
        ["compare", str(done), str(done), "--out", str(tmp_path / "cmp")],
        capsys,
        r"(--)?out '.*cmp' exists and is not empty",
        folder=tmp_path,
    )
    _fails(
        ["compare", str(done), "--format", "xls"],
        capsys,
        r"formats must be some of",
        folder=tmp_path,
    )


# ------------------------------------------------------------------ count, models, API
def test_count_bad_input(tmp_path, capsys, wikitext_dir):
    wt = str(wikitext_dir / "wiki.valid.tokens")
    for argv, pattern in (
        (["count", wt, "--tasks", "nosuchvocab"], r"tasks: unknown task vocabulary"),
        (["count", str(tmp_path / "none.txt"), "--tasks", "nurse,"], r"not found"),
        (["count", wt, "--dataset", "x", "--tasks", "nurse,"], r"exactly one"),
        (["count", wt, "--tasks", "nurse,", "--rule", "paper"], r"--rule|rule"),
        (["count", wt, "--tasks", "nurse,", "--groups", "he"], r"--groups must look like"),
        (["count", wt, "--tasks", "nurse,", "--jobs", "0"], r"n_jobs must be a positive"),
    ):
        _fails([*argv, "-o", str(tmp_path / "out" / "c.csv")], capsys, pattern, folder=tmp_path)


@pytest.mark.parametrize(
    "model, pattern",
    [
        ("{missing}", r"model '.*missing': no such folder"),
        ("{file}", r"model '.*model.bin' is a file; give the model's folder"),
        ("", r"models must|model"),
    ],
)
def test_model_paths(tmp_path, capsys, model, pattern):
    (tmp_path / "model.bin").write_text("x")
    model = model.replace("{missing}", str(tmp_path / "missing")).replace(
        "{file}", str(tmp_path / "model.bin")
    )
    work = tmp_path / "w"
    work.mkdir()
    _fails(
        ["probe", "--model", model, "--out", str(work / "o"), *QUICK], capsys, pattern, folder=work
    )


def test_metric_api_errors_and_warnings():
    from biasamp.metrics import bootstrap_ci, directional_bias_amplification

    with pytest.raises(BiasampError, match=r"base must have at least two attributes .*got 1"):
        directional_bias_amplification([[1.0], [1.0]], [[3.0], [1.0]], direction="T->A")
    with pytest.raises(BiasampError, match=r"direction must be one of"):
        directional_bias_amplification([[0.5, 0.5]], [[1, 1]], direction="up")
    with pytest.warns(UnavailableCIWarning) as rec:
        lo, hi = bootstrap_ci([0.3])
    assert np.isnan(lo) and np.isnan(hi) and len(rec) == 1


def test_one_template_reports_no_interval_and_warns_once(tiny_bert_dir, tmp_path, capsys):
    out = tmp_path / "one"
    assert (
        main(
            [
                "probe",
                "--model",
                str(tiny_bert_dir),
                "--max-templates",
                "1",
                "--base-rates",
                "uniform,labor-2016",
                "--n-resamples",
                "50",
                "--format",
                "md",
                "--out",
                str(out),
            ]
        )
        == 0
    )
    err = capsys.readouterr().err
    assert err.count("warning: 1 template: confidence intervals") == 1
    res = ProbeResult.load(out)
    assert res.summary["ci_low"].isna().all() and res.summary["ci_high"].isna().all()
    assert "Unavailable intervals" in (out / "report.md").read_text()


def test_warnings_are_printed_once_each(tiny_bert_dir, tmp_path, capsys):
    assert (
        main(
            [
                "probe",
                "--model",
                str(tiny_bert_dir),
                "--base-rates",
                "wikitext103-valtest",
                "--out",
                str(tmp_path / "w"),
                *QUICK,
            ]
        )
        == 0
    )
    err = capsys.readouterr().err.splitlines()
    warns = [x for x in err if x.startswith("warning: ")]
    assert warns and len(warns) == len(set(warns))
    assert sum("all-zero row" in w for w in warns) == 1


def test_out_that_is_or_holds_the_model_folder_is_refused(tiny_bert_dir, tmp_path, capsys):
    # with --overwrite this used to delete the model folder just probed
    models = tmp_path / "models"
    model = models / "tiny"
    model.mkdir(parents=True)
    for f in Path(tiny_bert_dir).iterdir():
        (model / f.name).write_bytes(f.read_bytes())
    before = sorted(f.name for f in model.iterdir())
    for out in (model, models):
        assert (
            main(["-q", "probe", "--model", str(model), "--out", str(out), "--overwrite", *QUICK])
            == 2
        )
        err = capsys.readouterr().err
        assert f"--out {str(out)!r} is or holds the model folder {str(model)!r}" in err, err
    assert sorted(f.name for f in model.iterdir()) == before
