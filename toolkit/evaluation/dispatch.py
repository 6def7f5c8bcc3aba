"""Which repetitions travel to a ``--jobs`` worker together.

A message to a worker costs the parent a few hundred microseconds; the main job's repetitions take
1-50 ms each, so one message per repetition spends a tenth of the parent's share of two cores on
dispatch. Groups fix that, but a group's records reach the results file only when the whole group is
done, so a group must stay short in *time*, whatever the classifier: its size comes from the measured
seconds of finished repetitions of the same dataset and pipeline (or, before one is measured, of the
same pipeline on the next larger dataset), and a repetition with no estimate travels alone.

Near the end groups shrink (guided self-scheduling): a group holds at most a quarter of the estimated
work left per worker, so that the workers finish together instead of one waiting for the other's
last full-size groups.
"""

from __future__ import annotations

from collections.abc import Hashable, Sequence

__all__ = ["GROUP_SECONDS", "RepetitionGroups"]

#: a group is cut when its estimated seconds would pass this
GROUP_SECONDS = 0.05


class RepetitionGroups:
    """Consecutive positions of a list of repetitions ordered by decreasing cost, handed out group by
    group.

    ``kinds[i]`` says which repetitions cost alike (the same dataset and pipeline) and ``families[i]``
    which kinds are alike (the same pipeline): :meth:`learn` records what one of a kind took, and a
    kind not yet measured is estimated by the measured kind of its family found latest in the order
    (the order is by decreasing cost, so that one is no cheaper). A repetition with no estimate travels
    alone.
    """

    def __init__(self, kinds: Sequence[Hashable], families: Sequence[Hashable] | None = None,
                 group_seconds: float = GROUP_SECONDS, workers: int = 1) -> None:
        self.kinds = list(kinds)
        self.families = list(families) if families is not None else list(range(len(self.kinds)))
        self.group_seconds = group_seconds
        self.workers = max(1, workers)
        self.seconds: dict[Hashable, float] = {}
        self._nearest: dict[Hashable, tuple[int, float]] = {}  # family -> (latest position measured, seconds)
        self.position = 0
        self._left: dict[Hashable, int] = {}  # kind -> repetitions not yet handed out
        self._family_of: dict[Hashable, Hashable] = {}
        for kind, family in zip(self.kinds, self.families):
            self._left[kind] = self._left.get(kind, 0) + 1
            self._family_of[kind] = family

    def __bool__(self) -> bool:
        return self.position < len(self.kinds)

    def learn(self, index: int, seconds: float) -> None:
        if seconds > 0:
            self.seconds[self.kinds[index]] = seconds
            family = self.families[index]
            if family not in self._nearest or index >= self._nearest[family][0]:
                self._nearest[family] = (index, seconds)

    def estimate(self, index: int) -> float | None:
        known = self.seconds.get(self.kinds[index])
        if known is not None:
            return known
        nearest = self._nearest.get(self.families[index])
        return nearest[1] if nearest is not None and nearest[0] <= index else None

    def seconds_left(self) -> float | None:
        """Estimated seconds of the repetitions not yet handed out; None while one has no estimate."""
        total = 0.0
        for kind, count in self._left.items():
            if count:
                known = self.seconds.get(kind)
                if known is None:
                    nearest = self._nearest.get(self._family_of[kind])
                    if nearest is None:
                        return None
                    known = nearest[1]
                total += count * known
        return total

    def next(self) -> list[int]:
        """The next group: at least one repetition, then more while their estimated seconds fit the
        budget (``group_seconds``, or a quarter of the work left per worker when that is less)."""
        first = self.position
        if first >= len(self.kinds):
            return []
        spent = self.estimate(first)
        self.position += 1
        if spent is not None:
            left = self.seconds_left()
            budget = self.group_seconds if left is None else min(self.group_seconds, left / (4 * self.workers))
            while self.position < len(self.kinds):
                cost = self.estimate(self.position)
                if cost is None or spent + cost > budget:
                    break
                spent += cost
                self.position += 1
        for i in range(first, self.position):
            self._left[self.kinds[i]] -= 1
        return list(range(first, self.position))
