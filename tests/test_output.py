"""The one output layer (issue 19): nothing biasamp did not write is replaced or deleted, by
any writing command; links are followed on purpose; special files are refused; stop signals
and failed writes leave the old or the new complete result, and say so in one line."""

from __future__ import annotations

import errno
import json
import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest

from biasamp import BiasampError
from biasamp._output import MARK, OutputFolder
from biasamp._output_lock import STALE_AFTER_S
from biasamp.cli import main
from biasamp.results import ProbeResult

pytestmark = pytest.mark.usefixtures("one_torch_thread")

QUICK = ["--max-templates", "2", "--n-resamples", "50", "--format", "md,json",
         "--base-rates", "uniform"]


def _tree(folder: Path) -> dict[str, bytes | str]:
    """Every entry under ``folder``: file bytes, or ``-> target`` for a link."""
    out = {}
    for p in sorted(folder.rglob("*")):
        rel = p.relative_to(folder).as_posix()
        if p.is_symlink():
            out[rel] = "-> " + os.readlink(p)
        elif p.is_file():
            out[rel] = p.read_bytes()
    return out


def _one_error(capsys) -> str:
    err = capsys.readouterr().err
    lines = [x for x in err.splitlines() if x.startswith("error: ")]
    assert len(lines) == 1 and "Traceback" not in err, err
    return lines[0]


@pytest.fixture(scope="module")
def result(tiny_bert_dir, tmp_path_factory):
    out = tmp_path_factory.mktemp("result") / "res"
    assert main(["-q", "probe", "--model", str(tiny_bert_dir), "--out", str(out), *QUICK]) == 0
    return out


def _copy_result(result: Path, to: Path) -> Path:
    import shutil
    shutil.copytree(result, to)
    return to


def _no_model(tmp_path: Path) -> str:
    """A model folder that cannot load: a check that must come first fails before it."""
    m = tmp_path / "not-a-model"
    m.mkdir(exist_ok=True)
    return str(m)


# ------------------------------------------------------------------ special targets
def test_a_socket_a_fifo_or_a_device_is_never_a_target(tmp_path, capsys):
    sock_path = tmp_path / "s"
    sock = socket.socket(socket.AF_UNIX)
    sock.bind(str(sock_path))
    fifo = tmp_path / "f"
    os.mkfifo(fifo)
    try:
        for target, kind in ((sock_path, "a socket"), (fifo, "a FIFO"),
                             (Path("/dev/null"), "a character device")):
            assert main(["probe", "--model", _no_model(tmp_path), "--out", str(target),
                         *QUICK]) == 2
            assert f"--out {str(target)!r} is {kind}, not a folder" in _one_error(capsys)
            assert main(["report", str(tmp_path), "--out", str(target)]) == 2
            capsys.readouterr()
    finally:
        sock.close()
    assert fifo.is_fifo() and sock_path.is_socket() and not os.path.isfile("/dev/null")


def test_a_name_too_long_to_stage_is_refused_before_the_model(tmp_path, capsys):
    out = tmp_path / ("r" * 240)
    assert main(["probe", "--model", _no_model(tmp_path), "--out", str(out), *QUICK]) == 2
    line = _one_error(capsys)
    # 255 bytes allowed, less the longest suffix: "." + ".replaced-" + pid (7) + "-" + n (8)
    assert "the name is 240 bytes long; at most 228 fit here" in line, line
    out = tmp_path / ("r" * 300)
    assert main(["probe", "--model", _no_model(tmp_path), "--out", str(out), *QUICK]) == 2
    assert "the name is 300 bytes long" in _one_error(capsys)


# ------------------------------------------------------------------ what --overwrite may replace
def test_overwrite_refuses_a_folder_with_a_file_biasamp_did_not_write(result, tmp_path, capsys):
    out = _copy_result(result, tmp_path / "res")
    (out / "paper.tex").write_text("\\section{draft}")
    before = _tree(out)
    assert main(["probe", "--model", _no_model(tmp_path), "--out", str(out), "--overwrite",
                 *QUICK]) == 2
    line = _one_error(capsys)
    assert "holds 1 file(s) biasamp did not write ('paper.tex')" in line, line
    assert _tree(out) == before


def test_overwrite_refuses_a_folder_that_holds_no_result_or_another_kind(result, tmp_path,
                                                                          capsys):
    plain = tmp_path / "plain"
    plain.mkdir()
    (plain / "a.tex").write_text("x")
    assert main(["probe", "--model", _no_model(tmp_path), "--out", str(plain), "--overwrite",
                 *QUICK]) == 2
    assert "holds no biasamp result, not a probe result" in _one_error(capsys)
    assert main(["compare", str(result), str(result), "--out", str(result), "--overwrite"]) == 2
    assert "holds a probe result, not a comparison" in _one_error(capsys)
    report = tmp_path / "rep"
    assert main(["-q", "report", str(result), "--format", "md", "--out", str(report)]) == 0
    assert json.loads((report / MARK).read_text())["kind"] == "report"
    assert main(["probe", "--model", _no_model(tmp_path), "--out", str(report), "--overwrite",
                 *QUICK]) == 2
    assert "holds a report folder, not a probe result" in _one_error(capsys)
    assert main(["-q", "report", str(result), "--format", "html", "--out", str(report),
                 "--overwrite"]) == 0  # the same kind: replaced as a whole
    assert not (report / "report.md").exists() and (report / "report.html").is_file()


def test_a_result_of_biasamp_0_2_without_the_mark_is_recognised(result, tmp_path):
    out = _copy_result(result, tmp_path / "old")
    (out / MARK).unlink()
    assert main(["-q", "report", str(out), "--format", "html"]) == 0  # in place: mark added
    assert json.loads((out / MARK).read_text())["kind"] == "probe"
    (out / MARK).unlink()
    folder = OutputFolder(out, kind="probe", overwrite=True)
    folder.check()  # every file is one results.json lists
    (out / "extra.txt").write_text("mine")
    with pytest.raises(BiasampError, match=r"did not write \('extra.txt'\)"):
        folder.check()


# ------------------------------------------------------------------ pairs --out
def test_pairs_out_is_a_transaction_checked_before_scoring(tiny_bench_bert_dir, result,
                                                           tmp_path, capsys):
    out = tmp_path / "pairs"
    args = ["-q", "pairs", "--model", str(tiny_bench_bert_dir), "--n-resamples", "20"]
    assert main([*args, "--max-pairs", "6", "--out", str(out)]) == 0
    first = _tree(out)
    assert json.loads((out / MARK).read_text()) | {"written": None} == {
        "kind": "pairs", "files": ["pair_scores.csv", "pair_summary.csv", "pairs.json"],
        "written": None}
    # a second run is refused before scoring, not silently replacing 6 pairs by 2
    nomodel = ["-q", "pairs", "--model", _no_model(tmp_path), "--max-pairs", "2"]
    assert main([*nomodel, "--out", str(out)]) == 2
    assert "exists and is not empty; choose a new folder or pass --overwrite" in _one_error(
        capsys)
    assert main([*nomodel, "--out", str(result), "--overwrite"]) == 2
    assert "holds a probe result, not a pairs result" in _one_error(capsys)
    taken = tmp_path / "taken.txt"
    taken.write_text("x")
    assert main([*nomodel, "--out", str(taken)]) == 2
    assert "is a file, not a folder" in _one_error(capsys)
    assert _tree(out) == first and taken.read_text() == "x"
    assert main([*args, "--max-pairs", "2", "--out", str(out), "--overwrite"]) == 0
    assert len((out / "pair_scores.csv").read_text().splitlines()) == 1 + 2
    assert sorted(p.name for p in tmp_path.iterdir()) == ["not-a-model", "pairs", "taken.txt"]


# ------------------------------------------------------------------ links
def test_out_link_is_followed_and_stays_a_link(tiny_bert_dir, tmp_path):
    real = tmp_path / "scratch" / "run1"
    real.parent.mkdir()
    link = tmp_path / "results"
    link.symlink_to(real)  # dangling for now: the folder it names is created there
    assert main(["-q", "probe", "--model", str(tiny_bert_dir), "--out", str(link), *QUICK]) == 0
    assert link.is_symlink() and ProbeResult.load(real).model == str(tiny_bert_dir)
    assert main(["-q", "report", str(link), "--format", "html"]) == 0  # in place, via the link
    assert link.is_symlink() and (real / "report.html").is_file()
    assert main(["-q", "probe", "--model", str(tiny_bert_dir), "--out", str(link), "--overwrite",
                 *QUICK]) == 0
    assert link.is_symlink() and not (real / "report.html").exists()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["results", "scratch"]
    assert sorted(p.name for p in real.parent.iterdir()) == ["run1"]  # no lock, no leftovers


def test_a_link_into_nowhere_or_a_loop_is_refused_before_the_model(tmp_path, capsys):
    nowhere = tmp_path / "nowhere"
    nowhere.symlink_to(tmp_path / "no" / "such" / "folder")
    assert main(["probe", "--model", _no_model(tmp_path), "--out", str(nowhere), *QUICK]) == 2
    assert "is a symbolic link to" in (line := _one_error(capsys))
    assert "whose folder does not exist" in line
    loop = tmp_path / "loop"
    loop.symlink_to(loop)
    assert main(["probe", "--model", _no_model(tmp_path), "--out", str(loop), *QUICK]) == 2
    assert "is a symbolic link that cannot be followed" in _one_error(capsys)
    assert nowhere.is_symlink() and loop.is_symlink()


# ------------------------------------------------------------------ failed writes
def test_disk_full_while_writing_is_one_line_and_keeps_the_old_result(
        tiny_bert_dir, result, tmp_path, capsys, monkeypatch):
    import matplotlib.figure

    out = _copy_result(result, tmp_path / "res")
    before = _tree(out)

    def full(self, *args, **kwargs):
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(matplotlib.figure.Figure, "savefig", full)
    for cache, said in ((None, "the scores were not kept: rerun with --score-cache DIR"),
                        (tmp_path / "cache", "the scores are kept in the score cache")):
        extra = ["--score-cache", str(cache)] if cache else []
        assert main(["probe", "--model", str(tiny_bert_dir), "--out", str(out), "--overwrite",
                     *QUICK, *extra]) == 2
        line = _one_error(capsys)
        assert line.startswith(f"error: --out {str(out)!r}: could not write: No space left on "
                               "device; nothing was changed there; "), line
        assert said in line, line
        assert _tree(out) == before
        assert sorted(p.name for p in tmp_path.iterdir()) == (["cache", "res"] if cache
                                                               else ["res"])


def test_a_failed_swap_removes_the_staging_and_the_lock(result, tmp_path, capsys,
                                                        monkeypatch):
    out = _copy_result(result, tmp_path / "res")
    before = _tree(out)
    real = os.replace

    def immutable(src, dst, *args, **kwargs):
        if str(src) == str(out):
            raise PermissionError(errno.EPERM, "Operation not permitted", str(src))
        return real(src, dst, *args, **kwargs)

    monkeypatch.setattr(os, "replace", immutable)
    assert main(["report", str(out), "--format", "html"]) == 2
    line = _one_error(capsys)
    assert f"could not write {str(out)!r}: Operation not permitted" in line, line
    assert _tree(out) == before and sorted(p.name for p in tmp_path.iterdir()) == ["res"]


# ------------------------------------------------------------------ locks
def test_a_lock_of_another_host_is_refused_while_fresh_and_taken_over_when_stale(
        result, tmp_path, capsys):
    out = tmp_path / "res"
    lock = tmp_path / ".res.lock"
    lock.write_text(json.dumps({"pid": 1, "host": "node-17", "since": "2026-11-25T00:00:00"}))
    assert main(["report", str(result), "--out", str(out)]) == 2
    line = _one_error(capsys)
    assert "is being written by another biasamp run (pid 1 on node-17" in line
    assert f"taken over once it has not been refreshed for {STALE_AFTER_S:.0f} s" in line
    old = time.time() - STALE_AFTER_S - 60
    os.utime(lock, (old, old))
    assert main(["report", str(result), "--format", "md", "--out", str(out)]) == 0
    assert (out / "report.md").is_file() and not lock.exists()
    err = capsys.readouterr().err
    assert f"warning: --out {str(out)!r}: took over the lock of pid 1 on node-17, not " in err


# ------------------------------------------------------------------ signals (subprocesses)
_AT_THE_SWAP = """
import os, signal, sys, threading, time
import biasamp._output as O
from biasamp.cli import main
real_swap = O.OutputFolder._swap
def swap(self):
    # threads that do not block anything (as torch's and tqdm's): the kernel may hand the
    # signal to any of them
    stop = threading.Event()
    for _ in range(4):
        threading.Thread(target=stop.wait, daemon=True).start()
    os.kill(os.getpid(), int(sys.argv[1]))
    time.sleep(0.5)  # the signal arrives inside the swap
    try:
        return real_swap(self)
    finally:
        stop.set()
O.OutputFolder._swap = swap
sys.exit(main(sys.argv[2:]))
"""


@pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGHUP, signal.SIGINT])
def test_a_stop_signal_at_the_swap_waits_for_it(result, tmp_path, signum):
    out = tmp_path / "rep"
    proc = subprocess.run([sys.executable, "-c", _AT_THE_SWAP, str(int(signum)), "report",
                           str(result), "--format", "md", "--out", str(out)],
                          capture_output=True, text=True, timeout=300)
    assert proc.returncode == 128 + signum, proc.stderr
    said = "interrupted" if signum == signal.SIGINT else f"stopped ({signum.name})"
    assert proc.stderr.strip().endswith(said), proc.stderr
    assert (out / "report.md").is_file() and (out / MARK).is_file()  # the swap completed
    assert sorted(p.name for p in tmp_path.iterdir()) == ["rep"]  # no lock, no old folder


_WHILE_SCORING = """
import pathlib, sys, time
import biasamp.pipeline.run as R
from biasamp.cli import main
marker = pathlib.Path(sys.argv[1])
real = R._score_direction
def slow(*args, **kwargs):
    marker.write_text("scoring")
    time.sleep(60)
R._score_direction = slow
sys.exit(main(sys.argv[2:]))
"""


@pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGHUP])
def test_sigterm_and_sighup_clean_up_like_ctrl_c(tiny_bert_dir, result, tmp_path, signum):
    out = _copy_result(result, tmp_path / "res")
    before = _tree(out)
    marker = tmp_path.parent / f"{tmp_path.name}-{signum.name}"
    proc = subprocess.Popen([sys.executable, "-c", _WHILE_SCORING, str(marker), "-q", "probe",
                             "--model", str(tiny_bert_dir), "--out", str(out), "--overwrite",
                             *QUICK], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    deadline = time.time() + 120
    while not marker.exists() and time.time() < deadline and proc.poll() is None:
        time.sleep(0.05)
    assert marker.exists(), proc.communicate()
    proc.send_signal(signum)
    _, err = proc.communicate(timeout=60)
    assert proc.returncode == 128 + signum and f"stopped ({signum.name})" in err, err
    assert _tree(out) == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["res"], "lock or staging left"


# ------------------------------------------------------------------ single files
def test_templates_convert_replaces_only_a_converted_set(tmp_path, capsys):
    from biasamp._files import data_dir

    wg = Path(__file__).parent / "data" / "winogender" / "templates.tsv"
    mine = tmp_path / "mine.toml"
    mine.write_text("# my own set\n")
    assert main(["templates", "convert", "winogender", str(wg), "-o", str(mine),
                 "--overwrite"]) == 2
    assert "is not a template set a converter wrote" in _one_error(capsys)
    assert mine.read_text() == "# my own set\n"
    out = tmp_path / "wg.toml"
    for extra in ([], ["--overwrite"]):
        assert main(["-q", "templates", "convert", "winogender", str(wg), "-o", str(out),
                     *extra]) == 0
        assert out.read_bytes() == (data_dir("templates") / "winogender.toml").read_bytes()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["mine.toml", "wg.toml"]
