"""``auto(..., blend=True)``: the :data:`BLEND_TOP` best candidates of a choice pooled by
:class:`~statespace.ensemble.blend.Blend`, their row added to the choice's table, and the blend
taken instead of the pick only when its training score is lower by more than :data:`TIE` (see
:mod:`statespace.ensemble.auto`)."""

from __future__ import annotations

import dataclasses
import time

import numpy as np
import pandas as pd

from statespace.data.games import Games
from statespace.ensemble.auto_candidate import Candidate
from statespace.ensemble.auto_search import TIE, SearchOptions
from statespace.model import metrics

# public through statespace.auto, whose comment on it is what the API reference shows
BLEND_TOP = 3


def blend_the_best(opts: SearchOptions, method: Candidate, games: Games):
    """With ``blend=True``: the :data:`BLEND_TOP` best candidates pooled on ``games``, their row added
    to the table; the blend (weights fixed, ``tuning`` the updated :class:`AutoResult`) when its
    training score beats the pick's by more than :data:`TIE`, else the pick."""
    from statespace.ensemble.blend import Blend

    result = method.tuning
    table = result.table
    ok = table[np.isfinite(table["train_score"].to_numpy(dtype=float))]
    top = list(ok.index[:BLEND_TOP])
    if len(top) < 2:
        table.attrs["not_tried"] = [*table.attrs.get("not_tried", []), "blend: fewer than 2 candidates were tuned"]
        return method
    t0 = time.perf_counter()
    fit = Blend({label: result.methods[label] for label in top}, burn_in=opts.burn_in).fit(games)
    scored = np.sort(games.order[int(round(opts.burn_in * len(games))):])
    y, p = games.score[scored], fit.proba[scored]
    draws = table.attrs.get("draws", False)
    score = float(getattr(metrics, result.objective_name)(y, p))
    label = f"blend of the best {len(top)}"
    better = score < result.objective - TIE
    row = pd.DataFrame([{"stage": "blend", "observation": "-", "home": "-", "reversion": False, "power": np.nan,
                         "objective": result.objective_name, "train_score": score, "delta": np.nan,
                         "train_log_loss": metrics.log_loss(y, p),
                         "train_log_loss_3": metrics.log_loss_3(y, p) if draws else np.nan, "chosen": False,
                         "tune_seconds": time.perf_counter() - t0,
                         "converged": fit.info["result"] is None or bool(fit.info["result"].success), "at_bound": (),
                         "settings": dict(fit.info["weights"]), "error": ""}], index=pd.Index([label]))
    attrs = dict(table.attrs)
    table = pd.concat([table, row.astype({c: table[c].dtype for c in ("power", "train_score") if c in table})])
    chosen = label if better else result.chosen
    table["chosen"] = table.index == chosen
    table["delta"] = table["train_score"] - table.loc[chosen, "train_score"]
    table = table.sort_values("train_score", kind="stable", na_position="last")
    table.attrs.update(attrs)
    if not better:
        result.table = table
        return method
    out = fit.blend
    out.tuning = dataclasses.replace(result, params=dict(fit.info["weights"]), se={}, objective=score, table=table,
                                     chosen=label, variant=None,
                                     message=f"chose {label!r} (statespace.Blend of {', '.join(top)}) among "
                                             f"{len(table)} candidates")
    return out
