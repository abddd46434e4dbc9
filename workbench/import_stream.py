"""Reading a large export row by row, so that importing a million rows holds one row at a time, not all.

Why: ``json.loads`` of a whole export keeps every row as a Python dict (about 5 KB each): a million rows
took gigabytes. A file larger than :data:`STREAM_FROM_BYTES` is read in two passes instead: the first
validates it (the same checks as :func:`workbench.import_schema.validate_export`, row by row), the second
hands the rows to the store as it writes them. The top-level object is walked with the standard library's
decoder (``raw_decode``) on a growing buffer: every value but the ``results`` list is decoded whole (runs,
environments and peaks are small), and ``results`` one element at a time.
"""

from __future__ import annotations

import codecs
import json
import os
import re
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

#: Exports at least this large are streamed (smaller ones are parsed whole, which is faster).
STREAM_FROM_BYTES = 64 << 20
CHUNK_CHARS = 1 << 20
_WS = re.compile(r"[ \t\r\n]*")


class _Scanner:
    """A JSON text read from a file in chunks: whitespace, single characters and whole values."""

    def __init__(self, path: Path, where: str, refuse_constant: Callable[[str], Any]):
        self.f = open(path, "rb")  # noqa: SIM115 - closed by close()
        self.where = where
        self.text = codecs.getincrementaldecoder("utf-8-sig")()
        self.decoder = json.JSONDecoder(parse_constant=refuse_constant)
        self.buf, self.pos, self.eof, self.offset = "", 0, False, 0

    def close(self) -> None:
        self.f.close()

    def _more(self, n: int = CHUNK_CHARS) -> bool:
        """Read at least ``n`` more bytes into the buffer (dropping what was consumed); False at the end."""
        if self.eof:
            return False
        data = self.f.read(max(n, CHUNK_CHARS))
        try:
            text = self.text.decode(data, final=not data)
        except UnicodeDecodeError as exc:
            raise ValueError(f"{self.where}: not UTF-8 text (near byte {self.f.tell() - len(data) + exc.start:,}); "
                             "a workbench export is UTF-8 JSON") from None
        self.eof = not data
        self.offset += self.pos
        self.buf = self.buf[self.pos:] + text
        self.pos = 0
        return True

    def peek(self) -> str:
        """The next character that is not whitespace ("" at the end), without consuming it."""
        while True:
            self.pos = _WS.match(self.buf, self.pos).end()
            if self.pos < len(self.buf):
                return self.buf[self.pos]
            if not self._more():
                return ""

    def expect(self, chars: str, what: str) -> str:
        c = self.peek()
        if not c or c not in chars:
            got = repr(c) if c else "the end of the file"
            raise ValueError(f"{self.where}: not valid JSON: expected {what} at character "
                             f"{self.offset + self.pos:,}, found {got}")
        self.pos += 1
        return c

    def value(self, depth_check: Callable[[str], None]) -> Any:
        """The next whole JSON value. A value that ends exactly at the end of the buffer may be cut short
        (a number), so it is decoded again once more text is in."""
        self.peek()
        while True:
            try:
                v, end = self.decoder.raw_decode(self.buf, self.pos)
                if end < len(self.buf) or self.eof:
                    depth_check(self.buf[self.pos:end])
                    self.pos = end
                    return v
            except json.JSONDecodeError as exc:
                if self.eof:
                    raise ValueError(f"{self.where}: not valid JSON: {exc.msg} (character "
                                     f"{self.offset + exc.pos:,})") from None
            except RecursionError:
                raise ValueError(f"{self.where}: JSON nested more than the parser allows; an export is never that "
                                 "deep") from None
            except ValueError as exc:  # NaN / Infinity, or an integer of thousands of digits
                raise ValueError(f"{self.where}: {exc}") from None
            self._more(len(self.buf))  # doubling: a large value is decoded O(log n) times, not once per chunk


def iter_export(path: str | os.PathLike, where: str, head: dict[str, Any], refuse_constant: Callable[[str], Any],
                depth_check: Callable[[str], None]) -> Iterator[Any]:
    """Walk an export: yields the elements of its ``results`` list in order, and fills ``head`` with its other
    top-level fields (``results`` reads there as an empty list); ``head`` is complete once the walk ends."""
    s = _Scanner(Path(path), where, refuse_constant)
    try:
        if s.peek() != "{":
            raise ValueError(f"{where} is not a workbench results export (a JSON object with format "
                             "'workbench-results')")
        s.expect("{", "'{'")
        if s.peek() == "}":
            s.pos += 1
            return
        while True:
            key = s.value(depth_check)
            if not isinstance(key, str):
                raise ValueError(f"{where}: not valid JSON: an object key must be a string")
            s.expect(":", "':'")
            if key == "results" and s.peek() == "[":
                s.pos += 1
                head["results"] = []
                if s.peek() == "]":
                    s.pos += 1
                else:
                    while True:
                        yield s.value(depth_check)
                        if s.expect(",]", "',' or ']'") == "]":
                            break
            else:
                head[key] = s.value(depth_check)
            if s.expect(",}", "',' or '}'") == "}":
                break
        if s.peek():
            raise ValueError(f"{where}: not valid JSON: text after the end of the document")
    finally:
        s.close()


class StreamedRows:
    """The ``results`` of a validated large export: iterating reads them from the file again, one at a time.
    ``env_ids``: the environments the rows name (collected while validating)."""

    def __init__(self, path: str | os.PathLike, count: int, env_ids: set[str],
                 refuse_constant: Callable[[str], Any]):
        self.path, self.count, self.env_ids = Path(path), count, env_ids
        self._refuse = refuse_constant

    def __len__(self) -> int:
        return self.count

    def __iter__(self) -> Iterator[dict[str, Any]]:
        yield from iter_export(self.path, str(self.path), {}, self._refuse, lambda _text: None)
