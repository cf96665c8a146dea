"""The early-check pass (issue 29): every mistake decidable from the options, config.json and
the tokenizer files is one line (exit 2) before torch is imported; the one torch question
(is the device there) is asked last, and only when its answer matters."""

from __future__ import annotations

import importlib.metadata
import json
import os
import re
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

import tiny_models as tm
from biasamp import BiasampError
from biasamp.scoring import LoadOptions, _hub, _preflight, detect_model_type, preflight

SRC = str(Path(__file__).resolve().parents[2] / "src")


def test_late_mistakes_are_refused_before_torch_is_imported(tiny_bert_dir, tiny_gpt2_dir, tmp_path):
    """One child process runs the command line on each mistake: each is one line, exit 2, and
    neither torch nor transformers is imported at the end (each case would import them if
    it came late)."""
    afile = tmp_path / "afile"
    afile.write_text("x")
    fifo = tmp_path / "fifo.toml"
    os.mkfifo(fifo)
    out = str(tmp_path / "out")
    bert, gpt2 = str(tiny_bert_dir), str(tiny_gpt2_dir)
    probe = ["probe", "--out", out, "--model"]
    score = ["score", "-p", "he is a [BLANK].", "-c", "nurse,doctor", "--model"]
    cases = [
        (probe + [bert, "--scoring", "continuation"], "is an estimator for causal language"),
        (probe + [gpt2, "--scoring", "pll"], "is an estimator for masked language"),
        (probe + [bert, "--model-type", "causal"], "model_type 'causal' does not fit"),
        (probe + [bert, "--context-token", "<s>"], "context_token is for causal language"),
        (probe + [gpt2, "--context-token", "<nosuch>"], "not a token of the vocabulary"),
        (probe + [gpt2, "--compat", "wang2021"], "masked-LM procedure"),
        (probe + [bert, "--score-cache", str(afile)], "--score-cache .* is a file"),
        (probe + [bert, "--score-cache", str(afile / "sub")], "lies under .*afile', a file"),
        (probe + [bert, "--score-cache", out + "/cache"], "--score-cache .* lies in --out"),
        (probe + [bert, "--hf-cache-dir", str(afile)], "--hf-cache-dir .* is a file"),
        (
            probe + [bert, "--device-map", "auto", "--offload-folder", str(afile)],
            "--offload-folder .* is a file",
        ),
        (probe + [bert, "--device", "tpu"], "--device must be 'auto', 'cpu', 'cuda'"),
        (probe + [bert, "--device", "cpu", "--dtype", "fp16"], "float16' needs a CUDA"),
        (probe + [bert, "--revision", "v1"], "revision 'v1' picks a version .* local folder"),
        (probe + [bert, "--hf-cache-dir", out + "h"], "every model given .* is a local folder"),
        (score + [gpt2, "--hf-cache-dir", out + "h"], "read where it is .*--hf-cache-dir"),
        (
            probe + [bert, "--model", gpt2, "--trust-remote-code"],
            "no model given .* has any .*auto_map",
        ),
        (["probe", "--config", str(fifo)], "is not a regular file"),
        (["probe", "--config", "/dev/zero"], "is not a regular file"),
        (score + [bert, "--scoring", "continuation"], "is an estimator for causal language"),
        (score + [gpt2, "--context-token", "<nosuch>"], "not a token of the vocabulary"),
        (score + [bert, "--context-token", "<s>"], "context_token is for causal language"),
        (score + [bert, "--score-cache", str(afile)], "--score-cache .* is a file"),
        (score + [bert, "--device", "cpu", "--dtype", "half"], "float16' needs a CUDA"),
        (["pairs", "--model", bert, "--max-pairs", "2", "--device", "tpu"], "--device must"),
    ]
    # where this machine's platform or torch build decides the device (the rest: see below)
    if sys.platform != "darwin":
        cases.append((probe + [bert, "--device", "mps"], "MPS is not available"))
    if _preflight._no_cuda_build():
        cases.append((score + [gpt2, "--device", "cuda:1"], "'cuda:1' .* CUDA is not available"))
    script = textwrap.dedent(
        """
        import contextlib, io, json, re, sys
        from biasamp.cli import main
        cases, bad = json.loads(sys.argv[1]), []
        for argv, pattern in cases:
            err = io.StringIO()
            with contextlib.redirect_stderr(err):
                rc = main(["-q", *argv])
            lines = err.getvalue().splitlines()
            ok = rc == 2 and len(lines) == 1 and re.search(pattern, lines[0])
            if not ok:
                bad.append((argv, rc, lines))
        heavy = [m for m in ("torch", "transformers") if m in sys.modules]
        print(json.dumps({"bad": bad, "heavy": heavy}))
        """
    )
    env = {**os.environ, "PYTHONPATH": SRC, "HF_HUB_OFFLINE": "1"}
    run = subprocess.run(
        [sys.executable, "-c", script, json.dumps(cases)],
        capture_output=True,
        text=True,
        env=env,
        timeout=300,
        check=False,
    )
    assert run.returncode == 0, run.stderr
    got = json.loads(run.stdout.strip().splitlines()[-1])
    assert got == {"bad": [], "heavy": []}
    assert not Path(out).exists()


def test_the_kind_read_by_name_is_the_kind_transformers_tables_give():
    """Every head class transformers knows whose name says its kind: the name alone (read
    from config.json without transformers) gives the answer of transformers' tables."""
    modeling_auto = pytest.importorskip("transformers.models.auto.modeling_auto")
    masked = _hub._class_names(modeling_auto.MODEL_FOR_MASKED_LM_MAPPING_NAMES)
    causal = _hub._class_names(modeling_auto.MODEL_FOR_CAUSAL_LM_MAPPING_NAMES)
    checked = 0
    for name in sorted(masked | causal):
        told = _hub._kind_by_name({"architectures": [name]})
        if told is None:
            continue
        checked += 1
        # detect_model_type's rule over the tables, for a first architecture of either kind
        by_tables = (
            "masked"
            if name.endswith("ForMaskedLM") or (name in masked and name not in causal)
            else "causal"
        )
        assert told[0] == by_tables, name
    assert checked > 100  # the tables list hundreds of such classes


def test_detection_by_name_needs_no_transformers(tiny_bert_dir, tiny_gpt2_dir, monkeypatch):
    """A config.json whose architecture names its head is read as JSON: transformers'
    AutoConfig is not asked (made to fail here)."""
    transformers = pytest.importorskip("transformers")
    monkeypatch.setattr(transformers, "AutoConfig", None)
    assert detect_model_type(tiny_bert_dir) == (
        "masked",
        "config.json architectures ['BertForMaskedLM']",
    )
    assert detect_model_type(tiny_gpt2_dir)[0] == "causal"


def test_context_token_read_from_tokenizer_json(tiny_gpt2_dir, tmp_path):
    resolved = _hub.resolve_model(tiny_gpt2_dir)
    assert _preflight._vocabulary_knows(resolved, "<|endoftext|>") == (True, ["<|endoftext|>"])
    assert _preflight._vocabulary_knows(resolved, "<nosuch>") == (False, ["<|endoftext|>"])
    # a token another tokenizer file declares may be added by transformers: left to it
    copy = tmp_path / "gpt2"
    copy.mkdir()
    for f in Path(tiny_gpt2_dir).iterdir():
        (copy / f.name).write_bytes(f.read_bytes())
    cfg = json.loads((copy / "tokenizer_config.json").read_text())
    (copy / "tokenizer_config.json").write_text(json.dumps({**cfg, "bos_token": "<nosuch>"}))
    assert _preflight._vocabulary_knows(_hub.resolve_model(copy), "<nosuch>")[0] is None
    (copy / "tokenizer.json").unlink()  # no tokenizer.json: cannot tell without transformers
    assert _preflight._vocabulary_knows(_hub.resolve_model(copy), "<nosuch>") == (None, [])


def _machine(monkeypatch, platform, torch_version):
    """Pretend to run on ``platform`` with torch ``torch_version`` installed; returns the list
    of devices torch is asked about (a stand-in for ``resolve_device`` that finds none)."""
    real_version = importlib.metadata.version
    monkeypatch.setattr(sys, "platform", platform)
    monkeypatch.setattr(
        importlib.metadata,
        "version",
        lambda name: torch_version if name == "torch" else real_version(name),
    )
    asked = []

    def resolve_device(device):
        asked.append(device)
        raise BiasampError(f"device {device!r} requested but torch found no such device")

    monkeypatch.setattr("biasamp.scoring._load.resolve_device", resolve_device)
    return asked


def test_the_device_is_asked_last_and_only_when_it_matters(tiny_bert_dir, monkeypatch):
    """A torch build that may have CUDA (``+cu128``) on Linux: torch is asked about a CUDA
    device, last; MPS is refused without it (macOS only)."""
    asked = _machine(monkeypatch, "linux", "2.13.0+cu128")
    for device, dtype in (("cpu", "float32"), ("auto", "float32"), ("auto", "bfloat16")):
        preflight([tiny_bert_dir], LoadOptions(device=device, dtype=dtype))
    assert asked == []
    for device, dtype in (("cuda", "float32"), ("cuda:1", "float32"), ("auto", "float16")):
        with pytest.raises(BiasampError, match="torch found no such device"):
            preflight([tiny_bert_dir], LoadOptions(device=device, dtype=dtype))
    assert asked == ["cuda", "cuda:1", "auto"]
    with pytest.raises(BiasampError, match=r"^device 'mps' requested but MPS is not available$"):
        preflight([tiny_bert_dir], LoadOptions(device="mps"))
    # a mistake of the files comes first: the device is not asked
    with pytest.raises(BiasampError, match="is an estimator for causal"):
        preflight([tiny_bert_dir], LoadOptions(device="cuda"), scoring="sentence")
    assert asked == ["cuda", "cuda:1", "auto"]


def test_a_device_the_build_or_platform_lacks_is_refused_without_torch(tiny_bert_dir, monkeypatch):
    """A CPU-only torch build (``+cpu``), or macOS (no CUDA build): CUDA is refused, and
    ``auto`` with float16 (auto is the CPU there), with the loading code's messages; torch is
    not asked. On macOS torch is asked about MPS."""
    no_cuda = "requested but CUDA is not available; use device='cpu' or device='auto'"
    fp16 = "dtype 'float16' needs a CUDA device; got device 'cpu'"
    for platform, version in (
        ("linux", "2.13.0+cpu"),
        ("win32", "2.13.0+cpu"),
        ("darwin", "2.13.0"),
    ):
        asked = _machine(monkeypatch, platform, version)
        for device, dtype, match in (
            ("cuda", "float32", f"^device 'cuda' {no_cuda}$"),
            ("cuda:1", "bfloat16", f"^device 'cuda:1' {no_cuda}$"),
            ("auto", "float16", fp16),
        ):
            with pytest.raises(BiasampError, match=match):
                preflight([tiny_bert_dir], LoadOptions(device=device, dtype=dtype))
        assert asked == []
        preflight([tiny_bert_dir], LoadOptions(device="auto"))  # the CPU, nothing asked
        assert asked == []
    with pytest.raises(BiasampError, match="torch found no such device"):
        preflight([tiny_bert_dir], LoadOptions(device="mps"))
    assert asked == ["mps"]


def test_hf_cache_dir_is_refused_only_when_every_model_is_a_local_folder(
    tiny_bert_dir, tiny_gpt2_dir, tmp_path, monkeypatch
):
    """The download cache does nothing for a local folder: refused when no model comes from
    the hub; beside a hub model (read from that cache) it is used, and nothing is said."""
    from huggingface_hub import constants

    cache = tmp_path / "hf"
    tm.fill_hub_cache(tiny_gpt2_dir, cache, "org/tiny-gpt2")
    monkeypatch.setattr(constants, "HF_HUB_OFFLINE", True)
    options = LoadOptions(device="cpu", hf_cache_dir=cache)
    local = (
        rf"every model given \({re.escape(str(tiny_bert_dir))}, {re.escape(str(tiny_gpt2_dir))}\)"
    )
    with pytest.raises(
        BiasampError, match=rf"^hf_cache_dir '.*hf' is where .*; {local} is a local"
    ):
        preflight([tiny_bert_dir, tiny_gpt2_dir], options)
    got = preflight([tiny_bert_dir, "org/tiny-gpt2"], options)
    assert [r.source.local for r, _ in got.values()] == [True, False]


def test_trust_remote_code_is_refused_only_when_no_model_names_code(tiny_gpt2_dir, tmp_path):
    """transformers runs a model's own code only where config.json or tokenizer_config.json
    names it (``auto_map``): with neither, the switch would do nothing."""
    import shutil

    copy = tmp_path / "gpt2"
    shutil.copytree(tiny_gpt2_dir, copy)
    options = LoadOptions(device="cpu", trust_remote_code=True)
    with pytest.raises(BiasampError, match=r"^trust_remote_code .*no auto_map in its config"):
        preflight([copy], options)
    for name in ("tokenizer_config.json", "config.json"):
        data = json.loads((tiny_gpt2_dir / name).read_text())
        (copy / name).write_text(json.dumps({**data, "auto_map": {"AutoConfig": "x.Y"}}))
        assert preflight([copy], options)[copy][0].model_type == "causal"
        (copy / name).write_text(json.dumps(data))
    preflight([copy], LoadOptions(device="cpu"))  # off: nothing to check


def test_messages_name_an_option_as_the_user_gave_it(
    tiny_bert_dir, tiny_gpt2_dir, tmp_path, monkeypatch, capsys
):
    """The command line's messages name flags (``--device cpu``), Python's keywords
    (``device='cpu'``): one message text, its options named through ``_errors.option``."""
    from biasamp._errors import option
    from biasamp.cli import main

    _machine(monkeypatch, "linux", "2.13.0+cpu")  # a CPU-only torch build: no CUDA
    cuda = "requested but CUDA is not available; use"
    code = "lets a model run its own code; no model given"
    cases = [  # (options, the Python message, the flags, the command line's message)
        (
            {"device": "cuda"},
            rf"^device 'cuda' {cuda} device='cpu' or device='auto'$",
            ["--device", "cuda"],
            rf"^error: --device 'cuda' {cuda} --device cpu or --device auto$",
        ),
        (
            {"device": "auto", "dtype": "float16"},
            r"^dtype 'float16' needs a CUDA device; got device 'cpu' \(use dtype='float32', or "
            r"dtype='bfloat16' on CPU\)$",
            ["--device", "auto", "--dtype", "float16"],
            r"^error: --dtype 'float16' needs a CUDA device; got --device 'cpu' \(use --dtype "
            r"float32, or --dtype bfloat16 on CPU\)$",
        ),
        (
            {"device": "cpu", "hf_cache_dir": tmp_path / "hf"},
            r"^hf_cache_dir '.*hf' is where .*\(leave out hf_cache_dir\)$",
            ["--hf-cache-dir", str(tmp_path / "hf")],
            r"^error: --hf-cache-dir '.*hf' is where .*\(leave out --hf-cache-dir\)$",
        ),
        (
            {"device": "cpu", "trust_remote_code": True},
            rf"^trust_remote_code {code} .*\(leave out trust_remote_code=True\)$",
            ["--trust-remote-code"],
            rf"^error: --trust-remote-code {code} .*\(leave out --trust-remote-code\)$",
        ),
    ]
    score = ["score", "-p", "he is a [BLANK].", "-c", "he,she", "-m", str(tiny_gpt2_dir)]
    for options, python, flags, cli in cases:
        with pytest.raises(BiasampError, match=python):
            preflight([tiny_gpt2_dir], LoadOptions(**options))
        assert main([*score, *flags]) == 2
        err = capsys.readouterr().err
        assert err.count("\n") == 1 and re.search(cli, err.strip()), err
        with pytest.raises(BiasampError, match=python):  # the command line's names are gone
            preflight([tiny_gpt2_dir], LoadOptions(**options))
    assert option("device", "cpu") == "device='cpu'" and option("seed") == "seed"


def test_preflight_returns_each_model_resolved_with_its_estimator(tiny_bert_dir, tiny_gpt2_dir):
    got = preflight([tiny_bert_dir, tiny_gpt2_dir], LoadOptions(device="cpu"))
    assert [(r.model_type, e) for r, e in got.values()] == [
        ("masked", "word"),
        ("causal", "continuation"),
    ]
    got = preflight([tiny_bert_dir], LoadOptions(device="cpu"), check_scoring=False)
    assert got[tiny_bert_dir][1] is None
