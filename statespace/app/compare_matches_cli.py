"""``statespace compare`` on matches of many sides: ``--dataset`` a match data set
(:data:`statespace.data.match_datasets.MATCH_DATASETS`) or ``--scenario`` a simulated league
(:data:`MATCH_SCENARIOS`) runs :func:`statespace.evaluation.compare_matches.compare_matches` and
prints its table (:func:`format_table`) or, with ``--json``, the table as JSON.

The methods: ``--methods`` picks them (a method without a match kernel is refused, naming it);
by default every registered method that rates matches
(:func:`statespace.evaluation.compare_matches.match_methods`), match-only ones included. Matches are scored online only, so
the options of games (``--mode`` other than online, ``--every``, ``--periods``,
``--drop-invalid``, ``--plot``) are refused with one line. ``--tune`` tunes each method on the
training matches first (:func:`statespace.evaluation.tune_matches.tune_matches`). ``--auto`` adds
the row ``auto``: :func:`statespace.auto`'s choice among the match-rating methods
(:mod:`statespace.ensemble.auto_matches`) made on the training matches only (tuned on their first
70%, compared on the rest, refit on all of them), then run online through every match like the
other rows.
"""

from __future__ import annotations

import json
import time

from statespace.app.cli_output import finite, plural
from statespace.methods.specs import PROG, CLIError, one_line, parse_methods, registry

__all__ = ["MATCH_SCENARIOS", "is_match_source", "main", "format_table"]

#: the simulated leagues of :mod:`statespace.model.match_scenarios` that ``--scenario`` names
MATCH_SCENARIOS = ("ffa_league", "team_league")

#: the options ``compare`` takes for games only: (attribute, flag)
_GAMES_ONLY = (("every", "--every"), ("periods", "--periods"), ("drop_invalid", "--drop-invalid"), ("plot", "--plot"),
               ("n_jobs", "--n-jobs"), ("observations", "--observations"))


def is_match_source(args) -> bool:
    """Whether ``--dataset``/``--scenario`` names matches of many sides; a name neither of games
    nor of matches is a :class:`CLIError` listing both kinds."""
    from statespace.data.match_datasets import MATCH_DATASETS

    if getattr(args, "dataset", None) is not None:
        if args.dataset in MATCH_DATASETS:
            return True
        from statespace.data import datasets

        if args.dataset not in datasets.DATASETS:
            raise CLIError(f"unknown data set {args.dataset!r}; choose one of "
                           f"{', '.join([*datasets.DATASETS, *MATCH_DATASETS])} (see statespace datasets)")
        return False
    if getattr(args, "scenario", None) is not None:
        name, _, params = args.scenario.partition(":")
        name = name.strip()
        if name in MATCH_SCENARIOS:
            if params.strip():
                raise CLIError(f"match scenario {name} takes no parameters, got {params.strip()!r}")
            return True
        from statespace.model import scenarios

        if name not in scenarios.ALL:
            raise CLIError(f"unknown scenario {name!r}; choose one of "
                           f"{', '.join([*scenarios.ALL, *MATCH_SCENARIOS])} (see statespace scenarios)")
    return False


def _refuse_games_options(args) -> None:
    if args.mode not in (None, "online"):
        raise CLIError(f"matches are scored online only (each match forecast from the matches before it); "
                       f"--mode {args.mode} is for games")
    for attr, flag in _GAMES_ONLY:
        if getattr(args, attr, None):
            raise CLIError(f"{flag} applies to games only; matches of many sides take --methods, --split, "
                           f"--tune, --auto, --seed, --quiet and --json")


def _load(args, err):
    """The matches and a description of where they came from."""
    if args.dataset is not None:
        from statespace._runtime.progress import interactive
        from statespace.data.match_datasets import load_matches

        try:
            matches = load_matches(args.dataset, progress=not args.quiet and interactive())
        except ValueError as exc:
            raise CLIError(f"data set {args.dataset}: {exc}") from None
        return matches, f"data set {args.dataset}"
    from statespace.model import match_scenarios

    name = args.scenario.partition(":")[0].strip()
    return getattr(match_scenarios, name)(seed=args.seed).matches, f"scenario {name} (seed {args.seed})"


def _methods(args, matches, err) -> dict:
    """``--methods``, or every registered method that rates matches, less those that refuse these
    matches (one warning line each: Elo-MMR refuses teams)."""
    if args.methods:
        return parse_methods(args.methods)
    from statespace.evaluation.compare_matches import check_method, match_methods

    # every registered method that rates matches, also those left out of the games' default list
    # (match-only ones); a factory that is neither a class nor a classmethod is built only when in
    # that list (it may be slow to build: PyMC's)
    default = registry(default_only=True)
    methods = match_methods({name: f for name, f in registry().items()
                             if name in default or isinstance(getattr(f, "__self__", f), type)})
    for name, method in list(methods.items()):
        try:
            check_method(name, method, matches)
        except ValueError as exc:
            print(f"{PROG}: warning: {name} left out: {one_line(exc)}", file=err)
            del methods[name]
    if not methods:
        raise CLIError("no registered method rates these matches of many sides")
    return methods


#: the table's scores: (column, heading, number format)
_SHOWN = (("loglik", "loglik", ".4g"), ("pair_log_loss", "pair log loss", ".4f"),
          ("pair_inversion", "pair inv %", ".2f"), ("rank_deviation", "rank dev %", ".2f"), ("top1", "top-1", ".3f"))


def format_table(table) -> str:
    """The table as text: one row a method, best pairwise log loss first; each score followed by
    its paired standard error against the best row of that score (``best`` on that row)."""
    header = ["method", "observation"]
    for _, heading, _ in _SHOWN:
        header += [heading, "\u00b1se"]
    header.append("run s")
    rows = []
    for name, r in table.iterrows():
        row = [str(name), str(r["observation"])]
        for column, _, spec in _SHOWN:
            se = finite(r[f"{column}_se"], text=True)
            row += [format(r[column], spec), "best" if se == 0.0 else (se if isinstance(se, str) else format(se, spec))]
        rows.append(row + [f"{r['seconds']:.3f}"])
    widths = [max(len(cell) for cell in column) for column in zip(header, *rows)]
    lines = [header, ["-" * w for w in widths], *rows]
    return "\n".join("  ".join(c.ljust(w) if j < 2 else c.rjust(w) for j, (c, w) in enumerate(zip(cells, widths)))
                     for cells in lines)


_FOOTNOTE = ("Each match is forecast from the matches before it (online). loglik: the mean per match of the "
             "log-probability of the\nobserved ranking under the method's own forecast (every method's of the same "
             "event);\npair log loss (nats): the mean over each match's pairs of sides of "
             "the binary log loss of the method's expected\nscore (a tie 0.5); pair inv %: the pairs ordered as the "
             "result; rank dev %: places off, of the field; top-1: the\nstrongest forecast side won. Matches weighted "
             "by their number of sides (loglik: by match); \u00b1se: the paired\nstandard error of the difference "
             "from the best row of that score.")


def _auto(args, matches):
    """auto's choice (its ``AutoMatchFit``) made on the training matches only (the rows' held-out
    matches unseen)."""
    import numpy as np

    from statespace.ensemble.auto import auto
    from statespace.evaluation.compare_matches import held_out

    try:
        train = matches.take(np.arange(held_out(matches, args.split)))
        return auto(train, progress=False if args.quiet else None)
    except ValueError as exc:
        raise CLIError(f"--auto: {exc}") from None


def main(args, out, err) -> int:
    """``compare`` on matches: 0 when the table is written; a user error raises :class:`CLIError`."""
    _refuse_games_options(args)
    matches, source = _load(args, err)
    methods = _methods(args, matches, err)
    from statespace.evaluation.compare_matches import compare_matches

    chose = None
    if args.auto:
        chose = _auto(args, matches)
        methods = {**methods, "auto": chose.method}

    try:
        t0 = time.perf_counter()
        table = compare_matches(methods, matches, split=args.split, tune=args.tune,
                                progress=False if args.quiet else None)
        seconds = time.perf_counter() - t0
    except ValueError as exc:
        raise CLIError(str(exc)) from None
    n_train = table.attrs["n_train"]
    tuned = table.attrs.get("tuned", {})
    n_test = matches.n_matches - n_train
    meta = {"source": source, "n_matches": matches.n_matches, "n_sides": matches.n_sides,
            "n_competitors": matches.n_players, "split": args.split, "n_train": n_train, "n_test": n_test,
            "mode": "online", "seconds": round(seconds, 4)}
    if args.json:
        records = [{"method": str(rec.pop("method")), **{k: finite(v) for k, v in rec.items()}}
                   for rec in table.reset_index().to_dict(orient="records")]
        for rec in records:
            rec["spec"] = repr(methods[rec["method"]])
            res = tuned.get(rec["method"])
            if res is not None:
                rec.update(tuned={k: finite(v) for k, v in res.params.items()}, tune_objective=res.objective_name)
        print(json.dumps({**meta, "methods": records}, indent=2), file=out)
        return 0
    n = matches.n_matches
    print(f"{source}: {n:,} match{'' if n == 1 else 'es'}, {plural(matches.n_sides, 'side')}, "
          f"{plural(matches.n_players, 'competitor')}; split {args.split:g} ({n_train:,} train / {n_test:,} "
          f"held out), mode online", file=out)
    print(file=out)
    print(format_table(table), file=out)
    print(file=out)
    print(_FOOTNOTE, file=out)
    if chose is not None:
        print(f"\nauto: chose {chose.chosen} on the {n_train:,} training matches ({chose.method!r}; tuned on their "
              f"first {chose.table.attrs['n_train']:,}, compared on the rest by the pairwise log loss)", file=out)
    if tuned:
        print(file=out)
        print("tuned on the training matches (minus the ranking log-likelihood, or the pairwise log loss for "
              "Thurstonian forecasts):", file=out)
        for name, res in tuned.items():
            shown = ", ".join(f"{k}={v:.4g}" for k, v in res.params.items())
            print(f"  {name}: {shown}  ({res.objective_name}, {res.seconds:.2f} s)", file=out)
    return 0
