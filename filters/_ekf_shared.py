"""The EKF's shared state rows: the latent home advantage (``home_drift > 0``) and draw tendency
(``draw_drift > 0``) that every game sees, and (``EKF(group=...)``) a block per group of a grouping
column holding that group's own part of them: their names, starting rows, how a run finds a game's
rows (the home column the kernels read, :func:`filters._ekf_kernels._block`) and the readers of
them (:meth:`SharedRows.home_advantage`, :meth:`SharedRows.group_effects`). A mixin of
:class:`filters.ekf.EKF`, which holds ``skill_model``, ``group``, the four ``group_*`` settings and
``name``.

A group's home advantage is ``h_c + h_g``: the common part ``h_c`` (the latent row, or the fixed
``model.home``) and the group's ``h_g``, a row that starts at ``N(0, group_home_var)`` and walks with
``group_home_drift`` (where there is no common row, it starts at ``N(model.home, group_home_var)``
and holds all of it). The draw tendency likewise, with ``group_draw_var`` and ``group_draw_drift``
around the observation's ``tilt``; and (Goals) a part of the goal base: a shift ``e`` of both sides'
log-rates by ``e / (2 scale)``, ``N(0, group_base_var)`` at the start (rating points^2, as the
skills), walking with ``group_base_drift``. With the group settings at 0 the groups' rows stay at
their start: the ungrouped model.
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd

from statespace.data.games import Games
from statespace.model import ranges as R
from statespace.model.skillmodel import DRAW_DRIFT_MAX, SkillModel

from ._ekf_layout import _GROUPS, _MEAN, _SD
from .state import FilterState

__all__ = ["HOME_ROW", "DRAW_ROW", "BASE_ROW", "GROUP_SETTINGS", "SharedRows", "check_group"]

#: Name of the state row that holds the latent home advantage (``SkillModel.home_drift > 0``):
#: after the competitors' rows, never a competitor (``ratings()`` leaves it out); with a grouping
#: column each group's part is ``"(home advantage: <group>)"``.
HOME_ROW = "(home advantage)"
#: Name of the state row that holds the latent draw tendency (``SkillModel.draw_drift > 0``): the
#: log of the factor on the draw's odds, after the home advantage's; with a grouping column each
#: group's part is ``"(draw tendency: <group>)"``.
DRAW_ROW = "(draw tendency)"
#: a group's part of the goal base: ``"(goal base: <group>)"``
BASE_ROW = "(goal base)"
#: the EKF's settings of a grouping column: the spread of the groups' parts at the start and their
#: drifts (home: rating points^2, per unit of time; draws: the tilt's log-odds^2)
GROUP_SETTINGS = ("group_home_var", "group_home_drift", "group_draw_var", "group_draw_drift", "group_base_var",
                  "group_base_drift")
#: the largest ``group_draw_var``: an sd of 3 in the log of the draw's odds (a factor of 20)
GROUP_DRAW_VAR_MAX = 9.0


def check_group(group, model: SkillModel, covariance: str, values: dict) -> dict:
    """``EKF(group=..., group_home_var=..., ...)`` checked: a column name, the diagonal form, each
    setting within its range, some part to give each group, a draw part only where the observation
    has a tilt. Returns the settings as floats."""
    alpha = model.scale
    out = {"group_home_var": R.variance("EKF", "group_home_var", values["group_home_var"], alpha),
           "group_home_drift": R.variance("EKF", "group_home_drift", values["group_home_drift"], alpha),
           "group_draw_var": R.number("EKF", "group_draw_var", values["group_draw_var"], 0.0, GROUP_DRAW_VAR_MAX),
           "group_draw_drift": R.number("EKF", "group_draw_drift", values["group_draw_drift"], 0.0, DRAW_DRIFT_MAX),
           "group_base_var": R.variance("EKF", "group_base_var", values["group_base_var"], alpha),
           "group_base_drift": R.variance("EKF", "group_base_drift", values["group_base_drift"], alpha)}
    given = {k: v for k, v in out.items() if v > 0}
    if group is None:
        if given:
            raise ValueError(f"EKF: {', '.join(f'{k}={v:g}' for k, v in given.items())} are settings of a grouping "
                             f"column; give group= (a column of the games) too")
        return out
    if not isinstance(group, str) or not group:
        raise ValueError(f"EKF: group must be the name of a column of the games (a string), got {group!r}")
    if covariance != "diagonal":
        raise ValueError(f"EKF: a home advantage and draw tendency per group (group={group!r}) are filtered with "
                         f"covariance='diagonal' only, got covariance={covariance!r}")
    if not given:
        raise ValueError(f"EKF: group={group!r} gives each group its own part of the home advantage "
                         f"(group_home_var, group_home_drift > 0), of the draw tendency (group_draw_var, "
                         f"group_draw_drift > 0) or of the goal base (group_base_var, group_base_drift > 0); with "
                         f"all of them 0 the groups would change nothing")
    if out["group_draw_var"] > 0 or out["group_draw_drift"] > 0:
        obs = model.observation
        if getattr(type(obs), "tilt_at", None) is None:
            raise ValueError(f"EKF: a draw tendency per group tilts the draws, which the {type(obs).__name__} "
                             f"observation has no tilt for; use Goals, or group_draw_var=group_draw_drift=0")
        if getattr(obs, "rho", 0.0) != 0.0 or getattr(obs, "inflation", 0.0) != 0.0 or model.two_skills:
            raise ValueError("EKF: a draw tendency per group tilts the draws, which Goals' rho and inflation "
                             "change too and two skills do not filter; give rho=0, inflation=0 and one skill, or "
                             "group_draw_var=group_draw_drift=0")
    if out["group_base_var"] > 0 or out["group_base_drift"] > 0:
        obs = model.observation
        if getattr(type(obs), "shift_at", None) is None:
            raise ValueError(f"EKF: a goal base per group shifts the goal rates, which the {type(obs).__name__} "
                             f"observation does not read; use Goals, or group_base_var=group_base_drift=0")
        tilted = model.draw_drift > 0 or out["group_draw_var"] > 0 or out["group_draw_drift"] > 0
        if tilted or any(getattr(obs, k) != 0.0 for k in ("rho", "covariance", "inflation", "tilt")):
            raise ValueError("EKF: a goal base per group is filtered with the counts' own law and no draw tilt; give "
                             "Goals rho=0, covariance=0, inflation=0, tilt=0, draw_drift=0 and no draw part per group, "
                             "or group_base_var=group_base_drift=0")
    return out


class SharedRows:
    """The shared rows of :class:`filters.ekf.EKF` (see the module docstring)."""

    @property
    def latent_home(self) -> bool:
        """Whether the home advantage is a latent state (``model.home_drift > 0``)."""
        return self.skill_model.home_drift > 0

    def _common(self) -> tuple[str, ...]:
        """The common block's rows, by kind: ``"home"`` (``home_drift > 0``) then ``"draw"``
        (``draw_drift > 0``)."""
        return (("home",) if self.latent_home else ()) + (("draw",) if self.skill_model.draw_drift > 0 else ())

    def _block(self) -> tuple[str, ...]:
        """A group's block's rows, by kind (none without a grouping column)."""
        if self.group is None:
            return ()
        return ((("home",) if self.group_home_var > 0 or self.group_home_drift > 0 else ())
                + (("draw",) if self.group_draw_var > 0 or self.group_draw_drift > 0 else ())
                + (("base",) if self.group_base_var > 0 or self.group_base_drift > 0 else ()))

    def shared_names(self, levels: tuple = ()) -> tuple[str, ...]:
        """The latent home advantage's row (:data:`HOME_ROW`) when ``model.home_drift > 0``, then the
        latent draw tendency's (:data:`DRAW_ROW`) when ``model.draw_drift > 0``; then, with a grouping
        column (:attr:`group`), each group of ``levels``' parts, ``"(home advantage: <group>)"``."""
        common = tuple(HOME_ROW if kind == "home" else DRAW_ROW for kind in self._common())
        stem = {"home": HOME_ROW[:-1], "draw": DRAW_ROW[:-1], "base": BASE_ROW[:-1]}
        return common + tuple(f"{stem[kind]}: {level})" for level in levels for kind in self._block())

    def shared_prior(self, name: str) -> np.ndarray:
        """The common home advantage starts at ``model.home``, the common draw tendency at the
        observation's ``tilt``, both known exactly; a group's parts at ``N(0, group_*_var)``
        (``N(home or tilt, group_*_var)`` where there is no common row)."""
        m = self.skill_model
        pad = (0.0, 0.0) if m.two_skills else ()  # a shared row has no openness
        if name == DRAW_ROW:
            return np.array([m.observation.tilt, 0.0, *pad])
        if name == HOME_ROW:
            return np.array([m.home, 0.0, *pad])
        if name.startswith(BASE_ROW[:-1] + ": "):
            return np.array([0.0, math.sqrt(self.group_base_var), *pad])
        if name.startswith(DRAW_ROW[:-1] + ": "):
            return np.array([0.0 if m.draw_drift > 0 else m.observation.tilt, math.sqrt(self.group_draw_var), *pad])
        return np.array([0.0 if self.latent_home else m.home, math.sqrt(self.group_home_var), *pad])

    def group_levels(self, games: Games) -> tuple[str, ...]:
        """The groups of :attr:`group` in ``games`` (:meth:`statespace.Games.groups`)."""
        return () if self.group is None else games.groups(self.group)[0]

    def state_levels(self, state: FilterState) -> tuple[str, ...]:
        """The groups whose rows ``state`` holds (the names of its groups' blocks)."""
        if self.group is None:
            return ()
        return tuple(name.split(": ", 1)[1][:-1] for name in state.shared[len(self._common())::len(self._block())])

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
        shared rows (the common block, then a block per group)."""
        theta = self.theta()
        if self.group is not None:
            theta[_GROUPS] = (n_shared - len(self._common())) // len(self._block())
        return theta

    def _group_box(self) -> dict[str, tuple[float, float]]:
        """What :meth:`filters.ekf.EKF.tunable` adds for the settings of a grouping column that are
        > 0 (opted in): ``group_home_var`` in [1e-4, 1] scale^2, ``group_home_drift`` in [1e-9, 0.1]
        scale^2 per unit of time, ``group_draw_var`` in [1e-6, 1], ``group_draw_drift`` in [1e-10, 1e-2]."""
        s2 = self.skill_model.scale ** 2
        boxes = {"group_home_var": (1e-4 * s2, s2), "group_home_drift": (1e-9 * s2, 0.1 * s2),
                 "group_draw_var": (1e-6, 1.0), "group_draw_drift": (1e-10, 1e-2),
                 "group_base_var": (1e-4 * s2, s2), "group_base_drift": (1e-9 * s2, 0.1 * s2)}
        return {k: box for k, box in boxes.items() if getattr(self, k) > 0} if self.group is not None else {}

    def _parts(self, state: FilterState, kind: str, group=None) -> tuple[float, float]:
        """Mean and variance of ``kind``'s common part plus, with ``group``, that group's part."""
        m = self.skill_model
        mean, var = (m.home if kind == "home" else m.observation.tilt), 0.0
        if kind in self._common():
            row = state.shared_row(HOME_ROW if kind == "home" else DRAW_ROW)
            mean, var = row[_MEAN], row[_SD] ** 2
        elif kind in self._block() and group is not None:
            mean = 0.0  # the group's row holds all of it
        if group is not None and kind in self._block():
            row = state.shared_row(f"{HOME_ROW[:-1] if kind == 'home' else DRAW_ROW[:-1]}: {group})")
            mean, var = mean + row[_MEAN], var + row[_SD] ** 2
        return float(mean), float(var)

    def home_advantage(self, state: FilterState, group: str | None = None) -> tuple[float, float]:
        """Mean and sd of the home advantage in ``state`` (e.g. ``run.state``), in rating
        points: the latent state's (``home_drift > 0``; as of the state's last game, without
        the drift since), or ``(model.home, 0)`` when it is fixed. With a grouping column,
        ``group``'s (one of :meth:`state_levels`; the common part plus the group's, whose sds the
        diagonal filter adds in quadrature)."""
        if self.group is not None and "home" in self._block():
            levels = self.state_levels(state)
            if group is None or str(group) not in levels:
                raise ValueError(f"{self.name}: the home advantage is per group of {self.group!r}; give group=, one "
                                 f"of {list(levels)}" + ("" if group is None else f" (got {group!r})"))
        elif self.latent_home and HOME_ROW not in state.shared:
            raise ValueError(f"{self.name}: this state has no latent home advantage row ({HOME_ROW!r}); "
                             f"it comes from a filter with home_drift=0")
        mean, var = self._parts(state, "home", None if group is None else str(group))
        return mean, math.sqrt(var)

    def group_effects(self, state: FilterState) -> pd.DataFrame:
        """One row per group of :attr:`group` in ``state``: its home advantage's mean and sd (``home``,
        ``home_sd``; rating points) and draw tendency's (``draw_tilt``, ``draw_tilt_sd``: the log of
        the factor on the draw's odds), the common part plus the group's (the sds added in
        quadrature), as of the state's last game; and the group's own parts (``home_part``,
        ``draw_part``: 0 for a group as the others). NaN where the groups have no such part. With a
        goal base per group, ``base_part`` and ``base_part_sd``: its shift of both sides' log-rates."""
        if self.group is None:
            raise ValueError(f"{self.name}: the filter has no grouping column; give EKF(group=...)")
        levels = self.state_levels(state)
        out = pd.DataFrame(index=pd.Index(levels, name=self.group))
        for kind, cols in (("home", ("home", "home_sd", "home_part")), ("draw", ("draw_tilt", "draw_tilt_sd",
                                                                                  "draw_part"))):
            if kind in self._block():
                parts = [self._parts(state, kind, g) for g in levels]
                base = self._parts(state, kind)[0]  # the common part (model.home or the tilt without a row)
                out[cols[0]] = [p[0] for p in parts]
                out[cols[1]] = [math.sqrt(p[1]) for p in parts]
                out[cols[2]] = [p[0] - base for p in parts]
            else:
                out[cols[0]] = out[cols[1]] = out[cols[2]] = np.nan
        if "base" in self._block():  # in the log-rates' units: the shift over 2 scale
            rows = [state.shared_row(f"{BASE_ROW[:-1]}: {g})") for g in levels]
            c = 0.5 / self.skill_model.scale
            out["base_part"] = [c * r[_MEAN] for r in rows]
            out["base_part_sd"] = [c * r[_SD] for r in rows]
        return out
