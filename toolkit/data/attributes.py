"""A compact, immutable sequence of attributes.

Word-count ARFF files declare over a hundred thousand numeric attributes; as Python objects they
would take several times the memory of the data matrix itself. ``AttributeList`` keeps all names in
one string with an offset array and the kinds in a byte array; only nominal and date attributes
(which carry values or a format) are kept as objects. Items are built on access, so it behaves
like a tuple of :class:`Attribute`.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any, Literal, overload

import numpy as np

from toolkit.errors import DatasetError

__all__ = ["Attribute", "AttributeKind", "AttributeList", "AttributeListBuilder", "KIND_CODES", "KIND_NAMES"]

KIND_NAMES = ("numeric", "nominal", "string", "date", "relational")
KIND_CODES = {name: code for code, name in enumerate(KIND_NAMES)}


AttributeKind = Literal["numeric", "nominal", "string", "date", "relational"]


@dataclass(frozen=True)
class Attribute:
    """One ARFF attribute: its name, kind, declared nominal values and date format.

    A relational (multi-instance) attribute carries ``relation``, the attributes of the bags it
    holds; its values are bags, each a dataset of those attributes (``Dataset.bags``).
    """

    name: str
    kind: AttributeKind
    values: tuple[str, ...] = ()
    date_format: str | None = None
    relation: AttributeList | None = None

    def __post_init__(self) -> None:
        if self.kind not in KIND_NAMES:
            raise DatasetError(f"attribute '{self.name}': unknown kind '{self.kind}'; expected one of {KIND_NAMES}")
        if self.kind != "nominal" and self.values:
            raise DatasetError(f"attribute '{self.name}': only nominal attributes have values")
        if (self.kind == "relational") != (self.relation is not None):
            raise DatasetError(f"attribute '{self.name}': a relational attribute (and only one) declares the "
                               f"attributes of its bags")
        if self.relation is not None and not isinstance(self.relation, AttributeList):
            object.__setattr__(self, "relation", AttributeList(self.relation))

    @property
    def is_nominal(self) -> bool:
        return self.kind == "nominal"

    @property
    def is_numeric(self) -> bool:
        return self.kind == "numeric"

    def describe(self) -> str:
        """Short human-readable type, e.g. ``nominal(3)``."""
        if self.kind == "nominal":
            return f"nominal({len(self.values)})"
        return self.kind


class AttributeListBuilder:
    """Collects attributes one by one without one object per plain attribute."""

    def __init__(self) -> None:
        self._pieces: list[str] = []
        self._pending: list[str] = []
        self._lengths = np.zeros(1024, dtype=np.int64)
        self._kinds = np.zeros(1024, dtype=np.int8)
        self._special: dict[int, Any] = {}
        self.n = 0

    def _grow(self) -> None:
        self._lengths = np.concatenate([self._lengths, np.zeros_like(self._lengths)])
        self._kinds = np.concatenate([self._kinds, np.zeros_like(self._kinds)])

    def add(self, name: str, kind: str) -> None:
        """A numeric or string attribute."""
        if self.n == len(self._lengths):
            self._grow()
        self._pending.append(name)
        if len(self._pending) >= 8192:
            self._pieces.append("".join(self._pending))
            self._pending = []
        self._lengths[self.n] = len(name)
        self._kinds[self.n] = KIND_CODES[kind]
        self.n += 1

    def add_many(self, names: list[str], is_string: list[bool]) -> None:
        """Numeric attributes (string ones where ``is_string``), in one step."""
        k = len(names)
        while self.n + k > len(self._lengths):
            self._grow()
        self._pieces.append("".join(self._pending))
        self._pending = []
        self._pieces.append("".join(names))
        self._lengths[self.n:self.n + k] = np.fromiter(map(len, names), dtype=np.int64, count=k)
        self._kinds[self.n:self.n + k] = np.where(np.asarray(is_string, dtype=bool), KIND_CODES["string"],
                                                  KIND_CODES["numeric"])
        self.n += k

    def add_attribute(self, attr: Any) -> None:
        """Any attribute; nominal, date and relational ones are kept as objects."""
        if attr.kind in ("nominal", "date", "relational"):
            self._special[self.n] = attr
        self.add(attr.name, attr.kind)

    def build(self) -> AttributeList:
        blob = "".join(self._pieces + self._pending)
        offsets = np.zeros(self.n + 1, dtype=np.int64)
        np.cumsum(self._lengths[: self.n], out=offsets[1:])
        return AttributeList._from_parts(blob, offsets, self._kinds[: self.n].copy(), dict(self._special))

    def __len__(self) -> int:
        return self.n


class AttributeList(Sequence):  # type: ignore[type-arg]
    """Immutable sequence of attributes stored compactly (see the module docstring)."""

    __slots__ = ("_blob", "_offsets", "_kinds", "_special", "_index")

    def __init__(self, attributes: Iterable[Any] = ()):
        if isinstance(attributes, AttributeList):
            self._set(attributes._blob, attributes._offsets, attributes._kinds, attributes._special)
            return
        builder = AttributeListBuilder()
        for attr in attributes:
            builder.add_attribute(attr)
        built = builder.build()
        self._set(built._blob, built._offsets, built._kinds, built._special)

    def _set(self, blob: str, offsets: np.ndarray, kinds: np.ndarray, special: dict[int, Any]) -> None:
        self._blob = blob
        self._offsets = offsets
        self._kinds = kinds
        self._special = special
        self._index: dict[str, int] | None = None

    @classmethod
    def _from_parts(cls, blob: str, offsets: np.ndarray, kinds: np.ndarray, special: dict[int, Any]) -> AttributeList:
        obj = cls.__new__(cls)
        obj._set(blob, offsets, kinds, special)
        return obj

    @classmethod
    def numbered(cls, prefix: str, n: int, *, then: Sequence[Any] = ()) -> AttributeList:
        """``n`` numeric attributes named prefix1 .. prefix<n> (a LIBSVM file's columns), then ``then``:
        about 20 bytes an attribute, built a million names at a time."""
        builder = AttributeListBuilder()
        step = 1 << 20
        for start in range(0, n, step):
            names = [f"{prefix}{j}" for j in range(start + 1, min(n, start + step) + 1)]
            builder.add_many(names, [False] * len(names))
        for attr in then:
            builder.add_attribute(attr)
        return builder.build()

    # ------------------------------------------------------------------ sequence protocol
    def __len__(self) -> int:
        return len(self._kinds)

    def name(self, i: int) -> str:
        return self._blob[self._offsets[i]:self._offsets[i + 1]]

    @overload
    def __getitem__(self, i: int) -> Any: ...

    @overload
    def __getitem__(self, i: slice | Sequence[int] | np.ndarray) -> AttributeList: ...

    def __getitem__(self, i: Any) -> Any:
        if isinstance(i, (int, np.integer)):
            n = len(self)
            if i < 0:
                i += n
            if not 0 <= i < n:
                raise IndexError("attribute index out of range")
            special = self._special.get(int(i))
            if special is not None:
                return special
            return Attribute(self.name(int(i)), KIND_NAMES[self._kinds[i]])
        if isinstance(i, slice):
            i = np.arange(len(self))[i]
        return self.take(np.asarray(i, dtype=np.int64))

    def take(self, index: np.ndarray) -> AttributeList:
        """The attributes at ``index`` (an integer array), in that order."""
        index = np.asarray(index, dtype=np.int64)
        if index.size and (index.min() < -len(self) or index.max() >= len(self)):
            raise IndexError("attribute index out of range")
        index = np.where(index < 0, index + len(self), index)
        starts, ends = self._offsets[index], self._offsets[index + 1]
        if len(index) == len(self) and np.array_equal(index, np.arange(len(self))):
            return self
        if len(index) > 1 and index[-1] - index[0] == len(index) - 1 and np.all(np.diff(index) == 1):
            a, b = int(index[0]), int(index[-1]) + 1        # a run of columns (the features before the class)
            special = {k - a: v for k, v in self._special.items() if a <= k < b}
            return AttributeList._from_parts(self._blob[self._offsets[a]:self._offsets[b]],
                                             self._offsets[a:b + 1] - self._offsets[a], self._kinds[a:b].copy(),
                                             special)
        blob = "".join([self._blob[a:b] for a, b in zip(starts.tolist(), ends.tolist())])
        offsets = np.zeros(len(index) + 1, dtype=np.int64)
        np.cumsum(ends - starts, out=offsets[1:])
        position = {old: new for new, old in enumerate(index.tolist())} if self._special else {}
        special = {position[k]: v for k, v in self._special.items() if k in position}
        return AttributeList._from_parts(blob, offsets, self._kinds[index], special)

    def kind_counts(self) -> dict[str, int]:
        """How many attributes of each kind, in the order kinds first appear (no object per attribute)."""
        codes, first, counts = np.unique(self._kinds, return_index=True, return_counts=True)
        order = np.argsort(first, kind="stable")
        return {KIND_NAMES[int(codes[i])]: int(counts[i]) for i in order}

    def __iter__(self) -> Iterator[Any]:
        for i in range(len(self)):
            yield self[i]

    def __add__(self, other: Iterable[Any]) -> AttributeList:
        other = other if isinstance(other, AttributeList) else AttributeList(other)
        n = len(self)
        offsets = np.concatenate([self._offsets, other._offsets[1:] + self._offsets[-1]])
        special = dict(self._special)
        special.update({k + n: v for k, v in other._special.items()})
        return AttributeList._from_parts(self._blob + other._blob, offsets,
                                         np.concatenate([self._kinds, other._kinds]), special)

    def __radd__(self, other: Iterable[Any]) -> AttributeList:
        return AttributeList(other) + self

    def __eq__(self, other: object) -> bool:
        if isinstance(other, AttributeList):
            return (len(self) == len(other) and np.array_equal(self._kinds, other._kinds)
                    and np.array_equal(self._offsets, other._offsets) and self._blob == other._blob
                    and self._special == other._special)
        if isinstance(other, (tuple, list)):
            return len(self) == len(other) and all(a == b for a, b in zip(self, other))
        return NotImplemented

    def __ne__(self, other: object) -> bool:
        result = self.__eq__(other)
        return result if result is NotImplemented else not result

    def __hash__(self) -> int:
        return hash((len(self), self._blob, self._kinds.tobytes(), tuple(sorted(self._special.items()))))

    def __repr__(self) -> str:
        shown = ", ".join(f"{self.name(i)}:{KIND_NAMES[self._kinds[i]]}" for i in range(min(len(self), 5)))
        return f"AttributeList({len(self)}: {shown}{', ...' if len(self) > 5 else ''})"

    def __reduce__(self) -> Any:
        return (AttributeList._from_parts, (self._blob, self._offsets, self._kinds, self._special))

    # ------------------------------------------------------------------ vectorised views
    @property
    def kind_codes(self) -> np.ndarray:
        """One byte per attribute: 0 numeric, 1 nominal, 2 string, 3 date, 4 relational."""
        return self._kinds

    def mask(self, kind: str) -> np.ndarray:
        return self._kinds == KIND_CODES[kind]

    def n_values(self) -> np.ndarray:
        """Declared values per attribute (0 for non-nominal)."""
        out = np.zeros(len(self), dtype=np.int64)
        for i, attr in self._special.items():
            if attr.kind == "nominal":
                out[i] = len(attr.values)
        return out

    def names(self) -> list[str]:
        """Every name, sliced from the one string (no object per attribute)."""
        blob, offsets = self._blob, self._offsets.tolist()
        return [blob[a:b] for a, b in zip(offsets[:-1], offsets[1:])]

    def special_items(self) -> list[tuple[int, Any]]:
        """``(position, attribute)`` of the attributes kept as objects (nominal, date, relational), in order."""
        return sorted(self._special.items())

    def to_records(self) -> list[dict[str, Any]]:
        """One JSON-ready dict per attribute: name and kind, a nominal one's values, a date one's format
        (a model file's header), built without an object per plain attribute."""
        kinds = [KIND_NAMES[k] for k in self._kinds.tolist()]
        out: list[dict[str, Any]] = [{"name": n, "kind": k} for n, k in zip(self.names(), kinds)]
        for i, attr in self._special.items():
            if attr.kind == "nominal":
                out[i]["values"] = list(attr.values)
            elif attr.kind == "date":
                out[i]["date_format"] = attr.date_format
        return out

    @classmethod
    def from_records(cls, records: Sequence[Any]) -> AttributeList:
        """The inverse of :meth:`to_records` (extra keys such as a null ``date_format`` or empty ``values``
        are accepted): one object per nominal or date attribute only. Raises DatasetError naming the first
        malformed record."""
        if not isinstance(records, (list, tuple)) or not set(map(type, records)) <= {dict}:
            raise DatasetError("attribute records must be a list of objects")
        try:
            names = [r["name"] for r in records]
            kinds = [r["kind"] for r in records]
        except KeyError as exc:
            raise DatasetError(f"an attribute record lacks {exc}") from None
        if not set(map(type, names)) <= {str}:
            bad = next(i for i, n in enumerate(names) if type(n) is not str)
            raise DatasetError(f"attribute {bad + 1}: its name must be a string, not {names[bad]!r}")
        unknown = set(kinds) - set(KIND_NAMES) if set(map(type, kinds)) <= {str} else {None}
        if unknown:
            bad = next(i for i, k in enumerate(kinds) if k not in KIND_NAMES)
            raise DatasetError(f"attribute {bad + 1} ('{names[bad]}'): unknown kind {kinds[bad]!r}; expected one of "
                               f"{KIND_NAMES}")
        codes = np.array([KIND_CODES[k] for k in kinds], dtype=np.int8)
        plain = (codes == KIND_CODES["numeric"]) | (codes == KIND_CODES["string"])
        more = np.fromiter(map(len, records), dtype=np.int64, count=len(records)) > 2  # more than name and kind
        with_values = [i for i in np.flatnonzero(plain & more).tolist() if records[i].get("values")]
        if with_values:
            i = with_values[0]
            raise DatasetError(f"attribute {i + 1} ('{names[i]}'): only nominal attributes have values")
        special: dict[int, Any] = {}
        for i in np.flatnonzero(~plain).tolist():  # nominal, date, relational: kept as objects
            values = records[i].get("values") or ()
            if not isinstance(values, (list, tuple)) or not all(type(v) is str for v in values):
                raise DatasetError(f"attribute {i + 1} ('{names[i]}'): values must be a list of strings")
            special[i] = Attribute(names[i], kinds[i], tuple(values), records[i].get("date_format"))  # checks it
        lengths = np.fromiter(map(len, names), dtype=np.int64, count=len(names))
        offsets = np.zeros(len(names) + 1, dtype=np.int64)
        np.cumsum(lengths, out=offsets[1:])
        return cls._from_parts("".join(names), offsets, codes, special)

    def index_of(self, name: str) -> int:
        """Position of the attribute called ``name`` (KeyError when absent)."""
        if self._index is None:
            self._index = {n: i for i, n in enumerate(self.names())}
        return self._index[name]
