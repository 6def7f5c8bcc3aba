"""Bytes of an ARFF text from a file (plain or gzip) or a string, read in bounded blocks.

The header is handed out as decoded lines with their numbers; the data section as blocks of whole
lines (bytes, UTF-8), which the data reader parses without decoding them line by line. A line ends
at ``\\n``, ``\\r\\n`` or a lone ``\\r``. Every decoding problem is reported with the file and the line:
invalid UTF-8, binary data (a NUL byte anywhere in the text), a truncated or damaged gzip stream (the
line named is the first one the stream does not hold whole, i.e. the line after the last complete
one; :func:`open_binary` reports it so for every reader). The SHA-256 of the file's bytes (the
compressed bytes for a ``.gz``) is computed while reading, so that the file is read once.
"""

from __future__ import annotations

import codecs
import gzip
import hashlib
import io
import os
import re
import stat
import zlib
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any
from pathlib import Path

from toolkit.atomic_write import replaced_atomically
from toolkit.errors import ArffFormatError, DatasetError

__all__ = ["ByteSource", "open_binary", "BLOCK", "is_gzip_name", "undecodable_line", "MAX_LINE_BYTES"]

_GZIP_MAGIC = b"\x1f\x8b"
#: bytes read at a time; a chunk of lines is at most this plus one line
BLOCK = 1 << 20
#: files from this size on are hashed on a second thread
_THREAD_HASH_FROM = 8 << 20


class _ThreadedHash:
    """SHA-256 computed on a second thread (hashlib releases the GIL), so that hashing a large file
    overlaps with parsing it; blocks are hashed in the order given, at most four waiting."""

    def __init__(self, sha: hashlib._Hash):  # type: ignore[name-defined]
        import queue
        import threading

        self.sha = sha
        self.todo: queue.Queue[Any] = queue.Queue(maxsize=4)
        self.thread = threading.Thread(target=self._run, name="toolkit-sha256", daemon=True)
        self.thread.start()

    def _run(self) -> None:
        while True:
            item = self.todo.get()
            if item is None:
                return
            data, done = item
            try:
                self.sha.update(data)
            finally:
                if isinstance(data, memoryview):
                    data.release()
                del data, item
                if done is not None:
                    done.set()

    def update(self, data: bytes | memoryview, done: Any = None) -> None:
        """Hash ``data`` on the thread. A memoryview's buffer must stay unchanged until ``done`` (a
        threading.Event, cleared here) is set; bytes are immutable."""
        if done is not None:
            done.clear()
        self.todo.put((data, done))

    def finish(self) -> None:
        if self.thread.is_alive():
            self.todo.put(None)
            self.thread.join()


class _Hashing(io.RawIOBase):
    """A raw file that hashes what is read from it (the compressed bytes of a gzip file)."""

    def __init__(self, raw: io.BufferedReader, sha: hashlib._Hash, threaded: bool = False):  # type: ignore
        self.raw = raw
        self.sha = _ThreadedHash(sha) if threaded else sha

    def readable(self) -> bool:
        return True

    def readinto(self, b) -> int:  # type: ignore[no-untyped-def]
        n = self.raw.readinto(b)
        if n:
            with memoryview(b) as whole, whole[:n] as view:
                # the thread gets a copy: b may be a buffer that gzip frees or refills at once
                self.sha.update(bytes(view) if isinstance(self.sha, _ThreadedHash) else view)
        return n

    def read_rest(self) -> None:
        for block in iter(lambda: self.raw.read(BLOCK), b""):
            self.sha.update(block)

    def close(self) -> None:
        if isinstance(self.sha, _ThreadedHash):
            self.sha.finish()
        self.raw.close()
        super().close()


def _open_raw(path: str | os.PathLike[str]) -> io.BufferedReader:
    try:
        return open(path, "rb")
    except FileNotFoundError:
        raise DatasetError(f"{path}: no such file") from None
    except IsADirectoryError:
        raise DatasetError(f"{path}: is a directory, not an ARFF file") from None
    except OSError as exc:
        raise DatasetError(f"{path}: cannot open ({exc.strerror or exc})") from None


def open_binary(path: str | os.PathLike[str]) -> io.BufferedIOBase:
    """Open ``path`` for reading bytes, decompressing gzip transparently (by content, not name).

    A truncated or damaged gzip stream raises :class:`ArffFormatError` naming the file and the line
    (see :func:`gzip_error`), not EOFError or BadGzipFile, for every reader that opens files here."""
    raw = _open_raw(path)
    if raw.peek(2)[:2] == _GZIP_MAGIC:
        return _CheckedGzipFile(str(path), raw)
    return raw


#: the problems of a gzip stream: truncated (EOFError), a bad header or CRC (BadGzipFile, an OSError),
#: damaged deflate data (zlib.error)
_GZIP_ERRORS = (EOFError, zlib.error, OSError)


def count_line_ends(fh: Any, n: int, errors: tuple[type[BaseException], ...] = ()) -> int:
    """Line ends in the next ``n`` bytes of ``fh`` (a \\r\\n split between two blocks counted once), read a
    block at a time (``read1``: a gzip stream never decompresses beyond them). A stream failing with one of
    ``errors`` counts the lines it held."""
    count, last, left = 0, b"", n
    read = getattr(fh, "read1", fh.read)
    try:
        while left > 0:
            block = read(min(BLOCK, left))
            if not block:
                break
            count += line_ends(block)
            if last == b"\r" and block[:1] == b"\n":
                count -= 1
            last = block[-1:]
            left -= len(block)
    except errors:
        pass
    return count


def line_at(path: str, pos: int) -> int | None:
    """The number of the line that byte ``pos`` of the file's text (decompressed) is on: 1 + the line
    ends before it, counted by reading the file again (for error messages only: a damaged gzip stream
    or a NUL byte, whose reader did not count lines). A stream that fails before ``pos`` counts the
    lines it holds. None for what is not a regular file (a pipe cannot be read again)."""
    try:
        if not stat.S_ISREG(os.stat(path).st_mode):
            return None
        with open(path, "rb") as raw:
            fh: Any = gzip.GzipFile(fileobj=raw, mode="rb") if raw.peek(2)[:2] == _GZIP_MAGIC else raw
            return count_line_ends(fh, pos, (*_GZIP_ERRORS, ValueError)) + 1
    except (*_GZIP_ERRORS, ValueError):
        return 1


def gzip_error(display: str, line: int | None, exc: BaseException) -> ArffFormatError:
    """The error for a gzip stream that fails: ``line`` is the first line it does not hold whole (the
    line after the last complete one; the bytes read of it, if any, are not read as data)."""
    if isinstance(exc, EOFError):
        return ArffFormatError(display, line, "the gzip stream ends early, before this line is complete",
                               hint="the file is truncated; download or copy it again")
    if isinstance(exc, gzip.BadGzipFile) and str(exc).startswith(("CRC check failed", "Incorrect length")):
        return ArffFormatError(display, line, f"damaged gzip data: the text does not match the checksum at its "
                                              f"end ({exc})", hint="the file is corrupt; download or copy it again")
    if isinstance(exc, (gzip.BadGzipFile, zlib.error)):
        return ArffFormatError(display, line, f"damaged gzip data ({exc}), before this line is complete",
                               hint="the file is corrupt; download or copy it again")
    return ArffFormatError(display, line, f"cannot read the file ({getattr(exc, 'strerror', None) or exc})")


class _CheckedGzipFile(gzip.GzipFile):
    """A gzip file whose reading methods raise :func:`gzip_error` for a truncated or damaged stream."""

    def __init__(self, path: str, raw: io.BufferedReader):
        super().__init__(fileobj=raw, mode="rb")
        self.path_name = path
        self.raw_file = raw  # GzipFile does not close a file object it was given

    def _failed(self, exc: BaseException) -> ArffFormatError:
        try:
            pos = self._buffer.raw.tell()  # type: ignore[attr-defined]  # every byte decompressed so far
        except Exception:  # noqa: BLE001 - without the position, no line
            return gzip_error(self.path_name, None, exc)
        return gzip_error(self.path_name, line_at(self.path_name, pos), exc)

    def close(self) -> None:
        try:
            super().close()
        finally:
            self.raw_file.close()


def _checked(name: str) -> Any:
    method = getattr(gzip.GzipFile, name)

    def checked(self: _CheckedGzipFile, *args: Any, **kwargs: Any) -> Any:
        try:
            return method(self, *args, **kwargs)
        except _GZIP_ERRORS as exc:
            raise self._failed(exc) from None

    checked.__name__ = checked.__qualname__ = name
    checked.__doc__ = method.__doc__
    return checked


# readinto, readinto1, readlines and iteration go through these
for _name in ("read", "read1", "peek", "readline", "seek"):
    setattr(_CheckedGzipFile, _name, _checked(_name))
del _name


def is_gzip_name(path: str | os.PathLike[str]) -> bool:
    """Whether a file to write is named as gzip-compressed: its name ends in ``.gz``, in any case
    (``OUT.ARFF.GZ`` too; readers look at the content, not the name)."""
    return os.fspath(path).lower().endswith(".gz")


@contextmanager
def open_text_output(path: str | os.PathLike[str], newline: str = "\n") -> Iterator[Any]:
    """A UTF-8 text file to write ``path`` through: gzip-compressed when the name ends in ``.gz``, in
    one step (readers never see half a file, a failed write keeps the old one: a DatasetError naming
    it). The gzip header holds no file name and no time, so the same data give the same bytes (the
    sha256 of a dataset keys the cache and stands in reports; it held the temporary's name and the
    clock)."""
    with replaced_atomically(path, DatasetError) as tmp:
        if is_gzip_name(path):
            with open(tmp, "wb") as raw, gzip.GzipFile(filename="", mode="wb", compresslevel=6, fileobj=raw,
                                                       mtime=0) as packed, \
                    io.TextIOWrapper(packed, encoding="utf-8", newline=newline) as out:
                yield out
        else:
            with open(tmp, "w", encoding="utf-8", newline=newline) as out:
                yield out


def undecodable_line(path: str | os.PathLike[str], encoding: str) -> tuple[int, str] | None:
    """``(line, byte)``: the line of the first byte of the file's text (decompressed) that is not valid
    ``encoding``, and that byte in hex; None when every byte decodes. Reads the file again, in blocks:
    for the error of a reader that decodes through a text wrapper, which does not know the line."""
    decoder = codecs.getincrementaldecoder(encoding)()
    count, last = 1, b""
    with open_binary(path) as fh:
        while True:
            block = fh.read(BLOCK)
            try:
                decoder.decode(block, final=not block)
            except UnicodeDecodeError as exc:
                # the decoder's input was its held bytes (an unfinished character, no line end) + block
                at = max(exc.start - (len(exc.object) - len(block)), 0)
                before = block[:at]
                line = count + line_ends(before) - (1 if last == b"\r" and before[:1] == b"\n" else 0)
                return line, bytes(exc.object[exc.start:exc.start + 1]).hex()
            if not block:
                return None
            count += line_ends(block) - (1 if last == b"\r" and block[:1] == b"\n" else 0)
            last = block[-1:]


def _is_utf8(encoding: str) -> bool:
    try:
        return codecs.lookup(encoding).name == "utf-8"
    except LookupError:
        raise DatasetError(f"unknown text encoding '{encoding}'") from None


def text_encoding(encoding: str) -> str:
    """The codec a text reader opens ``encoding`` with: UTF-8 as utf-8-sig, so that a byte-order mark is
    not read as part of the first value (the ARFF reader drops it itself)."""
    return "utf-8-sig" if _is_utf8(encoding) else encoding


#: the longest line read (header or data): an ARFF line beyond it is refused rather than held, decoded and
#: split (a 2 MB .arff.gz of one 2 GiB line of digits took 6.4 GB before failing)
MAX_LINE_BYTES = 256 << 20


class LineTooLong(DatasetError):
    """A line of the data section exceeds MAX_LINE_BYTES (the reader, which knows its number, says which)."""


def too_long(display: str, line: int) -> ArffFormatError:
    return ArffFormatError(display, line, f"the line is longer than {MAX_LINE_BYTES >> 20} MiB",
                           hint="no ARFF value needs that much; is the file damaged (a missing line end)?")


def line_ends(data: bytes, start: int = 0, stop: int | None = None) -> int:
    """Number of line ends (``\\n``, ``\\r\\n``, lone ``\\r``) in ``data[start:stop]``."""
    stop = len(data) if stop is None else stop
    return data.count(b"\n", start, stop) + data.count(b"\r", start, stop) - data.count(b"\r\n", start, stop)


def _nul_hint(head: bytes) -> str:
    """What to say of a NUL byte; ``head``: the text's first bytes (b"" when the NUL is not in them)."""
    if head.startswith((b"\xff\xfe", b"\xfe\xff")) or (len(head) >= 8 and head[1:8:2] == b"\0\0\0\0") \
            or (len(head) >= 8 and head[0:8:2] == b"\0\0\0\0"):
        # UTF-16 has a NUL in every ASCII character; no reader here splits its lines
        return "this is not an ARFF text file (UTF-16? re-encode it as UTF-8, e.g. iconv -f UTF-16 -t UTF-8)"
    return "this is not an ARFF text file"


class ByteSource:
    """An ARFF text, read once from the start: header lines, then blocks of data lines."""

    def __init__(self, source: str | os.PathLike[str] | None = None, *, text: str | None = None,
                 encoding: str = "utf-8", display_name: str | None = None, block: int = BLOCK):
        if (source is None) == (text is None):
            raise ValueError("give either a path or text")
        self.path = None if source is None else str(source)
        self.display = display_name or self.path or "<string>"
        self.encoding = encoding
        self.utf8 = _is_utf8(encoding)
        self.block = block
        self.sha = hashlib.sha256()
        self.line_no = 0            # number of the last line handed out
        self.offset = 0             # bytes of the (decompressed) text consumed so far
        self.ended_with_newline = True
        self._buf = b""             # read; consumed up to _pos
        self._pos = 0
        self._eof = False
        self._hashing: _Hashing | None = None
        self._first = True
        self._read_size = block  # bytes read at a time (a plain file smaller than a block: its size)
        self._raw: io.BufferedReader | None = None  # a plain file, hashed by _read
        self._threaded: _ThreadedHash | None = None
        self._scratches: list[bytearray | None] = [None]
        self._ready: list[Any] = []
        self._turn = 0
        self._closed = False
        self._read_total = 0        # bytes of the (decompressed) text read so far, a BOM too
        self._pending: ArffFormatError | None = None
        self._gzip_failure: BaseException | None = None  # raised once the bytes before it are handed out
        self._text: bytes | None = None  # the text given as a string, as read
        self._counted: tuple[int, int, bytes] | None = None  # see _read: lines counted as read, for a pipe
        if text is not None:
            data = text.encode("utf-8", "surrogatepass")
            self.sha.update(data)
            if text.startswith("\ufeff"):
                data = data[3:]
                self.offset = 3
            self._text = data
            self._stream: io.BufferedIOBase = io.BytesIO(data)
            self._read_size = max(1 << 12, min(block, len(data) + 1))
            self.utf8 = True
            self.gzip = False
        else:
            raw = _open_raw(self.path)  # type: ignore[arg-type]
            self.gzip = raw.peek(2)[:2] == _GZIP_MAGIC
            try:
                st = os.fstat(raw.fileno())
                size = st.st_size if stat.S_ISREG(st.st_mode) else None
            except OSError:
                size = None
            large = size is not None and size > _THREAD_HASH_FROM
            if size is None:  # not a regular file: an error's line cannot be found by reading it again
                self._counted = (0, 0, b"")
            if self.gzip:
                self._hashing = _Hashing(raw, self.sha, threaded=large)
                buffered = io.BufferedReader(self._hashing, buffer_size=1 << 16)
                self._stream = gzip.GzipFile(fileobj=buffered, mode="rb")  # type: ignore[assignment]
            else:
                # a plain file is hashed here, block by block as read: on a second thread for a large
                # file, which hashes the very buffer read into (no copy); reads then alternate between
                # two buffers, and a buffer is read into again once the thread is done with it
                self._raw = raw
                self._stream = raw
                if size is not None:
                    self._read_size = max(1 << 12, min(block, size + 1))  # a smaller file, a smaller buffer
                if large:
                    import threading

                    self._threaded = _ThreadedHash(self.sha)
                    self._scratches = [None, None]
                    self._ready = [threading.Event(), threading.Event()]
                    for event in self._ready:
                        event.set()

    # ------------------------------------------------------------------ reading
    def _read(self) -> memoryview | bytes:
        """The next block of the decompressed text (b"" at the end), read into a buffer reused from
        block to block (two, in turn, while a thread hashes the other): the view is valid until the
        next call. (A fresh 1 MiB bytes object per block, and a copy of it for the hashing thread,
        were fresh mappings, faulted in page by page: 7,700 page faults and 17-35 ms for a 16 MB
        file's blocks in a loop of loads, against 400 faults and 3.5 ms reusing one buffer.)"""
        if self._eof:
            return b""
        turn = self._turn
        if self._threaded is not None:
            self._turn ^= 1
            self._ready[turn].wait()  # the thread is done with this buffer's last block
        scratch = self._scratches[turn]
        if scratch is None:
            scratch = self._scratches[turn] = bytearray(self._read_size)
        if self._pending is not None:  # a NUL byte, after the lines before its line were handed out
            raise self._pending
        if self._gzip_failure is not None:
            # after every byte the stream held was handed out: the line after the last complete one
            raise gzip_error(self.display, self._line_at(self._read_total), self._gzip_failure)
        if self.gzip:
            n = self._read_gzip(scratch)
            if not n and self._gzip_failure is not None:
                raise gzip_error(self.display, self._line_at(self._read_total), self._gzip_failure)
        else:
            n = self._stream.readinto(scratch)  # type: ignore[attr-defined]
        if not n:
            self._eof = True
            self.close()
            self._scratches = [None] * len(self._scratches)
            return b""
        if self._raw is not None:
            if self._threaded is not None:
                with memoryview(scratch) as whole:
                    self._threaded.update(whole[:n], self._ready[turn])
            else:
                with memoryview(scratch) as whole, whole[:n] as view:
                    self.sha.update(view)
        start = self._read_total  # where this block starts in the (decompressed) text
        self._read_total += n
        if self._counted is not None:  # a pipe: (line ends before the block, its end, the block)
            lines, _end, last = self._counted
            lines += line_ends(last) - (1 if last[-1:] == b"\r" and scratch[:1] == b"\n" else 0)
            self._counted = (lines, self._read_total, bytes(scratch[:n]))
        data = memoryview(scratch)[:n]
        skip = 0
        if self._first:
            self._first = False
            if self.path is not None and data[:3] == b"\xef\xbb\xbf":
                data = data[3:]
                self.offset = 3
                skip = 3
        nul = scratch.find(0, skip, n)  # memchr over the block: a NUL anywhere is refused, not read as a space
        if nul >= 0:
            error = ArffFormatError(self.display, self._line_at(start + nul), "binary data (a NUL byte)",
                                    hint=_nul_hint(bytes(scratch[:64]) if start == 0 else b""))
            cut = max(scratch.rfind(b"\n", skip, nul), scratch.rfind(b"\r", skip, nul)) + 1
            if cut <= skip:  # its line starts in an earlier block (or this one starts with it)
                raise error
            self._pending = error  # the lines before its line first: one of them may hold an earlier error
            data = data[:cut - skip]
        return data

    def _read_gzip(self, scratch: bytearray) -> int:
        """Fill ``scratch`` from the gzip stream, a decompressed piece at a time (read1), so that when the
        stream fails (truncated, damaged) every byte decompressed before is handed out first: the lines
        before the failure are read (an error in them comes first) and the failure names the line after
        the last complete one. (readinto dropped the part of the block decompressed before it failed.)"""
        n, size = 0, len(scratch)
        try:
            while n < size:
                part = self._stream.read1(size - n)  # type: ignore[attr-defined]
                if not part:
                    break
                scratch[n:n + len(part)] = part
                n += len(part)
        except _GZIP_ERRORS as exc:
            self._gzip_failure = exc
        return n

    def _line_at(self, pos: int) -> int | None:
        """The number of the line that byte ``pos`` of the text is on (for an error: reads again; a pipe,
        which cannot be read again, counts the line ends of every block it reads)."""
        if self._text is not None:
            return 1 + line_ends(self._text, 0, pos)
        if self._counted is not None:
            lines, end, block = self._counted
            if pos >= end - len(block):  # in the last block read (or just after it: a failing gzip stream)
                return lines + 1 + line_ends(block, 0, max(0, min(pos - (end - len(block)), len(block))))
        return line_at(self.path, pos)  # type: ignore[arg-type]

    def close(self) -> None:
        """Stop reading; the hash covers the whole file once the file was read to its end."""
        if self._closed:
            return
        self._closed = True
        if self._hashing is not None:
            if self._eof:
                self._hashing.read_rest()
            self._stream.close()
            self._hashing.close()
        elif self._raw is not None:
            if self._threaded is not None:
                self._threaded.finish()  # every block hashed: the buffers may go
            self._raw.close()

    def hexdigest(self) -> str:
        self.close()
        return self.sha.hexdigest()

    # ------------------------------------------------------------------ decoding
    def decode_error(self, data: bytes, exc: UnicodeDecodeError, first_line: int) -> ArffFormatError:
        """The error for undecodable bytes in ``data`` whose first line is ``first_line``."""
        before = data[: exc.start]
        line = first_line + line_ends(before)
        line_start = max(before.rfind(b"\n"), before.rfind(b"\r")) + 1
        bad = data[exc.start:exc.start + 1]
        return ArffFormatError(
            self.display, line,
            f"byte 0x{bad.hex()} at column {exc.start - line_start + 1} is not valid {self.encoding}",
            hint="the file is binary or in another encoding; re-encode it as UTF-8 (iconv -f latin1 -t utf-8 "
                 "IN > OUT), or from Python read it with toolkit.load_arff(path, encoding='latin-1')")

    def to_utf8(self, data: bytes | bytearray, first_line: int,
                end: int) -> tuple[bytes | bytearray, int, ArffFormatError | None]:
        """``(data, end, error)``: ``data[:end]`` checked as UTF-8, or converted to UTF-8 from another encoding.

        When a byte does not decode, ``end`` stops before its line and ``error`` names it: the caller
        reads the lines before it first, so that an earlier error in them is reported first, as the
        strict engine (line by line) reports it; then it raises ``error``.
        """
        error = None
        with memoryview(data) as whole, whole[:end] as view:
            try:
                text = str(view, self.encoding)
            except UnicodeDecodeError as exc:
                error = self.decode_error(bytes(view), exc, first_line)
                with view[:exc.start] as before:
                    head = bytes(before)
                end = max(head.rfind(b"\n"), head.rfind(b"\r")) + 1
                with view[:end] as good:
                    text = str(good, self.encoding)
        if self.utf8:
            return data, end, error
        out = text.encode("utf-8", "surrogatepass")
        return out, len(out), error

    # ------------------------------------------------------------------ the header
    def lines(self) -> Iterator[tuple[int, str]]:
        """Decoded lines with their numbers, consumed one by one (the header). A consumer that stops
        leaves the rest for :meth:`data_blocks`."""
        while True:
            buf, pos = self._buf, self._pos
            n = len(buf)
            nl = buf.find(b"\n", pos)
            cr = buf.find(b"\r", pos, nl if nl >= 0 else n)
            end = cr if cr >= 0 else nl
            if end < 0 or (end == n - 1 and buf[end] == 13 and not self._eof):
                if not self._eof:
                    more = self._read()
                    if n - pos + len(more) > MAX_LINE_BYTES:
                        raise too_long(self.display, self.line_no + 1)
                    # a line over many blocks grows one buffer in place (amortised), not a copy per block
                    tail = buf if pos == 0 and isinstance(buf, bytearray) else bytearray(buf[pos:])
                    tail += more
                    self._buf = tail
                    self._pos = 0
                    continue
                if pos >= n:
                    return
                end = after = n
                self.ended_with_newline = False
            else:
                after = end + 2 if buf[end] == 13 and end + 1 < n and buf[end + 1] == 10 else end + 1
            raw = buf[pos:end]
            self.line_no += 1
            self.offset += after - pos
            self._pos = after
            try:
                text = raw.decode(self.encoding)
            except UnicodeDecodeError as exc:
                raise self.decode_error(raw, exc, self.line_no) from None
            yield self.line_no, text

    def take_run(self, pattern: re.Pattern[bytes], run: re.Pattern[bytes]) -> Iterator[list[re.Match[bytes]]]:
        """The lines that follow, as long as each matches ``pattern`` whole (with its line end), within
        what is already read: a bulk path for the attribute lines of a wide header. ``run`` matches one
        or more such lines, up to a bounded number (it finds where a run ends in one call; the regex
        engine keeps state for every repetition, 20 MB for a 1 MB run of 38,000 lines unbounded).
        Yields the matches of one ``run`` at a time; they are consumed when the next list is asked
        for (or the iteration ends), so a consumer that stops early leaves them to :meth:`lines`."""
        while True:
            whole = run.match(self._buf, self._pos)
            if whole is None:
                return
            matches = list(pattern.finditer(self._buf, self._pos, whole.end()))
            if not matches:
                return
            yield matches
            end = matches[-1].end()
            self.line_no += len(matches)
            self.offset += end - self._pos
            self._pos = end

    # ------------------------------------------------------------------ the data section
    def data_blocks(self) -> Iterator[tuple[bytearray, int, bool]]:
        """``(data, end, final)``: ``data[:end]`` holds whole lines (the last one may lack its line end
        when ``final``). ``data`` is one buffer reused from block to block: use it before asking for the
        next block. A line longer than a block grows the buffer (amortised, never copied twice)."""
        buf = bytearray(self._buf[self._pos:])
        self._buf = b""
        self._pos = 0
        while True:
            try:
                block = self._read()
            except ArffFormatError:
                # a NUL byte's line or a failing gzip stream: the whole lines before it, read already
                # (after the header), first: one of them may hold an earlier error
                cut = max(buf.rfind(b"\n"), buf.rfind(b"\r")) + 1
                if cut:
                    yield buf, cut, False
                raise
            final = not block
            if block:
                scan_from = len(buf)
                buf += block
                del block
                if buf.find(b"\n", scan_from) < 0 and buf.find(b"\r", max(scan_from - 1, 0), len(buf) - 1) < 0:
                    if len(buf) <= MAX_LINE_BYTES:
                        continue  # still inside one line
                    if max(buf.rfind(b"\n"), buf.rfind(b"\r", 0, len(buf) - 1)) < 0:
                        raise LineTooLong(self.display)
                    # whole lines before the long one (the header's last block held them): read them first
            if final:
                self.ended_with_newline = not buf or buf.endswith((b"\n", b"\r"))
                if buf:
                    yield buf, len(buf), True
                return
            cut = max(buf.rfind(b"\n"), buf.rfind(b"\r", 0, len(buf) - 1)) + 1
            yield buf, cut, False
            del buf[:cut]

    @property
    def name(self) -> str:
        return Path(self.display).name
