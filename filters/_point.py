"""What the filters of a rating without a variance share (Elo, DWZ, ECF, Pythagorean).

The state's first column is a rating known exactly (the model's prior variance is 0, no column
holds a standard deviation). :func:`proba` forecasts a game by the model's observation at the
rating difference; :class:`PointRatingFilter` counts time in games and checks a draw model by
building the model.
"""

from __future__ import annotations

from . import kernels as K
from .base import Filter

__all__ = ["PointRatingFilter", "proba"]

#: ``theta[HOME]``: the home advantage, the first parameter of every filter forecasting by :func:`proba`
HOME = 0
_RATING = 0


@K.proba_kernel
def proba(forecast, obs, x, a, b, at_home, theta):
    """The model's forecast at ``d = r_a - r_b + H`` (ratings in column 0, ``H = theta[0]`` when ``a``
    plays at home) with no skill uncertainty."""
    return forecast(obs, x[a, _RATING] - x[b, _RATING] + theta[HOME] * at_home, 0.0)


class PointRatingFilter(Filter):
    """Base of the filters whose state is a rating without a variance, time counted in games
    (``time_unit = "game"``). A subclass forecasting by :func:`proba` names ``home`` first in its
    ``params``."""

    time_unit = "game"

    def __init_subclass__(cls, **kwargs):
        super().__init_subclass__(**kwargs)
        if getattr(cls, "_proba", None) is proba and cls.params[:1] != ("home",):
            raise TypeError(f"{cls.__name__}: filters._point.proba reads theta[0] as the home advantage; its "
                            f"params must start with 'home', not {cls.params!r}")

    def _set_draw(self, owner: str, draw) -> None:
        """Keep ``draw`` as the model's draw model, checked by building the model (``SkillModel``): one
        it refuses is a ``ValueError`` naming ``owner`` and the setting."""
        self.draw = draw
        try:
            self.model
        except (ValueError, TypeError) as exc:
            raise ValueError(f"{owner}: draw={draw!r} is not a draw model: {exc}") from None
