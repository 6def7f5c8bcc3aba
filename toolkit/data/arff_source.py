"""Line-oriented reading of ARFF text from a file (plain or gzip) or a string.

Lines come in chunks of roughly ``hint`` bytes, so that a large file is never held in memory
whole. Every decoding problem is reported with the file and the line: invalid UTF-8, binary data,
a truncated or damaged gzip stream.
"""

from __future__ import annotations

import gzip
import io
import os
import zlib
from collections.abc import Iterator
from pathlib import Path

from toolkit.errors import ArffFormatError, DatasetError

__all__ = ["LineSource", "open_binary"]

_GZIP_MAGIC = b"\x1f\x8b"


def open_binary(path: str | os.PathLike[str]) -> io.BufferedIOBase:
    """Open ``path`` for reading bytes, decompressing gzip transparently (by content, not name)."""
    try:
        raw = open(path, "rb")
    except FileNotFoundError:
        raise DatasetError(f"{path}: no such file") from None
    except IsADirectoryError:
        raise DatasetError(f"{path}: is a directory, not an ARFF file") from None
    except OSError as exc:
        raise DatasetError(f"{path}: cannot open ({exc.strerror or exc})") from None
    magic = raw.peek(2)[:2] if hasattr(raw, "peek") else b""
    if magic == _GZIP_MAGIC:
        # BufferedReader splits lines in C; GzipFile.readline alone is Python code per line
        return io.BufferedReader(gzip.GzipFile(fileobj=raw, mode="rb"), buffer_size=1 << 16)  # type: ignore[arg-type]
    return raw


class LineSource:
    """Decoded lines of an ARFF text with their 1-based line numbers."""

    def __init__(self, source: str | os.PathLike[str] | None = None, *, text: str | None = None,
                 encoding: str = "utf-8", display_name: str | None = None):
        if (source is None) == (text is None):
            raise ValueError("give either a path or text")
        self.path = None if source is None else str(source)
        self.display = display_name or self.path or "<string>"
        self.encoding = encoding
        self._text = text
        self.line_no = 0            # number of the last line handed out
        self.ended_with_newline = True
        self._pending: list[str] = []
        self._raw: Iterator[list[bytes] | list[str]] | None = None

    # ------------------------------------------------------------------ internals
    def _raw_chunks(self, hint: int) -> Iterator[list[bytes] | list[str]]:
        if self._text is not None:
            text = self._text[1:] if self._text.startswith("\ufeff") else self._text
            lines = [ln + "\n" for ln in text.split("\n")]
            lines[-1] = lines[-1][:-1]
            if not lines[-1]:
                lines.pop()
            for start in range(0, len(lines), 4096):
                yield lines[start:start + 4096]
            return
        stream = open_binary(self.path)  # type: ignore[arg-type]
        try:
            first = True
            while True:
                try:
                    lines = stream.readlines(hint)
                except EOFError:
                    raise ArffFormatError(self.display, self.line_no + 1,
                                          "the gzip stream ends early",
                                          hint="the file is truncated; download or copy it again") from None
                except (gzip.BadGzipFile, zlib.error) as exc:
                    raise ArffFormatError(self.display, self.line_no + 1,
                                          f"damaged gzip data ({exc})",
                                          hint="the file is corrupt; download or copy it again") from None
                if not lines:
                    return
                if first:
                    first = False
                    if lines[0].startswith(b"\xef\xbb\xbf"):
                        lines[0] = lines[0][3:]
                    head = b"".join(lines[:64])[:8192]
                    if b"\x00" in head:
                        raise ArffFormatError(
                            self.display, 1 + head[: head.index(b"\x00")].count(b"\n"),
                            "binary data (a NUL byte)", hint="this is not an ARFF text file")
                yield lines
        finally:
            stream.close()

    def _decode(self, lines: list[bytes]) -> list[str]:
        try:
            return [ln.decode(self.encoding) for ln in lines]
        except UnicodeDecodeError:
            pass
        for offset, ln in enumerate(lines):
            try:
                ln.decode(self.encoding)
            except UnicodeDecodeError as exc:
                bad = ln[exc.start:exc.start + 1]
                raise ArffFormatError(
                    self.display, self.line_no + offset + 1,
                    f"byte 0x{bad.hex()} at column {exc.start + 1} is not valid {self.encoding}",
                    hint="the file is binary or in another encoding; re-encode it as UTF-8 "
                         "or pass encoding='latin-1'") from None
        raise AssertionError("unreachable")  # pragma: no cover

    # ------------------------------------------------------------------ public
    def chunks(self, hint: int = 1 << 16) -> Iterator[tuple[int, list[str]]]:
        """Yield ``(number of the first line, lines)`` with line endings removed."""
        if self._pending:
            pending, self._pending = self._pending, []
            first = self.line_no - len(pending) + 1
            yield first, pending
        if self._raw is None:
            self._raw = self._raw_chunks(hint)
        for raw in self._raw:
            lines = raw if self._text is not None else self._decode(raw)  # type: ignore[arg-type]
            out: list[str] = []
            for ln in lines:
                if ln.endswith("\n"):
                    ln = ln[:-1]
                    self.ended_with_newline = True
                else:
                    self.ended_with_newline = False
                if ln.endswith("\r"):
                    ln = ln[:-1]
                if "\r" in ln:  # old Mac line ends inside a line
                    out.extend(ln.replace("\r\n", "\r").split("\r"))
                else:
                    out.append(ln)
            first = self.line_no + 1
            self.line_no += len(out)
            yield first, out

    def push_back(self, lines: list[str]) -> None:
        """Return unread lines (the header reader hands the data lines over this way)."""
        self._pending = lines

    @property
    def name(self) -> str:
        return Path(self.display).name
