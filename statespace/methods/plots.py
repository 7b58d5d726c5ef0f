"""Plots of fitted ratings and forecasts (matplotlib).

This module is not imported by ``import statespace``; import it when needed::

    from statespace.methods import plots
    plots.plot_trajectories(fitted, truth=sim.truth)
    plots.plot_calibration(test.score, {"elo": p_elo, "glicko": p_glicko})

Every function draws on ``ax`` when given (and returns it), or on a new figure. Without a
display (and without ``MPLBACKEND`` set) the non-interactive Agg backend is used, so plots can
always be written to files. Fitted results and :func:`statespace.compare`'s table draw these
themselves: ``fitted.plot(players=[...])`` is :func:`plot_trajectories`, ``table.plot()``
:func:`plot_comparison`.

**Crisp on high-density screens.** In a Jupyter kernel with matplotlib's inline backend, the
first figure these functions make switches the inline figures to ``"retina"`` PNGs (twice the
pixels, shown at the same size) when the kernel still has the default format (``{"png"}``):
a format chosen before (``%config InlineBackend.figure_formats = ...``) is left alone, and one
chosen after stays (the switch happens once). Figures written to files take their resolution
from ``savefig(..., dpi=...)``; 150 or more is crisp on such screens.
"""

from __future__ import annotations

import math
import os
import sys
from typing import Mapping, Sequence

import matplotlib

if ("matplotlib.pyplot" not in sys.modules and not os.environ.get("MPLBACKEND")
        and sys.platform.startswith("linux")
        and not (os.environ.get("DISPLAY") or os.environ.get("WAYLAND_DISPLAY"))):
    matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402
from matplotlib.lines import Line2D  # noqa: E402
from matplotlib.patches import Patch  # noqa: E402

from statespace.model import metrics  # noqa: E402
from statespace.model.skillmodel import ELO_SCALE, SkillModel  # noqa: E402
from statespace.methods.protocols import Fitted  # noqa: E402

__all__ = ["plot_trajectories", "plot_calibration", "plot_comparison", "truth_in_units"]

#: Factor between the logistic and probit scales with nearly the same curve:
#: ``logistic(x) ~ Phi(x / 1.702)`` (Bowling et al. 2009), used to put truth in a method's units.
_LOGIT_PROBIT = 1.702


# ---------------------------------------------------------------------------- helpers
#: whether :func:`_crisp_inline` has run (it acts once per session)
_CRISP_CHECKED = False


def _crisp_inline() -> bool:
    """Once per session: in a Jupyter kernel whose matplotlib backend is the inline one and whose
    inline figure formats are still the default ``{"png"}``, switch them to ``{"retina"}``
    (``matplotlib_inline``'s ``InlineBackend.figure_formats``). Returns whether it switched."""
    global _CRISP_CHECKED
    if _CRISP_CHECKED:
        return False
    _CRISP_CHECKED = True
    from statespace._runtime.progress import in_notebook

    if not in_notebook() or "inline" not in str(matplotlib.get_backend()).lower():
        return False
    try:
        from matplotlib_inline.backend_inline import set_matplotlib_formats
        from matplotlib_inline.config import InlineBackend
    except ImportError:  # pragma: no cover - ipykernel's inline backend comes with matplotlib_inline
        return False
    cfg = InlineBackend.instance()
    if set(cfg.figure_formats) != {"png"}:
        return False
    cfg.figure_formats = {"retina"}
    set_matplotlib_formats("retina")
    return True


def _new_figure(**options):
    """``plt.subplots(**options)``, after :func:`_crisp_inline`."""
    _crisp_inline()
    return plt.subplots(**options)


def _new_axes(ax, figsize=(7.5, 4.5)):
    if ax is None:
        _, ax = _new_figure(figsize=figsize, layout="constrained")
    return ax


def _method_label(fitted: Fitted) -> str:
    return repr(fitted.method)


def _model_of(fitted: Fitted) -> SkillModel | None:
    """The model the fitted method assumes (``None`` for a method that declares none)."""
    try:
        model = fitted.method.model
    except NotImplementedError:  # the abstract Filter base
        return None
    return model if isinstance(model, SkillModel) else None


def _units(fitted) -> str:
    """A short description of the rating units of a fitted method, for axis labels."""
    model = _model_of(fitted)
    if model is None:
        return "the method's units"
    if model.link == "logistic" and math.isclose(model.scale, ELO_SCALE, rel_tol=1e-6):
        return "Elo points: 400 = 10:1 odds"
    return f"{model.link} link, scale {model.scale:.4g}"


def truth_in_units(truth: pd.DataFrame, source: SkillModel, target: SkillModel) -> pd.DataFrame:
    """True skills of a simulation (model ``source``) restated in ``target``'s units.

    Skills are mapped affinely so that equal skill differences give (nearly) equal win
    probabilities: ``target.prior_mean + (s - source.prior_mean) * k`` with ``k`` the ratio of
    the scales (times 1.702 or its inverse when one link is logistic and the other probit).
    For Elo on the built-in scenarios (both Elo units, mean 1500) this is the identity.
    """
    k = target.scale / source.scale
    if source.link != target.link:
        k *= 1.0 / _LOGIT_PROBIT if source.link == "logistic" else _LOGIT_PROBIT
    out = truth.copy()
    out["skill"] = target.prior_mean + (truth["skill"].to_numpy(dtype=float) - source.prior_mean) * k
    return out


# ---------------------------------------------------------------------------- trajectories
def plot_trajectories(fitted: Fitted, players: Sequence[str] | None = None, top: int = 6,
                      truth: pd.DataFrame | None = None, band: float = 2.0, ax=None,
                      colors: Sequence | None = None):
    """Rating trajectories of some competitors from ``fitted.trajectories()``.

    Parameters
    ----------
    fitted:
        A fitted method (``method.fit(games)``, a :class:`statespace.methods.protocols.Fitted`): its
        ``trajectories()`` (columns ``time``, ``player``, ``mean`` and, where the method tracks
        it, ``sd``), ``ratings()``, ``games`` and ``method`` (whose ``model`` gives the units).
    players:
        Competitor names to draw; default: the ``top`` best by final mean rating.
    truth:
        Optional DataFrame ``time, player, skill`` (as :attr:`statespace.Simulation.truth`),
        drawn dashed in each competitor's colour. It must be in the method's units (see
        :func:`truth_in_units`); for Elo on the built-in scenarios it already is.
    band:
        Half-width of the shaded band in standard deviations (``mean +- band * sd``), drawn
        only where the method has an ``sd``; ``0`` draws none.

    Each competitor's rating is drawn as a step line: the estimate after each of its games,
    held until its next game. Returns the Axes.
    """
    ax = _new_axes(ax)
    traj = fitted.trajectories()
    if players is None:
        if top is None or top < 1:
            raise ValueError(f"top must be a positive number of competitors, got {top!r}")
        players = list(fitted.ratings()["player"].head(int(top)))
        chosen = f"top {len(players)} by final rating"
    else:
        players = [str(p) for p in ([players] if isinstance(players, str) else players)]
        known = set(traj["player"].astype(str))
        unknown = [p for p in players if p not in known]
        if unknown:
            raise ValueError(f"no games for competitor{'s' if len(unknown) > 1 else ''} "
                             f"{', '.join(map(repr, unknown))}")
        chosen = "selected competitors"
    has_sd = "sd" in traj.columns and band and band > 0
    if colors is None:
        cycle = plt.rcParams["axes.prop_cycle"].by_key().get("color", ["C0"])
        colors = [cycle[i % len(cycle)] for i in range(len(players))]
    truth_groups = dict(tuple(truth.groupby("player", sort=False))) if truth is not None else {}

    drew_truth = False
    for player, color in zip(players, colors):
        t = traj[traj["player"] == player]
        x = t["time"].to_numpy()
        y = t["mean"].to_numpy(dtype=float)
        ax.plot(x, y, drawstyle="steps-post", color=color, lw=1.6, label=str(player))
        if has_sd:
            sd = t["sd"].to_numpy(dtype=float)
            ax.fill_between(x, y - band * sd, y + band * sd, step="post", color=color, alpha=0.15, lw=0)
        tr = truth_groups.get(player)
        if tr is not None and len(tr):
            tr = tr.sort_values("time", kind="stable")
            ax.plot(tr["time"].to_numpy(), tr["skill"].to_numpy(dtype=float), drawstyle="steps-post",
                    color=color, lw=1.0, ls="--", alpha=0.85)
            drew_truth = True

    handles, labels = ax.get_legend_handles_labels()
    if drew_truth:
        handles.append(Line2D([], [], color="0.3", ls="--", lw=1.2))
        labels.append("true skill")
    if has_sd:
        handles.append(Patch(color="0.3", alpha=0.15, lw=0))
        labels.append(f"\u00b1{band:g} sd")
    ax.legend(handles, labels, fontsize="small", loc="best", ncol=2 if len(handles) > 8 else 1,
              framealpha=0.85)
    dated = fitted.games.is_datetime
    ax.set_xlabel("date" if dated else "time")
    ax.set_ylabel(f"rating ({_units(fitted)})")
    ax.set_title(f"{_method_label(fitted)}: rating after each game, {chosen}")
    ax.grid(True, alpha=0.3)
    return ax


# ---------------------------------------------------------------------------- calibration
def plot_calibration(score, forecasts, bins: int = 10, ax=None):
    """Reliability diagram: observed mean score against forecast, in bins of the forecast.

    ``forecasts`` is one array ((n, 3) win/draw/loss or (n,) expected scores) or a mapping
    ``name -> array`` to overlay several methods on the same games. Each point is one bin of
    :func:`statespace.model.metrics.calibration_table` with +-2 standard errors; a calibrated method
    stays near the diagonal. Returns the Axes.
    """
    ax = _new_axes(ax, figsize=(5.5, 5.0))
    if not isinstance(forecasts, Mapping):
        forecasts = {"forecast": forecasts}
    if not forecasts:
        raise ValueError("plot_calibration needs at least one forecast")
    score = np.asarray(score, dtype=float)
    ax.plot([0, 1], [0, 1], color="0.5", ls=":", lw=1, label="perfect calibration")
    markers = "osD^vP*X"
    for j, (name, proba) in enumerate(forecasts.items()):
        cal = metrics.calibration_table(score, proba, bins=bins)
        err = 2 * np.nan_to_num(cal["se"].to_numpy(dtype=float), nan=0.0)
        ax.errorbar(cal["mean_forecast"], cal["mean_score"], yerr=err, marker=markers[j % len(markers)],
                    ms=5, lw=1.2, capsize=3, alpha=0.9, label=str(name))
    ax.set_xlim(0, 1)
    ax.set_ylim(0, 1)
    ax.set_aspect("equal")
    ax.set_xlabel("forecast expected score, P(win) + P(draw)/2")
    ax.set_ylabel("observed mean score (draw = 0.5)")
    ax.set_title(f"Calibration on {score.size:,} games ({bins} bins, \u00b12 se)")
    ax.legend(fontsize="small", loc="upper left", framealpha=0.85)
    ax.grid(True, alpha=0.3)
    return ax


# ---------------------------------------------------------------------------- comparison
def plot_comparison(table: pd.DataFrame, fitted: Fitted | None = None, truth: pd.DataFrame | None = None, *,
                    top: int = 6, bins: int = 10, title: str | None = None):
    """Figure summing up a :func:`statespace.compare` result (also ``table.plot(fitted, truth)``).

    Left: calibration of every compared method on the held-out games
    (``table.attrs["proba"]`` and ``table.attrs["test"]``). Right, when ``fitted`` is given:
    the trajectories of its ``top`` competitors with ``truth`` overlaid (see
    :func:`plot_trajectories`) and a dotted line where the held-out games begin. Returns the
    Figure.
    """
    if "proba" not in table.attrs or "test" not in table.attrs:
        raise ValueError("table has no forecasts: pass the result of statespace.compare")
    test = table.attrs["test"]
    proba = {name: table.attrs["proba"][name] for name in table.index}
    if fitted is None:
        fig, ax_cal = _new_figure(figsize=(6.0, 5.5), layout="constrained")
        ax_traj = None
    else:
        fig, (ax_cal, ax_traj) = _new_figure(nrows=1, ncols=2, figsize=(14.0, 5.8), layout="constrained",
                                             gridspec_kw={"width_ratios": [1, 1.6]})
    plot_calibration(test.score, proba, bins=bins, ax=ax_cal)
    mode = table.attrs.get("mode", "")
    ax_cal.set_title(f"Calibration on {len(test):,} held-out games"
                     + (f" ({mode})" if mode else "") + f"\n{bins} bins, \u00b12 se")
    if ax_traj is not None:
        plot_trajectories(fitted, top=top, truth=truth, ax=ax_traj)
        start = test.time[test.order[0]]
        ax_traj.axvline(start, color="0.4", ls=":", lw=1)
        ax_traj.annotate("held-out games", xy=(start, 0.0), xycoords=("data", "axes fraction"),
                         xytext=(3, 4), textcoords="offset points", rotation=90, ha="left", va="bottom",
                         fontsize="small", color="0.3")
    if title:
        fig.suptitle(title)
    return fig
