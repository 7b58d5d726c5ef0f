"""filters._point: what the filters of a rating without a variance share. DWZ, ECF and Pythagorean
forecast by one kernel that reads the home advantage as the first parameter; a filter naming its
parameters otherwise is refused when its class is defined; a draw model the model refuses is an
error naming the method."""

from __future__ import annotations

import math

import numpy as np
import pytest

from filters import _point
from filters.dwz import SIGMA, DWZ
from filters.ecf import ECF
from filters.pythagorean import Pythagorean
from statespace.data.games import Games


def _first_forecast(method, **points) -> np.ndarray:
    """The forecast of a first game between two newcomers, ``a`` at home."""
    games = Games.from_arrays(np.array([0.0, 1.0]), ["a", "b"], ["b", "a"], np.array([1.0, 0.0]),
                              neutral=np.array([False, True]), **points)
    return method.fit(games).proba[0]


@pytest.mark.parametrize("method, win", [
    (DWZ(home=100.0), 0.5 * math.erfc(-100.0 / SIGMA / math.sqrt(2.0))),  # Phi(100 / (200 sqrt 2))
    # logistic at (400 / ln 10) / 8 grade points, 8 Elo points a grade point
    (ECF(home=10.0), 1.0 / (1.0 + math.exp(-10.0 * 8.0 * math.log(10.0) / 400.0))),
    (Pythagorean(home=0.4), 1.0 / (1.0 + math.exp(-0.4))),  # logit scale 1
])
def test_the_shared_forecast_reads_each_filters_home_advantage(method, win):
    assert type(method)._proba is _point.proba and type(method).params[0] == "home"
    points = {"score_a": np.array([3.0, 1.0]), "score_b": np.array([1.0, 3.0])} if method.needs_scores else {}
    p = _first_forecast(method, **points)
    assert p[0] == pytest.approx(win, rel=1e-12) and p[1] == 0.0 and p[2] == pytest.approx(1.0 - win, rel=1e-12)


def test_a_filter_forecasting_by_the_shared_kernel_must_name_home_first():
    with pytest.raises(TypeError, match="params must start with 'home'"):
        class Misnamed(_point.PointRatingFilter):
            params = ("k", "home")
            _proba = _point.proba


@pytest.mark.parametrize("cls, owner", [(DWZ, "DWZ"), (ECF, "ECF"), (Pythagorean, "Pythagorean")])
def test_a_draw_model_the_model_refuses_names_the_method(cls, owner):
    with pytest.raises(ValueError, match=rf"^{owner}: draw='no such model' is not a draw model"):
        cls(draw="no such model")
