"""A run continues forward in time; TrueSkill's quality refuses what rate refuses.

- ``FilterRun.continue_run(games)`` refuses games dated before the end of the run's games (with
  rating periods on both tables: in an earlier period) with a GamesError naming the first such
  row, in every filter; ``allow_past=True`` filters them from the final state all the same; games
  at the run's last time, or later, continue it (they used to be accepted silently whatever their
  date).
- ``TrueSkill.quality`` of one team is refused, as ``rate`` refuses it (it returned 1.0), and
  arithmetic that overflows is an ArithmeticError, not NaN.
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest

import filters
import statespace as ss
from statespace.model.ranges import SCALE_MAX


def table(days, pairs, scores) -> ss.Games:
    """Dated games with each side's points (a win 2-1, a draw 1-1), which Pythagorean needs."""
    return ss.Games.from_frame(pd.DataFrame({
        "time": pd.to_datetime("2023-05-01") + pd.to_timedelta(days, unit="D"),
        "a": [p[0] for p in pairs], "b": [p[1] for p in pairs], "score": scores,
        "score_a": [1 + (s == 1) for s in scores], "score_b": [1 + (s == 0) for s in scores]}))


HISTORY = table([0, 1, 2, 3, 4], ["AB", "CD", "AC", "BD", "AD"], [1, 0, 0.5, 1, 0])


@pytest.mark.parametrize("name", sorted(filters.REGISTRY))
def test_every_filter_refuses_games_before_the_end_naming_the_row(name):
    method = filters.REGISTRY[name]()
    if not method.rates_games:  # a method that rates contests only refuses games, naming itself
        with pytest.raises(ValueError, match=rf"^{name} rates contests of many entrants.*Matches.from_games"):
            method.run(HISTORY)
        return
    run = method.run(HISTORY)
    # rows 0 and 1 (days 5 and 2): row 1 is before the end (day 4), and is named
    mixed = table([5, 2], ["AB", "CD"], [1, 0])
    with pytest.raises(ss.GamesError, match=r"continue_run: row 1 is dated 2023-05-03, before the end of the "
                                            r"fitted history \(2023-05-05\)") as info:
        run.continue_run(mixed)
    assert info.value.rows == [1] and info.value.column == "time"
    # asked for, the past games are filtered from the final state, as before
    assert run.continue_run(mixed, allow_past=True).proba.shape == (2, 3)
    # the last time itself and later continue the run
    assert run.continue_run(table([4, 6], ["BC", "AB"], [1, 0.5])).proba.shape == (2, 3)


def test_the_first_past_game_in_time_order_is_named():
    run = filters.Elo().run(HISTORY)
    with pytest.raises(ss.GamesError, match=r"row 2 is dated 2023-05-01.*as are 1 more of these games"):
        run.continue_run(table([9, 3, 0], ["AB", "CD", "AC"], [1, 0, 1]))


def test_rating_periods_compare_periods():
    weekly = HISTORY.with_periods(every="week")  # 2023-05-01 is a Monday: one period, days 0-6
    run = filters.Glicko().run(weekly)
    # the same week (after the last game) and the next continue; the week before is refused
    assert run.continue_run(table([5, 8], ["AB", "CD"], [1, 0]).with_periods(every="week")).proba.shape == (2, 3)
    with pytest.raises(ss.GamesError, match=r"row 0 is dated period \d+, before the end of the fitted history "
                                            r"\(period \d+\)"):
        run.continue_run(table([-3], ["AB"], [1]).with_periods(every="week"))


def test_continuing_equals_one_run_through_both():
    first, second = HISTORY.take([0, 1, 2]), table([4, 6, 7], ["BD", "AD", "BC"], [1, 0, 1])
    whole = table([0, 1, 2, 4, 6, 7], ["AB", "CD", "AC", "BD", "AD", "BC"], [1, 0, 0.5, 1, 0, 1])
    cont = filters.Elo().run(first).continue_run(second)
    np.testing.assert_allclose(cont.proba, filters.Elo().run(whole).proba[3:], rtol=0, atol=1e-12)


def test_allow_past_must_be_a_flag():
    with pytest.raises(ValueError, match="allow_past must be True or False"):
        filters.Elo().run(HISTORY).continue_run(HISTORY, allow_past="yes")


# ------------------------------------------------------------------ TrueSkill.quality
def test_quality_refuses_one_team_as_rate_does():
    ts = filters.TrueSkill()
    with pytest.raises(ValueError, match="at least two teams"):
        ts.rate([[(25.0, 8.0)]])
    with pytest.raises(ValueError, match="quality needs at least two teams"):
        ts.quality([[(25.0, 8.0)]])
    with pytest.raises(ValueError, match="quality needs at least two teams"):
        ts.quality([[(25.0, 8.0), (20.0, 3.0)]])
    with pytest.raises(ValueError, match="quality needs at least two teams"):
        ts.quality([])


def test_quality_of_two_is_herbrichs_formula():
    # Herbrich et al. (2006) eq. 4 for one against one: sqrt(2 b^2 / c^2) exp(-(mu_a - mu_b)^2 / (2 c^2))
    ts = filters.TrueSkill()
    b = ts.beta
    (ma, sa), (mb, sb) = (30.0, 4.0), (22.0, 6.0)
    c2 = 2 * b * b + sa * sa + sb * sb
    assert ts.quality([[(ma, sa)], [(mb, sb)]]) == pytest.approx(math.sqrt(2 * b * b / c2)
                                                                  * math.exp(-(ma - mb) ** 2 / (2 * c2)), rel=1e-12)


def test_quality_at_the_largest_beta_is_a_number():
    # the largest beta the ranges accept (sqrt(2) beta = 1e100): the determinants pass 1e308 while
    # their ratio is 1 (equal, certain players); it was NaN
    beta = SCALE_MAX / math.sqrt(2.0)
    ts = filters.TrueSkill(beta=beta, sigma=beta)
    assert ts.quality([[(0.0, 1.0)], [(0.0, 1.0)], [(0.0, 1.0)]]) == pytest.approx(1.0, rel=1e-12)
