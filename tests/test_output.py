"""The one output layer (biasamp._output): nothing biasamp did not write is replaced or deleted,
by any writing command; links are followed on purpose; special files are refused; one writer
at a time; stop signals and failed writes leave the old or the new complete result, and say
so in one line."""

from __future__ import annotations

import errno
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest

from biasamp import BiasampError
from biasamp._output import MARK, OutputFolder, found_kind
from biasamp.cli import main
from biasamp.results import ProbeResult

pytestmark = pytest.mark.usefixtures("one_torch_thread")

QUICK = [
    "--max-templates",
    "2",
    "--n-resamples",
    "50",
    "--format",
    "md,json",
    "--base-rates",
    "uniform",
]


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


def _beside(folder: Path) -> list[str]:
    """What the folder's parent holds (a lock, staging or old folder left there is a defect)."""
    return sorted(p.name for p in folder.parent.iterdir())


@pytest.fixture(scope="module")
def result(tiny_bert_dir, tmp_path_factory):
    out = tmp_path_factory.mktemp("result") / "res"
    assert main(["-q", "probe", "--model", str(tiny_bert_dir), "--out", str(out), *QUICK]) == 0
    return out


def _copy(result: Path, to: Path) -> Path:
    shutil.copytree(result, to, symlinks=True)
    return to


def _probe(tmp_path: Path, out: Path, *extra: str) -> list[str]:
    """A probe of a model folder that cannot load: a check that must come first fails first."""
    model = tmp_path / "not-a-model"
    model.mkdir(exist_ok=True)
    return ["probe", "--model", str(model), "--out", str(out), *QUICK, *extra]


# ------------------------------------------------------------------ what a target may be
def test_a_target_that_is_not_a_folder_to_write_is_refused_before_the_work(
    result, tmp_path, capsys
):
    sock_path, fifo, taken, full = (tmp_path / n for n in ("s", "f", "taken.txt", "full"))
    sock = socket.socket(socket.AF_UNIX)
    sock.bind(str(sock_path))
    os.mkfifo(fifo)
    taken.write_text("mine")
    full.mkdir()
    (full / "old.txt").write_text("keep me")
    long = tmp_path / ("r" * 240)  # 255 bytes less the longest suffix (.replaced-PID-N): 228
    try:
        for target, said in (
            (sock_path, "is a socket, not a folder"),
            (fifo, "is a FIFO, not a folder"),
            (Path("/dev/null"), "is a character device, not a folder"),
            (taken, "is a file, not a folder"),
            (taken / "o", f": {str(taken)!r} is not a folder"),
            (full, "exists and is not empty; choose a new folder or pass"),
            (long, ": the name is 240 bytes long; at most 228 fit here"),
            (tmp_path / ("r" * 300), ": the name is 300 bytes long"),
        ):
            assert main(_probe(tmp_path, target)) == 2
            line = _one_error(capsys)
            assert f"--out {str(target)!r}" in line and said in line, line
            assert main(["report", str(result), "--out", str(target)]) == 2
            assert said in _one_error(capsys)
    finally:
        sock.close()
    assert fifo.is_fifo() and sock_path.is_socket() and not os.path.isfile("/dev/null")
    assert taken.read_text() == "mine" and (full / "old.txt").read_text() == "keep me"
    assert _beside(full) == ["f", "full", "not-a-model", "s", "taken.txt"]


# ------------------------------------------------------------------ what --overwrite may replace
def test_overwrite_refuses_a_folder_with_a_file_biasamp_did_not_write(result, tmp_path, capsys):
    out = _copy(result, tmp_path / "res")
    (out / "paper.tex").write_text("\\section{draft}")
    (out / "notes").mkdir()  # an empty folder is the user's too
    before = _tree(out)
    assert main(_probe(tmp_path, out, "--overwrite")) == 2
    line = _one_error(capsys)
    assert "holds 2 file(s) biasamp did not write ('notes/', a folder and 1 more)" in line, line
    assert _tree(out) == before and (out / "notes").is_dir()


def test_overwrite_refuses_a_folder_without_the_mark_of_the_same_kind(result, tmp_path, capsys):
    plain = tmp_path / "plain"
    plain.mkdir()
    (plain / "a.tex").write_text("x")
    assert main(_probe(tmp_path, plain, "--overwrite")) == 2
    assert "holds no biasamp result, not a probe result" in _one_error(capsys)
    assert main(["compare", str(result), str(result), "--out", str(result), "--overwrite"]) == 2
    assert "holds a probe result, not a comparison" in _one_error(capsys)
    report = tmp_path / "rep"
    assert main(["-q", "report", str(result), "--format", "md", "--out", str(report)]) == 0
    assert found_kind(report) == (
        "report",
        {"report.md", "fig5_p_attribute_given_task.png", "forest_delta.png", "base_rate_panel.png"},
    )
    assert main(_probe(tmp_path, report, "--overwrite")) == 2
    assert "holds a report folder, not a probe result" in _one_error(capsys)
    assert (
        main(["-q", "report", str(result), "--format", "html", "--out", str(report), "--overwrite"])
        == 0
    )  # the same kind: replaced as a whole
    assert not (report / "report.md").exists() and (report / "report.html").is_file()
    # a mark that is missing, broken, of no kind, or a link to another folder's: no result
    copy = _copy(result, tmp_path / "copy")
    for mark in (None, "{nope", '["probe"]', '{"kind": "probe"}', result / MARK):
        (copy / MARK).unlink(missing_ok=True)
        if isinstance(mark, Path):
            (copy / MARK).symlink_to(mark)
        elif mark is not None:
            (copy / MARK).write_text(mark)
        assert found_kind(copy) == (None, set())
        with pytest.raises(BiasampError, match="holds no biasamp result, not a probe result"):
            OutputFolder(copy, kind="probe", overwrite=True).check()
        in_place = OutputFolder(copy, kind="probe", update=True)  # the caller read the result
        in_place.check()  # so a report is added, and every file it holds is kept as the user's
        assert in_place.foreign == {p.name for p in copy.iterdir()} - {MARK}


def test_overwrite_replaces_the_whole_folder_and_marks_what_it_wrote(
    tiny_bert_dir, result, tmp_path
):
    out = _copy(result, tmp_path / "o")
    assert main(["-q", "report", str(out), "--format", "html"]) == 0
    assert (out / "report.html").is_file()
    assert (
        main(
            ["-q", "probe", "--model", str(tiny_bert_dir), "--out", str(out), "--overwrite", *QUICK]
        )
        == 0
    )
    names = sorted(p.relative_to(out).as_posix() for p in out.rglob("*"))
    assert "report.html" not in names  # no stale file of the result replaced
    mark = json.loads((out / MARK).read_text())
    assert mark["kind"] == "probe" and mark["files"] == [n for n in names if n != MARK]
    assert _beside(out) == ["o"]  # no lock, staging or old folder left


def test_report_in_place_keeps_every_file_of_the_folder(result, tmp_path):
    d = _copy(result, tmp_path / "r")
    (d / "notes" / "deep").mkdir(parents=True)
    (d / "notes" / "draft.tex").write_text("\\section{x}")
    (d / "notes" / "deep" / "a.txt").write_text("a")
    (d / "notes" / "deep" / MARK).write_text("not the folder's mark")
    (d / "mine.txt").write_text("keep")
    (d / "alias").symlink_to(d / "mine.txt")
    before = _tree(d)
    assert main(["-q", "report", str(d), "--format", "html,model-card"]) == 0
    after = _tree(d)
    kept = [k for k in before if k != MARK and not k.endswith((".png", "results.json"))]
    assert {k: after.get(k) for k in kept} == {k: before[k] for k in kept}
    kind, owned = found_kind(d)
    assert kind == "probe" and {"report.html", "model_card.md", "report.md"} <= owned
    assert not owned & {"mine.txt", "alias", "notes/draft.tex", f"notes/deep/{MARK}"}
    assert ProbeResult.load(d).summary.equals(ProbeResult.load(result).summary)
    assert _beside(d) == ["r"]
    with pytest.raises(BiasampError, match=r"'.*nothing' holds no biasamp result, not a probe"):
        OutputFolder(tmp_path / "nothing", kind="probe", update=True).check()


# ------------------------------------------------------------------ pairs --out
def test_pairs_out_is_a_transaction_checked_before_scoring(
    tiny_bench_bert_dir, result, tmp_path, capsys
):
    out = tmp_path / "pairs"
    args = ["-q", "pairs", "--model", str(tiny_bench_bert_dir), "--n-resamples", "20"]
    assert main([*args, "--max-pairs", "6", "--out", str(out)]) == 0
    first = _tree(out)
    assert json.loads((out / MARK).read_text()) | {"written": None} == {
        "kind": "pairs",
        "files": ["pair_scores.csv", "pair_summary.csv", "pairs.json"],
        "written": None,
    }
    # a second run is refused before scoring, not silently replacing 6 pairs by 2
    nomodel = ["-q", "pairs", "--model", str(tmp_path), "--max-pairs", "2"]
    assert main([*nomodel, "--out", str(out)]) == 2
    assert "exists and is not empty; choose a new folder or pass --overwrite" in _one_error(capsys)
    assert main([*nomodel, "--out", str(result), "--overwrite"]) == 2
    assert "holds a probe result, not a pairs result" in _one_error(capsys)
    assert _tree(out) == first
    assert main([*args, "--max-pairs", "2", "--out", str(out), "--overwrite"]) == 0
    assert len((out / "pair_scores.csv").read_text().splitlines()) == 1 + 2
    assert _beside(out) == ["pairs"]


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
    assert (
        main(
            [
                "-q",
                "probe",
                "--model",
                str(tiny_bert_dir),
                "--out",
                str(link),
                "--overwrite",
                *QUICK,
            ]
        )
        == 0
    )
    assert link.is_symlink() and not (real / "report.html").exists()
    assert _beside(link) == ["results", "scratch"] and _beside(real) == ["run1"]


def test_a_link_into_nowhere_or_a_loop_is_refused_before_the_model(tmp_path, capsys):
    nowhere = tmp_path / "nowhere"
    nowhere.symlink_to(tmp_path / "no" / "such" / "folder")
    assert main(_probe(tmp_path, nowhere)) == 2
    line = _one_error(capsys)
    assert f"--out {str(nowhere)!r} is a symbolic link to" in line
    assert "whose folder does not exist" in line
    loop = tmp_path / "loop"
    loop.symlink_to(loop)
    assert main(_probe(tmp_path, loop)) == 2
    assert f"--out {str(loop)!r} is a symbolic link, not a folder" in _one_error(capsys)
    assert nowhere.is_symlink() and loop.is_symlink()


# ------------------------------------------------------------------ failed writes
def test_disk_full_while_writing_is_one_line_and_keeps_the_old_result(
    tiny_bert_dir, result, tmp_path, capsys, monkeypatch
):
    import matplotlib.figure

    out = _copy(result, tmp_path / "res")
    before = _tree(out)

    def full(self, *args, **kwargs):
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(matplotlib.figure.Figure, "savefig", full)
    for cache, said in (
        (None, "the scores were not kept: rerun with --score-cache DIR"),
        (tmp_path / "cache", "the scores are kept in the score cache"),
    ):
        extra = ["--score-cache", str(cache)] if cache else []
        assert (
            main(
                [
                    "probe",
                    "--model",
                    str(tiny_bert_dir),
                    "--out",
                    str(out),
                    "--overwrite",
                    *QUICK,
                    *extra,
                ]
            )
            == 2
        )
        line = _one_error(capsys)
        assert line.startswith(
            f"error: --out {str(out)!r}: could not write: No space left on "
            "device; nothing was changed there; "
        ), line
        assert said in line, line
        assert _tree(out) == before
        assert _beside(out) == (["cache", "res"] if cache else ["res"])


def test_a_failed_swap_keeps_the_old_result_and_removes_the_staging_and_the_lock(
    result, tmp_path, capsys, monkeypatch
):
    out = _copy(result, tmp_path / "res")
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
    assert _tree(out) == before and _beside(out) == ["res"]


# ------------------------------------------------------------------ one writer
_HOLD = """
import sys, time
from filelock import FileLock
lock = FileLock(sys.argv[1])
lock.acquire()
print("held", flush=True)
time.sleep(120)
"""


def test_a_live_lock_refuses_and_one_whose_process_is_gone_is_free(result, tmp_path, capsys):
    """The lock is an OS lock (filelock): held while its process lives, whatever host wrote
    the file; free once it is killed, even though the file stays."""
    out, lock = tmp_path / "rep", tmp_path / ".rep.lock"
    holder = subprocess.Popen(
        [sys.executable, "-c", _HOLD, str(lock)], stdout=subprocess.PIPE, text=True
    )
    try:
        assert holder.stdout.readline().strip() == "held"
        assert main(["report", str(result), "--format", "md", "--out", str(out)]) == 2
        assert f"--out {str(out)!r} is being written by another biasamp run" in _one_error(capsys)
    finally:
        holder.kill()  # SIGKILL: nothing cleans up
        holder.wait()
    assert lock.exists() and not out.exists()
    assert main(["-q", "report", str(result), "--format", "md", "--out", str(out)]) == 0
    assert (out / "report.md").is_file() and _beside(out) == ["rep"]


def test_a_dead_runs_swapped_out_folder_is_put_back(result, tmp_path):
    """A run killed between the two renames of a swap (SIGKILL: no cleanup) leaves the old
    folder beside the target, and its lock file; the next writer puts the folder back."""
    old = _copy(result, tmp_path / ".res.replaced-99999-0")
    (tmp_path / ".res.staging-99999-1").mkdir()
    (tmp_path / ".res.lock").write_text("")
    folder = OutputFolder(tmp_path / "res", kind="probe", overwrite=True)
    staging = folder.begin()
    assert not old.exists() and ProbeResult.load(tmp_path / "res").model
    assert _beside(staging) == [".res.lock", staging.name, "res"]
    folder.abort()
    assert _beside(staging) == ["res"]


def _cli(*args):
    return subprocess.Popen(
        [sys.executable, "-m", "biasamp", "-q", *args],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def test_two_writers_never_mix(tiny_bert_dir, tiny_bert2_dir, tmp_path):
    for trial in range(2):
        out = tmp_path / f"o{trial}"
        procs = [
            _cli("probe", "--model", str(m), "--out", str(out), *QUICK)
            for m in (tiny_bert_dir, tiny_bert2_dir)
        ]
        results = [(p.wait(timeout=180), p.stderr.read()) for p in procs]
        assert sorted(rc for rc, _ in results) == [0, 2], results
        loser = next(err for rc, err in results if rc == 2)
        assert (
            "being written by another biasamp run" in loser or "exists and is not empty" in loser
        ), loser
        res = ProbeResult.load(out)
        assert res.model in (str(tiny_bert_dir), str(tiny_bert2_dir))
        assert f"`{res.model}`" in (out / "report.md").read_text()  # report of the same run
    assert _beside(out) == ["o0", "o1"]


# ------------------------------------------------------------------ stop signals
_AT_THE_SWAP = """
import contextlib, os, sys, threading, time
import signal
# as a terminal starts it: a parent's nohup or & may have ignored SIGHUP and SIGINT
signal.signal(signal.SIGHUP, signal.SIG_DFL)
signal.signal(signal.SIGINT, signal.default_int_handler)
import biasamp._output as O
from biasamp.cli import main
held = O.signals_deferred
@contextlib.contextmanager
def swap():
    with held():
        # threads that block nothing (as torch's and tqdm's): the kernel may pick any of them
        stop = threading.Event()
        for _ in range(4):
            threading.Thread(target=stop.wait, daemon=True).start()
        os.kill(os.getpid(), int(sys.argv[1]))
        time.sleep(0.5)  # the signal arrives inside the swap
        yield
        stop.set()
O.signals_deferred = swap
sys.exit(main(sys.argv[2:]))
"""


@pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGHUP, signal.SIGINT])
def test_a_stop_signal_at_the_swap_waits_for_it(result, tmp_path, signum):
    out = tmp_path / "rep"
    proc = subprocess.run(
        [
            sys.executable,
            "-c",
            _AT_THE_SWAP,
            str(int(signum)),
            "report",
            str(result),
            "--format",
            "md",
            "--out",
            str(out),
        ],
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert proc.returncode == 128 + signum, proc.stderr
    said = "interrupted" if signum == signal.SIGINT else f"stopped ({signum.name})"
    assert proc.stderr.strip().endswith(said), proc.stderr
    assert (out / "report.md").is_file() and (out / MARK).is_file()  # the swap completed
    assert _beside(out) == ["rep"]  # no lock, no old folder


_PAUSED = """
import pathlib, sys, time
import signal
# as a terminal starts it: a parent's nohup or & may have ignored SIGHUP and SIGINT
signal.signal(signal.SIGHUP, signal.SIG_DFL)
signal.signal(signal.SIGINT, signal.default_int_handler)
import biasamp.pipeline.run as R
import biasamp.results as S
from biasamp.cli import main
marker, where = pathlib.Path(sys.argv[1]), sys.argv[2]
def pause(*args, **kwargs):
    marker.write_text(where)
    time.sleep(60)
if where == "scoring":
    R._score_direction = pause
else:  # write the data files, then stop in the middle of saving
    real = S.ProbeResult.write_files
    def pause_saving(self, folder, **kw):
        real(self, folder, **kw)
        (pathlib.Path(folder) / "tables.csv").write_text("half-written")
        pause()
    S.ProbeResult.write_files = pause_saving
sys.exit(main(sys.argv[3:]))
"""


@pytest.mark.parametrize(
    "signum, where",
    [(signal.SIGTERM, "scoring"), (signal.SIGHUP, "scoring"), (signal.SIGINT, "saving")],
)
def test_a_stop_signal_during_the_run_leaves_the_previous_result(
    tiny_bert_dir, result, tmp_path, signum, where
):
    out = _copy(result, tmp_path / "res")
    before = _tree(out)
    marker = tmp_path.parent / f"{tmp_path.name}-{signum.name}"
    proc = subprocess.Popen(
        [
            sys.executable,
            "-c",
            _PAUSED,
            str(marker),
            where,
            "-q",
            "probe",
            "--model",
            str(tiny_bert_dir),
            "--out",
            str(out),
            "--overwrite",
            *QUICK,
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    deadline = time.time() + 120
    while not marker.exists() and time.time() < deadline and proc.poll() is None:
        time.sleep(0.05)
    assert marker.exists(), proc.communicate()
    proc.send_signal(signum)
    _, err = proc.communicate(timeout=60)
    said = "interrupted" if signum == signal.SIGINT else f"stopped ({signum.name})"
    assert proc.returncode == 128 + signum and said in err, err
    assert _tree(out) == before  # byte for byte
    assert _beside(out) == ["res"], "lock or staging left"


def test_sigint_at_other_moments_leaves_a_complete_result(tiny_bert_dir, result, tmp_path):
    out = _copy(result, tmp_path / "res")
    args = [
        "probe",
        "--model",
        str(tiny_bert_dir),
        "--base-rates",
        "uniform,labor-2016",
        "--out",
        str(out),
        "--overwrite",
        "--format",
        "md,html,json",
        "--max-templates",
        "3",
    ]
    for delay in (1.0, 2.5, 4.0):
        proc = _cli(*args)
        time.sleep(delay)
        proc.send_signal(signal.SIGINT)
        _, err = proc.communicate(timeout=120)
        assert proc.returncode in (0, 130, -signal.SIGINT), err  # -2: before main() started
        assert ProbeResult.load(out).model == str(tiny_bert_dir)  # old or new, complete
        assert _beside(out) == ["res"], "leftovers beside it"


# ------------------------------------------------------------------ single files
def test_templates_convert_replaces_only_a_converted_set(tmp_path, capsys):
    from biasamp._files import data_dir

    wg = Path(__file__).parent / "data" / "winogender" / "templates.tsv"
    mine = tmp_path / "mine.toml"
    mine.write_text("# my own set\n")
    assert (
        main(["templates", "convert", "winogender", str(wg), "-o", str(mine), "--overwrite"]) == 2
    )
    assert "is not a template set a converter wrote" in _one_error(capsys)
    assert mine.read_text() == "# my own set\n"
    out = tmp_path / "wg.toml"
    for extra in ([], ["--overwrite"]):
        assert (
            main(["-q", "templates", "convert", "winogender", str(wg), "-o", str(out), *extra]) == 0
        )
        assert out.read_bytes() == (data_dir("templates") / "winogender.toml").read_bytes()
    assert _beside(out) == ["mine.toml", "wg.toml"]


def test_a_killed_writers_temporary_file_is_removed_and_named_by_the_next_write(tmp_path, caplog):
    """``.NAME.tmp-PID-N`` left by a killed writer (it no longer holds ``.NAME.lock``) is
    removed when the file is next written, with one line naming it; another file's is left
    alone, and a write while another process holds the lock is refused in one line."""
    from biasamp._output import OutputFile

    dead = tmp_path / ".c.csv.tmp-4194303-0"
    other = tmp_path / ".d.csv.tmp-4194303-0"  # another file's: not this write's business
    for f in (dead, other):
        f.write_text("partial")
    with caplog.at_level("WARNING", logger="biasamp"), OutputFile(tmp_path / "c.csv").open() as f:
        f.write("x\n")
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted(["c.csv", other.name])
    assert [r.getMessage() for r in caplog.records] == [
        f"removed {dead}, left by an interrupted run"
    ]
    holder = subprocess.Popen(
        [
            sys.executable,
            "-c",
            "import filelock, sys, time; l = filelock.FileLock(sys.argv[1]);"
            " l.acquire(); print('held', flush=True); time.sleep(60)",
            str(tmp_path / ".c.csv.lock"),
        ],
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert holder.stdout.readline() == "held\n"
        refused = pytest.raises(BiasampError, match="being written by another biasamp run")
        with refused, OutputFile(tmp_path / "c.csv", overwrite=True).open() as f:
            f.write("y\n")
    finally:
        holder.kill()
        holder.wait()
    assert (tmp_path / "c.csv").read_text() == "x\n"
