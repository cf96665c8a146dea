"""Groups as attributes (race, against BLS CPS Table 11 2022), end to end on a causal LM: a tiny
random GPT-2 in every run and the real SmolLM2-135M-Instruct (as in test_real_models.py), each
against the independent computation of ``naive_groups.py`` (sentences written out by hand, one
plain ``AutoModelForCausalLM`` call per filled sentence; ``benchmarks/bench_groups_naive.py``
runs the same check on Gemma 3 and Qwen2.5-Coder).
"""

from __future__ import annotations

import re

import numpy as np
import pandas as pd
import pytest

torch = pytest.importorskip("torch")
transformers = pytest.importorskip("transformers")

from biasamp.cli import main  # noqa: E402
from naive_groups import TASKS, bls_joint, differences, naive_tables, probe_race  # noqa: E402

pytestmark = pytest.mark.usefixtures("one_torch_thread")


def check_against_naive(path, tmp_path, context, atol, **options):
    r = probe_race(path, tmp_path / "r", **options)
    diff = differences(r, *naive_tables(path, context))
    assert max(diff.values()) <= atol, diff
    return r


def test_groups_equal_an_independent_computation_on_a_tiny_model(tiny_gpt2_dir, tmp_path):
    from transformers import AutoTokenizer

    from biasamp.scoring._causal import choose_context

    ctx = choose_context(AutoTokenizer.from_pretrained(tiny_gpt2_dir)).token
    check_against_naive(tiny_gpt2_dir, tmp_path, ctx, atol=1e-5)


def test_groups_equal_an_independent_computation_on_smollm2(smollm2_dir, tmp_path):
    # float32 on both sides: within float32 rounding (see test_real_models.py: 1.9e-5 in the
    # probabilities of one prompt, measured); no report: the tiny model's run renders it, and
    # its plots took a third of this test's time
    check_against_naive(smollm2_dir, tmp_path, "<|endoftext|>", atol=1e-4, formats=())


# ------------------------------------------------------------------ bad input, before the model
BAD = [
    (
        ["--attributes", "white,martian"],
        r"attributes must be a subset of .*got 'martian'.*or groups of one attribute set",
    ),
    (
        ["--attributes", "white,black", "--templates", "adjectives"],
        r"the groups \['white', 'black'\] have no realisation in template set 'adjectives'",
    ),
    (["--attributes", "he,black"], r"attributes must be all pronouns or all groups"),
    (
        ["--attributes", "white,black", "--base-rates", "labor-2022"],
        r"attributes \['white', 'black'\] not in base-rate source 'labor-2022'",
    ),
    (
        ["--attributes", "white,black,hispanic", "--base-rates", "labor-2022-race"],
        r"attributes \['hispanic'\] not in base-rate source 'labor-2022-race' .*an ethnicity "
        r"in CPS Table 11 \(of any race\), not a race",
    ),
    (
        ["--attributes", "black-woman,white-man", "--base-rates", "labor-2022-race"],
        r"gender x race groups are not in CPS Table 11: give their table as 'file:PATH.csv', "
        r"or name .*'labor-2022-gender-race-independent'",
    ),
]


@pytest.mark.parametrize("extra, pattern", BAD, ids=[" ".join(c[0])[:40] for c in BAD])
def test_bad_group_input_is_one_line_and_exit_2_before_the_model(
    tmp_path, capsys, monkeypatch, extra, pattern
):
    import biasamp.pipeline.run

    def no_load(*args, **kwargs):
        raise AssertionError("the model was loaded")

    monkeypatch.setattr(biasamp.pipeline.run, "_load_scorer", no_load)
    monkeypatch.setattr("biasamp.scoring.preflight", no_load)
    args = {"--templates": "groups", "--base-rates": "labor-2022-race"}
    args.update(dict(zip(extra[::2], extra[1::2])))
    argv = ["probe", "--model", "no/such-model", "--out", str(tmp_path / "o"), "--tasks"]
    argv += [",".join(TASKS), *[x for kv in args.items() for x in kv]]
    assert main(argv) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and re.search(pattern, err[0]), err
    assert not (tmp_path / "o").exists()


USER_SET = """
[set]
name = "two-races"
description = "white and Black, one term each"
source = "a test"
year = 2026
license = "MIT"
kind = "race"
noun = "person"

[groups.white]
terms = ["white"]

[groups.black]
terms = KIND
"""
BAD_FILES = [
    ("missing", None, r"^attributes: attribute set file not found: '.*set\.toml'$"),
    ("malformed", "[set\n", r"^attributes: malformed attribute set file '.*set\.toml': "),
    (
        "no realisation",
        USER_SET.replace("KIND", "[]"),
        r"^attributes: attribute set '.*set\.toml' \[groups.black\]: group 'black' has no "
        r"realisation",
    ),
    (
        "bad kind",
        USER_SET.replace("KIND", '["Black"]').replace('"race"', '"caste"'),
        r"^attributes: attribute set '.*set\.toml': kind must be one of",
    ),
]


def _no_model(monkeypatch):
    import biasamp.pipeline.run

    def no_load(*args, **kwargs):
        raise AssertionError("the model was loaded")

    monkeypatch.setattr(biasamp.pipeline.run, "_load_scorer", no_load)
    monkeypatch.setattr("biasamp.scoring.preflight", no_load)


@pytest.mark.parametrize("text, pattern", [b[1:] for b in BAD_FILES], ids=[b[0] for b in BAD_FILES])
def test_a_bad_attribute_set_file_is_one_line_and_exit_2_before_the_model(
    tmp_path, capsys, monkeypatch, text, pattern
):
    _no_model(monkeypatch)
    f = tmp_path / "set.toml"
    if text is not None:
        f.write_text(text)
    argv = ["probe", "--model", "no/such-model", "--out", str(tmp_path / "o"), "--tasks"]
    argv += [",".join(TASKS), "--templates", "groups", "--attributes", str(f)]
    assert main([*argv, "--base-rates", "labor-2022-race"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and re.search(pattern, err[0].removeprefix("error: ")), err
    assert not (tmp_path / "o").exists()


def test_a_users_attribute_set_file_is_probed(tmp_path):
    from biasamp.pipeline.config import ProbeConfig
    from biasamp.pipeline.run import prepare

    f = tmp_path / "set.toml"
    f.write_text(USER_SET.replace("KIND", '["Black", "African American"]'))
    cfg = ProbeConfig(
        models=["m"],
        templates="groups",
        attributes=str(f),
        tasks=",".join(TASKS),
        base_rates=["labor-2022-race"],
        out=str(tmp_path / "o"),
    )
    assert cfg.attributes == [str(f)]  # checked, not rewritten
    prep = prepare(cfg)
    assert list(prep.design.attributes) == ["white", "black"]
    assert prep.realisations == {"white": 1, "black": 2}
    t2a = prep.prompts["task_to_attribute"]
    assert t2a.loc[0, "candidates"] == (
        "A white person",
        "A Black person",
        "An African American person",
    )
    sets = prep.template_provenance["set_provenance"]
    assert sets["realisations"] == {"white": ["white"], "black": ["Black", "African American"]}
    assert [s["name"] for s in sets["attribute_sets"]] == ["two-races"]


def test_independence_is_named_warned_and_reported(tmp_path):
    from biasamp import base_rates
    from biasamp._errors import IndependenceAssumptionWarning

    src = base_rates.get_source("labor-2022-gender-race-independent")
    with pytest.warns(IndependenceAssumptionWarning, match="ASSUMES gender and race"):
        t = src.table(["nurse", "cook"], ["black-woman", "white-man"])
    e, w, b = 3363, 0.879, 0.145  # nurse: employed, share of women, share Black
    assert t.joint.loc["nurse", "black-woman"] == pytest.approx(e * w * b)
    assert t.joint.loc["cook", "white-man"] == pytest.approx(2012 * (1 - 0.384) * 0.694)
    assert "ASSUMPTION" in t.provenance["about"]
    assert t.provenance["assumption"] == "gender and race are independent within each occupation"


def test_race_and_ethnicity_tables_hand_computed():
    from biasamp import base_rates

    race = base_rates.get_source("labor-2022-race").table(TASKS, ["white", "black", "asian"])
    np.testing.assert_allclose(race.joint.to_numpy(), bls_joint(), rtol=1e-12)
    # the remainder (other races, two or more) is stated, not silently dropped
    assert race.provenance["remainder_pct"]["nurse"] == pytest.approx(100 - 73.6 - 14.5 - 8.9)
    eth = base_rates.get_source("labor-2022-ethnicity").table(
        ["nurse", "cook"], ["hispanic", "not-hispanic"]
    )
    np.testing.assert_allclose(
        eth.joint.to_numpy(),
        [[3363 * 0.081, 3363 * 0.919], [2012 * 0.361, 2012 * 0.639]],
        rtol=1e-12,
    )
    with pytest.raises(Exception, match="race groups are another partition"):
        base_rates.get_source("labor-2022-ethnicity").table(["nurse"], ["hispanic", "white"])


def test_user_table_for_intersectional_groups(tmp_path):
    from biasamp import base_rates

    f = tmp_path / "gr.csv"
    f.write_text("task,black-woman,white-man\nnurse,10,20\ncook,5,50\n")
    t = base_rates.get_source(f"file:{f}").table(["nurse", "cook"], ["black-woman", "white-man"])
    assert t.joint.to_numpy().tolist() == [[10, 20], [5, 50]]
    assert isinstance(t.joint, pd.DataFrame)
