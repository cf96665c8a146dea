"""Typed provenance (results.json schema 3): round trips, loud failures on a missing or
mistyped key, a schema-2 result read and reported, and what the reports show of it."""

from __future__ import annotations

import dataclasses
import json
import re
import shutil
from pathlib import Path

import pytest

from biasamp import BiasampError
from biasamp.report import build_report, compare_dirs
from biasamp.results import (SCHEMA_VERSION, BaseRatesInfo, ContextInfo, PlacementInfo,
                             ProbeResult, Provenance, ScorerInfo)

#: a result folder written by biasamp with results.json schema 2 (tests/data/README.md)
SCHEMA2 = Path(__file__).parent / "data" / "schema2-result"
A2T, T2A = "attribute_to_task", "task_to_attribute"


def _json_round_trip(p: Provenance) -> Provenance:
    return Provenance.from_dict(json.loads(json.dumps(p.to_dict(), allow_nan=False)))


def test_round_trip_of_the_golden_provenance(golden_result):
    p = golden_result.provenance
    assert _json_round_trip(p) == p
    d = p.to_dict()
    assert d["model"]["name"] == "golden-model" and "model_type" not in d["scorer"]
    # nested by source, then direction; no "source|direction" key
    assert set(d["base_rates"]) == {"golden"} and set(d["base_rates"]["golden"]) == {A2T, T2A}
    assert not any("|" in k for k in d["base_rates"])


def test_round_trip_of_a_causal_placed_scorer(provenance):
    p = provenance(scorer=ScorerInfo(
        estimator="continuation", device="cpu", dtype="float32",
        device_map=PlacementInfo(strategy="auto", modules={"cpu": 3, "disk": 2}),
        context=ContextInfo(token="<|endoftext|>", rule="the EOS", chat_template=True,
                            skipped=("<|im_start|>",)),
        share_prefix=True, head_split=False), note="a note", compat="wang2021")
    back = _json_round_trip(p)
    assert back == p and back.scorer.context.skipped == ("<|im_start|>",)
    assert back.scorer.device_map.modules == {"cpu": 3, "disk": 2}


def test_a_base_rate_entry_reads_its_source_by_attribute():
    b = BaseRatesInfo(source={"name": "n", "citation": "C", "kind": "counts", "n_kept": 97,
                              "demonstration": True}, joint_sha256="f" * 64,
                      marginal={"he": 0.25, "she": 0.75}, association_given=False,
                      row_totals={"nurse": 3.0})
    assert (b.name, b.kind, b.about, b.citation, b.n_kept, b.demonstration) == (
        "n", "counts", "C", "C", 97, True)
    assert b.file_sha256 == "f" * 64  # no file sha256 in the source: the joint's
    plain = BaseRatesInfo(source={"sha256": "e" * 64}, joint_sha256="f" * 64,
                          marginal={}, association_given=True)
    assert (plain.name, plain.kind, plain.about, plain.n_kept, plain.demonstration) == (
        "", "", "", None, False)
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


@pytest.mark.parametrize("dotted, value, message", [
    ("scorer.device", 3, "provenance.scorer.device must be a string; got 3"),
    ("scorer.device", ..., "provenance.scorer lacks the key 'device'"),
    ("model", ..., "provenance lacks the key 'model'"),
    ("model.weights_sha256", ["x"],
     "provenance.model.weights_sha256 must be an object of strings; got ['x']"),
    ("seed", True, "provenance.seed must be an integer; got True"),
    ("bootstrap.confidence", "95%", "provenance.bootstrap.confidence must be a number; got '95%'"),
    ("attributes", ["he", 1], "provenance.attributes must be a list of strings; got ['he', 1]"),
    ("base_rates.golden.sideways", {},
     "provenance.base_rates.golden keys must be directions ['attribute_to_task', "
     "'task_to_attribute']; got 'sideways'"),
    ("base_rates.golden.task_to_attribute.marginal", {"he": "half"},
     "provenance.base_rates.golden.task_to_attribute.marginal must be an object of numbers"),
    ("base_rates.golden.attribute_to_task", ...,
     None),  # a direction the run did not record is allowed (read as absent)
    ("scorer.context", {"token": "x"}, "provenance.scorer.context lacks the key 'rule'"),
    ("templates", "adjectives", "provenance.templates must be an object; got 'adjectives'"),
    ("scorer.context", ..., "provenance.scorer lacks the key 'context'"),  # null, not absent
    ("tasks.words", list(range(40)), "provenance.tasks.words must be a list of strings; got "
                                     "[0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, "
                                     "16...$"),  # a long value cut to 60 characters
])
def test_a_missing_or_mistyped_key_fails_loudly(golden_result, tmp_path, dotted, value,
                                                message):
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
    with pytest.raises(TypeError, match=r"ProbeResult.provenance must be a "
                                        r"biasamp.results.Provenance .*; got dict"):
        dataclasses.replace(golden_result, provenance={"model": "m"})


def test_a_schema_2_result_is_read_into_the_schema_3_layout():
    raw = json.loads((SCHEMA2 / "results.json").read_text())
    assert raw["schema_version"] == 2 and SCHEMA_VERSION == 3
    old = raw["provenance"]
    res = ProbeResult.load(SCHEMA2)
    p = res.provenance
    # the model fields, kept twice in schema 2 (top level and scorer), once under model
    assert res.model == p.model.name == old["model"] == old["scorer"]["model"]
    assert p.model.model_type == old["model_type"] == old["scorer"]["model_type"] == "masked"
    assert p.model.weights_sha256 == old["scorer"]["weights_sha256"]
    assert p.model.model_class == old["scorer"]["model_class"] == "BertForMaskedLM"
    assert (p.model.revision, p.model.commit, p.model.missing_weights) == (None, None, ())
    assert (p.scorer.estimator, p.scorer.device, p.scorer.dtype) == (
        old["estimator"], old["device"], old["dtype"])
    assert p.scorer.context is None and p.scorer.device_map is None
    # "source|direction" keys nested; the run's derived keys apart from the source's own
    assert list(p.base_rates) == ["uniform", "labor-2016", "wikitext103-valtest"]
    assert len(old["base_rates"]) == 6
    for source, by_direction in p.base_rates.items():
        assert list(by_direction) == [A2T, T2A]
        for direction, b in by_direction.items():
            flat = old["base_rates"][f"{source}|{direction}"]
            assert b.joint_sha256 == flat["joint_sha256"] and b.marginal == flat["marginal"]
            assert b.association_given is flat["association_given"]
            assert b.row_totals == flat.get("row_totals")
            assert b.source == {k: v for k, v in flat.items() if k not in (
                "joint_sha256", "marginal", "association_given", "row_totals")}
    assert p.base_rate("wikitext103-valtest", T2A).demonstration
    assert p.base_rate("uniform", A2T).row_totals is None
    assert p.bootstrap.n_resamples == 200 and p.seed == 3 and p.compat is None
    assert p.templates.template_ids == tuple(old["templates"]["template_ids"])
    assert p.tasks.words == tuple(old["tasks"]["words"]) and p.attributes == ("he", "she")
    assert p.design == old["design"] and p.versions == old["versions"]
    # saved again, it is schema 3 and reads back the same
    assert res.to_json_dict()["schema_version"] == 3


def test_a_schema_2_result_saved_again_reads_back_equal(tmp_path):
    res = ProbeResult.load(SCHEMA2)
    back = ProbeResult.load(res.save(tmp_path / "v3"))
    assert back.provenance == res.provenance
    assert json.loads((tmp_path / "v3" / "results.json").read_text())["schema_version"] == 3


def test_a_schema_2_result_is_reported_with_its_weights_sha256(tmp_path):
    paths = build_report(SCHEMA2, formats="md,model-card", plots=False, out=tmp_path / "rep")
    md = paths["md"].read_text()
    sha = json.loads((SCHEMA2 / "results.json").read_text())["provenance"]["scorer"][
        "weights_sha256"]["model.safetensors"]
    assert f"- weights sha256: `model.safetensors` `{sha[:16]}…`" in md
    assert "model: `/tmp/s3/tiny-bert` (revision: `default`)" in md
    assert "model type: masked LM; estimator (scoring): `word`; compat: none; seed: 3" in md
    assert "base rates `labor-2016` (A→T, T→A): U.S. Bureau" in md
    assert "base rates `wikitext103-valtest` (T→A): Merity et al." in md  # its own joint
    assert "**`wikitext103-valtest` is a demonstration-size source** (97 counted" in md
    assert "None" not in md
    assert "weights sha256" in paths["model-card"].read_text()


def test_the_report_names_every_weight_file_up_to_four(golden_result, provenance, tmp_path):
    from biasamp.report import render_markdown

    md = render_markdown(golden_result)
    assert "- weights sha256: `model.safetensors` `abababababababab…`\n" in md
    shards = {f"model-{i:05d}.safetensors": f"{i}" * 64 for i in range(1, 7)}
    many = dataclasses.replace(golden_result, provenance=dataclasses.replace(
        golden_result.provenance, model=dataclasses.replace(golden_result.provenance.model,
                                                            weights_sha256=shards)))
    line = next(x for x in render_markdown(many).splitlines() if "weights sha256" in x)
    assert line == ("- weights sha256: `model-00001.safetensors` `1111111111111111…`, "
                    "`model-00002.safetensors` `2222222222222222…`, "
                    "`model-00003.safetensors` `3333333333333333…`, "
                    "`model-00004.safetensors` `4444444444444444…` and 2 more files (all in "
                    "results.json)")


def test_the_comparison_page_has_the_probe_reports_headers_and_no_reprs(golden_result,
                                                                         tmp_path):
    a = golden_result.save(tmp_path / "a")
    prov = golden_result.provenance
    other = dataclasses.replace(
        golden_result, provenance=dataclasses.replace(
            prov, model=dataclasses.replace(prov.model, name="other-model"),
            bootstrap=dataclasses.replace(prov.bootstrap, min_base_count=5)))
    b = other.save(tmp_path / "b")
    compare_dirs([a, b], out=tmp_path / "cmp", formats="md,html", allow_mismatch=True)
    md = (tmp_path / "cmp" / "comparison.md").read_text()
    html = (tmp_path / "cmp" / "comparison.html").read_text()
    assert "| base rates | direction | golden-model | other-model |" in md
    assert "base_rates" not in md and "base_rates" not in html
    assert "None" not in md and "None" not in html
    assert "| compat | none | none |  |" in md
    # the minimum base count shown only where one was set
    assert ("| CI | 0.95, over templates, base resample | 0.95, over templates, base resample, "
            "min base count 5 | yes |") in md
    shutil.rmtree(tmp_path / "cmp")
