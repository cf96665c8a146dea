"""Groups as attributes (race, against BLS CPS Table 11 2022), end to end on a causal LM: a tiny
random GPT-2 in every run and the real SmolLM2-135M-Instruct (as in test_real_models.py).

The reference is independent of biasamp's templates, scorer and metric: the sentences are
written out here by hand (article agreement included), each candidate is one plain
``AutoModelForCausalLM`` call per filled sentence after the document-start token (no batching,
padding or cache, float64 log-softmax), a group's P(group | task) is the sum of its
realisations' probabilities renormalised over all candidates of the prompt, P(task | group) the
mean over its realisations' prompts, and BiasAmp-> is the paper's formula on the BLS numbers
typed in below from ``base_rates/bls_cpsaat11_2022_clean.csv``.
"""

from __future__ import annotations

import re
import warnings

import numpy as np
import pandas as pd
import pytest

torch = pytest.importorskip("torch")
transformers = pytest.importorskip("transformers")

from biasamp import ChatModelWarning, probe  # noqa: E402
from biasamp.cli import main  # noqa: E402

pytestmark = pytest.mark.usefixtures("one_torch_thread")

TASKS = ["nurse", "developer", "janitor", "cook"]
# BLS CPS Table 11, 2022: employed (thousands), % White, % Black or African American, % Asian
BLS = {
    "nurse": (3363, 73.6, 14.5, 8.9),
    "developer": (2085, 55.0, 5.7, 36.4),
    "janitor": (2183, 75.4, 17.4, 3.2),
    "cook": (2012, 69.4, 17.7, 5.9),
}
GROUPS = {  # group -> (article, term) of each realisation, written out by hand
    "white": [("a", "white"), ("a", "White")],
    "black": [("a", "Black"), ("a", "black"), ("an", "African American")],
    "asian": [("an", "Asian"), ("an", "Asian American")],
}
ADJECTIVES = ["new", "known"]  # the first two templates of the 'groups' set (max_templates=2)


def naive_logp(model, tok, ctx_id, prompt, cands):
    """``continuation`` log P of each candidate: one full-model call per filled sentence."""
    pre, post = prompt.split("[BLANK]")
    n_prefix = 1 + len(tok(pre.rstrip(), add_special_tokens=False)["input_ids"])
    out = []
    for c in cands:
        ids = [ctx_id] + tok(pre + c + post, add_special_tokens=False)["input_ids"]
        with torch.no_grad():
            logits = model(input_ids=torch.tensor([ids])).logits[0]
        logp = torch.log_softmax(logits.double(), dim=-1)
        out.append(sum(logp[t - 1, ids[t]].item() for t in range(n_prefix, len(ids))))
    return np.array(out)


def softmax(x):
    e = np.exp(x - x.max())
    return e / e.sum()


def naive_tables(path, context):
    """(P(group | task), P(task | group)) as (tasks x groups) arrays, mean over templates."""
    tok = transformers.AutoTokenizer.from_pretrained(path)
    model = transformers.AutoModelForCausalLM.from_pretrained(path, dtype=torch.float32).eval()
    ctx = tok.convert_tokens_to_ids(context)
    groups = list(GROUPS)
    ta = np.zeros((len(ADJECTIVES), len(TASKS), len(groups)))
    at = np.zeros_like(ta)
    for k, adj in enumerate(ADJECTIVES):
        cands = [f"{art.capitalize()} {term} person" for g in groups for art, term in GROUPS[g]]
        owner = [g for g in groups for _ in GROUPS[g]]
        for i, task in enumerate(TASKS):
            p = softmax(naive_logp(model, tok, ctx, f"[BLANK] is a {adj} {task}.", cands))
            for j, g in enumerate(groups):  # sum over realisations, renormalised over groups
                ta[k, i, j] = sum(pc for pc, o in zip(p, owner) if o == g)
        for j, g in enumerate(groups):
            per = [
                softmax(
                    naive_logp(
                        model, tok, ctx, f"{a.capitalize()} {t} person is a {adj} [BLANK].", TASKS
                    )
                )
                for a, t in GROUPS[g]
            ]
            at[k, :, j] = np.mean(per, axis=0)  # mean over the group's realisations
    return ta.mean(axis=0), at.mean(axis=0)


def naive_biasamp(joint, model_ta, model_at, signs_joint=None):
    """The paper's BiasAmp-> (mean over all (task, group) cells of sign * delta)."""
    pj = signs_joint / signs_joint.sum()
    y = np.sign(pj - np.outer(pj.sum(axis=1), pj.sum(axis=0)))
    base_ta = joint / joint.sum(axis=1, keepdims=True)
    base_at = joint / joint.sum(axis=0, keepdims=True)
    return float(np.mean(y * (model_at - base_at))), float(np.mean(y * (model_ta - base_ta)))


def bls_joint():
    return np.array([[e * w / 100, e * b / 100, e * a / 100] for e, w, b, a in BLS.values()])


def check_against_naive(path, tmp_path, context, atol):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ChatModelWarning)
        r = probe(
            models=[str(path)],
            templates="groups",
            attributes="white,black,asian",
            tasks=",".join(TASKS),
            base_rates=["uniform:labor-2022-race", "labor-2022-race"],
            max_templates=2,
            n_resamples=200,
            formats=["md"],
            out=str(tmp_path / "r"),
        )
    ta, at = naive_tables(path, context)
    groups = list(GROUPS)
    bp = r.by_pair
    for direction, ref in (("task_to_attribute", ta), ("attribute_to_task", at)):
        got = (
            bp[(bp["base_rates"] == "labor-2022-race") & (bp["direction"] == direction)]
            .pivot(index="task", columns="attribute", values="p_model")
            .loc[TASKS, groups]
        )
        np.testing.assert_allclose(got.to_numpy(), ref, rtol=0, atol=atol)
    joint = bls_joint()
    uniform = np.ones_like(joint)
    s = r.summary.set_index(["base_rates", "direction"])
    for source, base in (("labor-2022-race", joint), ("uniform:labor-2022-race", uniform)):
        want_at, want_ta = naive_biasamp(base, ta, at, signs_joint=joint)
        for direction, want in (("attribute_to_task", want_at), ("task_to_attribute", want_ta)):
            row = s.loc[(source, direction)]
            assert row["mean"] == pytest.approx(want, abs=atol)
            assert row["ci_low"] <= row["mean"] <= row["ci_high"]  # a CI for each direction
            assert np.isfinite([row["ci_low"], row["ci_high"]]).all()
    # every realisation is scored and listed by the tokenisation audit
    audited = set(r.audit["candidate"])
    for g in groups:
        for art, term in GROUPS[g]:
            assert f"{art.capitalize()} {term} person" in audited
    real = r.provenance.templates.set_provenance["realisations"]
    assert real == {g: [t for _, t in GROUPS[g]] for g in groups}
    return r


def test_groups_equal_an_independent_computation_on_a_tiny_model(tiny_gpt2_dir, tmp_path):
    from transformers import AutoTokenizer

    from biasamp.scoring._causal import choose_context

    ctx = choose_context(AutoTokenizer.from_pretrained(tiny_gpt2_dir)).token
    check_against_naive(tiny_gpt2_dir, tmp_path, ctx, atol=1e-5)


def test_groups_equal_an_independent_computation_on_smollm2(smollm2_dir, tmp_path):
    # float32 on both sides: within float32 rounding (see test_real_models.py: 1.9e-5 in the
    # probabilities of one prompt, measured)
    check_against_naive(smollm2_dir, tmp_path, "<|endoftext|>", atol=1e-4)


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
    monkeypatch.setattr(biasamp.pipeline.run, "_resolve_models", no_load)
    args = {"--templates": "groups", "--base-rates": "labor-2022-race"}
    args.update(dict(zip(extra[::2], extra[1::2])))
    argv = ["probe", "--model", "no/such-model", "--out", str(tmp_path / "o"), "--tasks"]
    argv += [",".join(TASKS), *[x for kv in args.items() for x in kv]]
    assert main(argv) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and re.search(pattern, err[0]), err
    assert not (tmp_path / "o").exists()


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
