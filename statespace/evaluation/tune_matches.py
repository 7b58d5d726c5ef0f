"""Tuning on matches of many sides, for the evaluation room: :func:`tune_matches` and
:data:`OBJECTIVES` are defined in :mod:`filters.match_tuning` (below both ``evaluation`` and
``ensemble``, which use it and do not import each other) and are the same objects here."""

from __future__ import annotations

from filters.match_tuning import OBJECTIVES, tune_matches

__all__ = ["tune_matches", "OBJECTIVES"]
