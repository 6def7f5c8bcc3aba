"""Result records and their JSON-lines file.

One record per (dataset, pipeline, protocol, repetition), appended and flushed to disk as soon as
it is finished, so an interrupted run loses nothing and ``--resume`` skips what is done. Records
are written with sorted keys; everything that differs between two runs with the same seed
(timings, dates) lives under ``"timing"``, so two runs give identical files apart from it.
"""

from __future__ import annotations

import hashlib
import json
import math
import os
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from toolkit.errors import ResultsFileError

__all__ = ["RECORD_SCHEMA", "record_key", "ResultsWriter", "read_records", "Results", "dumps_record"]

RECORD_SCHEMA = "toolkit.result/1"


def _clean(value: Any) -> Any:
    """JSON-safe: NaN and infinities become None; numpy scalars become Python numbers."""
    if isinstance(value, float):
        return value if math.isfinite(value) else None
    if isinstance(value, dict):
        return {str(k): _clean(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_clean(v) for v in value]
    if hasattr(value, "item") and callable(value.item) and getattr(value, "ndim", 1) == 0:
        return _clean(value.item())
    if hasattr(value, "tolist"):
        return _clean(value.tolist())
    return value


def dumps_record(record: dict[str, Any]) -> str:
    return json.dumps(_clean(record), sort_keys=True, separators=(",", ":"), allow_nan=False)


def record_key(dataset_sha: str, pipeline: dict[str, Any], protocol: dict[str, Any], repetition: int) -> str:
    """A stable identifier of one unit of work."""
    blob = json.dumps([dataset_sha, pipeline, protocol, repetition], sort_keys=True, default=str)
    return hashlib.sha256(blob.encode()).hexdigest()[:24]


def read_records(path: str | os.PathLike[str]) -> list[dict[str, Any]]:
    """Every complete record of a results file; a torn last line (a killed run) is ignored."""
    path = Path(path)
    if not path.exists():
        raise ResultsFileError(f"{path}: no such results file")
    records = []
    with open(path, encoding="utf-8") as fh:
        lines = fh.readlines()
    for number, line in enumerate(lines, 1):
        text = line.strip()
        if not text:
            continue
        try:
            record = json.loads(text)
        except ValueError:
            if number == len(lines) and not line.endswith("\n"):
                break  # the run was killed while writing this line
            raise ResultsFileError(f"{path}:{number}: not a JSON record ('{text[:40]}...'); "
                                   f"is this a toolkit results file?") from None
        if not isinstance(record, dict) or record.get("schema") != RECORD_SCHEMA:
            raise ResultsFileError(f"{path}:{number}: not a {RECORD_SCHEMA} record")
        records.append(record)
    return records


class ResultsWriter:
    """Appends records to a JSON-lines file, each flushed and synced before the next task runs."""

    def __init__(self, path: str | os.PathLike[str] | None, resume: bool = False):
        self.path = Path(path) if path is not None else None
        self.done: set[str] = set()
        self.previous: list[dict[str, Any]] = []
        self._fh = None
        if self.path is None:
            return
        if self.path.exists() and self.path.stat().st_size > 0:
            if not resume:
                raise ResultsFileError(f"{self.path} already exists; pass --resume to continue it, "
                                       f"or choose another --out file")
            self.previous = read_records(self.path)
            self.done = {r["key"] for r in self.previous if r.get("status") == "ok"}
            self._repair_tail()
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._fh = open(self.path, "a", encoding="utf-8")

    def _repair_tail(self) -> None:
        """Drop a torn last line so that the next record starts on a line of its own."""
        assert self.path is not None
        with open(self.path, "rb+") as fh:
            data = fh.read()
            if data and not data.endswith(b"\n"):
                cut = data.rfind(b"\n") + 1
                fh.seek(cut)
                fh.truncate()

    def write(self, record: dict[str, Any]) -> None:
        if self._fh is None:
            return
        self._fh.write(dumps_record(record) + "\n")
        self._fh.flush()
        os.fsync(self._fh.fileno())

    def close(self) -> None:
        if self._fh is not None:
            self._fh.close()
            self._fh = None

    def __enter__(self) -> ResultsWriter:
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()


@dataclass
class Results:
    """The records of one or more runs, with summaries for reports."""

    records: list[dict[str, Any]] = field(default_factory=list)

    @classmethod
    def from_files(cls, paths: Iterable[str | os.PathLike[str]]) -> Results:
        records: list[dict[str, Any]] = []
        for p in paths:
            records.extend(read_records(p))
        return cls(_latest(records))

    def ok(self) -> list[dict[str, Any]]:
        return [r for r in self.records if r.get("status") == "ok"]

    def problems(self) -> list[dict[str, Any]]:
        return [r for r in self.records if r.get("status") != "ok"]

    def datasets(self) -> list[str]:
        return _unique(r["dataset"]["name"] for r in self.ok())

    def pipelines(self) -> list[str]:
        return _unique(r["pipeline"]["name"] for r in self.ok())

    def cell(self, dataset: str, pipeline: str) -> list[dict[str, Any]]:
        """Records of one (dataset, pipeline), ordered by repetition."""
        rows = [r for r in self.ok() if r["dataset"]["name"] == dataset and r["pipeline"]["name"] == pipeline]
        return sorted(rows, key=lambda r: r["repetition"])

    def values(self, dataset: str, pipeline: str, metric: str = "error") -> list[float]:
        out = []
        for r in self.cell(dataset, pipeline):
            v = r["metrics"].get(metric)
            out.append(float("nan") if v is None or isinstance(v, (dict, list)) else float(v))
        return out

    def to_frame(self) -> Any:
        """A pandas DataFrame of the scalar metrics (needs pandas)."""
        import pandas as pd  # optional

        rows = []
        for r in self.ok():
            row = {"dataset": r["dataset"]["name"], "pipeline": r["pipeline"]["name"], "repetition": r["repetition"]}
            row.update({k: v for k, v in r["metrics"].items() if not isinstance(v, (dict, list))})
            rows.append(row)
        return pd.DataFrame(rows)

    def __iter__(self) -> Iterator[dict[str, Any]]:
        return iter(self.records)

    def __len__(self) -> int:
        return len(self.records)


def _unique(items: Iterable[str]) -> list[str]:
    seen: dict[str, None] = {}
    for item in items:
        seen.setdefault(item, None)
    return list(seen)


def _latest(records: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Keep the last record per key (a resumed run may have retried a failed task)."""
    by_key: dict[str, dict[str, Any]] = {}
    for r in records:
        key = r.get("key")
        if key in by_key and by_key[key].get("status") == "ok" and r.get("status") != "ok":
            continue
        by_key[key] = r
    return list(by_key.values())
