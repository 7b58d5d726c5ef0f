"""How :class:`smoothers.pymc_smoother.PyMCSmoother` runs its sampler: PyMC's NUTS (from the
Laplace start or one of PyMC's own ``init`` methods), ADVI, numpyro, and nutpie on the compiled
log density; while the model compiles and the sampler runs, Ctrl-C is watched for, and a sample
that comes back with fewer chains, draws or ADVI iterations than asked for is refused
(:class:`SamplingInterrupted`) or, with ``keep_partial=True``, kept and marked
(:class:`PartialSampleWarning`); see "Interrupts" in :mod:`smoothers.pymc_smoother`."""

from __future__ import annotations

import logging
import signal
import threading
import time
import warnings
from contextlib import contextmanager

import numpy as np

from statespace.data.games import Games
from statespace.model.outcome import Outcome

from ._pymc_model import build_model, laplace_start, nutpie_model

__all__ = ["SamplingInterrupted", "PartialSampleWarning", "sample_or_interrupt", "sample", "sample_nutpie",
           "nutpie_fast"]


class SamplingInterrupted(KeyboardInterrupt):
    """The sampler was interrupted (Ctrl-C) or stopped short: the sample is not the one asked for.

    A ``KeyboardInterrupt``, so that whatever stops on Ctrl-C stops on it too (the command line
    exits with status 130). ``chains`` and ``draws`` say what the sampler returned (0 when
    nothing)."""

    def __init__(self, message: str, chains: int = 0, draws: int = 0):
        super().__init__(message)
        self.chains, self.draws = int(chains), int(draws)


class PartialSampleWarning(UserWarning):
    """``keep_partial=True`` kept a sample cut short: fewer chains or draws than asked for."""


class _InterruptWatch:
    """Whether Ctrl-C (SIGINT) arrived while the watch was on (:func:`_watch_interrupts`)."""

    interrupted = False

    def stop_sampler(self, *args, **kwargs) -> None:
        """PyMC's per-draw ``callback``: ends the chain being sampled once Ctrl-C has arrived.
        (Sampling chains one after another, PyMC ends only the current chain on Ctrl-C and goes
        on with the next one; with this each following chain stops at its first draw.)"""
        if self.interrupted:
            raise KeyboardInterrupt


@contextmanager
def _watch_interrupts():
    """Record SIGINT while the block runs, then let the handler in place act as before (Python's
    default raises ``KeyboardInterrupt``). Only from the main thread, and only over a Python-level
    handler (an ignored SIGINT stays ignored)."""
    watch = _InterruptWatch()
    if threading.current_thread() is not threading.main_thread():
        yield watch
        return
    previous = signal.getsignal(signal.SIGINT)
    if not callable(previous):
        yield watch
        return

    def handler(signum, frame):
        watch.interrupted = True
        previous(signum, frame)

    signal.signal(signal.SIGINT, handler)
    try:
        yield watch
    finally:
        signal.signal(signal.SIGINT, previous)


def _as_seed(seed):
    if isinstance(seed, np.random.Generator):
        return int(seed.integers(2**31 - 1))
    return seed


@contextmanager
def _quiet_pymc(quiet: bool):
    """PyMC logs its progress at INFO level; keep it quiet when no progress bar is wanted."""
    logger = logging.getLogger("pymc")
    old = logger.level
    if quiet:
        logger.setLevel(logging.WARNING)
    try:
        yield
    finally:
        logger.setLevel(old)


def _complete_draws(idata):
    """nutpie stopped early (Ctrl-C) returns chains of different lengths, padded with NaN: keep
    the chains with at least one draw, each cut to the draws they all have (what a partial fit
    holds, as PyMC's own partial traces)."""
    post = idata.posterior
    if "z" not in post or post.sizes["draw"] == 0:
        return idata
    done = np.isfinite(np.asarray(post["z"])).all(axis=-1)  # (chain, draw)
    if done.all():
        return idata
    lengths = np.where(done.all(axis=1), done.shape[1], np.argmin(done, axis=1))
    chains = np.flatnonzero(lengths > 0)
    keep = int(lengths[chains].min()) if chains.size else 0
    sel = {"chain": chains, "draw": np.arange(keep)}
    for group in idata.groups():
        data = idata[group]
        if "chain" in data.dims and "draw" in data.dims:
            idata[group] = data.isel(sel)
    return idata


def nutpie_fast(smoother) -> bool:
    """nutpie on the compiled log density (:func:`smoothers._pymc_model.nutpie_model`) rather
    than on PyMC's model compiled by PyTensor's numba backend (``likelihood="graph"``)."""
    return isinstance(smoother._base.observation, Outcome) and smoother.likelihood != "graph"


def sample_nutpie(smoother, pmodel, free, progress: bool, games: Games, tl, seed):
    """nutpie's NUTS on the compiled log density: nothing compiled per fit, chains in threads
    (``cores`` at a time), every chain started from the Laplace approximation."""
    import nutpie

    compiled = nutpie_model(smoother, games, tl, pmodel, free, seed)
    t0 = time.perf_counter()
    idata = nutpie.sample(compiled, draws=smoother.draws, tune=smoother.tune_steps, chains=smoother.chains,
                          cores=smoother.cores, seed=seed, target_accept=smoother.target_accept,
                          progress_bar=progress, save_warmup=False)
    elapsed = time.perf_counter() - t0
    idata = _complete_draws(idata)
    idata.posterior.attrs["sampling_time"] = elapsed
    idata.posterior.attrs["tuning_steps"] = smoother.tune_steps
    return idata


def sample(smoother, pmodel, progress: bool, games: Games, tl, watch: _InterruptWatch | None = None, free=()):
    """``(idata, approx)``: the sample of the PyMC model ``pmodel`` (``free`` its inferred scalar
    parameters) by the sampler :meth:`~smoothers.pymc_smoother.PyMCSmoother.sampler_for` names;
    ``approx`` the ADVI approximation (else ``None``). ``watch`` ends PyMC's chains after Ctrl-C."""
    import pymc as pm

    seed = _as_seed(smoother.seed)
    sampler = smoother.sampler_for()
    if sampler == "nutpie" and nutpie_fast(smoother):
        return sample_nutpie(smoother, pmodel, list(free), progress, games, tl, seed), None
    with pmodel, _quiet_pymc(not progress):
        if sampler == "advi":
            approx = pm.fit(n=smoother.advi_iterations, method="advi", random_seed=seed, progressbar=progress)
            return approx.sample(smoother.draws, random_seed=seed), approx
        kw = {}
        if sampler in ("nutpie", "numpyro"):
            kw["nuts_sampler"] = sampler
        else:
            if watch is not None:
                kw["callback"] = watch.stop_sampler
            if smoother.init == "laplace":
                kw["step"], kw["initvals"] = laplace_start(smoother, games, tl, pmodel, np.random.default_rng(seed))
            else:
                kw["init"] = smoother.init
        if "step" not in kw:  # a given step has its own
            kw["target_accept"] = smoother.target_accept
        idata = pm.sample(draws=smoother.draws, tune=smoother.tune_steps, chains=smoother.chains, cores=smoother.cores,
                          random_seed=seed, progressbar=progress,
                          compute_convergence_checks=False, return_inferencedata=True, **kw)
        return idata, None


def sample_or_interrupt(smoother, games: Games, tl, progress: bool):
    """Build the model and sample it, watching for Ctrl-C (see "Interrupts" in
    :mod:`smoothers.pymc_smoother`). Returns ``(idata, approx, free, partial)``: ``free`` the
    inferred scalar parameters, ``partial`` the ``info`` of a sample cut short and kept
    (``keep_partial=True``), else ``None``; raises :class:`SamplingInterrupted` for an
    interrupted or short sample otherwise."""
    what = "ADVI" if smoother.sampler == "advi" else "sampling"
    with _watch_interrupts() as watch:
        try:
            pmodel, free = build_model(smoother, games, tl)
            idata, approx = sample(smoother, pmodel, progress, games, tl, watch, free)
        except KeyboardInterrupt as exc:
            if isinstance(exc, SamplingInterrupted):
                raise
            raise SamplingInterrupted(f"{smoother.name}: {what} interrupted") from exc
        except Exception as exc:  # PyMC's "Not enough samples" (Ctrl-C during tuning), a broken compile...
            if watch.interrupted:
                raise SamplingInterrupted(f"{smoother.name}: {what} interrupted before any draw to keep, "
                                          f"during compilation or tuning ({type(exc).__name__}: {exc})") from exc
            raise
    post = idata.posterior
    chains, draws = int(post.sizes["chain"]), int(post.sizes["draw"])
    if approx is not None:  # ADVI: the draws come from the approximation; its iterations may be short
        hist = getattr(approx, "hist", None)  # the loss of each iteration run
        done = smoother.advi_iterations if hist is None else len(hist)
        short = watch.interrupted or done < smoother.advi_iterations
        partial = {"advi_iterations": int(done)}
        said = f"ADVI stopped after {done:,} of {smoother.advi_iterations:,} iterations"
    else:
        short = watch.interrupted or chains < smoother.chains or draws < smoother.draws
        partial = {"chains": chains, "draws": draws}
        said = (f"the sample holds {chains} of {smoother.chains} chain{'s' if smoother.chains > 1 else ''} and "
                f"{draws:,} of {smoother.draws:,} draws per chain")
    if not short:
        return idata, approx, free, None
    cause = "interrupted" if watch.interrupted else "cut short"
    if not smoother.keep_partial or min(chains, draws) == 0:
        raise SamplingInterrupted(f"{smoother.name}: {what} {cause}: {said}; not a complete fit "
                                  f"(keep_partial=True keeps such a sample)", chains, draws)
    warnings.warn(f"{smoother.name}: {what} {cause}: {said}; kept as a partial fit (keep_partial=True; "
                  f"fit.info['partial'] is True)", PartialSampleWarning, stacklevel=3)
    return idata, approx, free, {"partial": True, "interrupted": bool(watch.interrupted), **partial}
