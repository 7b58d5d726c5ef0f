"""The rating lab's request and response shapes (pydantic models), with their checks.

Every check that reads one value names the field and the row in its message, in the form the
API returns it (``games[3].score: must be "1", "0.5" or "0"``); rows are counted from 0, as JSON
arrays are indexed. Checks that compare rows with one another (a name given twice, a pair
player who never played) live in :mod:`statespace.app.lab.compute` and use the same form.

The models document themselves in the OpenAPI description FastAPI generates
(``GET /openapi.json``): every field has a description, and the request models carry Glickman's
worked example as their example.
"""

from __future__ import annotations

import json
import math
import unicodedata
from typing import Annotated, Any, Literal, Optional

from pydantic import BaseModel, BeforeValidator, ConfigDict, Field, WithJsonSchema, field_validator, model_validator
from pydantic_core import PydanticCustomError

__all__ = ["MAX_BODY_BYTES", "MAX_GAMES", "MAX_NAME", "METHODS", "LABELS", "Game", "StartingRating", "Pair",
           "MethodSettings", "RateRequest", "CompareRequest", "RateResponse", "CompareResponse", "glickman_example",
           "club_example"]

#: the largest request body the API reads, in bytes (1 MB); a larger one is answered with 413
MAX_BODY_BYTES = 1_000_000
#: the most games one request may rate (a longer list is answered with 422); 10,000 games of
#: short names take about 0.6 MB of JSON, so both limits can be met
MAX_GAMES = 10_000
#: the longest competitor name, in characters
MAX_NAME = 100
#: the methods the lab runs, in the order its page shows them, with their labels
LABELS = {"elo": "Elo", "elo_fide": "FIDE Elo", "glicko": "Glicko-1", "glicko2": "Glicko-2",
          "trueskill": "TrueSkill", "ekf": "EKF"}
METHODS = tuple(LABELS)
#: the largest magnitude of a period number (periods are whole numbers)
MAX_PERIOD = 10**9


# ---------------------------------------------------------------------------- value checks
def _is_number(v: Any) -> bool:
    return isinstance(v, (int, float)) and not isinstance(v, bool)


def _score(v: Any) -> float:
    """A result of the player: 1 (win), 0.5 (draw) or 0 (loss), as a number or as the text
    ``"1"``, ``"0.5"``, ``"½"``, ``"1/2"`` or ``"0"``."""
    if isinstance(v, str):
        text = v.strip()
        if text in ("½", "1/2"):
            return 0.5
        try:
            x = float(text)
        except ValueError:
            x = None
    elif _is_number(v):
        x = float(v)
    else:
        x = None
    if x not in (0.0, 0.5, 1.0):
        raise PydanticCustomError("score", 'must be "1", "0.5" or "0" (or ½), got {got}', {"got": _shown(v)})
    return x


def _period(v: Any) -> int:
    """A rating period: a whole number (``2`` or ``2.0``) of magnitude at most 1e9."""
    if _is_number(v) and math.isfinite(v) and float(v) == int(v) and abs(v) <= MAX_PERIOD:
        return int(v)
    raise PydanticCustomError("period", "must be a whole number between -1e9 and 1e9, got {got}", {"got": _shown(v)})


def _positive(v: Any) -> float:
    """A finite number > 0."""
    if _is_number(v) and math.isfinite(v) and v > 0:
        return float(v)
    raise PydanticCustomError("positive", "must be a positive number, got {got}", {"got": _shown(v)})


def _finite(v: Any) -> float:
    if _is_number(v) and math.isfinite(v):
        return float(v)
    raise PydanticCustomError("finite", "must be a finite number, got {got}", {"got": _shown(v)})


def _probability(v: Any) -> float:
    """A number in [0, 1)."""
    if _is_number(v) and 0 <= v < 1:
        return float(v)
    raise PydanticCustomError("probability", "must be a number in [0, 1), got {got}", {"got": _shown(v)})


def _split(v: Any) -> float:
    if _is_number(v) and 0 < v < 1:
        return float(v)
    raise PydanticCustomError("split", "must be a number strictly between 0 and 1, got {got}", {"got": _shown(v)})


def _count(v: Any) -> int:
    """A whole number >= 0."""
    if _is_number(v) and math.isfinite(v) and v >= 0 and float(v) == int(v) and v <= 10**9:
        return int(v)
    raise PydanticCustomError("count", "must be a whole number >= 0, got {got}", {"got": _shown(v)})


def _iterations(v: Any) -> int:
    if _is_number(v) and math.isfinite(v) and float(v) == int(v) and 1 <= v <= 100:
        return int(v)
    raise PydanticCustomError("iterations", "must be a whole number from 1 to 100, got {got}", {"got": _shown(v)})


def _name(v: Any) -> str:
    """A competitor's name: text, not empty, at most ``MAX_NAME`` characters, spaces around it
    dropped and put in Unicode NFC form, as :class:`statespace.Games` reads names (so "Zoë"
    typed composed and decomposed is one competitor, here and in the games)."""
    if isinstance(v, str):
        bad = _surrogate(v)
        if bad is not None:
            raise PydanticCustomError("name", "must be Unicode text: a lone surrogate \\u{code} at character {at} "
                                              "(half of a pair of JSON \\u escapes)",
                                      {"code": f"{ord(v[bad]):04x}", "at": bad})
        text = unicodedata.normalize("NFC", v.strip())
        if text and len(text) <= MAX_NAME:
            return text
    raise PydanticCustomError("name", "must be a name (text of 1 to {n} characters), got {got}",
                              {"n": MAX_NAME, "got": _shown(v)})


def _surrogate(text: str) -> int | None:
    """Where ``text`` holds a lone surrogate (no UTF-8 for it), or ``None``."""
    try:
        text.encode("utf-8")
        return None
    except UnicodeEncodeError as exc:
        return exc.start


def _escaped(text: str) -> str:
    """``text`` in JSON with every non-ASCII character escaped: two spellings look different."""
    return json.dumps(text.strip())


def same_name(a: Any, b: Any) -> bool:
    """Two spellings of one name: equal once stripped and in NFC form, but not as given."""
    if not (isinstance(a, str) and isinstance(b, str)) or a.strip() == b.strip():
        return False
    return unicodedata.normalize("NFC", a.strip()) == unicodedata.normalize("NFC", b.strip())


def _games_list(v: Any) -> Any:
    if isinstance(v, list):
        if not v:
            raise PydanticCustomError("games", "give at least one game")
        if len(v) > MAX_GAMES:
            raise PydanticCustomError("games", "at most {n} games per request, got {got}",
                                      {"n": MAX_GAMES, "got": len(v)})
    return v


def _shown(v: Any) -> str:
    """A value as the message shows it (JSON-like, cut short)."""
    if v is None:
        return "null"
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, str):
        return '"' + (v if len(v) <= 40 else v[:37] + "...") + '"'
    if isinstance(v, (int, float)):
        return repr(v)
    return {"list": "a list", "dict": "an object"}.get(type(v).__name__, type(v).__name__)


_NUMBER = {"type": "number"}
Score = Annotated[float, BeforeValidator(_score), WithJsonSchema({
    "anyOf": [{"type": "string", "enum": ["1", "0.5", "½", "1/2", "0"]}, {"type": "number", "enum": [1, 0.5, 0]}],
    "description": 'The player\'s result against the opponent: "1" (win), "0.5" or "½" (draw), "0" (loss); '
                   "the numbers 1, 0.5 and 0 are accepted too.", "examples": ["1", "0.5", "0"]})]
Period = Annotated[int, BeforeValidator(_period), WithJsonSchema({"type": "integer"})]
Positive = Annotated[float, BeforeValidator(_positive), WithJsonSchema({"type": "number", "exclusiveMinimum": 0})]
Finite = Annotated[float, BeforeValidator(_finite), WithJsonSchema(_NUMBER)]
Probability = Annotated[float, BeforeValidator(_probability),
                        WithJsonSchema({"type": "number", "minimum": 0, "exclusiveMaximum": 1})]
Count = Annotated[int, BeforeValidator(_count), WithJsonSchema({"type": "integer", "minimum": 0})]
Iterations = Annotated[int, BeforeValidator(_iterations),
                       WithJsonSchema({"type": "integer", "minimum": 1, "maximum": 100})]
Name = Annotated[str, BeforeValidator(_name), WithJsonSchema({"type": "string", "minLength": 1,
                                                              "maxLength": MAX_NAME})]
MethodName = Literal["elo", "elo_fide", "glicko", "glicko2", "trueskill", "ekf"]
Split = Annotated[float, BeforeValidator(_split),
                  WithJsonSchema({"type": "number", "exclusiveMinimum": 0, "exclusiveMaximum": 1})]


def _two_competitors(a: str, b: str) -> None:
    """The error ``self_play`` when ``a`` and ``b`` name one competitor (a game, or odds, against itself)."""
    if a == b:
        raise PydanticCustomError("self_play", 'player "{name}" against itself', {"name": a})


class _Strict(BaseModel):
    """Unknown fields are errors (a misspelt setting must not pass unnoticed)."""

    model_config = ConfigDict(extra="forbid")


# ---------------------------------------------------------------------------- request parts
class Game(_Strict):
    """One game: ``player`` against ``opponent`` in rating period ``period``, scored from the
    player's side."""

    period: Period = Field(description="Rating period, a whole number. All games of one period are rated together "
                                       "from the ratings before it (Glickman's rating period); time between two "
                                       "periods is their difference (Glicko's RD grows by c^2 per period).",
                           examples=[1])
    player: Name = Field(description="The player whose result is given.", examples=["Player"])
    opponent: Name = Field(description="The opponent.", examples=["A"])
    score: Score

    @model_validator(mode="before")
    @classmethod
    def _not_self_spelt_twice(cls, v: Any) -> Any:
        if isinstance(v, dict) and same_name(v.get("player"), v.get("opponent")):
            raise PydanticCustomError("self_play", "player {a} against {b}: one name in two spellings (composed and "
                                                   "decomposed Unicode, equal in NFC form), so a competitor against "
                                                   "itself", {"a": _escaped(v["player"]), "b": _escaped(v["opponent"])})
        return v

    @model_validator(mode="after")
    def _not_self(self) -> "Game":
        _two_competitors(self.player, self.opponent)
        return self


class StartingRating(_Strict):
    """A competitor's starting values, used from their first game on.

    ``rating`` and ``rd`` are in Elo points and start the Elo-scale methods (Elo and FIDE Elo use
    the rating only; Glicko-1, Glicko-2 and the EKF the rating and RD); ``volatility`` starts
    Glicko-2; ``mu`` and ``sigma`` start TrueSkill, whose units are its own (25 and 8.33 for a
    newcomer). A value left out is the method's newcomer value. A response's ``notes`` say
    which given values a method did not use.
    """

    name: Name = Field(description="The competitor, as named in the games.", examples=["A"])
    rating: Optional[Positive] = Field(None, description="Starting rating in Elo points.", examples=[1400])
    rd: Optional[Positive] = Field(None, description="Starting rating deviation (sd) in Elo points.", examples=[30])
    volatility: Optional[Positive] = Field(None, description="Starting Glicko-2 volatility (default 0.06).",
                                           examples=[0.06])
    games: Optional[Count] = Field(None, description="Games already played before these (FIDE Elo's K depends "
                                                     "on it: 40 below 30 games).", examples=[0])
    mu: Optional[Finite] = Field(None, description="Starting TrueSkill mean (TrueSkill units).", examples=[25])
    sigma: Optional[Positive] = Field(None, description="Starting TrueSkill sd (TrueSkill units).", examples=[8.333])


class Pair(_Strict):
    """Two competitors whose win/draw/loss odds are wanted (``a``'s win, the draw, ``b``'s win)."""

    a: Name = Field(description="First competitor (the odds are from this side).", examples=["Player"])
    b: Name = Field(description="Second competitor.", examples=["A"])

    @model_validator(mode="after")
    def _two(self) -> "Pair":
        _two_competitors(self.a, self.b)
        return self


class EloSettings(_Strict):
    """``filters.Elo``: a fixed gain, no uncertainty tracked."""

    k: Optional[Positive] = Field(None, description="K: rating points moved per unit of surprise (S - E); "
                                                    "default 32.", examples=[32])
    initial_rating: Optional[Finite] = Field(None, description="A newcomer's rating (default 1500).")


class EloFideSettings(_Strict):
    """``filters.Elo.fide()``: FIDE's rules (K 40 below 30 games, 20 below 2400, else 10; the
    400-point cap; K times games in the period at most 700)."""

    initial_rating: Optional[Finite] = Field(None, description="A newcomer's rating (default 1500).")


class GlickoSettings(_Strict):
    """``filters.Glicko`` (Glicko-1)."""

    c: Optional[Finite] = Field(None, description="RD growth per rating period, RD^2 += c^2 (default "
                                                  "sqrt((350^2 - 50^2) / 100) = 34.64); >= 0.", examples=[34.64])
    initial_rating: Optional[Finite] = Field(None, description="A newcomer's rating (default 1500).")
    initial_rd: Optional[Positive] = Field(None, description="A newcomer's RD (default 350).")


class Glicko2Settings(_Strict):
    """``filters.Glicko2``."""

    tau: Optional[Positive] = Field(None, description="Constrains volatility changes (Glickman: 0.3 to 1.2; "
                                                      "default 0.5). The request's top-level tau sets it too.",
                                    examples=[0.5])
    initial_rating: Optional[Finite] = Field(None, description="A newcomer's rating (default 1500).")
    initial_rd: Optional[Positive] = Field(None, description="A newcomer's RD (default 350).")
    initial_volatility: Optional[Positive] = Field(None, description="A newcomer's volatility (default 0.06).")


class TrueSkillSettings(_Strict):
    """``filters.TrueSkill`` (one-vs-one), in its own units."""

    mu: Optional[Finite] = Field(None, description="A newcomer's mean (default 25).")
    sigma: Optional[Positive] = Field(None, description="A newcomer's sd (default 25/3).")
    beta: Optional[Positive] = Field(None, description="Performance noise (default sigma / 2).")
    tau: Optional[Finite] = Field(None, description="Dynamics noise added before each game (default sigma / 100); "
                                                    ">= 0.")
    draw_probability: Optional[Probability] = Field(None, description="Draw rate between equals, sets the draw "
                                                                      "margin (default: filters.TrueSkill's, "
                                                                      "learned from the games: 0 on many games "
                                                                      "without a draw, else 0.1).")


class EKFSettings(_Strict):
    """``filters.EKF`` of the logistic model at Elo scale (400 / ln 10), draws as half a win."""

    drift: Optional[Finite] = Field(None, description="Variance added to each skill per rating period, in "
                                                      "points^2 (default 100); >= 0.", examples=[100])
    initial_rating: Optional[Finite] = Field(None, description="A newcomer's mean (default 1500).")
    initial_rd: Optional[Positive] = Field(None, description="A newcomer's sd (default 350).")
    iterations: Optional[Iterations] = Field(None, description="Newton steps per update: 1 is the EKF, more the "
                                                               "iterated EKF (default 1).")


class MethodSettings(_Strict):
    """Settings of each method, by method name; anything left out is the method's default."""

    elo: Optional[EloSettings] = None
    elo_fide: Optional[EloFideSettings] = None
    glicko: Optional[GlickoSettings] = None
    glicko2: Optional[Glicko2Settings] = None
    trueskill: Optional[TrueSkillSettings] = None
    ekf: Optional[EKFSettings] = None


GamesList = Annotated[list[Game], BeforeValidator(_games_list),
                      Field(description=f"The games, 1 to {MAX_GAMES:,}; rows are counted from 0 in messages.")]


class _Request(_Strict):
    games: GamesList
    methods: Optional[list[MethodName]] = Field(
        None, description="Methods to run, any of " + ", ".join(METHODS) + " (default: all of them).",
        examples=[["glicko", "glicko2"]])
    tau: Optional[Positive] = Field(None, description="Glicko-2's tau (a shortcut for settings.glicko2.tau).",
                                    examples=[0.5])
    settings: MethodSettings = Field(default_factory=MethodSettings,
                                     description='Per-method settings, e.g. {"elo": {"k": 24}, "trueskill": '
                                                 '{"draw_probability": 0.2}}.')

    @field_validator("methods", mode="before")
    @classmethod
    def _methods(cls, v: Any) -> Any:
        if isinstance(v, list) and not v:
            raise PydanticCustomError("method", "give at least one method (or leave methods out: all of them)")
        return v


def glickman_example() -> dict:
    """Glickman's worked example ("The Glicko system", 1999; "Example of the Glicko-2 system"):
    a player rated 1500 (RD 200) beats a 1400 (RD 30) and loses to a 1550 (RD 100) and a 1700
    (RD 300) in one rating period; volatility 0.06 everywhere, tau 0.5. Run with the methods
    whose starting values are in Elo points (Elo, Glicko-1, Glicko-2, the EKF)."""
    return {
        "games": [{"period": 1, "player": "Player", "opponent": o, "score": s}
                  for o, s in (("A", "1"), ("B", "0"), ("C", "0"))],
        "players": [{"name": n, "rating": r, "rd": rd, "volatility": 0.06}
                    for n, r, rd in (("Player", 1500, 200), ("A", 1400, 30), ("B", 1550, 100), ("C", 1700, 300))],
        "tau": 0.5,
        "methods": ["elo", "glicko", "glicko2", "ekf"],
        "pair": {"a": "Player", "b": "A"},
    }


#: a small club league: five members, each playing two games in each of three monthly periods
#: (made up for the lab: a round robin over the periods, with a few draws)
_CLUB = (
    (1, "Ana", "Ben", "1"), (1, "Chloe", "Dan", "0.5"), (1, "Eva", "Ana", "1"), (1, "Ben", "Chloe", "0"),
    (1, "Dan", "Eva", "0"),
    (2, "Ana", "Chloe", "1"), (2, "Ben", "Dan", "0.5"), (2, "Eva", "Ben", "0.5"), (2, "Chloe", "Eva", "1"),
    (2, "Dan", "Ana", "0"),
    (3, "Ana", "Dan", "0.5"), (3, "Ben", "Eva", "1"), (3, "Chloe", "Ana", "0"), (3, "Dan", "Ben", "1"),
    (3, "Eva", "Chloe", "0.5"),
)


def club_example() -> dict:
    """A small club league over three rating periods (made-up results), every method, no
    starting ratings: all five members start as newcomers."""
    return {"games": [{"period": p, "player": a, "opponent": b, "score": s} for p, a, b, s in _CLUB],
            "methods": list(METHODS), "pair": {"a": "Ana", "b": "Eva"}}


class RateRequest(_Request):
    """Rate the games with each method, from the given starting values."""

    model_config = ConfigDict(extra="forbid", json_schema_extra={"examples": [glickman_example()]})

    players: list[StartingRating] = Field(default_factory=list,
                                          description="Optional starting values, one entry per competitor.")
    pair: Optional[Pair] = Field(None, description="Two competitors: the response's odds give their win/draw/loss "
                                                   "probabilities from each method's final ratings.")


class CompareRequest(_Request):
    """Score the methods on held-out games (``statespace.compare``): the first ``split`` of the
    games by period trains, the rest is forecast and scored."""

    model_config = ConfigDict(extra="forbid", json_schema_extra={"examples": [
        {"games": club_example()["games"], "methods": ["elo", "glicko", "glicko2"], "split": 0.7, "mode": "online"}]})

    split: Split = Field(0.7, description="Share of the games (in period order) that trains.")
    mode: Literal["frozen", "online", "walk_forward"] = Field(
        "frozen", description="frozen: forecast the held-out games from the trained state; online: forecast each "
                              "from everything before it; walk_forward: as online for these filters.")
    every: Optional[Positive] = Field(None, description="Block length of walk_forward, in periods (default 30).")


# ---------------------------------------------------------------------------- responses
class LeaderboardRow(BaseModel):
    rank: int = Field(description="1 for the highest rating.")
    player: str
    rating: float = Field(description="The skill estimate in the method's units (ratings()['mean']).")
    rd: Optional[float] = Field(None, description="Its sd (ratings()['sd']; Glicko's RD); null for Elo.")
    games: int = Field(description="Games played, including any given as starting games.")
    volatility: Optional[float] = Field(None, description="Glicko-2's volatility.")
    conservative: Optional[float] = Field(None, description="TrueSkill's displayed rating, mu - 3 sigma.")
    reached_2400: Optional[bool] = Field(None, description="FIDE Elo: has the player reached 2400 (K 10 for good)?")


class HistoryPoint(BaseModel):
    player: str
    period: Optional[int] = Field(description="The period after which the values hold; null: the starting values.")
    rating: float
    rd: Optional[float] = None
    volatility: Optional[float] = None


class MethodResult(BaseModel):
    method: str = Field(description="Registry name, e.g. glicko2.")
    label: str = Field(description="Display name, e.g. Glicko-2.")
    spec: str = Field(description="The method object as Python prints it, e.g. Glicko2(tau=0.5).")
    units: str = Field(description="What rating and rd are measured in.")
    leaderboard: list[LeaderboardRow]
    history: list[HistoryPoint] = Field(description="Each competitor's values at the start (period null) and after "
                                                    "each period they played (trajectories()).")
    notes: list[str] = Field(description="Given values this method did not use, and why.")


class Odds(BaseModel):
    win: float = Field(description="P(a wins).")
    draw: float = Field(description="P(draw) (0 for the methods that forecast no draws: Elo, Glicko).")
    loss: float = Field(description="P(b wins).")
    expected_score: float = Field(description="a's expected score, win + draw / 2.")


class OddsResult(BaseModel):
    a: str
    b: str
    by_method: dict[str, Odds] = Field(description="From each method's final ratings; no time passes.")


class RateResponse(BaseModel):
    n_games: int
    players: list[str]
    periods: list[int]
    methods: dict[str, MethodResult] = Field(description="One result per method, in the order asked for.")
    odds: Optional[OddsResult] = None


class CompareRow(BaseModel):
    method: str
    n_test: int
    log_loss: Optional[float] = None
    brier: Optional[float] = None
    accuracy: Optional[float] = None
    accuracy_50: Optional[float] = None
    log_loss_3: Optional[float] = Field(None, description="Three-outcome log loss; null for a method that "
                                                          "forecasts no draws on games with draws.")
    delta_log_loss: Optional[float] = None
    delta_se: Optional[float] = None
    fit_seconds: Optional[float] = None


class CompareResponse(BaseModel):
    split: float
    mode: str
    n_train: int
    n_test: int
    table: list[CompareRow] = Field(description="statespace.compare's table, best log loss first.")
