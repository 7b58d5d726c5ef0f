r"""The English Chess Federation's grading system (the three-digit ECF grade, 1958-2020).

The rule (R. W. B. Clarke's system as the ECF applied it; described in "ECF grading system",
Wikipedia, and by clubs quoting the ECF grading database, e.g. North London Chess Club's
"grading" page, mjh.orpheusweb.co.uk/nulcc/grading.htm, and Plymouth Chess Club's grading list
page): each game gives a player graded :math:`g` a *performance*

.. math::

    p = \begin{cases} g_\text{opp}' + 50 & \text{win} \\ g_\text{opp}' & \text{draw} \\
    g_\text{opp}' - 50 & \text{loss} \end{cases}, \qquad
    g_\text{opp}' = g + \operatorname{clip}(g_\text{opp} - g,\ -40,\ 40)

(the opponent's grade counts as at most 40 points away from one's own, so that no one gains by
losing to much stronger players and a stronger player's grade cannot fall when winning). A
player's new grade is the mean of the period's performances. A player with fewer than
:math:`N = 30` games in the period had them made up to 30 "at the player's previous grade" (the
ECF's rule for grade categories B-E before 2011, as the Bronowski Trophy's note "Grading
developments 2011-12" describes it; since 2011 the most recent earlier games were used instead,
which needs each player's game history, not a state):

.. math::

    g' = \frac{\sum_j p_j + \max(0, N - n)\, g}{\max(n, N)} = g + \frac{\sum_j (p_j - g)}{\max(n, N)}

for :math:`n` games in the period. Worked example (Wikipedia): A graded 160 beats B graded 140; A's
performance is 190, B's 110. Had B been graded 100, A would score 120 + 50 = 170 and B
140 - 50 = 90. An equivalent form (North London Chess Club's page): the mean of the (capped)
opponents' grades plus the percentage score minus 50.

Place in the state-space view: :math:`p_j - g = 100 (y_j - E_j)` for the score :math:`y_j` of
game :math:`j`, with :math:`E_j = 1/2 + \operatorname{clip}(g - g_j, -40, 40) / 100`, so the ECF
grade is Elo's fixed-gain filter (:data:`~filters.kernels.RULE_SHIFT`) with a *linear* expected
score clipped to [0.1, 0.9] and the gain :math:`100 / \max(n, N)` per game: a
stochastic-gradient step on a model whose win probability rises by 1% per grade point.
Matching that slope with the logistic's at 0, :math:`1 / (4 \alpha) = 1 / 100`, gives a scale
:math:`\alpha = 25` grade points per logistic unit, about 7 Elo points per grade point; the ECF's
own conversions say 8 (Elo = 8 x grade + 600, the factor from "25 grade points score 75%, as 200
Elo points do", quoted in the discussion of bluehorizonweb.com's "New ECF to Elo conversion
formula", 2008) and 7.5 (Elo = 7.5 x grade + 700, the ECF's 2020 conversion, "The calculation of
ECF Grades on a monthly basis", englishchess.org.uk). Forecasts use the logistic link at
``elo_per_grade`` (default 8) Elo points per grade point,
:math:`\alpha = (400 / \ln 10) / \mathtt{elo\_per\_grade}` grade points, through the model's
observation kernels and draw model. Not modelled: the junior increment, ungraded opponents'
estimated grades, negative performances counted as 0.
"""

from __future__ import annotations

import numpy as np

from statespace.model.skillmodel import ELO_SCALE, SkillModel

from . import _checks as C
from . import kernels as K
from ._point import PointRatingFilter, proba as _proba

__all__ = ["ECF"]

#: performance bonus of a win (and malus of a loss) in grade points, and the cap on the grade gap
WIN_POINTS = 50.0
GAP_CAP = 40.0
#: games a grade is based on: fewer in a period are made up at the previous grade
GAMES_REQUIRED = 30.0
#: a newcomer's grade (an average club player)
INITIAL_GRADE = 100.0
#: Elo points per grade point of the forecast's scale (25 grade points score 75%, as 200 Elo points do)
ELO_PER_GRADE = 8.0

#: the kernels' parameters, in ``theta`` order (``home`` first, as :func:`filters._point.proba` reads it)
PARAMS = ("home", "games_required")
_HOME, _N = range(len(PARAMS))
_GRADE = 0


@K.site_kernel
def _site(derivs, forecast, obs, x, theta, a, b, score, score_a, score_b, at_home, weight, scratch):
    """``(p_a - g_a) / max(m_a, N)`` for ``a`` and ``(p_b - g_b) / max(m_b, N)`` for ``b``, where
    ``p_a - g_a = 100 (s - 1/2) - clip(d, -40, 40) = -(p_b - g_b)``, ``d = g_a - g_b + H``."""
    p = _proba(forecast, obs, x, a, b, at_home, theta)
    d = x[a, _GRADE] - x[b, _GRADE] + theta[_HOME] * at_home
    r = 2.0 * WIN_POINTS * (score - 0.5) - min(max(d, -GAP_CAP), GAP_CAP)
    scratch[a, 1] += r / max(scratch[a, 0], theta[_N])
    scratch[b, 1] -= r / max(scratch[b, 0], theta[_N])
    return p


class ECF(PointRatingFilter):
    r"""The ECF grading system as a filter (see the module docstring).

    Parameters
    ----------
    games_required:
        :math:`N`: a period with fewer games is made up to :math:`N` at the previous grade (the
        ECF's 30). In ``[1, 1e6]``; :math:`N = 1` makes the new grade the mean performance of the
        period.
    home:
        Grade points added to ``a``'s grade when it plays at home (0; ``|home| <= 1e300``).
    initial_grade:
        A newcomer's grade (100).
    elo_per_grade:
        The forecast's scale in Elo points per grade point (8; in ``[0.01, 1000]``).
    draw:
        The model's draw model (``"half"``: a draw is half a win, as the grading scores it; or
        ``("davidson", nu)``, ``("threshold", margin)`` in grade points).

    Rating periods: games with a ``period`` (``Games.with_periods``) are graded period by period
    (the ECF's half-year or year); otherwise every game is its own period (:math:`n = 1`, a step
    of :math:`1 / N` towards its performance).
    """

    name = "ecf"
    columns = ("grade",)
    params = PARAMS
    _proba = _proba
    _site = _site
    rule = K.RULE_SHIFT

    def __init__(self, games_required: float = GAMES_REQUIRED, *, home: float = 0.0,
                 initial_grade: float = INITIAL_GRADE, elo_per_grade: float = ELO_PER_GRADE,
                 draw="half"):
        self.games_required = C.number("ECF", "games_required", games_required, 1.0, 1e6)
        self.home = self.elo_per_grade = C.number("ECF", "elo_per_grade", elo_per_grade, 0.01, 1000.0)
        alpha = ELO_SCALE / self.elo_per_grade  # the model's scale, in grade points
        self.home = C.home("ECF", home, alpha)
        self.initial_grade = C.location("ECF", "initial_grade", initial_grade, alpha)
        self._set_draw("ECF", draw)

    def _describe(self) -> str:
        return f"games_required={self.games_required:g}, elo_per_grade={self.elo_per_grade:g}" + (
            f", home={self.home:g}" if self.home else "")

    @property
    def model(self) -> SkillModel:
        r"""Logistic link at :math:`\alpha = (400 / \ln 10) / \mathtt{elo\_per\_grade}` grade points,
        the chosen draw model, no drift and no prior variance (a grade tracks none)."""
        return SkillModel(link="logistic", scale=ELO_SCALE / self.elo_per_grade, prior_mean=self.initial_grade,
                          prior_var=0.0, drift=0.0, draw=self.draw, home=self.home)

    def tunable(self, games) -> dict[str, tuple[float, float]]:
        """``games_required`` in [1, 200], ``elo_per_grade`` in [2, 30] and ``home`` in [-40, 40]
        where some game is not neutral."""
        out = {"games_required": (1.0, 200.0), "elo_per_grade": (2.0, 30.0)}
        if not games.neutral.all():
            out["home"] = (-40.0, 40.0)
        return out

    def prior_row(self) -> np.ndarray:
        return np.array([self.initial_grade])

    def initial_row(self, value) -> np.ndarray:
        """``initial={name: grade}``; ``|grade| <= 1e300``."""
        row = super().initial_row(value)
        C.location(self.name, "initial grade", row[_GRADE], ELO_SCALE / self.elo_per_grade)
        return row


#: Names under which ``statespace compare --methods`` and ``statespace rate --method`` find it.
METHODS = {"ecf": ECF}
