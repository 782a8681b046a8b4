"""CSV cells that a spreadsheet will not run: a client-chosen string (a model name, a
token name) starting with = + - @ or a tab / CR is a formula to Excel and LibreOffice
(`=HYPERLINK(...)`), so it is prefixed with a quote. Plain numbers stay numbers."""

import re
from typing import Any, Final

_FORMULA_START: Final = ("=", "+", "-", "@", "\t", "\r")
_NUMBER: Final = re.compile(r"[+-]?\d+(\.\d+)?")


def safe_cell(value: Any) -> Any:
    formula = isinstance(value, str) and value.startswith(_FORMULA_START)
    return "'" + value if formula and _NUMBER.fullmatch(value) is None else value


def safe_row(values: list[Any]) -> list[Any]:
    return [safe_cell(v) for v in values]
