"""The expression builder: ``col("id") < 5``, ``col("name").starts_with("ab")``.

A :class:`Column` overloads the comparison operators (``==`` and ``!=`` included) to build
predicates, so it is neither hashable nor usable as a truth value; the :class:`Reference` it
stands for (``col("x").ref``) is an ordinary comparable, hashable value.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import FrozenInstanceError

from frazil.errors import FrazilTypeError
from frazil.expressions._base import (
    EqualTo,
    GreaterThan,
    GreaterThanOrEqual,
    In,
    IsNaN,
    IsNull,
    LessThan,
    LessThanOrEqual,
    NotEqualTo,
    NotIn,
    NotNaN,
    NotNull,
    NotStartsWith,
    Reference,
    StartsWith,
)
from frazil.expressions._literals import LiteralValue

__all__ = ["Column", "col"]


class Column:
    """A column in the builder; ``col("location.city")`` names a nested column."""

    __slots__ = ("ref",)
    ref: Reference

    def __init__(self, name: str | Reference) -> None:
        object.__setattr__(self, "ref", name if isinstance(name, Reference) else Reference(name))

    def __setattr__(self, name: str, value: object) -> None:
        raise FrozenInstanceError(f"a Column is immutable; cannot set {name!r}")

    @property
    def name(self) -> str:
        return self.ref.name

    def __repr__(self) -> str:
        return f"col({self.ref.name!r})"

    def _value(self, value: object, op: str) -> LiteralValue:
        if isinstance(value, Column):
            raise FrazilTypeError(
                f"cannot compare {self!r} {op} {value!r}: filters compare a column with a "
                f"value, not with another column"
            )
        return value  # type: ignore[return-value]  # the predicate checks it

    # The comparison overloads build predicates; mypy's object signatures return bool.
    def __eq__(self, value: object) -> EqualTo:  # type: ignore[override]
        return EqualTo(self.ref, self._value(value, "=="))

    def __ne__(self, value: object) -> NotEqualTo:  # type: ignore[override]
        return NotEqualTo(self.ref, self._value(value, "!="))

    def __lt__(self, value: object) -> LessThan:
        return LessThan(self.ref, self._value(value, "<"))

    def __le__(self, value: object) -> LessThanOrEqual:
        return LessThanOrEqual(self.ref, self._value(value, "<="))

    def __gt__(self, value: object) -> GreaterThan:
        return GreaterThan(self.ref, self._value(value, ">"))

    def __ge__(self, value: object) -> GreaterThanOrEqual:
        return GreaterThanOrEqual(self.ref, self._value(value, ">="))

    __hash__ = None  # type: ignore[assignment]  # == builds a predicate

    def __bool__(self) -> bool:
        raise FrazilTypeError(
            f"{self!r} has no truth value: compare it with a value (col('x') < 5) to build a "
            f"predicate"
        )

    def starts_with(self, prefix: str) -> StartsWith:
        return StartsWith(self.ref, prefix)

    def not_starts_with(self, prefix: str) -> NotStartsWith:
        return NotStartsWith(self.ref, prefix)

    def isin(self, values: Iterable[LiteralValue]) -> In:
        return In(self.ref, values)

    def notin(self, values: Iterable[LiteralValue]) -> NotIn:
        return NotIn(self.ref, values)

    is_in = isin
    not_in = notin

    def is_null(self) -> IsNull:
        return IsNull(self.ref)

    def not_null(self) -> NotNull:
        return NotNull(self.ref)

    def is_nan(self) -> IsNaN:
        return IsNaN(self.ref)

    def not_nan(self) -> NotNaN:
        return NotNaN(self.ref)


def col(name: str | Reference) -> Column:
    """A column of the builder: ``col("id") < 5``, ``col("x").isin([1, 2])``."""
    return Column(name)
