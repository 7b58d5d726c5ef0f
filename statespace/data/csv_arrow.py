"""Reading a games CSV file with pyarrow's streaming CSV reader, exactly as pandas' C engine reads
it: :meth:`statespace.data.games.Games.from_csv` keeps this path's table only when it is the C
engine's, and otherwise reads the file again with the C engine, whose table and errors are the
reference (:func:`read_columns` says where the two engines differ and how this path stays exact).

The file is read batch by batch straight into the arrays a game table keeps
(:class:`_CsvBatches`), so neither pyarrow's table of the file nor a column of every row's text
is ever held. Nothing here imports pyarrow until a file is read.
"""

from __future__ import annotations

import csv
import os
import re

import numpy as np
import pandas as pd

from statespace.data.clean_columns import clean_columns
from statespace.data.columns import _KNOWN, _NA_WORDS, _SIDE_SCORES, GamesError, _parse_flag
from statespace.data.ids import StreamedNames

#: Text pyarrow reads as a number and the C engine does not (hexadecimal integers), or as another
#: kind of number (``+1`` as a float; only ``score_a``/``score_b`` keep the kind, in ``extra``).
_HEX = (b"0x", b"0X")
_PLUS = (b"+",)
#: An ISO 8601 date, and a UTC offset after it (pyarrow then reads the column as UTC times)
_ISO_DATE = re.compile(r"\d{4}-\d{2}-\d{2}([T ]\d{2}(:\d{2}(:\d{2}(\.\d+)?)?)?)?([zZ]|[+-]\d{2}(:?\d{2})?)?$")
_OFFSET = re.compile(r"([zZ]|[+-]\d{2}(:?\d{2})?)$")


def _arrow_column(name: str, column) -> pd.Series | None:
    """One column read by pyarrow (a chunked array: its batches) as
    :meth:`~statespace.data.games.Games.from_csv` reads it with the C engine (text as pandas'
    Arrow-backed strings, numbers and dates as NumPy arrays), or ``None`` when the C engine may
    read it otherwise or it has a missing value (a row error)."""
    import pyarrow as pa
    import pyarrow.compute as pc

    kind = column.type
    if pa.types.is_string(kind) or pa.types.is_large_string(kind):
        if name in ("a", "b") and column.null_count:  # an NA word: a name for the C engine
            return None
        text = pd.Series(pd.arrays.ArrowStringArray(column), copy=False)
        if name == "period" and pd.to_numeric(text, errors="coerce").notna().any():
            return None  # a number the C engine may have read as one
        return text
    if column.null_count:
        return None
    if pa.types.is_timestamp(kind) or pa.types.is_date(kind):
        if name != "time":
            return None
        if pa.types.is_date(kind):
            column = pc.cast(column, pa.timestamp("s"))
        elif kind.tz is not None:  # UTC times: the same instants without the zone
            column = column.cast(pa.timestamp(kind.unit))
        return pd.Series(column.to_numpy(), copy=False)
    if pa.types.is_boolean(kind):
        return pd.Series(column.to_numpy(), copy=False) if name == "neutral" else None
    if pa.types.is_integer(kind) or pa.types.is_floating(kind):
        values = column.to_numpy()
        if name in _SIDE_SCORES and values.dtype.kind == "f" and (np.abs(values) >= 2.0**63).any():
            return None  # an integer beyond int64: the C engine keeps it as one (uint64)
        return pd.Series(values, copy=False)
    return None  # times of day, ...


def _first_value(path: str, sep: str, column: str) -> str | None:
    """The first data row's value of ``column`` in a CSV file (``None`` if there is none, or the
    ``csv`` module cannot read the first rows: the readers then report)."""
    with open(path, newline="", encoding="utf-8", errors="replace") as f:
        rows = csv.reader(f, delimiter=sep)
        try:
            header = [c.strip().lstrip("\ufeff") for c in next(rows, [])]
            first = next(rows, None)
        except csv.Error:
            return None
    if first is None or column not in header or len(first) != len(header):
        return None
    return first[header.index(column)]


def _is_number(text: str) -> bool:
    """Whether ``text`` reads as a number (Python's ``float``; pyarrow may still refuse it)."""
    try:
        float(text)
    except ValueError:
        return False
    return True


def _scan_file(path: str, needles: tuple[bytes, ...]) -> tuple[bool, int]:
    """Whether a file contains any of ``needles`` (short byte strings), and how many ``\\n`` and
    ``\\r`` bytes it holds (each counted: one more is at least its number of lines), read in
    blocks; the count stops at a needle."""
    tail = b""
    ends = 0
    with open(path, "rb") as f:
        while block := f.read(1 << 22):
            joined = tail + block[:64] if tail else b""
            # the needle's last byte first: one memchr pass, and most files lack it
            if any((nd[-1:] in block and nd in block) or (joined and nd in joined) for nd in needles):
                return True, ends
            ends += int(np.count_nonzero(np.frombuffer(block, dtype=np.uint8) == 10))  # b"\n"
            if b"\r" in block:
                ends += block.count(b"\r")
            tail = block[-64:]
    return False, ends


def _flags_into(column, out: np.ndarray) -> bool:
    """Write the ``neutral`` flags of a pyarrow array (integers, numbers, booleans or text, without
    missing values) into ``out``, read as the C engine's column of that kind is read
    (:func:`statespace.data.columns._parse_flag`); ``False`` when a value is no flag."""
    import pyarrow as pa

    if pa.types.is_integer(column.type):  # 0 and 1, the usual column: no pandas needed
        values = column.to_numpy(zero_copy_only=False)
        if not ((values == 0) | (values == 1)).all():
            return False
        np.equal(values, 1, out=out)
        return True
    if pa.types.is_string(column.type):
        values = pd.Series(pd.arrays.ArrowStringArray(column), copy=False)
    else:
        values = pd.Series(column.to_numpy(zero_copy_only=False), copy=False)
    flags = _parse_flag(values)
    if np.isnan(flags).any():
        return False
    np.equal(flags, 1.0, out=out)
    return True


def _shrink(x: np.ndarray, n: int) -> np.ndarray:
    """``x`` (an array that owns its memory, with no view of it left) cut to its first ``n``
    values in place: its memory beyond them is given back, nothing is copied."""
    if x.size != n:
        x.resize(n, refcheck=False)
    return x


class _CsvBatches:
    """The columns of a CSV file as pyarrow's streaming CSV reader gives them, batch by batch,
    turned into the arrays a game table keeps as they arrive (no column is held whole as
    pyarrow's table or as pandas' text): ``time`` (pyarrow's timestamps, or numbers as
    float64), ``score`` and ``neutral`` (as flags) are written into arrays sized for the most
    rows the file can have, ``a`` and ``b`` into competitor codes
    (:class:`statespace.data.ids.StreamedNames`); any other column (and ``time`` read as text) is
    kept as pyarrow's batches, for :func:`_arrow_column` at the end. A missing value anywhere, a
    score not 0, 0.5 or 1, or a ``neutral`` value that is no flag stops the reading (:meth:`add`
    gives ``False``): those are row errors, which the C engine names."""

    def __init__(self, schema, bound: int):
        import pyarrow as pa

        self.n = 0
        self.bound = bound
        self.arrays: dict[str, np.ndarray] = {}
        self.chunks: dict[str, list] = {}
        self.types = {name: schema.field(name).type for name in schema.names}
        self.names = StreamedNames()
        for name, kind in self.types.items():
            number = pa.types.is_integer(kind) or pa.types.is_floating(kind)
            if name in ("a", "b"):
                self.arrays[name] = np.empty(bound, dtype=np.int64)
            elif name == "time" and pa.types.is_timestamp(kind):
                self.arrays[name] = np.empty(bound, dtype="datetime64[ns]")
            elif name in ("time", "score") and number:
                self.arrays[name] = np.empty(bound, dtype=np.float64)
            elif name == "neutral" and (number or pa.types.is_boolean(kind) or pa.types.is_string(kind)):
                self.arrays[name] = np.empty(bound, dtype=bool)
            else:
                self.chunks[name] = []

    def add(self, batch) -> bool:
        """Take one batch; ``False`` when it has a row error or more rows than the file can."""
        start, stop = self.n, self.n + batch.num_rows
        if stop > self.bound:
            return False
        for name, column in zip(batch.schema.names, batch.columns):
            if column.null_count:
                return False
            if name in self.chunks:
                self.chunks[name].append(column)
                continue
            if name in ("a", "b"):
                if not self.names.add(column, self.arrays[name], start):
                    return False
                continue
            out = self.arrays[name][start:stop]
            if name == "neutral":
                if not _flags_into(column, out):
                    return False
            else:
                out[:] = column.to_numpy(zero_copy_only=False)
                if name == "score" and not ((out == 0.0) | (out == 0.5) | (out == 1.0)).all():
                    return False
        self.n = stop
        return True

    def columns(self) -> tuple[dict, dict] | None:
        """``(checked, cols)`` for :func:`statespace.data.clean_columns.clean_columns` once every
        batch is in: the arrays already checked (``time`` as dates, ``score``, ``neutral``, and
        ``codes``), and the other columns as :func:`_arrow_column` makes them; ``None`` when
        there are no rows, a column is one that function refuses, or the competitors need the C
        engine's errors."""
        import pyarrow as pa

        n = self.n
        if n == 0:
            return None
        coded = self.names.finish()
        if coded is None:
            return None
        to_player, players = coded
        a, b = (_shrink(self.arrays.pop(side), n) for side in ("a", "b"))
        for codes in (a, b):
            np.take(to_player, codes, out=codes, mode="clip")
        if np.any(a == b):
            return None
        checked = {"codes": (a, b, players)}
        cols = {}
        for name in list(self.arrays):
            values = _shrink(self.arrays.pop(name), n)
            if name == "time" and values.dtype.kind == "f":
                cols[name] = values  # numbers: whole years are dates (_parse_time)
            else:
                checked[name] = values
        for name in list(self.chunks):
            column = pa.chunked_array(self.chunks.pop(name), type=self.types[name])
            cols[name] = _arrow_column(name, column)
            del column
            if cols[name] is None:
                return None
        return checked, cols


def read_columns(path: str, header: pd.Index, read_csv_kwargs: dict, shown: str | None, *, pyarrow: bool,
                 block: int) -> dict | None:
    """The columns of a :class:`~statespace.data.games.Games` (its constructor's keyword
    arguments) of the CSV file ``path`` (whose ``header`` is read), read by pyarrow's streaming
    CSV reader (with the NA words pandas' pyarrow engine gives it), or ``None`` (the C engine
    then reads the file) when pyarrow is not installed (``pyarrow``: whether it is), an option
    or a column is not one this path reads exactly as the C engine does, or the table has
    anything to report.

    The file is read in blocks of ``block`` bytes (:data:`statespace.data.games._CSV_BLOCK`),
    and each batch is turned into the games' arrays as it comes (:class:`_CsvBatches`:
    competitor codes, times, scores and flags written into arrays sized from the file's line
    count), so neither pyarrow's table of the file nor a column of every row's text is ever
    held. Once the file is read, the memory pyarrow's default pool has freed is given back to
    the system (``release_unused``) before the table's own arrays are made.

    Column types given to pyarrow: ``a`` and ``b`` as text (ids are text: ``007`` stays
    ``007``); ``time`` as timestamps when the first value is an ISO date (with a UTC offset:
    UTC times, the same instants without the zone), as float64 when it is a number (the C
    engine's integers are read as floats too), and otherwise as pyarrow infers it; ``score``
    as float64 (likewise). pyarrow infers the other columns' types from the first batch, and
    a later batch that does not fit them is one of its errors: the C engine then reads the
    file.

    Where the engines differ, and how this path stays exact: pyarrow reads an NA word in a
    competitor column as missing (the C engine reads the name "NA": any missing value here
    goes to the C engine); it reads hexadecimal integers ``0x1F`` (the C engine reads text: a
    file containing ``0x`` goes to the C engine); it reads ISO dates as dates (kept for
    ``time``, whose value is the same either way; a date in another column goes to the C
    engine); a column mixing ``1`` and ``true`` as booleans (kept for ``neutral`` only,
    whose flags are the same either way); and ``+1`` or an integer beyond int64 as a float
    (the same number in every column but ``score_a``/``score_b``, which ``extra`` keeps as
    read: such a file goes to the C engine)."""
    sep = read_csv_kwargs.get("sep", read_csv_kwargs.get("delimiter", ","))
    if (set(read_csv_kwargs) - {"sep", "delimiter"} or len(read_csv_kwargs) > 1
            or not (isinstance(sep, str) and len(sep) == 1 and sep not in "\r\n\"")):
        return None
    if not pyarrow or len(header) == 0 or not set(header) <= _KNOWN:
        return None
    sides = [c in header for c in _SIDE_SCORES]
    if not {"time", "a", "b"} <= set(header) or any(sides) != all(sides) or not ("score" in header or all(sides)):
        return None  # a missing column: the C engine's error names it
    found, line_ends = _scan_file(path, _HEX + (_PLUS if "score_a" in header else ()))
    if found:
        return None
    try:
        import pyarrow as pa
        import pyarrow.csv as pacsv
    except ImportError:  # a broken install: the C engine reads
        return None
    types = {"a": pa.string(), "b": pa.string(), "score": pa.float64()}
    first = _first_value(path, sep, "time")
    if first is not None and _ISO_DATE.match(first):  # dates: parsed by pyarrow straight into times
        types["time"] = pa.timestamp("ns", tz="UTC") if _OFFSET.search(first[10:]) else pa.timestamp("ns")
    elif first is not None and _is_number(first):
        types["time"] = pa.float64()
    try:
        with pacsv.open_csv(path, read_options=pacsv.ReadOptions(block_size=block),
                            parse_options=pacsv.ParseOptions(delimiter=sep),
                            convert_options=pacsv.ConvertOptions(column_types=types, null_values=_NA_WORDS,
                                                                 strings_can_be_null=True)) as reader:
            names = reader.schema.names
            if [names[0].lstrip("\ufeff"), *names[1:]] != list(header):
                return None
            batches = _CsvBatches(reader.schema, line_ends + 1)
            for batch in reader:
                if not batches.add(batch):
                    return None
                del batch
    except pa.ArrowException:  # a parse or conversion error: the C engine reads the file and reports
        return None
    read = batches.columns()
    del batches
    pa.default_memory_pool().release_unused()  # the reader's freed buffers, before the table's arrays
    if read is None:
        return None
    checked, cols = read
    del read
    extra = pd.DataFrame({c: cols[c] for c in names if c in _SIDE_SCORES}) if "score_a" in cols else None
    try:
        return clean_columns(cols, extra, 2, shown or os.path.basename(path), checked)
    except GamesError:  # a period error: the C engine's values are the ones to show
        return None
