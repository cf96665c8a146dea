"""Tests of the ``biasamp score`` subcommand (tiny offline model)."""

from __future__ import annotations

import numpy as np
import pytest

torch = pytest.importorskip("torch")

from biasamp.cli import main  # noqa: E402

pytestmark = pytest.mark.usefixtures("one_torch_thread")


@pytest.fixture(scope="module")
def bert_dir(tiny_bert_dir):
    return str(tiny_bert_dir)


def test_score_prints_table_matching_library(bert_dir, capsys):
    from biasamp.scoring import MaskedLMScorer

    rc = main(
        [
            "-q",
            "score",
            "--model",
            bert_dir,
            "--prompt",
            "he is a good [BLANK].",
            "-p",
            "[BLANK] was a cook.",
            "--candidates",
            "nurse, janitor,they are",
            "--device",
            "cpu",
        ]
    )
    out = capsys.readouterr().out
    assert rc == 0
    ref = MaskedLMScorer(bert_dir, device="cpu").score(
        ["he is a good [BLANK].", "[BLANK] was a cook."], ["nurse", "janitor", "they are"]
    )
    lines = [ln.split() for ln in out.splitlines() if ln.startswith("  ") and "log_prob" not in ln]
    assert [ln[0] for ln in lines] == ["nurse", "janitor", "they", "nurse", "janitor", "they"]
    got_lp = np.array([float(ln[-2]) for ln in lines]).reshape(2, 3)
    got_p = np.array([float(ln[-1]) for ln in lines]).reshape(2, 3)
    np.testing.assert_allclose(got_lp, ref.log_prob, atol=1e-6)  # printed with 6 decimals
    np.testing.assert_allclose(got_p, ref.prob, atol=1e-6)
    assert "scoring word" in out and "mass covered" in out


def test_score_audit(bert_dir, capsys):
    rc = main(
        [
            "-q",
            "score",
            "--model",
            bert_dir,
            "--prompt",
            "he is a [BLANK].",
            "--candidates",
            "jan,janitor,hairdresser",
            "--scoring",
            "first-piece",
            "--audit",
            "--device",
            "cpu",
        ]
    )
    out = capsys.readouterr().out
    assert rc == 0
    assert "tokenisation audit" in out
    assert "hair ##dre ##sser" in out and "jan ##itor" in out
    row = [ln for ln in out.splitlines() if ln.split()[:2] == ["janitor", "2"]]
    assert row and row[0].rstrip().endswith("jan")


@pytest.mark.parametrize(
    "argv, match",
    [
        (["--prompt", "no blank here", "--candidates", "a,b"], "exactly once"),
        (["--prompt", "[BLANK].", "--candidates", "a,,b"], "empty entry at position 2"),
        (["--prompt", "[BLANK].", "--candidates", " , "], "at least one word"),
        (
            ["--prompt", "[BLANK].", "--candidates", "he", "--scoring", "wordz"],
            # an unknown name is refused as probe refuses it, before the model's kind is read
            "--scoring must be one of 'word', 'first-piece', 'pll', 'continuation', "
            "'sentence'; got 'wordz' (did you mean 'word'?)",
        ),
        (
            ["--prompt", "[BLANK].", "--candidates", "he", "--dtype", "float16", "--device", "cpu"],
            "needs a CUDA device",
        ),
    ],
)
def test_score_bad_input_exit_2(bert_dir, capsys, argv, match):
    rc = main(["-q", "score", "--model", bert_dir, *argv])
    err = capsys.readouterr().err
    assert rc == 2
    assert match in err and err.startswith("error: ") and err.count("\n") == 1


def test_score_unknown_model_exit_2(tmp_path, capsys):
    rc = main(
        ["score", "--model", str(tmp_path / "missing"), "--prompt", "[BLANK].", "--candidates", "a"]
    )
    err = capsys.readouterr().err
    assert rc == 2 and "no such folder" in err and "Traceback" not in err
