"""The shapes of the lab's matches of many sides (``POST /api/v1/rate-matches``), with their checks.

A request is the long form a user would type: one row per competitor of a match (``match``,
optional ``time``, ``competitor``, optional ``side``, ``rank``, optional ``weight``), one
method that rates matches and its settings. Each check of one value names the field and the row
as the games' do (``matches[3].rank: must be a whole number >= 1 ...``); the checks across rows
(a competitor twice in one match, rows of a side that disagree on its rank, a match of one side)
are :meth:`statespace.data.matches.Matches.from_long`'s, named in the same form by
:mod:`statespace.app.lab.match_compute`.
"""

from __future__ import annotations

import math
from typing import Annotated, Any, Optional, Union

from pydantic import BaseModel, BeforeValidator, ConfigDict, Field, WithJsonSchema, field_validator
from pydantic_core import PydanticCustomError

from .schema import MAX_NAME, Name, _is_number, _name, _shown

__all__ = ["MAX_MATCH_ROWS", "MAX_SIDES", "MatchRow", "MatchRequest", "MatchResponse", "ffa_example",
           "team_example"]

#: the most rows (competitors of matches) one request may hold; 10,000 rows of short names take
#: about 0.6 MB of JSON, so this limit and the body's 1 MB can both be met
MAX_MATCH_ROWS = 10_000
#: the most sides one match may have: a method compares each side with each other one (Elo's
#: pairwise decomposition), so a match's work grows with the square of its sides
MAX_SIDES = 1_000
#: the largest place a rank may give
MAX_PLACE = 10**6
#: the longest time given as text (a date, "2024-05-01T20:00:00+02:00")
MAX_TIME_TEXT = 40


def _label(v: Any) -> str:
    """A match's or a side's id: text (as a name is read) or a whole number."""
    if _is_number(v) and math.isfinite(v) and float(v) == int(v):
        return str(int(v))
    try:
        return _name(v)
    except PydanticCustomError:
        raise PydanticCustomError("label", "must be an id (text of 1 to {n} characters, or a whole number), got {got}",
                                  {"n": MAX_NAME, "got": _shown(v)}) from None


def _optional_label(v: Any) -> Any:
    """A side: an id, or nothing (``null`` or empty text: the competitor plays alone)."""
    if v is None or (isinstance(v, str) and not v.strip()):
        return None
    return _label(v)


def _place(v: Any) -> int:
    """A place: a whole number from 1 (first); sides that tie share it."""
    if _is_number(v) and math.isfinite(v) and float(v) == int(v) and 1 <= v <= MAX_PLACE:
        return int(v)
    raise PydanticCustomError("rank", "must be a whole number >= 1 (1 = first; sides that tie share a place), "
                                      "got {got}", {"got": _shown(v)})


def _weight(v: Any) -> float:
    if _is_number(v) and 0 <= v <= 1:
        return float(v)
    raise PydanticCustomError("weight", "must be a number in [0, 1] (the share of the match played), got {got}",
                              {"got": _shown(v)})


def _time(v: Any) -> Any:
    """A finite number, or a date as text (read as :class:`statespace.Games` reads times)."""
    if _is_number(v) and math.isfinite(v):
        return float(v)
    if isinstance(v, str) and v.strip() and len(v) <= MAX_TIME_TEXT:
        return v.strip()
    raise PydanticCustomError("time", "must be a number or a date (text of at most {n} characters), got {got}",
                              {"n": MAX_TIME_TEXT, "got": _shown(v)})


def _setting(v: Any) -> Any:
    if isinstance(v, bool) or (_is_number(v) and math.isfinite(v)) or (isinstance(v, str) and 0 < len(v) <= 40):
        return v
    raise PydanticCustomError("setting", "must be a finite number, true/false or a short text, got {got}",
                              {"got": _shown(v)})


def _rows(v: Any) -> Any:
    if isinstance(v, list):
        if not v:
            raise PydanticCustomError("matches", "give at least one match (two rows or more)")
        if len(v) > MAX_MATCH_ROWS:
            raise PydanticCustomError("matches", "at most {n} rows per request, got {got}",
                                      {"n": MAX_MATCH_ROWS, "got": len(v)})
    return v


_ID = {"anyOf": [{"type": "string", "minLength": 1, "maxLength": MAX_NAME}, {"type": "integer"}]}
Label = Annotated[str, BeforeValidator(_label), WithJsonSchema(_ID)]
SideLabel = Annotated[Optional[str], BeforeValidator(_optional_label), WithJsonSchema({"anyOf": [*_ID["anyOf"],
                                                                                                 {"type": "null"}]})]
Place = Annotated[int, BeforeValidator(_place), WithJsonSchema({"type": "integer", "minimum": 1})]
Weight = Annotated[float, BeforeValidator(_weight), WithJsonSchema({"type": "number", "minimum": 0, "maximum": 1})]
Time = Annotated[Union[float, str], BeforeValidator(_time), WithJsonSchema({"anyOf": [{"type": "number"},
                                                                                      {"type": "string"}]})]
Setting = Annotated[Union[bool, float, str], BeforeValidator(_setting),
                    WithJsonSchema({"anyOf": [{"type": "number"}, {"type": "boolean"}, {"type": "string"}]})]


class MatchRow(BaseModel):
    """One competitor of one match."""

    model_config = ConfigDict(extra="forbid")

    match: Label = Field(description="The match's id; the rows of a match share it (they need not be adjacent).",
                         examples=["m1"])
    time: Optional[Time] = Field(None, description="When the match was played: a number or a date; the rows of a "
                                                   "match share it. Left out on every row: the matches in the order "
                                                   "of their first rows, one step apart.", examples=[1])
    competitor: Name = Field(description="The competitor (a player).", examples=["Ana"])
    side: SideLabel = Field(None, description="The competitor's side (team) in this match; the rows of a side share "
                                              "its rank. Left out or empty: the competitor plays alone (a "
                                              "free-for-all when no row has a side).", examples=["red"])
    rank: Place = Field(description="The side's place in the match: 1 first, then 2, ...; sides that tie share a "
                                    "place (1, 1, 3). Only the order counts.", examples=[1])
    weight: Optional[Weight] = Field(None, description="Partial play: the share of the match this competitor "
                                                       "played, in [0, 1] (default 1).", examples=[1])


MatchRows = Annotated[list[MatchRow], BeforeValidator(_rows),
                      Field(description=f"One row per competitor of a match, 1 to {MAX_MATCH_ROWS:,} rows; rows "
                                        "are counted from 0 in messages.")]


def ffa_example() -> dict:
    """A free-for-all of four players (made up for the lab): Ana first, Ben and Chloe tied
    second, Dan last; then a rematch of three of them."""
    rows = [("m1", "Ana", 1), ("m1", "Ben", 2), ("m1", "Chloe", 2), ("m1", "Dan", 4),
            ("m2", "Dan", 1), ("m2", "Ana", 2), ("m2", "Ben", 3)]
    return {"matches": [{"match": m, "competitor": c, "rank": r} for m, c, r in rows], "method": "elo",
            "settings": {"k": 32}}


def team_example() -> dict:
    """Two games of two against two (made up for the lab): red (Ana, Ben) beats blue (Chloe,
    Dan), then Ana and Chloe beat Ben and Dan, Dan playing half of the game."""
    rows = [("g1", 1, "Ana", "red", 1, 1), ("g1", 1, "Ben", "red", 1, 1), ("g1", 1, "Chloe", "blue", 2, 1),
            ("g1", 1, "Dan", "blue", 2, 1), ("g2", 2, "Ana", "A", 1, 1), ("g2", 2, "Chloe", "A", 1, 1),
            ("g2", 2, "Ben", "B", 2, 1), ("g2", 2, "Dan", "B", 2, 0.5)]
    return {"matches": [{"match": m, "time": t, "competitor": c, "side": s, "rank": r, "weight": w}
                        for m, t, c, s, r, w in rows], "method": "elo"}


class MatchRequest(BaseModel):
    """Rate matches of many sides (teams, free-for-all rankings, partial play) with one method
    that rates them (``GET /api/v1/match-methods`` lists them)."""

    model_config = ConfigDict(extra="forbid", json_schema_extra={"examples": [ffa_example(), team_example()]})

    matches: MatchRows
    method: str = Field("elo", description="A method that rates matches of many sides (its filter has a match "
                                           "kernel): GET /api/v1/match-methods lists them, e.g. elo.",
                        examples=["elo"])
    settings: dict[str, Setting] = Field(default_factory=dict,
                                         description='The method\'s settings, e.g. {"k": 24} for Elo; anything left '
                                                     "out is the method's default (the same settings as in "
                                                     "/api/v1/rate for the lab's methods).")

    @field_validator("method", mode="before")
    @classmethod
    def _method(cls, v: Any) -> Any:
        if not isinstance(v, str) or not v.strip():
            raise PydanticCustomError("method", "must be a method's name, got {got}", {"got": _shown(v)})
        return v.strip()


# ---------------------------------------------------------------------------- responses
class MatchBoardRow(BaseModel):
    rank: int = Field(description="1 for the highest rating.")
    player: str
    rating: float = Field(description="The skill estimate in the method's units (ratings()['mean']).")
    rd: Optional[float] = Field(None, description="Its sd (ratings()['sd']); null for Elo.")
    matches: int = Field(description="Matches played.")


class SideForecast(BaseModel):
    side: Optional[str] = Field(description="The side as given; null for a competitor who played alone.")
    members: list[str]
    rank: int = Field(description="The side's place in the result (1 first; ties share).")
    strength: float = Field(description="Its forecast strength before the match: the weighted sum of its members' "
                                        "ratings (MatchRun.perf_mean).")
    sd: Optional[float] = Field(None, description="The sd of that strength from the members' rating sds "
                                                  "(sqrt of MatchRun.perf_var); null for a method that keeps none.")
    predicted_rank: int = Field(description="Its place by forecast strength (1 the strongest; equal strengths "
                                            "share a place).")


class MatchForecast(BaseModel):
    match: str
    time: Optional[Union[float, str]] = Field(description="The match's time as read (null when none was given).")
    sides: list[SideForecast] = Field(description="Its sides, by their place in the result.")
    favourite_won: Optional[bool] = Field(description="Did a side with the highest forecast strength place first? "
                                                      "null when every side's forecast strength was the same.")


class MatchResponse(BaseModel):
    method: str = Field(description="Registry name, e.g. elo.")
    label: str = Field(description="Display name, e.g. Elo.")
    spec: str = Field(description="The method object as Python prints it, e.g. Elo(k=32).")
    units: str = Field(description="What rating and rd are measured in.")
    n_matches: int
    players: list[str]
    leaderboard: list[MatchBoardRow] = Field(description="method.run(matches).ratings(), best first.")
    matches: list[MatchForecast] = Field(description="Each match, in time order, with each side's forecast before "
                                                     "it and the order it predicted.")


class MatchMethod(BaseModel):
    method: str
    label: str
    settings: list[str] = Field(description="The settings the method takes.")


class MatchMethods(BaseModel):
    methods: list[MatchMethod] = Field(description="The methods whose filter rates matches of many sides.")
    examples: dict[str, dict] = Field(description="ffa: a free-for-all of four; teams: two against two.")
