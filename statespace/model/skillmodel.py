r"""The one latent model every method in this project approximates.

Skill of competitor :math:`i` at time :math:`t` is :math:`s_i(t)`:

- prior at first appearance: :math:`s_i \sim \mathcal{N}(\mu_0, \sigma_0^2)` (``prior_mean``,
  ``prior_var``);
- dynamics, a Gaussian random walk: :math:`s_i(t + \Delta t) = s_i(t) + \mathcal{N}(0, q\,\Delta t)`
  with the drift :math:`q` (``drift``); (or, with ``reversion`` :math:`\lambda > 0`, an
  Ornstein-Uhlenbeck process towards :math:`\mu_0`);
- observation of a game a vs b through :math:`d = s_a - s_b + h\,[a \text{ at home}]` (:math:`h`
  the home advantage, ``home``) and an observation model (:mod:`statespace.model.observation`): by
  default :class:`~statespace.Outcome`, :math:`P(a \text{ beats } b) = F(d / \alpha)` with the
  scale :math:`\alpha` (``scale``), :math:`F` the logistic function (Bradley-Terry) or the standard
  normal cdf :math:`\Phi` (Thurstone-Mosteller), plus a draw model; or the score margin
  (:class:`~statespace.Margin`) or each side's goals (:class:`~statespace.Goals`). The home
  advantage is a fixed number, or (``home_drift > 0``) a latent random walk of its own, shared
  by all competitors.

``SkillModel`` holds exactly these numbers and knows nothing about inference methods
(filters and smoothers read it; it never reads them).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field, fields

import numpy as np

from statespace.model import numeric as nx
from statespace.model import ranges as R
from statespace.model.observation import Observation
from statespace.model.outcome import Davidson, DrawModel, HalfWin, NoDraw, Outcome, Threshold, as_draw

#: the draw models live in statespace.model.outcome (imported here too)
__all__ = ["SkillModel", "ELO_SCALE"]

#: The Elo/Glicko scale: 400 / ln 10 = 173.7178 rating points per logistic unit, so that
#: a 400-point lead means odds of 10 to 1.
ELO_SCALE = 400.0 / math.log(10.0)
#: the fastest mean reversion, per unit of time: at 1e3 a skill forgets all but e^-1000 of its lead
#: within one unit, so a faster one says nothing more
REVERSION_MAX = 1e3
#: The largest ``draw_drift``: a log-odds variance of 1 per unit of time (per day, the draws' odds
#: could double or halve in a day); football's draw rates move by hundredths a decade.
DRAW_DRIFT_MAX = 1.0


@dataclass(frozen=True)
class SkillModel:
    r"""The shared random-walk skill model (see the module docstring).

    Parameters
    ----------
    link:
        ``"logistic"`` (Bradley-Terry; Elo, Glicko) or ``"probit"`` (Thurstone-Mosteller;
        TrueSkill).
    scale:
        Skill difference :math:`\alpha` that counts as one unit of the link. Elo and Glicko use
        :math:`400 / \ln 10 = 173.72` (a 400-point lead gives 10:1 odds); TrueSkill uses
        :math:`\sqrt{2}\,\beta`.
    prior_mean, prior_var:
        Skill of a newcomer, :math:`\mathcal{N}(\mu_0, \sigma_0^2)`.
    drift:
        Variance :math:`q` added to each skill per unit of time (a day, a rating period or a game,
        whatever the method counts time in). 0 means static skills.
    draw:
        ``"none"``, ``"half"``, ``("threshold", margin)``, ``("davidson", nu)`` or an instance of
        :class:`NoDraw`, :class:`HalfWin`, :class:`Threshold`, :class:`Davidson`.
    home:
        Skill :math:`h` added to ``a`` when ``a`` plays at home (a game not flagged neutral).
    reversion:
        Mean reversion :math:`\lambda` per unit of time (0: a pure random walk). With
        :math:`\lambda > 0` skills follow
        an Ornstein-Uhlenbeck process towards ``prior_mean`` (see :meth:`predict`): how season
        regression (e.g. FiveThirtyEight's NFL Elo regressing a third towards the mean between
        seasons) appears in a continuous-time model.
    home_drift:
        Variance added per unit of time to the home advantage (0: the home advantage is the fixed
        number ``home``). With ``home_drift > 0`` the home advantage is one more latent state,
        shared by all competitors: it starts at ``home`` at the first game (known exactly) and
        follows its own Gaussian random walk,
        :math:`h(t + \Delta t) = h(t) + \mathcal{N}(0, q_h\,\Delta t)` with :math:`q_h` the
        ``home_drift``, so
        that a league whose home advantage shrinks over the decades is described by the model.
        The EKF tracks it (diagonal covariance) and :func:`statespace.simulate` draws it; the
        Laplace smoother refuses it.

    draw_drift:
        Variance added per unit of time to the draw tendency :math:`\theta`, the log of a factor on
        every game's odds of a draw (the observation's ``tilt``; :class:`~statespace.Goals` only; 0,
        the default: a fixed tilt). With ``draw_drift > 0`` :math:`\theta` is one more latent state
        shared by all games, starting at the observation's ``tilt`` (known exactly) and following
        its own Gaussian random walk, so that a league whose draws grow rarer over the decades is
        described by the model. Only the EKF (diagonal covariance) filters it; in log-odds squared
        per unit of time, in :math:`[0, 1]` (:data:`DRAW_DRIFT_MAX`).

    openness_var, openness_drift:
        Two skills per competitor, attack :math:`A` and defence :math:`D` (:class:`~statespace.Goals`
        only; 0 and 0, the default: one skill). The competitor's skill :math:`s` is then
        :math:`\mu_0 + A + D` and its *openness* :math:`o = A - D` a second latent state, so that with
        :math:`e = o_a + o_b` a game's log-rates are
        :math:`\eta_0 + (d \pm e)/(2\alpha)`, i.e. :math:`\eta_0 + (A_a - D_b + h/2)/\alpha` for
        ``a``'s goals and :math:`\eta_0 + (A_b - D_a - h/2)/\alpha` for ``b``'s (Maher 1982's attack
        and defence, each a random walk). The openness starts at :math:`\mathcal N(0,`
        ``openness_var`` :math:`)` and follows its own Gaussian random walk with ``openness_drift``
        per unit of time (mean reversion, if any, pulls it towards 0 at the skills' rate), independent
        of :math:`s`: attack and defence have equal variances and the correlation
        :math:`(q - q_o)/(q + q_o)` for drifts :math:`q` (``drift``) and :math:`q_o`. The EKF
        (diagonal covariance) filters it and the Laplace and PyMC smoothers fit it, with the counts' own law (no ``rho``, ``covariance``,
        ``inflation`` or ``tilt``; no ``draw_drift``); ranges as ``prior_var`` and ``drift``.

    observation:
        What a game shows of the skill difference (see :mod:`statespace.model.observation`). ``None``
        (the default): :class:`~statespace.Outcome` built from ``link`` and ``draw``. An
        :class:`~statespace.Outcome` sets ``link`` and ``draw`` (giving a different non-default
        ``link`` or ``draw`` as well is an error). :class:`~statespace.Margin` (the score
        difference, in skill units = points) and :class:`~statespace.Goals` (each side's count,
        negative binomial) read the games' ``score_a`` and ``score_b``; with them ``link`` and ``draw``
        stay at their defaults and mean nothing.

    Accepted ranges (:mod:`statespace.model.ranges`, in units of the scale :math:`\alpha`): ``scale`` in
    :math:`[10^{-100}, 10^{100}]`; ``prior_mean`` and ``home`` within :math:`\pm 10^6\alpha`;
    ``prior_var``, ``drift`` and ``home_drift`` in :math:`[0, (10^3\alpha)^2]` (an sd of at most
    :math:`10^3\alpha`: flat over every rating a game can tell apart); ``reversion`` in
    :math:`[0, 10^3]` per unit of time. Any Python or NumPy number; outside, a ``ValueError``
    naming the setting, its range and the value.

    Skill uncertainty in forecasts
    ------------------------------
    :meth:`proba` takes the mean :math:`m` (``diff``) and the variance :math:`v` (``var``) of the
    skill difference and integrates the Gaussian uncertainty out (each observation says how; for
    :class:`~statespace.Outcome`, with :math:`x \sim \mathcal{N}(m, v)`: exactly for the probit
    link,

    .. math::

        \mathrm{E}\bigl[\Phi(x / \alpha)\bigr] = \Phi\left(\frac{m}{\sqrt{\alpha^2 + v}}\right),

    and for the logistic link by Glickman's approximation

    .. math::

        \mathrm{E}\bigl[\operatorname{logistic}(x / \alpha)\bigr] \approx
        \operatorname{logistic}\left(\frac{m}{\sqrt{\alpha^2 + 3 v / \pi^2}}\right),

    the factor :math:`g(\mathrm{RD})` of Glicko, Glickman 1999, eq. 3, within 0.0098 in probability
    for :math:`v \le \alpha^2` and 0.021 for :math:`v \le 9\alpha^2`; MacKay's :math:`\pi/8` in
    place of :math:`3/\pi^2` is closer for small :math:`v` (0.0046), notebook 1 compares them; this
    one is kept because it makes the forecast Glicko's; the same effective scale is used inside
    the draw models).
    """

    link: str = "logistic"
    scale: float = 1.0
    prior_mean: float = 0.0
    prior_var: float = 1.0
    drift: float = 0.0
    draw: DrawModel | str | tuple = field(default="none")
    home: float = 0.0
    reversion: float = 0.0
    home_drift: float = 0.0
    observation: Observation | None = None
    draw_drift: float = 0.0
    openness_var: float = 0.0
    openness_drift: float = 0.0

    def __post_init__(self) -> None:
        if self.link not in nx.LINKS:
            raise ValueError(f"link must be 'logistic' or 'probit', got {self.link!r}")
        # the one rule of statespace.model.ranges, in units of the scale (see "Accepted ranges" above)
        alpha = R.scale("SkillModel", "scale", self.scale)
        checked = {"scale": alpha,
                   "prior_mean": R.location("SkillModel", "prior_mean", self.prior_mean, alpha),
                   "prior_var": R.variance("SkillModel", "prior_var", self.prior_var, alpha),
                   "drift": R.variance("SkillModel", "drift", self.drift, alpha),
                   "home": R.location("SkillModel", "home", self.home, alpha),
                   "reversion": R.number("SkillModel", "reversion", self.reversion, 0.0, REVERSION_MAX),
                   "home_drift": R.variance("SkillModel", "home_drift", self.home_drift, alpha)}
        for name, value in checked.items():
            object.__setattr__(self, name, value)
        object.__setattr__(self, "draw", as_draw(self.draw))
        object.__setattr__(self, "observation", self._resolve_observation(self.observation))
        self.observation.check_scale(self.scale)  # its settings in units of the scale
        object.__setattr__(self, "draw_drift", R.number("SkillModel", "draw_drift", self.draw_drift, 0.0, DRAW_DRIFT_MAX))
        if self.draw_drift > 0:
            obs = self.observation
            if getattr(type(obs), "tilt_at", None) is None:
                raise ValueError(f"SkillModel: draw_drift={self.draw_drift:g} makes the draw tendency a latent random "
                                 f"walk, which the {type(obs).__name__} observation has no tilt for; use Goals")
            if getattr(obs, "rho", 0.0) != 0.0 or getattr(obs, "inflation", 0.0) != 0.0:
                raise ValueError(f"SkillModel: draw_drift={self.draw_drift:g} tilts the draws, which rho and "
                                 f"inflation change too; give Goals rho=0 and inflation=0")
        for name in ("openness_var", "openness_drift"):
            object.__setattr__(self, name, R.variance("SkillModel", name, getattr(self, name), alpha))
        if self.two_skills:
            self._check_two_skills()

    @property
    def two_skills(self) -> bool:
        """Whether competitors have two skills, attack and defence (``openness_var`` or
        ``openness_drift`` > 0)."""
        return self.openness_var > 0 or self.openness_drift > 0

    def _check_two_skills(self) -> None:
        obs = self.observation
        given = f"openness_var={self.openness_var:g}, openness_drift={self.openness_drift:g}"
        if getattr(type(obs), "shift_at", None) is None:
            raise ValueError(f"SkillModel: {given} give each competitor two skills (attack and defence), which "
                             f"the {type(obs).__name__} observation does not read; use Goals")
        others = {k: getattr(obs, k) for k in ("rho", "covariance", "inflation", "tilt") if getattr(obs, k) != 0.0}
        if others:
            raise ValueError(f"SkillModel: {given} (attack and defence) are filtered with the counts' own law; give "
                             f"Goals " + ", ".join(f"{k}=0" for k in others) + f" (got {others})")
        if self.draw_drift > 0:
            raise ValueError(f"SkillModel: {given} (attack and defence) and draw_drift={self.draw_drift:g} "
                             f"are not filtered together; give draw_drift=0")

    def refuse_latent_draws(self, who: str) -> None:
        """A ``ValueError`` naming ``who`` when the model has a latent draw tendency (``draw_drift >
        0``), which only the EKF (diagonal covariance) filters."""
        if self.draw_drift > 0:
            raise ValueError(f"{who}: the model has a latent draw tendency (draw_drift={self.draw_drift!r}), which "
                             f"only the EKF (diagonal covariance) filters; give draw_drift=0")

    def refuse_two_skills(self, who: str) -> None:
        """A ``ValueError`` naming ``who`` when the model gives each competitor two skills
        (:attr:`two_skills`), which the EKF (diagonal covariance), the Laplace smoother and the PyMC
        smoother fit."""
        if self.two_skills:
            raise ValueError(f"{who}: the model gives each competitor two skills, attack and defence "
                             f"(openness_var={self.openness_var!r}, openness_drift={self.openness_drift!r}), which "
                             f"the EKF (diagonal covariance), the Laplace smoother and the PyMC smoother fit; give both 0")

    def refuse_ekf_only(self, who: str) -> None:
        """:meth:`refuse_latent_draws` and :meth:`refuse_two_skills`."""
        self.refuse_latent_draws(who)
        self.refuse_two_skills(who)

    def _resolve_observation(self, obs: object) -> Observation:
        """The model's observation. An :class:`Outcome` is stored marked as derived from
        ``link`` and ``draw`` (which stay its one source of truth), so that
        ``dataclasses.replace(model, draw=...)`` rebuilds it rather than seeing a conflict."""
        if obs is None or getattr(obs, "_from_model", False):
            return _derived(Outcome(self.link, self.draw))
        if not isinstance(obs, Observation):
            raise ValueError(f"observation must be an Outcome, Margin or Goals instance (or None), got {obs!r}")
        defaults = self.link == "logistic", self.draw == NoDraw()
        if isinstance(obs, Outcome):
            for name, is_default in zip(("link", "draw"), defaults):
                if not is_default and getattr(self, name) != getattr(obs, name):
                    raise ValueError(f"{name}={getattr(self, name)!r} conflicts with observation={obs!r}: "
                                     f"give the {name} in one place")
            object.__setattr__(self, "link", obs.link)
            object.__setattr__(self, "draw", obs.draw)
            return _derived(Outcome(obs.link, obs.draw))
        for name, is_default in zip(("link", "draw"), defaults):
            if not is_default:
                raise ValueError(f"{name}={getattr(self, name)!r} applies to Outcome observations, not to "
                                 f"observation={obs!r}")
        return obs

    def __repr__(self) -> str:
        shown = [f.name for f in fields(self) if f.name != "observation" or not isinstance(self.observation, Outcome)]
        return f"SkillModel({', '.join(f'{n}={getattr(self, n)!r}' for n in shown)})"

    def _outcome(self, what: str) -> Outcome:
        if not isinstance(self.observation, Outcome):
            raise ValueError(f"{what} is defined for Outcome observations; this model observes {self.observation!r}")
        return self.observation

    # codes that cross into compiled kernels
    @property
    def link_code(self) -> int:
        return self._outcome("link_code").link_code

    @property
    def draw_code(self) -> int:
        return self._outcome("draw_code").draw_code

    def obs_vector(self) -> np.ndarray:
        """The observation's kernel parameters at this model's scale (``observation.vector(scale)``)."""
        return self.observation.vector(self.scale)

    def effective_scale(self, var: np.ndarray | float = 0.0) -> np.ndarray:
        r"""Scale after integrating a skill-difference variance ``var`` (see class docstring):
        :math:`\sqrt{\alpha^2 + v}` (probit) or :math:`\sqrt{\alpha^2 + 3 v / \pi^2}` (logistic)."""
        return self._outcome("effective_scale").effective_scale(var, scale=self.scale)

    def proba(self, diff: np.ndarray | float, var: np.ndarray | float = 0.0) -> np.ndarray:
        r"""Win/draw/loss probabilities of ``a`` for a skill difference ``diff``,
        :math:`d = s_a - s_b\ (+\,h)`.

        ``diff`` is the mean and ``var`` the variance of the difference; returns an array of
        shape ``diff.shape + (3,)`` whose last axis sums to 1.
        """
        return self.observation.proba(diff, var, scale=self.scale)

    def expected_score(self, diff: np.ndarray | float, var: np.ndarray | float = 0.0) -> np.ndarray:
        r""":math:`E = P(\text{win}) + P(\text{draw}) / 2`."""
        return self.observation.expected_score(diff, var, scale=self.scale)

    def loglik(self, score: np.ndarray | float, diff: np.ndarray | float,
               var: np.ndarray | float = 0.0, score_a=None, score_b=None) -> np.ndarray:
        """Log-likelihood of each observed result with the skill uncertainty ``var`` integrated
        out (:meth:`Observation.log_predictive`).

        For :class:`~statespace.Outcome`, ``score`` (:math:`y`) is 1, 0.5, 0 for a's win, draw, loss: under
        ``"half"`` a draw counts as half a win and half a loss; under ``"none"`` a draw is
        impossible and raises ``ValueError``. :class:`~statespace.Margin` and
        :class:`~statespace.Goals` read ``score_a`` and ``score_b``.
        """
        return self.observation.log_predictive(score, diff, var, score_a, score_b, scale=self.scale)

    def loglik_derivs(self, score, diff, score_a=None, score_b=None) -> tuple[np.ndarray, np.ndarray]:
        r"""First and second derivatives of the log-likelihood (no skill uncertainty) with respect
        to the skill difference ``diff``, :math:`\partial \ell / \partial d` and
        :math:`\partial^2 \ell / \partial d^2`: the gradient and curvature an extended Kalman
        filter linearises with (the observation's compiled ``lik_kernel``)."""
        _, g, h = self.observation.loglik(score, diff, score_a, score_b, scale=self.scale)
        return g, h

    def predict_var(self, var: np.ndarray | float, dt: np.ndarray | float) -> np.ndarray:
        r"""Variance of a skill after ``dt`` units of time: :math:`v + q\,\Delta t` (see
        :meth:`predict` for the mean-reverting case)."""
        return self.predict(self.prior_mean, var, dt)[1]

    def transition(self, dt) -> tuple[np.ndarray, np.ndarray]:
        r"""The skill's transition over ``dt`` units of time, ``(a, v)``:

        .. math::

            s(t + \Delta t) \mid s(t) \sim \mathcal{N}\bigl(\mu_0 + a\,(s(t) - \mu_0),\ v\bigr).

        Random walk (``reversion = 0``): :math:`a = 1`, :math:`v = q\,\Delta t`. Ornstein-Uhlenbeck
        (``reversion`` :math:`= \lambda > 0`): :math:`a = e^{-\lambda \Delta t}`,
        :math:`v = q (1 - a^2) / (2 \lambda)` (which tends to :math:`q\,\Delta t` as
        :math:`\lambda \to 0`). :meth:`predict` applies it to a Gaussian; a whole-history smoother
        uses it as the prior between a competitor's consecutive nodes.
        """
        dt = np.asarray(dt, dtype=float)
        if self.reversion == 0:
            return np.ones_like(dt), self.drift * dt
        return (np.exp(-self.reversion * dt),
                self.drift * (-np.expm1(-2.0 * self.reversion * dt)) / (2.0 * self.reversion))

    def predict(self, mean, var, dt) -> tuple[np.ndarray, np.ndarray]:
        r"""Mean and variance of a skill after ``dt`` units of time.

        Random walk (``reversion = 0``): :math:`(m,\ v + q\,\Delta t)`. With ``reversion``
        :math:`= \lambda > 0` the dynamics are an Ornstein-Uhlenbeck process pulled towards
        :math:`\mu_0` (``prior_mean``; the Kalman form is kept): with :math:`a = e^{-\lambda \Delta t}`
        (see :meth:`transition`),

        .. math::

            m \leftarrow \mu_0 + a\,(m - \mu_0), \qquad
            v \leftarrow a^2 v + \frac{q\,(1 - a^2)}{2 \lambda},

        so long breaks (an off-season) regress ratings towards the mean while short ones barely do.
        """
        mean = np.asarray(mean, dtype=float)
        var = np.asarray(var, dtype=float)
        dt = np.asarray(dt, dtype=float)
        if self.reversion == 0:
            return mean + 0.0 * dt, var + self.drift * dt
        a, v = self.transition(dt)
        return self.prior_mean + a * (mean - self.prior_mean), a * a * var + v

    def diff(self, mean_a, mean_b, at_home=False) -> np.ndarray:
        r"""Mean skill difference :math:`m_a - m_b + h\,[a \text{ at home}]` (``mean_a - mean_b +
        home * at_home``; with ``home_drift > 0``, ``home`` is the home advantage's starting value)."""
        return np.asarray(mean_a, float) - np.asarray(mean_b, float) + self.home * np.asarray(at_home, float)


def _derived(obs: Outcome) -> Outcome:
    """Mark an :class:`Outcome` as built by a :class:`SkillModel` from its ``link`` and ``draw``."""
    object.__setattr__(obs, "_from_model", True)
    return obs
