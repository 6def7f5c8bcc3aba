"""What a component can handle, declared up front (WEKA's ``Capabilities``).

The harness checks a component's capabilities against the data before ``fit`` and refuses with
a :class:`toolkit.errors.CapabilityError` that names the problem and a remedy, so that no plugin
crashes halfway through a run.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass

__all__ = ["Capabilities"]


@dataclass(frozen=True)
class Capabilities:
    """Inputs a component accepts. The defaults describe a dense numeric multiclass classifier."""

    numeric: bool = True
    nominal: bool = False
    sparse: bool = False
    missing: bool = False
    sample_weight: bool = False
    string: bool = False
    multiclass: bool = True
    probabilities: bool = True
    partial_fit: bool = False
    nonnegative: bool = False   # numeric inputs must be >= 0 (word counts)
    #: numeric inputs must be whole numbers (counts); a component that can take fractional values when
    #: asked has a parameter ``allow_fractional`` (the check is skipped when it is true)
    integer: bool = False
    relational: bool = False    # relational (multi-instance) attributes: bags as values
    min_classes: int = 1

    def as_dict(self) -> dict[str, bool | int]:
        return asdict(self)

    def summary(self, leave_out: tuple[str, ...] = ()) -> str:
        """Comma-separated list of what is supported, e.g. ``numeric, nominal, missing``."""
        names = [k for k, v in self.as_dict().items() if v is True and k not in leave_out]
        return ", ".join(names)
