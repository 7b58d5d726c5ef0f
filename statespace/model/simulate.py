"""Games drawn from a :class:`SkillModel`, with the true skill trajectories kept.

Skills start at ``N(prior_mean, prior_var)`` and move between a competitor's consecutive games
by the model's transition (:meth:`SkillModel.transition`): a random walk with variance ``drift``
per day, or with ``reversion > 0`` the Ornstein-Uhlenbeck step towards ``prior_mean``; each
game's result is drawn from the model's win/draw/loss probabilities at the true skills (no
uncertainty).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from statespace.data.games import Games
from statespace.model.skillmodel import SkillModel

__all__ = ["simulate", "Simulation"]


@dataclass(frozen=True)
class Simulation:
    """A simulated table of games and the truth behind it.

    - ``games``: the :class:`Games`;
    - ``truth``: long DataFrame ``time, player, skill`` with each competitor's true skill at
      each of its games (and its initial skill at the first game);
    - ``skill_a``, ``skill_b``: true skills of ``a`` and ``b`` at each game (row order);
    - ``model``: the generating model; ``name`` and ``description`` for scenarios;
    - ``home_level``: the true home advantage at each game (row order) when it drifts
      (``model.home_drift > 0``), else ``None`` (it is ``model.home``).
    """

    games: Games
    truth: pd.DataFrame
    skill_a: np.ndarray
    skill_b: np.ndarray
    model: SkillModel
    name: str = "simulation"
    description: str = ""
    home_level: np.ndarray | None = None

    def true_proba(self) -> np.ndarray:
        """Win/draw/loss probabilities at the true skills: the best any method can forecast."""
        at_home = ~self.games.neutral
        if self.home_level is not None:
            return self.model.proba(self.skill_a - self.skill_b + self.home_level * at_home)
        return self.model.proba(self.model.diff(self.skill_a, self.skill_b, at_home))


def simulate(model: SkillModel, n_players: int = 30, n_games: int = 600, *, days: float | None = None,
             home_fraction: float = 0.0, start: str = "2000-01-01", seed=None,
             name: str = "simulation", description: str = "") -> Simulation:
    r"""Draw ``n_games`` games among ``n_players`` competitors from ``model``.

    Pairs are drawn uniformly at random (no competitor against itself); game times are spread
    evenly over ``days`` days from ``start`` (default: about one game per competitor per day,
    ``days = 2 n_games / n_players``), so ``model.drift`` is the variance added per day. With
    ``model.reversion`` :math:`= \lambda > 0` a skill :math:`s` drawn :math:`\Delta t` days after
    its last game is drawn from the Ornstein-Uhlenbeck transition,
    :math:`\mathcal{N}\bigl(\mu_0 + a (s - \mu_0),\ v\bigr)` with :math:`\mu_0` the prior mean,
    :math:`a = e^{-\lambda \Delta t}` and :math:`v = q (1 - a^2) / (2 \lambda)` for the drift
    :math:`q` (the step the EKF predicts and the Laplace smoother links nodes with). With ``home_fraction`` > 0 that share of games is
    played at ``a``'s home and gets ``model.home``; the rest are neutral. With
    ``model.home_drift > 0`` the home advantage itself random-walks from ``model.home`` at the
    first game, ``N(0, home_drift * dt)`` per ``dt`` days (kept in ``Simulation.home_level``).

    ``seed`` is an int or a ``numpy.random.Generator``; the same seed gives the same games.
    """
    if n_players < 2:
        raise ValueError(f"need at least 2 competitors, got {n_players}")
    if n_games < 1:
        raise ValueError(f"need at least 1 game, got {n_games}")
    if not 0 <= home_fraction <= 1:
        raise ValueError(f"home_fraction must be in [0, 1], got {home_fraction}")
    model.refuse_ekf_only("simulate")
    rng = np.random.default_rng(seed)
    if days is None:
        days = max(1.0, 2.0 * n_games / n_players)
    a = rng.integers(0, n_players, n_games)
    b = (a + rng.integers(1, n_players, n_games)) % n_players  # never equal to a
    t_days = np.floor(np.linspace(0, days, n_games, endpoint=False))
    home = rng.random(n_games) < home_fraction

    skill = rng.normal(model.prior_mean, np.sqrt(model.prior_var), n_players)
    last = np.full(n_players, np.nan)
    sa = np.empty(n_games)
    sb = np.empty(n_games)
    rec_t, rec_p, rec_s = [], [], []
    sd_step = np.sqrt(model.drift)
    mu = model.prior_mean
    for g in range(n_games):
        for i, out in ((a[g], sa), (b[g], sb)):
            if not np.isnan(last[i]) and t_days[g] > last[i]:
                if model.reversion == 0:  # the random walk, kept as it was (same numbers per seed)
                    skill[i] += sd_step * np.sqrt(t_days[g] - last[i]) * rng.standard_normal()
                else:
                    phi, v = model.transition(t_days[g] - last[i])
                    skill[i] = mu + phi * (skill[i] - mu) + np.sqrt(v) * rng.standard_normal()
            if np.isnan(last[i]) or t_days[g] > last[i]:
                rec_t.append(t_days[g]); rec_p.append(i); rec_s.append(skill[i])
            last[i] = t_days[g]
            out[g] = skill[i]
    home_level = None
    if model.home_drift > 0:  # the shared home advantage's random walk over the game days
        steps = np.sqrt(model.home_drift * np.diff(t_days)) * rng.standard_normal(n_games - 1)
        home_level = model.home + np.r_[0.0, np.cumsum(steps)]
        p = model.proba(sa - sb + home_level * home)
    else:
        p = model.proba(model.diff(sa, sb, home))
    u = rng.random(n_games)
    score = np.where(u < p[:, 0], 1.0, np.where(u < p[:, 0] + p[:, 1], 0.5, 0.0))

    width = len(str(n_players - 1))
    names = np.array([f"P{i:0{width}d}" for i in range(n_players)], dtype=object)
    t0 = np.datetime64(start, "D")
    times = t0 + t_days.astype("timedelta64[D]")
    games = Games.from_arrays(times, names[a], names[b], score, neutral=~home)
    truth = pd.DataFrame({"time": t0 + np.asarray(rec_t).astype("timedelta64[D]"), "player": names[rec_p],
                          "skill": rec_s})
    return Simulation(games, truth, sa, sb, model, name, description, home_level)
