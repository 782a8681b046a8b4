"""A progress bar for long CLI work, drawn on stderr only when stderr is a terminal (so
scripts and pipes see clean output). No dependency: one line redrawn with `\\r`."""

import sys
import time
from collections.abc import Iterable, Iterator
from typing import TextIO, TypeVar

T = TypeVar("T")
WIDTH = 30


class Progress:
    def __init__(self, total: int, label: str, stream: TextIO | None = None) -> None:
        self.total = max(total, 0)
        self.label = label
        self.done = 0
        self._stream = stream if stream is not None else sys.stderr
        self.enabled = self._stream.isatty() and self.total > 0
        self._last_draw = 0.0

    def advance(self, n: int = 1, note: str = "") -> None:
        self.done = min(self.total, self.done + n)
        now = time.monotonic()
        if self.enabled and (self.done == self.total or now - self._last_draw >= 0.05):
            self._last_draw = now
            self._draw(note)

    def _draw(self, note: str) -> None:
        filled = WIDTH * self.done // self.total
        bar = "#" * filled + "-" * (WIDTH - filled)
        line = f"\r{self.label} [{bar}] {self.done}/{self.total} {note[:30]}"
        self._stream.write(line.ljust(len(self.label) + WIDTH + 50))
        self._stream.flush()

    def close(self) -> None:
        if self.enabled:
            self._stream.write("\r" + " " * (len(self.label) + WIDTH + 50) + "\r")
            self._stream.flush()


def progress(
    items: Iterable[T], total: int, label: str, stream: TextIO | None = None
) -> Iterator[T]:
    """Yield `items`, advancing a bar after each (the bar is erased at the end)."""
    bar = Progress(total, label, stream)
    try:
        for item in items:
            yield item
            bar.advance()
    finally:
        bar.close()
