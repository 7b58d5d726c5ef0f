"""What the command line says about ``--auto``'s choice (:class:`statespace.ensemble.auto.Auto`):
one line for people (:func:`auto_line`) and a JSON record (:func:`auto_json`), in ``compare`` and
``rate`` alike."""

from __future__ import annotations

from statespace.app.cli_output import finite
from statespace.methods.specs import CLIError

__all__ = ["auto_json", "auto_line", "OBSERVATIONS_HELP", "GROUP_HELP", "add_observations", "observations", "group",
           "check_group"]

#: the ``--observations`` option of ``compare`` and ``rate``
OBSERVATIONS_HELP = ("with --auto: the observations its search tries, a comma-separated list of outcome, margin and "
                     "goals (outcome always among them), or 'all'. Default: all that the games allow (margin where "
                     "they have scores, goals where the scores are goal counts)")


#: the ``--group`` option of ``compare`` and ``rate``
GROUP_HELP = ("with --auto: a column of the games (a league, a tier, a competition); the search also tries its pick "
              "with its own part of the home advantage and draw tendency per group of that column, chosen only if it "
              "scores better on the training games")


def add_observations(parser) -> None:
    """Add ``--observations LIST`` and ``--group COLUMN`` (``--auto``'s search) to a subcommand's parser."""
    parser.add_argument("--observations", metavar="LIST", default=None, help=OBSERVATIONS_HELP)
    parser.add_argument("--group", metavar="COLUMN", default=None, help=GROUP_HELP)


def group(args):
    """``--group`` (``None`` when not given); :class:`CLIError` without ``--auto``."""
    column = getattr(args, "group", None)
    if column is not None and not args.auto:
        raise CLIError(f"--group {column} adds a candidate to --auto's search; add --auto")
    if column is not None and not column.strip():
        raise CLIError("--group needs a column name")
    return None if column is None else column.strip()


def check_group(args, games) -> None:
    """``--group``'s column among ``games``' (every row with a group), said before any work."""
    column = group(args)
    if column is not None:
        from statespace.data.games import GamesError

        try:
            games.groups(column)
        except GamesError as exc:
            raise CLIError(f"--group {column}: {exc}") from None


def observations(args):
    """``--observations`` as :class:`statespace.ensemble.auto.Auto` takes it (``None``: its default,
    ``"all"``, or a tuple of names), checked by Auto's own rule; :class:`CLIError` without
    ``--auto`` or where that rule refuses it."""
    text = getattr(args, "observations", None)
    if text is None:
        return None
    if not args.auto:
        raise CLIError(f"--observations {text} narrows --auto's search; add --auto")
    from statespace.ensemble.auto_method import check_observations

    value = "all" if text.strip() == "all" else tuple(part.strip() for part in text.split(",") if part.strip())
    try:
        return check_observations(value)
    except ValueError as exc:
        raise CLIError(f"--observations {text!r}: {exc}") from None


def auto_line(choice, where: str) -> str:
    """One line: what ``--auto`` chose, on which games and by what."""
    a = choice.table.attrs
    settings = choice.table.loc[choice.chosen, "settings"]
    bound = choice.table.loc[choice.chosen, "at_bound"] if "at_bound" in choice.table.columns else ()

    def show(k, v):  # "n/a" for an undefined value; a setting the search box stopped is marked
        v = finite(v, text=True)
        return (f"{k}={v if isinstance(v, str) else format(v, '.4g')}"
                + (" (at a bound of its search box)" if k in tuple(bound or ()) else ""))

    shown = ", ".join(show(k, v) for k, v in settings.items())
    return (f"auto chose EKF, {choice.chosen}: training {choice.objective_name} {choice.objective:.5f} "
            f"(chosen among {len(choice.table)} candidates, each tuned on {where}, {a['n_games']:,} games, the first "
            f"{a['burn_in']:.0%} a burn-in; {choice.seconds:.1f} s); {shown}")


def auto_json(choice) -> dict:
    """``--auto``'s choice as a JSON record: the chosen variant, its training objective and score,
    the games counted and scored, the burn-in and the seconds it took."""
    table = choice.table
    return {"chosen": choice.chosen, "objective": choice.objective_name, "train_score": finite(choice.objective),
            "n_games": table.attrs["n_games"], "n_scored": table.attrs["n_scored"], "burn_in": table.attrs["burn_in"],
            "seconds": round(choice.seconds, 4),
            "candidates": [{"candidate": str(name), "stage": r["stage"], "train_score": finite(r["train_score"]),
                            "train_log_loss": finite(r["train_log_loss"]),
                            "train_log_loss_3": finite(r["train_log_loss_3"]), "chosen": bool(r["chosen"]),
                            "settings": {k: finite(v) for k, v in r["settings"].items()},
                            "at_bound": list(r["at_bound"]) if "at_bound" in r.index else [],
                            **({"error": r["error"]} if r["error"] else {})}
                           for name, r in table.iterrows()]}
