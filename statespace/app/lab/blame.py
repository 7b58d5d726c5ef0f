"""Which field of a request a method's ``ValueError`` is about.

A method checks its own settings (in its constructor: :mod:`statespace.model.ranges`), its starting
values (``init_state``) and its results (a fit whose ratings run beyond ``1e6`` scales raises
:class:`statespace.model.ranges.ResultRangeError`). Its message names the method and the setting in
the method's words (``SkillModel: drift must be ...``), not the request's field. Rather than read
the message, the lab asks again with one value at a time: the first that fails alone is the
field at fault (``settings.ekf.drift``, ``players[2].rating``). This runs only after a failure,
and each retry is one of the request's own computations, so it costs at most a few times the
request's own (capped) work.
"""

from __future__ import annotations

from typing import Any, Callable, Mapping

__all__ = ["fails", "setting_field", "starting_field", "fit_field"]


def fails(attempt: Callable[[], Any]) -> bool:
    """Does ``attempt()`` raise a ``ValueError``?"""
    try:
        attempt()
    except ValueError:
        return True
    return False


def setting_field(name: str, settings: Mapping[str, Any], fields: Mapping[str, str],
                  build: Callable[[dict], Any]) -> str:
    """The field of the setting that ``build(settings)`` fails on: the first that fails alone
    (``fields[key]``, e.g. ``settings.ekf.drift``, or ``tau`` for the top-level shorthand), else
    ``settings.<name>`` (a combination)."""
    for key, value in settings.items():
        if fails(lambda: build({key: value})):
            return fields.get(key, f"settings.{name}.{key}")
    return f"settings.{name}"


def starting_field(players, start: Callable[[list], Any]) -> str | None:
    """The field of the starting value that ``start(players)`` fails on (``players[i].rating``):
    the first competitor who fails alone, then the first of their values that fails alone
    (``players[i]`` for a combination); ``None`` when no one fails alone."""
    for i, p in enumerate(players):
        if not fails(lambda: start([p])):
            continue
        for field in ("rating", "rd", "volatility", "games", "mu", "sigma"):
            value = getattr(p, field)
            if value is not None:
                alone = p.model_copy(update={f: None for f in ("rating", "rd", "volatility", "games", "mu", "sigma")
                                             if f != field})
                if fails(lambda: start([alone])):
                    return f"players[{i}].{field}"
        return f"players[{i}]"
    return None


def fit_field(name: str, settings: Mapping[str, Any], fields: Mapping[str, str], has_start: bool,
              fit: Callable[[dict, bool], Any]) -> str:
    """The field a failed fit is about, from ``fit(settings, with_starting_values)``: the first
    setting that fails alone; ``settings.<name>`` when only their combination fails; ``players``
    when the fit fails with the starting values and not without; else ``games`` (the games
    themselves drive the ratings out of range)."""
    for key, value in settings.items():
        if fails(lambda: fit({key: value}, has_start)):
            return fields.get(key, f"settings.{name}.{key}")
    if settings and not fails(lambda: fit({}, has_start)):
        return f"settings.{name}"
    if has_start and not fails(lambda: fit(dict(settings), False)):
        return "players"
    return "games"
