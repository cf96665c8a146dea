"""The one progress display of a run (issue 22): stages with their totals known before the
first step, one bar on a terminal and plain lines elsewhere, ``-q`` silent, warnings in one
form, the last line naming the report."""

from __future__ import annotations

import io
import logging
import re
import sys
import warnings

import pandas as pd
import pytest

import biasamp
from biasamp._conventions import DIRECTIONS
from biasamp._progress import SILENT, Display, Progress, as_progress
from biasamp.cli import main

pytestmark = pytest.mark.filterwarnings("ignore::UserWarning")


class Recorder(Progress):
    """Every call, in order: ("stage", name, total, unit) and ("advance", n)."""

    def __init__(self):
        self.events = []

    def stage(self, name, total, unit="it"):
        self.events.append(("stage", name, total, unit))

    def advance(self, n=1):
        assert self.events and self.events[-1][0] in ("stage", "advance"), "a step before a stage"
        self.events.append(("advance", n))

    def stages(self):
        """[(name, total, unit, sum of its steps)] in order."""
        out = []
        for e in self.events:
            if e[0] == "stage":
                out.append([e[1], e[2], e[3], 0])
            else:
                out[-1][3] += e[1]
        return [tuple(s) for s in out]


def _probe_args(model, out, *extra):
    return [
        "probe",
        "--model",
        str(model),
        "--templates",
        "adjectives",
        "--max-templates",
        "3",
        "--tasks",
        "nurse,carpenter,writer",
        "--n-resamples",
        "50",
        "--base-rates",
        "uniform,labor-2016",
        "--out",
        str(out),
        *extra,
    ]


# ---------------------------------------------------------------- the reporter
def test_as_progress_maps_what_a_caller_passes():
    rec = Recorder()
    assert as_progress(None) is SILENT and as_progress(False) is SILENT
    assert as_progress(rec) is rec
    assert isinstance(as_progress(True), Display)
    with pytest.raises(
        biasamp.BiasampError, match="progress must be a bool or a biasamp Progress reporter; got 1"
    ):
        as_progress(1)


def test_plain_lines_say_stage_counts_and_time_left(monkeypatch):
    # stage, advance (line), advance (no line), stage, advance (no line: 5 s into the stage)
    clock = iter([0.0, 12.0, 13.0, 30.0, 35.0])
    monkeypatch.setattr(
        "biasamp._progress.time",
        type("Clock", (), {"monotonic": staticmethod(lambda: next(clock))}),
    )
    out = io.StringIO()
    show = Display(out, interval=10, terminal=False)
    show.stage("scoring T->A", 960, "ctx")
    show.advance(480)  # 12 s for 480 of 960: 12 s left
    show.advance(100)  # 1 s after the last line: no line
    show.stage("counting", 2_500_000, "B")
    show.advance(1_000_000)
    # no line when a stage starts: a stage shorter than the interval prints nothing
    assert out.getvalue().splitlines() == ["progress: scoring T->A 480/960 ctx, 12 s left"]


def test_a_terminal_gets_one_bar_for_every_stage(monkeypatch):
    import tqdm.auto

    made = []

    class Counted(tqdm.auto.tqdm):
        def __init__(self, *args, **kwargs):
            made.append(self)
            super().__init__(*args, **kwargs)

    monkeypatch.setattr(tqdm.auto, "tqdm", Counted)
    out = io.StringIO()
    show = Display(out, terminal=True)
    for name, total in (("scoring A->T", 10), ("scoring T->A", 20), ("bootstrap", 4)):
        show.stage(name, total, "ctx")
        assert (made[0].total, made[0].n, made[0].desc) == (total, 0, name)  # known at once
        show.advance(total)
    show.write("warning: a line above the bar")
    show.close()
    assert len(made) == 1 and made[0].n == 4
    assert "warning: a line above the bar" in out.getvalue()
    assert "progress:" not in out.getvalue()


# ---------------------------------------------------------------- the library reports
def test_probe_stages_have_their_totals_before_the_first_step(tiny_gpt2_dir, tmp_path):
    from biasamp.pipeline import ProbeConfig, prepare

    rec = Recorder()
    cfg = dict(
        models=[str(tiny_gpt2_dir)],
        templates="adjectives",
        max_templates=3,
        tasks="nurse,carpenter,writer",
        n_resamples=50,
        base_rates="uniform,labor-2016",
    )
    biasamp.probe(progress=rec, out=str(tmp_path / "r"), formats=["md", "html"], **cfg)
    stages = rec.stages()
    assert [s[0] for s in stages] == [
        f"loading {tiny_gpt2_dir}",
        "scoring A->T",
        "scoring T->A",
        "bootstrap",
        "plots",
        "reports",
    ]
    for name, total, _unit, done in stages:
        assert total == done and total > 0, name
    # a causal LM runs each distinct filled sentence once: counted here from the prompts
    prep = prepare(ProbeConfig(**cfg).resolved())
    for (_, total, unit, _), d in zip(stages[1:3], DIRECTIONS):
        rows = prep.prompts[d]
        filled = {
            p.replace("[BLANK]", c)
            for p, cands in zip(rows["prompt"], rows["candidates"])
            for c in cands
        }
        assert (total, unit) == (len(filled), "seq")
    assert stages[3][1:3] == (2 * 2, "tables")  # 2 sources x 2 directions
    assert stages[5][1:3] == (2, "files")  # md, html


def test_pairs_total_is_the_distinct_contexts_run(tiny_bench_bert_dir, tmp_path, capsys):
    from biasamp.pairs import score_pairs

    src = pd.DataFrame(
        {
            "sent_more": ["The nurse is kind.", "He is a doctor.", "The nurse is kind."],
            "sent_less": ["The nurse is rude.", "She is a doctor.", "The nurse is rude."],
            "stereo_antistereo": ["stereo"] * 3,
            "bias_type": ["gender"] * 3,
        }
    )
    path = tmp_path / "p.csv"
    src.to_csv(path, index=False)
    rec = Recorder()
    res = score_pairs(str(path), str(tiny_bench_bert_dir), n_resamples=20, progress=rec)
    ((_, total, unit, done),) = [s for s in rec.stages() if s[0] == "scoring pairs"]
    n_shared = res.scores["n_shared"].to_list()
    assert n_shared[0] == n_shared[2]
    # the third pair repeats the first: its 2 x n_shared contexts are run once
    assert (total, unit, done) == (2 * (n_shared[0] + n_shared[1]), "ctx", total)
    assert res.provenance.n_contexts == 2 * sum(n_shared)
    assert res.provenance.n_contexts_run == total
    assert [s[:3] for s in rec.stages()][-1] == ("bootstrap", 3, "groups")  # all, stereo, gender

    out = tmp_path / "out"
    assert (
        main(
            [
                "pairs",
                "--model",
                str(tiny_bench_bert_dir),
                "--pairs",
                str(path),
                "--n-resamples",
                "20",
                "--out",
                str(out),
            ]
        )
        == 0
    )
    err = capsys.readouterr().err.splitlines()
    assert err[-1] == f"report: {out / 'pairs.json'}"


@pytest.mark.parametrize("rule, jobs", [("default", 1), ("wang2021", 1), ("default", 2)])
def test_counting_moves_within_one_long_line(tmp_path, rule, jobs):
    from biasamp.corpus import count_cooccurrences

    path = tmp_path / "one-line.txt"
    path.write_bytes(b"The nurse said that she was tired. A carpenter built his house. " * 40_000)
    size = path.stat().st_size  # 2.6 MB, no newline
    rec = Recorder()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # tasks with no count
        res = count_cooccurrences(
            [str(path)],
            ["nurse", "carpenter"],
            rule=rule,
            n_jobs=jobs,
            hash_inputs=False,
            progress=rec,
        )
    assert res.n_lines == 1
    steps = [e[1] for e in rec.events if e[0] == "advance"]
    assert rec.stages() == [(f"counting ({rule})", size, "B", size)]
    if jobs == 1:  # a pool's workers add to a counter this process reads twice a second
        assert len(steps) >= 3  # one step per MiB the rule has passed, the rest at the end


# ---------------------------------------------------------------- the command line
def test_a_probe_shows_one_display_and_names_its_report(
    tiny_bert_dir, tmp_path, capsys, monkeypatch
):
    monkeypatch.setattr("biasamp._progress.PLAIN_INTERVAL", 0.0)  # a line at every step
    out = tmp_path / "r"
    assert main(_probe_args(tiny_bert_dir, out)) == 0
    captured = capsys.readouterr()
    err = captured.err.splitlines()
    progress = [line for line in err if line.startswith("progress: ")]
    stages = list(
        dict.fromkeys(
            re.match(r"progress: (.+) [\d,]+/[\d,]+ \w+", line).group(1) for line in progress
        )
    )
    assert stages == [
        f"loading {tiny_bert_dir}",
        "scoring A->T",
        "scoring T->A",
        "bootstrap",
        "plots",
        "reports",
    ]
    assert not [line for line in err if not line.startswith(("progress: ", "warning", "report: "))]
    assert "it/s" not in captured.err and "Loading weights" not in captured.err
    assert err[-1] == f"report: {out / 'report.html'}"
    lines = captured.out.splitlines()
    assert lines[0] == f"{tiny_bert_dir}:"
    # the source column is as wide as the longest source, then two spaces
    assert lines[1].startswith("  uniform     attribute_to_task  ")
    assert lines[3].startswith("  labor-2016  attribute_to_task  ")


def test_a_causal_probe_prints_no_line_of_transformers(tiny_gpt2_dir, tmp_path, capsys):
    out = tmp_path / "r"
    assert main(_probe_args(tiny_gpt2_dir, out)) == 0
    err = capsys.readouterr().err.splitlines()
    # no deprecation line, no weight-loading bar: only the display, warnings and the report
    assert not [
        line for line in err if not line.startswith(("progress: ", "warning: ", "report: "))
    ], err
    assert err[-1] == f"report: {out / 'report.html'}"


def test_the_display_is_gone_before_the_summary(tiny_bert_dir, tmp_path, monkeypatch, capsys):
    seen = []

    class Closing(Display):
        def close(self):
            seen.append(sys.stdout.getvalue())  # what the summary printed so far
            super().close()

    monkeypatch.setattr("biasamp.cli.Display", Closing)
    assert main(_probe_args(tiny_bert_dir, tmp_path / "r")) == 0
    assert seen[0] == ""
    assert capsys.readouterr().out.startswith(f"{tiny_bert_dir}:\n")


def test_quiet_prints_nothing_but_errors(tiny_bert_dir, tmp_path, capsys):
    assert main(["-q", *_probe_args(tiny_bert_dir, tmp_path / "r")]) == 0
    assert capsys.readouterr() == ("", "")
    assert main(["-q", *_probe_args(tiny_bert_dir, tmp_path / "r")]) == 2
    captured = capsys.readouterr()
    assert captured.out == "" and captured.err.startswith("error: --out ")
    assert len(captured.err.splitlines()) == 1


def test_report_and_compare_name_their_report_last(tiny_bert_dir, tmp_path, capsys):
    first = tmp_path / "r"
    assert main(["-q", *_probe_args(tiny_bert_dir, first, "--format", "json")]) == 0
    assert main(["report", str(first), "--format", "md,json", "--out", str(tmp_path / "m")]) == 0
    assert capsys.readouterr().err.splitlines()[-1] == f"report: {tmp_path / 'm' / 'report.md'}"
    assert main(["compare", str(first), str(first), "--out", str(tmp_path / "c")]) == 0
    assert capsys.readouterr().err.splitlines()[-1] == f"report: {tmp_path / 'c' / 'comparison.md'}"


def test_a_warning_transformers_logs_has_the_one_form(tiny_bert_dir, tmp_path, capsys, request):
    # WinoBias sentences are longer than the tiny BERT's 64 positions: its tokenizer logs a
    # warning (through its own stderr handler, outside our calls), then the probe refuses them
    hf = logging.getLogger("transformers")
    request.addfinalizer(lambda level=hf.level: hf.setLevel(level))
    hf.setLevel(logging.WARNING)  # an earlier -q run in this process set it to ERROR
    assert (
        main(
            [
                "probe",
                "--model",
                str(tiny_bert_dir),
                "--templates",
                "winobias",
                "--base-rates",
                "uniform,labor-2016-shares",
                "--out",
                str(tmp_path / "r"),
            ]
        )
        == 2
    )
    err = [
        line for line in capsys.readouterr().err.splitlines() if not line.startswith("progress: ")
    ]
    assert err[0].startswith("warning (transformers): Token indices sequence length is longer")
    assert err[1].startswith("error: prompt ") and len(err) == 2


def test_every_warning_has_one_form(capsys):
    from biasamp.cli import _Terminal

    term = handler = _Terminal(None)  # the warnings' display and the logging handler
    for name, text in (
        ("biasamp.scoring._scorer", "first-piece scoring of 1 split candidate"),
        ("biasamp.scoring._scorer", "first-piece scoring of 1 split candidate"),
        ("transformers.tokenization", "sequence  longer\nthan 64"),
    ):
        handler.emit(logging.LogRecord(name, logging.WARNING, __file__, 1, text, None, None))
    term.showwarning("2 cells undefined", UserWarning, biasamp.__file__, 1)
    assert capsys.readouterr().err.splitlines() == [
        "warning: first-piece scoring of 1 split candidate",
        "warning (transformers): sequence longer than 64",
        "warning: 2 cells undefined",
    ]


def test_the_summary_has_no_negative_zero_and_explains_n_a():
    from biasamp.report import _format

    if not hasattr(_format, "format_ci"):
        pytest.skip("needs the report number format of issue 22 (format_ci, no -0.0000)")
    from biasamp.commands.model import summary_lines

    class Res:
        summary = pd.DataFrame(
            {
                "base_rates": ["uniform", "wikitext103-valtest-wang2021"],
                "direction": ["attribute_to_task", "task_to_attribute"],
                "mean": [-0.00001, 0.25],
                "std": [0.001, 0.0],
                "ci_low": [-0.0002, 0.25],
                "ci_high": [0.0001, 0.25],
            }
        )
        by_group = pd.DataFrame(
            columns=["base_rates", "direction", "group", "mean", "ci_low", "ci_high"]
        )

    lines = summary_lines(["m"], [Res()])
    assert lines[1] == (
        "  uniform                       attribute_to_task  0.0000 ± 0.0010 [-0.0002, 0.0001]"
    )
    assert lines[2].endswith("task_to_attribute  0.2500 ± 0.0000 [n/a]")
    assert "-0.0000" not in "\n".join(lines)
    assert lines[-1].startswith("n/a: no confidence interval")
    assert sum(line.startswith("n/a:") for line in lines) == 1
