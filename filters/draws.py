"""A draw setting learned from the games, shared by TrueSkill (``draw_probability``) and Weng–Lin
Thurstone–Mosteller (``epsilon``).

Left out (``None``, the default), the setting is learned from the games a method is fit, run or
tuned on: 0 when they have no draw and are too many for that to be chance, else the method's
classic default (TrueSkill's 0.10, openskill's margin 0.1). "Too many" is judged by the classic
setting's own forecasts of these games: a table without a single draw had the chance
``prod(1 - P(draw))`` under them, and below :data:`NO_DRAW_CHANCE` (1e-3) the games speak against
draws (about 150 games at TrueSkill's default settings, 600 at Weng–Lin's margin 0.1). A short
table that lacks draws by chance (a test table, a first walk-forward window of a sport where
draws are rare) keeps the classic value: a forecast of no draw at all would make the three-outcome
log loss of a later draw infinite.

Only whether the games have a draw (and how many games there are) is read, not their draw rate,
so an online run's forecasts learn no draw rate from later games; the rate itself is what
``tune`` fits on the tuning games (the draw setting is tunable where they have draws, started at
the classic value). :meth:`LearnedDraws.resolved` is the method with the value fixed, which a
run uses and its :class:`~filters.run.FilterRun` keeps (``fit.method.draw_probability``, its
``get_params()`` and ``repr``); where no table is at hand (the state verbs ``update`` and
``predict_proba``, ``rate``, ``quality``, ``model``) the classic value applies.

An explicit value above 0 is honoured on any games: it is a valid model, which the games may
speak against but which cannot be refused without breaking reproductions of the reference
libraries (whose defaults forecast draws) and refits on short windows that lack draws by chance.
A run of it warns (:class:`~statespace.methods.settings.DrawWarning`) on games without a draw by the same
test: when its own forecasts give a table without draws less than :data:`NO_DRAW_CHANCE` of
chance.
"""

from __future__ import annotations

import math
import warnings

import numpy as np

from statespace.methods.settings import DrawWarning

#: the run warns when, by its own forecasts, a table without a single draw had less than this chance
NO_DRAW_CHANCE = 1e-3


def has_draws(games) -> bool:
    """Whether some game of ``games`` is a draw."""
    return bool(np.any(games.score == 0.5))


class LearnedDraws:
    """Mixin of a filter whose draw setting ``_draw_setting`` (a constructor argument and the
    attribute of the same name) may be left ``None``: learned from the games (0 where they have
    no draw and are too many for that to be chance, else ``_draw_default``; see the module
    docstring). Put it before the filter's base class."""

    #: the constructor argument (and attribute) of the draw setting
    _draw_setting: str = "draw_probability"
    #: its value where the games have draws, and wherever no games are at hand
    _draw_default: float = 0.0

    def _models_draws(self) -> bool:
        """Whether this method has a draw setting at all (Weng–Lin's half-win variants do not)."""
        return True

    @property
    def _draw_value(self) -> float:
        """The draw setting the kernels use: the value given, or the classic default when it is to
        be learned and no games are at hand."""
        value = getattr(self, self._draw_setting)
        return self._draw_default if value is None else value

    @property
    def learns_draws(self) -> bool:
        """Whether the draw setting is left to the games (``None``): :meth:`resolved` fixes it."""
        return self._models_draws() and getattr(self, self._draw_setting) is None

    def resolved(self, games):
        """This method with the settings it learns from ``games`` fixed: a draw setting left out
        (``None``) becomes 0 when ``games`` have no draw and the classic value's forecasts make
        that implausible (see :mod:`filters.draws`; one run through the games decides), else the
        classic value. ``self`` when nothing is left to learn. :meth:`run`, :meth:`fit` and
        ``tune`` call it, so their results carry the value used."""
        if not self.learns_draws:
            return self
        classic = self.with_params(**{self._draw_setting: self._draw_default})
        if has_draws(games) or self._draw_default == 0:
            return classic
        # the classic value's forecasts, by the run loop itself (this mixin's check left out)
        proba = super(LearnedDraws, classic)._run(games, None, None, False).proba
        if _no_draw_log_chance(proba) < math.log(NO_DRAW_CHANCE):
            return self.with_params(**{self._draw_setting: 0.0})
        return classic

    def _run(self, games, initial, state, record):
        method = self.resolved(games) if hasattr(games, "score") else self
        if method is not self:
            return method._run(games, initial, state, record)
        run = super()._run(games, initial, state, record)
        if not record and self._models_draws() and self._draw_value > 0:
            self._check_draw_free(games, run.proba)
        return run

    def _check_draw_free(self, games, proba: np.ndarray) -> None:
        """:class:`DrawWarning` when ``games`` have no draw but the run's forecasts ``proba`` give a
        table without draws less than :data:`NO_DRAW_CHANCE` of chance."""
        if has_draws(games):
            return
        log_chance = _no_draw_log_chance(proba)
        if log_chance >= math.log(NO_DRAW_CHANCE):
            return
        name = self._draw_setting
        warnings.warn(f"{self.name}: {name}={self._draw_value:g} on {len(games):,} games without a draw: the "
                      f"forecasts expect {float(np.sum(np.clip(proba[:, 1], 0.0, 1.0))):,.1f} draws (no draw at "
                      f"all has chance {_chance(log_chance)}), so every forecast gives draws a share that "
                      f"never happens; leave {name} out (learned from the games: 0 here) or pass {name}=0",
                      DrawWarning, stacklevel=caller_stacklevel())


def _chance(log_chance: float) -> str:
    """A tiny chance from its log, readable where ``exp`` underflows to 0: ``2e-11``, ``1e-6124``."""
    if log_chance > -700:
        return f"{math.exp(log_chance):.1g}"
    return f"1e{math.floor(log_chance / math.log(10)):d}"


def _no_draw_log_chance(proba: np.ndarray) -> float:
    """``log prod(1 - P(draw))``: the log chance, under the forecasts ``proba`` (rows win/draw/loss),
    that none of the games is a draw."""
    p_draw = np.clip(proba[:, 1], 0.0, 1.0 - 1e-16)
    return float(np.sum(np.log1p(-p_draw)))


def caller_stacklevel() -> int:
    """For a warning issued by the function that calls this: the ``stacklevel`` of the first frame
    outside the packages ``filters``, ``smoothers`` and ``statespace`` (a run is reached through
    ``fit``, ``compare`` and ``tune``; ``tune`` through ``method.tune``), so that it names the user's line."""
    import sys

    frame, level = sys._getframe(1), 1
    while frame is not None and frame.f_globals.get("__name__", "").split(".")[0] in ("filters", "smoothers", "statespace"):
        frame, level = frame.f_back, level + 1
    return level
