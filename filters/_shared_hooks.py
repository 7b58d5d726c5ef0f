"""What a filter keeps besides its competitors: the *shared* state rows every game (or every game of
a group) sees, such as the EKF's latent home advantage. The defaults of :class:`filters.base.Filter`
(none); :class:`filters._ekf_shared.SharedRows` gives the EKF's. A run reads them through these
hooks only (:mod:`filters._loops`, :mod:`filters.grid`), so a filter without shared rows pays nothing.
"""

from __future__ import annotations

import numpy as np

from statespace.data.games import Games

from .state import FilterState

__all__ = ["SharedRowHooks"]


class SharedRowHooks:
    """The shared rows' hooks of a filter, with their defaults (no shared row, no grouping column)."""

    #: the games' column whose groups have shared rows of their own (the EKF's latent home advantage
    #: and draw tendency per league: ``EKF(group=...)``); None: every game shares them
    group: str | None = None

    def shared_names(self, levels: tuple = ()) -> tuple[str, ...]:
        """Names of the latent states shared by all games (the EKF's drifting home advantage), or
        by the games of a group (``levels``: the groups, with a grouping column), kept as rows
        after the competitors'; default none."""
        return ()

    def shared_prior(self, name: str) -> np.ndarray:  # pragma: no cover - abstract
        """The starting row of the shared state ``name``."""
        raise NotImplementedError

    def shared_row(self, n_rows: int, n_shared: int | None = None) -> int:
        """Index of the first state row shared by games (the shared rows are the last ``n_shared``,
        default :meth:`shared_names`' without groups; the run loops move them forward in time at
        every rating period); -1: none."""
        if n_shared is None:
            n_shared = len(self.shared_names())
        return n_rows - n_shared if n_shared else -1

    def theta_for(self, n_shared: int) -> np.ndarray:
        """:meth:`theta` of a run over a state with ``n_shared`` shared rows (the EKF's counts the
        groups of its grouping column from them)."""
        return self.theta()

    def group_levels(self, games: Games) -> tuple[str, ...]:
        """The groups of :attr:`group` in ``games`` (sorted); () without a grouping column."""
        return ()

    def state_levels(self, state: FilterState) -> tuple[str, ...]:
        """The groups whose shared rows ``state`` holds, in its order; () without a grouping column."""
        return ()

    def home_column(self, games: Games, levels: tuple) -> np.ndarray:
        """The home column the kernels read (default :meth:`Games.home`; with a grouping column the
        game's group among ``levels`` rides on it: :meth:`encode_home`)."""
        return games.home()

    def encode_home(self, home: np.ndarray, groups: np.ndarray, levels: tuple) -> np.ndarray:  # pragma: no cover
        """``home`` with each game's group (a name in ``levels``) on it (a filter with :attr:`group`)."""
        raise NotImplementedError

    def _game_groups(self, group, n: int) -> np.ndarray | None:
        """:meth:`predict_proba`'s ``group`` as ``n`` strings (None without a grouping column)."""
        if self.group is None:
            if group is not None:
                raise ValueError(f"{self.name}: group= is for a filter with a grouping column (EKF(group=...)); "
                                 f"this one has none")
            return None
        if group is None:
            raise ValueError(f"{self.name}: the filter keeps a home advantage and draw tendency per group of "
                             f"{self.group!r}; give each game's group, predict_proba(..., group=...)")
        return np.broadcast_to(np.asarray(group, dtype=object), (n,)).astype(str)

