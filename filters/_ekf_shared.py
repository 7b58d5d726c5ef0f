"""The EKF's shared state rows: the latent home advantage (``home_drift > 0``) and draw tendency
(``draw_drift > 0``) that every game sees, or (``EKF(group=...)``) a block of them per group of a
grouping column: their names, starting rows, how a run finds a game's block (the home column the
kernels read, :func:`filters._ekf_kernels._block`) and the readers of them (:meth:`SharedRows.home_advantage`,
:meth:`SharedRows.group_effects`). A mixin of :class:`filters.ekf.EKF`, which holds ``skill_model``,
``group`` and ``name``.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from statespace.data.games import Games
from statespace.model.skillmodel import SkillModel

from ._ekf_layout import _GROUPS, _MEAN, _SD
from .state import FilterState

__all__ = ["HOME_ROW", "DRAW_ROW", "SharedRows", "check_group"]

#: Name of the state row that holds the latent home advantage (``SkillModel.home_drift > 0``):
#: after the competitors' rows, never a competitor (``ratings()`` leaves it out); with a grouping
#: column one per group, ``"(home advantage: <group>)"``.
HOME_ROW = "(home advantage)"
#: Name of the state row that holds the latent draw tendency (``SkillModel.draw_drift > 0``): the
#: log of the factor on the draw's odds, after the home advantage's; with a grouping column one per
#: group, ``"(draw tendency: <group>)"``.
DRAW_ROW = "(draw tendency)"


def check_group(group, model: SkillModel, covariance: str) -> None:
    """``EKF(group=...)``: a column name, the diagonal form, and some latent effect to give each group."""
    if not isinstance(group, str) or not group:
        raise ValueError(f"EKF: group must be the name of a column of the games (a string), got {group!r}")
    if covariance != "diagonal":
        raise ValueError(f"EKF: a home advantage and draw tendency per group (group={group!r}) are filtered with "
                         f"covariance='diagonal' only, got covariance={covariance!r}")
    if not (model.home_drift > 0 or model.draw_drift > 0):
        raise ValueError(f"EKF: group={group!r} gives each group its own latent home advantage (home_drift > 0) "
                         f"and draw tendency (draw_drift > 0); the model has neither, so the groups would change "
                         f"nothing: give home_drift or draw_drift > 0, or group=None")


class SharedRows:
    """The shared rows of :class:`filters.ekf.EKF` (see the module docstring)."""

    @property
    def latent_home(self) -> bool:
        """Whether the home advantage is a latent state (``model.home_drift > 0``)."""
        return self.skill_model.home_drift > 0

    def _block(self) -> tuple[str, ...]:
        """The shared rows of one group, by kind: ``"home"`` (``home_drift > 0``) then ``"draw"``
        (``draw_drift > 0``)."""
        return (("home",) if self.latent_home else ()) + (("draw",) if self.skill_model.draw_drift > 0 else ())

    def shared_names(self, levels: tuple = ()) -> tuple[str, ...]:
        """The latent home advantage's row (:data:`HOME_ROW`) when ``model.home_drift > 0``, then the
        latent draw tendency's (:data:`DRAW_ROW`) when ``model.draw_drift > 0``; with a grouping
        column (:attr:`group`) these two per group of ``levels``, ``"(home advantage: <group>)"``."""
        if self.group is None:
            return tuple(HOME_ROW if kind == "home" else DRAW_ROW for kind in self._block())
        return tuple(f"{HOME_ROW[:-1] if kind == 'home' else DRAW_ROW[:-1]}: {level})"
                     for level in levels for kind in self._block())

    def shared_prior(self, name: str) -> np.ndarray:
        """The home advantage starts at ``model.home``, the draw tendency at the observation's
        ``tilt``; both known exactly."""
        pad = (0.0, 0.0) if self.skill_model.two_skills else ()  # a shared row has no openness
        if name == DRAW_ROW or name.startswith(DRAW_ROW[:-1] + ": "):
            return np.array([self.skill_model.observation.tilt, 0.0, *pad])
        return np.array([self.skill_model.home, 0.0, *pad])

    def group_levels(self, games: Games) -> tuple[str, ...]:
        """The groups of :attr:`group` in ``games`` (:meth:`statespace.Games.groups`)."""
        return () if self.group is None else games.groups(self.group)[0]

    def state_levels(self, state: FilterState) -> tuple[str, ...]:
        """The groups whose rows ``state`` holds (the names of its blocks of shared rows)."""
        if self.group is None:
            return ()
        k = len(self._block())
        return tuple(name.split(": ", 1)[1][:-1] for name in state.shared[::k])

    def home_column(self, games: Games, levels: tuple) -> np.ndarray:
        """:meth:`Games.home`, and with a grouping column each game's group ``j`` (its place in
        ``levels``, the state's blocks) as ``at_home + 2 j``: the kernels find the group's rows
        from it (:func:`filters._ekf_kernels._block`)."""
        if self.group is None:
            return games.home()
        names, codes = games.groups(self.group)
        place = {level: j for j, level in enumerate(levels)}
        return games.home() + 2.0 * np.array([place[n] for n in names], dtype=np.float64)[codes]

    def encode_home(self, home, groups, levels: tuple) -> np.ndarray:
        """:meth:`home_column` of games given as arrays (:meth:`predict_proba`): ``home`` in [0, 1]."""
        home = np.asarray(home, dtype=np.float64)
        if np.any(~((home >= 0.0) & (home <= 1.0))):
            raise ValueError(f"{self.name}: at_home must be within [0, 1] with a grouping column, got "
                             f"{home[~((home >= 0.0) & (home <= 1.0))][0]!r}")
        place = {level: j for j, level in enumerate(levels)}
        return home + 2.0 * np.array([place[g] for g in groups], dtype=np.float64)

    def theta_for(self, n_shared: int) -> np.ndarray:
        """:meth:`theta`, with a grouping column counting the state's groups from its ``n_shared``
        shared rows (a block per group)."""
        theta = self.theta()
        if self.group is not None:
            theta[_GROUPS] = n_shared // len(self._block())
        return theta

    def home_advantage(self, state: FilterState, group: str | None = None) -> tuple[float, float]:
        """Mean and sd of the home advantage in ``state`` (e.g. ``run.state``), in rating
        points: the latent state's (``home_drift > 0``; as of the state's last game, without
        the drift since), or ``(model.home, 0)`` when it is fixed. With a grouping column,
        ``group``'s (one of :meth:`state_levels`)."""
        if not self.latent_home:
            return float(self.skill_model.home), 0.0
        name = HOME_ROW
        if self.group is not None:
            levels = self.state_levels(state)
            if group is None or str(group) not in levels:
                raise ValueError(f"{self.name}: the home advantage is per group of {self.group!r}; give group=, one "
                                 f"of {list(levels)}" + ("" if group is None else f" (got {group!r})"))
            name = f"{HOME_ROW[:-1]}: {group})"
        if name not in state.shared:
            raise ValueError(f"{self.name}: this state has no latent home advantage row ({name!r}); "
                             f"it comes from a filter with home_drift=0")
        row = state.shared_row(name)
        return float(row[_MEAN]), float(row[_SD])

    def group_effects(self, state: FilterState) -> pd.DataFrame:
        """One row per group of :attr:`group` in ``state``: its latent home advantage's mean and sd
        (``home``, ``home_sd``; rating points) and draw tendency's (``draw_tilt``, ``draw_tilt_sd``: the
        log of the factor on the draw's odds), each as of the group's last game (NaN: not latent)."""
        if self.group is None:
            raise ValueError(f"{self.name}: the filter has no grouping column; give EKF(group=...)")
        levels = self.state_levels(state)
        block = self._block()
        n = len(state.players)
        out = pd.DataFrame(index=pd.Index(levels, name=self.group))
        for kind, cols in (("home", ("home", "home_sd")), ("draw", ("draw_tilt", "draw_tilt_sd"))):
            if kind in block:
                rows = n + np.arange(len(levels)) * len(block) + block.index(kind)
                out[cols[0]] = state.values[rows, _MEAN]
                out[cols[1]] = state.values[rows, _SD]
            else:
                out[cols[0]] = out[cols[1]] = np.nan
        return out

