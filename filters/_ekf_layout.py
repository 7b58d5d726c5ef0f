"""The EKF's layout: the order of its parameter vector ``theta`` and of its state columns.

One place for the numbers the kernels index by, read by the kernels of the diagonal and scalar
forms (:mod:`filters._ekf_kernels`), the match kernels (:mod:`filters._ekf_match`), the filter
class (:mod:`filters.ekf`) and the full-covariance form (:mod:`filters.ekf_full`); it imports nothing.
"""

#: the kernels' parameters, in ``theta`` order (shared by the three covariance forms): the
#: model's drift, home advantage, mean reversion, prior mean and home drift; the Newton
#: iterations and their tolerance; the scalar filter's fixed variance and frozen curvature; the
#: observation of a match of many sides (its kind, per-side noise and draw margin); the latent
#: draw tendency's drift and where the observation's vector holds it (-1: no latent draw tendency); the
#: openness's drift and where the observation's vector holds a game's goal-rate shift (-1: one skill
#: per competitor); with a grouping column (``EKF(group=...)``) the number of groups whose rows the
#: state holds (0 without one; a run sets it from its state, ``EKF.theta_for``), whether a group's
#: block has a home advantage row, a draw tendency row and a goal base row (1 or 0), their drifts;
#: whether each competitor has two skills (1 or 0; ``shift_at`` is also set by a goal base per group)
PARAMS = ("drift", "home", "reversion", "prior_mean", "home_drift", "iterations", "tol", "fixed_var", "kappa0",
          "match_kind", "match_beta", "match_eps", "draw_drift", "tilt_at", "openness_drift", "shift_at", "groups",
          "group_home", "group_draw", "group_home_drift", "group_draw_drift", "group_base", "group_base_drift",
          "two_skills")
(_DRIFT, _HOME, _REV, _MU0, _HDRIFT, _ITERS, _TOL, _FIXED_VAR, _KAPPA0,
 _MKIND, _MBETA, _MEPS, _DDRIFT, _TILT_AT, _ODRIFT, _SHIFT_AT, _GROUPS,
 _GHOME, _GDRAW, _GHDRIFT, _GDDRIFT, _GBASE, _GBDRIFT, _TWO) = range(len(PARAMS))
#: the state's columns: each row's mean and sd (the full form's covariance row follows them); with
#: two skills per competitor (the diagonal form) the openness's mean and sd follow
_MEAN, _SD, _OPEN, _OPEN_SD = 0, 1, 2, 3
