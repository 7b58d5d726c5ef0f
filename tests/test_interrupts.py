"""Ctrl-C: any fit ends the command with exit status 130 and one line, and no partial
result passes for a complete one.

PyMC catches a ``KeyboardInterrupt`` while it samples and returns the draws made so far (and
during tuning fails with "Not enough samples"): ``PyMCSmoother.fit`` raises
``SamplingInterrupted`` (a ``KeyboardInterrupt``) instead, unless ``keep_partial=True``. The
interrupts here are real SIGINTs sent to this process from PyMC's per-draw callback, at a chosen
draw, or samples made short by wrapping ``pymc.sample`` / ``pymc.fit``; the fits are tiny (tens
of draws on 60 games) and reuse PyTensor's compile cache. The last test sends SIGINT to a
``statespace rate`` process while it samples.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
import time
import warnings
from pathlib import Path

import numpy as np
import pytest

import filters
import statespace as ss
from statespace.app.cli import main
from smoothers import pymc_smoother as ps
from smoothers.pymc_smoother import PartialSampleWarning, PyMCSmoother, SamplingInterrupted

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture(autouse=True)
def terminal_sigint():
    """Ctrl-C as at a terminal: Python's default SIGINT handler. A test runner started in the
    background by a non-interactive shell inherits SIGINT ignored, where no Ctrl-C can arrive."""
    previous = signal.signal(signal.SIGINT, signal.default_int_handler)
    yield
    signal.signal(signal.SIGINT, previous)


def _terminal_sigint_in_child():
    signal.signal(signal.SIGINT, signal.SIG_DFL)  # so that the child's Python installs its default handler


@pytest.fixture(scope="module")
def games():
    model = ss.SkillModel("logistic", 1.0, 0.0, 1.0, drift=0.05)
    return ss.simulate(model, n_players=6, n_games=60, days=8, seed=3).games


def tiny(**kw):
    opts = dict(draws=40, tune=40, chains=2, cores=1, seed=5, progressbar=False, min_ess=1, max_rhat=100)
    opts.update(kw)
    return PyMCSmoother(**opts)


@pytest.fixture
def ctrl_c_at(monkeypatch):
    """``ctrl_c_at(chain, draw)``: a real SIGINT to this process when PyMC records that draw
    (counted from the first tuning draw); returns the draws PyMC made in each chain."""
    seen = {}
    original = ps._InterruptWatch.stop_sampler

    def arm(chain: int, at: int) -> dict:
        def stop_sampler(self, trace, draw):
            seen[draw.chain] = seen.get(draw.chain, 0) + 1
            if draw.chain == chain and draw.draw_idx == at:
                os.kill(os.getpid(), signal.SIGINT)
            original(self, trace, draw)

        monkeypatch.setattr(ps._InterruptWatch, "stop_sampler", stop_sampler)
        return seen

    return arm


def quiet_fit(smoother, games):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ps.ConvergenceWarning)
        return smoother.fit(games)


# ---------------------------------------------------------------------------- the command line
def _one_interrupted_line(code, capsys):
    captured = capsys.readouterr()
    assert code == 130
    assert captured.out == ""  # no leaderboard, no table
    lines = captured.err.splitlines()
    assert len(lines) == 1 and lines[0].startswith("statespace: interrupted"), captured.err
    assert "Traceback" not in captured.err
    return lines[0]


@pytest.mark.parametrize("argv", [["rate", "--scenario", "balanced"],
                                  ["compare", "--methods", "elo"],
                                  ["compare", "--methods", "elo", "--mode", "walk_forward"]])
def test_ctrl_c_in_a_fit_is_exit_130_and_one_line(argv, monkeypatch, capsys):
    def interrupted(self, *args, **kwargs):
        raise KeyboardInterrupt

    monkeypatch.setattr(filters.Elo, "fit", interrupted)
    monkeypatch.setattr(filters.Elo, "run", interrupted)
    assert _one_interrupted_line(main(argv), capsys) == "statespace: interrupted"


def test_an_interrupted_pymc_sample_is_exit_130_with_what_it_held(monkeypatch, capsys):
    def interrupted(self, games):
        raise SamplingInterrupted("pymc: sampling interrupted: the sample holds 2 of 2 chains and 806 of "
                                  "20,000 draws per chain", 2, 806)

    monkeypatch.setattr(PyMCSmoother, "fit", interrupted)
    line = _one_interrupted_line(main(["rate", "--scenario", "balanced", "--method", "pymc"]), capsys)
    assert "806 of 20,000 draws" in line


# ---------------------------------------------------------------------------- PyMCSmoother
def test_ctrl_c_while_sampling_raises_and_stops_every_chain(games, ctrl_c_at):
    seen = ctrl_c_at(chain=0, at=54)  # after tuning, in the first chain (sampled one after the other)
    handler = signal.getsignal(signal.SIGINT)
    with pytest.raises(SamplingInterrupted, match="interrupted: the sample holds 1 of 2 chains and 15 of 40") as exc:
        quiet_fit(tiny(), games)
    assert isinstance(exc.value, KeyboardInterrupt)
    assert (exc.value.chains, exc.value.draws) == (1, 15)
    assert seen[0] == 55 and seen.get(1, 0) <= 1  # PyMC would have gone on with the second chain
    assert signal.getsignal(signal.SIGINT) is handler  # the watch is removed


def test_ctrl_c_during_tuning_raises_even_with_keep_partial(games, ctrl_c_at):
    ctrl_c_at(chain=0, at=10)
    with pytest.raises(SamplingInterrupted, match="before any draw to keep"):
        quiet_fit(tiny(keep_partial=True), games)


@pytest.mark.filterwarnings("ignore::statespace.SeenGamesWarning")  # forecasts games it fitted, on purpose
def test_keep_partial_keeps_an_interrupted_sample_marked_partial(games, ctrl_c_at):
    ctrl_c_at(chain=0, at=59)
    with pytest.warns(PartialSampleWarning, match="1 of 2 chains and 20 of 40 draws"):
        fit = quiet_fit(tiny(keep_partial=True), games)
    assert fit.info["partial"] is True and fit.info["interrupted"] is True
    assert (fit.info["chains"], fit.info["draws"]) == (1, 20)
    assert fit.idata.posterior.sizes["draw"] == 20
    assert np.all(np.isfinite(fit.predict_proba(games)))


def test_ctrl_c_with_parallel_chains(games, ctrl_c_at):
    ctrl_c_at(chain=1, at=50)
    with pytest.raises(SamplingInterrupted, match="sampling interrupted"):
        quiet_fit(tiny(cores=2), games)


def test_a_short_sample_is_not_a_fit_even_without_ctrl_c(games, monkeypatch):
    """However a sample comes back short (another sampler, a KeyboardInterrupt that PyMC
    swallowed without a signal), it is refused unless kept on purpose."""
    import pymc as pm

    real = pm.sample

    def short(*args, draws, chains, initvals=None, **kwargs):  # one chain fewer, half the draws
        return real(*args, draws=draws // 2, chains=chains - 1, initvals=initvals and initvals[:chains - 1],
                    **kwargs)

    monkeypatch.setattr(pm, "sample", short)
    with pytest.raises(SamplingInterrupted, match="cut short: the sample holds 1 of 2 chains and 20 of 40"):
        quiet_fit(tiny(), games)
    with pytest.warns(PartialSampleWarning, match="cut short"):
        fit = quiet_fit(tiny(keep_partial=True), games)
    assert fit.info["partial"] is True and fit.info["interrupted"] is False and fit.info["draws"] == 20


def test_a_complete_fit_is_not_partial(games):
    fit = quiet_fit(tiny(chains=1), games)
    assert fit.info["partial"] is False and fit.info["draws"] == 40


def test_an_interrupted_advi_is_refused(games, monkeypatch):
    import pymc as pm

    real = pm.fit

    def short(*args, n, **kwargs):  # what pm.fit returns after Ctrl-C: fewer iterations
        return real(*args, n=n // 3, **kwargs)

    monkeypatch.setattr(pm, "fit", short)
    with pytest.raises(SamplingInterrupted, match="ADVI stopped after 100 of 300 iterations"):
        quiet_fit(tiny(sampler="advi", advi_iterations=300), games)


def test_keep_partial_is_a_setting():
    assert PyMCSmoother(keep_partial=True).get_params()["keep_partial"] is True
    with pytest.raises(ValueError, match="keep_partial"):
        PyMCSmoother(keep_partial="maybe")


def test_the_watch_leaves_other_threads_and_ignored_sigint_alone():
    out = {}

    def other():
        with ps._watch_interrupts() as watch:
            out["handler"] = signal.getsignal(signal.SIGINT)
            out["watch"] = watch

    before = signal.getsignal(signal.SIGINT)
    t = threading.Thread(target=other)
    t.start()
    t.join()
    assert out["handler"] is before and not out["watch"].interrupted
    old = signal.signal(signal.SIGINT, signal.SIG_IGN)
    try:
        with ps._watch_interrupts():
            assert signal.getsignal(signal.SIGINT) is signal.SIG_IGN
    finally:
        signal.signal(signal.SIGINT, old)


# ---------------------------------------------------------------------------- end to end
@pytest.mark.skipif(sys.platform == "win32", reason="POSIX signals")
def test_ctrl_c_on_statespace_rate_with_pymc(tmp_path):
    """A terminal's Ctrl-C (SIGINT to the whole process group) while ``statespace rate`` samples
    with PyMC, chains in parallel: exit status 130, one line on stderr, nothing on stdout."""
    rng = np.random.default_rng(2)
    a = rng.integers(0, 6, 80)
    b = (a + rng.integers(1, 6, 80)) % 6
    lines = ["time,a,b,score"] + [f"2021-01-{1 + i % 28:02d},p{x},p{y},{rng.integers(0, 2)}"
                                  for i, (x, y) in enumerate(zip(a, b))]
    (tmp_path / "games.csv").write_text("\n".join(lines) + "\n")
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    proc = subprocess.Popen([sys.executable, "-m", "statespace", "rate", str(tmp_path / "games.csv"), "--method",
                             "pymc:draws=1000000,tune=0,chains=2,progressbar=true"],
                            cwd=tmp_path, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            start_new_session=True, preexec_fn=_terminal_sigint_in_child)
    stderr = []
    reader = threading.Thread(target=lambda: stderr.extend(proc.stderr), daemon=True)
    reader.start()
    try:
        deadline = time.monotonic() + 240
        while not any("NUTS" in line for line in stderr):  # PyMC says which sampler it starts
            assert proc.poll() is None, "".join(stderr)
            assert time.monotonic() < deadline, "sampling did not start"
            time.sleep(0.2)
        time.sleep(3)  # well into sampling
        assert proc.poll() is None, "".join(stderr)
        os.killpg(proc.pid, signal.SIGINT)
        proc.wait(timeout=60)
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
    reader.join(timeout=10)
    out = proc.stdout.read()
    err = "".join(stderr)
    assert proc.returncode == 130, err
    assert out == ""
    assert "Traceback" not in err
    last = err.strip().splitlines()[-1].split("\r")[-1].strip()  # after PyMC's progress bar
    assert last.startswith("statespace: interrupted") and err.count("statespace: interrupted") == 1
