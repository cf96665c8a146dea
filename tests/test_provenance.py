"""Typed provenance (results.json's pydantic models): round trips, loud failures on a missing
or mistyped key, and what the reports show of it."""

from __future__ import annotations

import dataclasses
import json
import re
import shutil

import pytest

from biasamp import BiasampError
from biasamp._schema import BaseRatesInfo, ContextInfo, PlacementInfo, ScorerInfo
from biasamp.report import compare_dirs
from biasamp.results import ProbeResult, Provenance

A2T, T2A = "attribute_to_task", "task_to_attribute"


def _json_round_trip(p: Provenance) -> Provenance:
    return Provenance.model_validate(
        json.loads(json.dumps(p.model_dump(mode="json"), allow_nan=False)), context={"file": 1}
    )


def test_round_trip_of_the_golden_provenance(golden_result):
    p = golden_result.provenance
    assert _json_round_trip(p) == p
    d = p.model_dump()
    assert d["model"]["name"] == "golden-model" and "model_type" not in d["scorer"]
    assert "seed" not in d and p.seed == d["bootstrap"]["seed"]  # the seed once
    # nested by source, then direction; no "source|direction" key
    assert set(d["base_rates"]) == {"golden"} and set(d["base_rates"]["golden"]) == {A2T, T2A}
    assert not any("|" in k for k in d["base_rates"])


def test_round_trip_of_a_causal_placed_scorer(provenance):
    p = provenance(
        scorer=ScorerInfo(
            estimator="continuation",
            device="cpu",
            dtype="float32",
            device_map=PlacementInfo(strategy="auto", modules={"cpu": 3, "disk": 2}),
            context=ContextInfo(
                token="<|endoftext|>", rule="the EOS", chat_template=True, skipped=("<|im_start|>",)
            ),
            share_prefix=True,
            head_split=False,
        ),
        note="a note",
        compat="wang2021",
    )
    back = _json_round_trip(p)
    assert back == p and back.scorer.context.skipped == ("<|im_start|>",)
    assert back.scorer.device_map.modules == {"cpu": 3, "disk": 2}


def test_a_base_rate_entry_reads_its_source_by_attribute():
    b = BaseRatesInfo(
        source={
            "name": "n",
            "citation": "C",
            "kind": "counts",
            "n_kept": 97,
            "demonstration": True,
        },
        joint_sha256="f" * 64,
        marginal={"he": 0.25, "she": 0.75},
        association_given=False,
        row_totals={"nurse": 3.0},
    )
    assert (b.name, b.kind, b.about, b.citation, b.n_kept, b.demonstration) == (
        "n",
        "counts",
        "C",
        "C",
        97,
        True,
    )
    assert b.file_sha256 == "f" * 64  # no file sha256 in the source: the joint's
    plain = BaseRatesInfo(
        source={"sha256": "e" * 64}, joint_sha256="f" * 64, marginal={}, association_given=True
    )
    assert (plain.name, plain.kind, plain.about, plain.n_kept, plain.demonstration) == (
        "",
        "",
        "",
        None,
        False,
    )
    assert plain.file_sha256 == "e" * 64


def _edit(data: dict, dotted: str, value):
    """Set (or, for value ``...``, delete) ``provenance.<dotted>`` of a parsed results.json."""
    *parents, last = dotted.split(".")
    node = data["provenance"]
    for key in parents:
        node = node[key]
    if value is ...:
        del node[last]
    else:
        node[last] = value


@pytest.mark.parametrize(
    "dotted, value, message",
    [
        ("scorer.device", 3, "provenance.scorer.device must be a string; got 3"),
        ("scorer.device", ..., "provenance.scorer lacks the keys ['device']"),
        ("model", ..., "provenance lacks the keys ['model']"),
        (
            "model.weights_sha256",
            ["x"],
            "provenance.model.weights_sha256 must be an object; got ['x']",
        ),
        (
            "model.weights_sha256",
            {"a": 1},
            "provenance.model.weights_sha256.a must be a string; got 1",
        ),
        ("bootstrap.seed", True, "provenance.bootstrap.seed must be an integer; got True"),
        (
            "bootstrap.confidence",
            "95%",
            "provenance.bootstrap.confidence must be a number; got '95%'",
        ),
        ("attributes", ["he", 1], "provenance.attributes[1] must be a string; got 1"),
        (
            "base_rates.golden.sideways",
            {},
            "provenance.base_rates.golden keys must be one of 'attribute_to_task', "
            "'task_to_attribute'; got 'sideways'",
        ),
        (
            "base_rates.golden.task_to_attribute.marginal",
            {"he": "half"},
            "provenance.base_rates.golden.task_to_attribute.marginal.he must be a number; got 'half'",
        ),
        (
            "base_rates.golden.attribute_to_task",
            ...,
            None,
        ),  # a direction the run did not record is allowed (read as absent)
        (
            "scorer.context",
            {"token": "x"},
            "provenance.scorer.context lacks the keys ['rule', 'chat_template', 'skipped']",
        ),
        ("templates", "adjectives", "provenance.templates must be an object; got 'adjectives'"),
        # a key with a default is still required in a file: null, not absent
        ("scorer.context", ..., "provenance.scorer lacks the keys ['context']"),
        ("seed", 0, "provenance.seed is not a key of this biasamp's layout"),
        (
            "tasks.words",
            "x" * 80,
            "provenance.tasks.words must be a list; got '" + "x" * 56 + "...$",
        ),  # a long value cut to 60 characters
    ],
)
def test_a_missing_or_mistyped_key_fails_loudly(golden_result, tmp_path, dotted, value, message):
    d = golden_result.save(tmp_path / "r")
    data = json.loads((d / "results.json").read_text())
    _edit(data, dotted, value)
    (d / "results.json").write_text(json.dumps(data))
    if message is None:
        assert ProbeResult.load(d).provenance.base_rate("golden", A2T) is None
        return
    pattern = re.escape(f"{d / 'results.json'}: {message.removesuffix('$')}")
    with pytest.raises(BiasampError, match="^" + pattern + ("$" if "$" in message else "")):
        ProbeResult.load(d)


def test_probe_result_takes_only_a_provenance(golden_result):
    with pytest.raises(
        TypeError,
        match=r"ProbeResult.provenance must be a "
        r"biasamp.results.Provenance .*; got dict",
    ):
        dataclasses.replace(golden_result, provenance={"model": "m"})


def test_the_report_names_every_weight_file_up_to_four(golden_result, provenance, tmp_path):
    from biasamp.report import report_text

    md = report_text(golden_result)
    assert "- weights sha256: `model.safetensors` `abababababababab…`\n" in md
    shards = {f"model-{i:05d}.safetensors": f"{i}" * 64 for i in range(1, 7)}
    prov = golden_result.provenance
    many = dataclasses.replace(
        golden_result,
        provenance=prov.model_copy(
            update={"model": prov.model.model_copy(update={"weights_sha256": shards})}
        ),
    )
    line = next(x for x in report_text(many).splitlines() if "weights sha256" in x)
    assert line == (
        "- weights sha256: `model-00001.safetensors` `1111111111111111…`, "
        "`model-00002.safetensors` `2222222222222222…`, "
        "`model-00003.safetensors` `3333333333333333…`, "
        "`model-00004.safetensors` `4444444444444444…` and 2 more files (all in "
        "results.json)"
    )


def test_the_comparison_page_has_the_probe_reports_headers_and_no_reprs(golden_result, tmp_path):
    a = golden_result.save(tmp_path / "a")
    prov = golden_result.provenance
    other = dataclasses.replace(
        golden_result,
        provenance=prov.model_copy(
            update={
                "model": prov.model.model_copy(update={"name": "other-model"}),
                "bootstrap": prov.bootstrap.model_copy(update={"min_base_count": 5}),
            }
        ),
    )
    b = other.save(tmp_path / "b")
    compare_dirs([a, b], out=tmp_path / "cmp", formats="md,html", allow_mismatch=True)
    md = (tmp_path / "cmp" / "comparison.md").read_text()
    html = (tmp_path / "cmp" / "comparison.html").read_text()
    assert "| base rates | direction | golden-model | other-model |" in md
    assert "base_rates" not in md and "base_rates" not in html
    assert "None" not in md and "None" not in html
    assert "| compat | none | none |  |" in md
    # the minimum base count shown only where one was set
    assert (
        "| CI | 0.95, over templates, base resample | 0.95, over templates, base resample, "
        "min base count 5 | yes |"
    ) in md
    shutil.rmtree(tmp_path / "cmp")
