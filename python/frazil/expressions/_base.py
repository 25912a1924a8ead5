"""The expression classes: terms, predicates and the boolean tree that combines them.

Every class is an immutable, hashable frozen dataclass. ``str(e)`` is the text form that
:func:`frazil.expressions.parse` reads back (``parse(str(e)) == e``); ``repr(e)`` is the
constructor call (``EqualTo('id', 5)``).
"""

from __future__ import annotations

import itertools
from collections.abc import Iterable, Sequence
from dataclasses import FrozenInstanceError, dataclass
from typing import TYPE_CHECKING, Any, ClassVar

from frazil import _native
from frazil.errors import FrazilTypeError, ValidationError
from frazil.expressions._literals import (
    LiteralValue,
    check_literal,
    literal_key,
    literal_text,
    quote_string,
)

if TYPE_CHECKING:
    from frazil.expressions.builder import Column

__all__ = [
    "MAX_DEPTH",
    "AlwaysFalse",
    "AlwaysTrue",
    "And",
    "BooleanExpression",
    "EqualTo",
    "Expression",
    "GreaterThan",
    "GreaterThanOrEqual",
    "In",
    "IsNaN",
    "IsNull",
    "LessThan",
    "LessThanOrEqual",
    "LiteralPredicate",
    "Not",
    "NotEqualTo",
    "NotIn",
    "NotNaN",
    "NotNull",
    "NotStartsWith",
    "Or",
    "Reference",
    "SetPredicate",
    "StartsWith",
    "Term",
    "Transform",
    "UnaryPredicate",
    "UnboundPredicate",
]


MAX_DEPTH = 100
"""How deep an expression may nest, counted as Iceberg's expression JSON writes it (binary AND
and OR nodes, balanced): NOT is one level, an AND or OR of n operands ceil(log2 n) levels above
its deepest operand. A flat chain of any length fits (10,000 terms take 14 levels); nesting
(NOT NOT ..., AND within OR within AND ...) deeper than this is refused with a
:class:`~frazil.errors.ValidationError`, as every reader of the JSON (Java's, Rust's, Python's)
recurses once per level."""


def _levels(count: int) -> int:
    """ceil(log2 count): the levels of a balanced binary tree over ``count`` operands."""
    return (count - 1).bit_length()


def _too_deep(what: str, depth: int) -> ValidationError:
    return ValidationError(
        f"{what}: the expression is nested too deeply ({depth} levels; at most {MAX_DEPTH}: NOT "
        f"counts one level, an AND or OR of n terms log2(n) levels (rounded up) above its "
        f"deepest term, so that a flat chain of any length fits)"
    )


class Expression:
    """A filter expression. Combine with ``&`` (and), ``|`` (or) and ``~`` (not)."""

    __slots__ = ()

    _depth: ClassVar[int] = 0
    """How deep the expression nests (see :data:`MAX_DEPTH`): 0 for a predicate or constant."""

    def __and__(self, other: object) -> Expression:
        if not isinstance(other, Expression):
            return NotImplemented
        if isinstance(self, AlwaysFalse) or isinstance(other, AlwaysTrue):
            return self
        if isinstance(self, AlwaysTrue) or isinstance(other, AlwaysFalse):
            return other
        return And(self, other)

    def __or__(self, other: object) -> Expression:
        if not isinstance(other, Expression):
            return NotImplemented
        if isinstance(self, AlwaysTrue) or isinstance(other, AlwaysFalse):
            return self
        if isinstance(self, AlwaysFalse) or isinstance(other, AlwaysTrue):
            return other
        return Or(self, other)

    def __invert__(self) -> Expression:
        return Not(self)

    def __bool__(self) -> bool:
        raise FrazilTypeError(
            f"the expression {self} has no truth value: combine expressions with & (and), "
            f"| (or) and ~ (not) rather than the keywords and, or, not; write a < b < c as "
            f"(a < b) & (b < c); and test an expression by binding or evaluating it, not with if"
        )

    def to_json(self) -> Any:
        """Java's expression JSON (``ExpressionParser``) as ``json.loads`` would return it;
        values JSON cannot carry exactly are tagged ``{"@": kind, "v": payload}``."""
        from frazil.expressions._json import expression_to_json

        return expression_to_json(self)

    def to_json_text(self) -> str:
        """:meth:`to_json` as JSON text."""
        import json

        return json.dumps(self.to_json(), allow_nan=False, separators=(",", ":"))

    def __str__(self) -> str:
        return self._text()

    def _text(self) -> str:
        raise NotImplementedError  # pragma: no cover - every subclass overrides it

    def _precedence(self) -> int:
        """How tightly the text form binds: OR 1, AND 2, NOT and predicates 3."""
        return 3


BooleanExpression = Expression
"""pyiceberg's name for :class:`Expression`."""


# --- terms ---------------------------------------------------------------------------------------

_KEYWORDS = frozenset(
    {"and", "or", "not", "in", "is", "null", "nan", "like", "true", "false", "starts", "with"}
)


def _bare(part: str) -> bool:
    return (
        part.isascii()
        and (part[:1].isalpha() or part[:1] == "_")
        and part.replace("_", "a").isalnum()
        and part.lower() not in _KEYWORDS
    )


def name_text(name: str) -> str:
    """A column name in the text form: dotted bare words, or one quoted identifier."""
    if all(_bare(part) for part in name.split(".")):
        return name
    return '"' + name.replace('"', '""') + '"'


def _check_name(name: object, where: str) -> str:
    if not isinstance(name, str):
        raise FrazilTypeError(
            f"{where}: a column name must be a str, got {name!r} ({name.__class__.__name__})"
        )
    if not name:
        raise ValidationError(f"{where}: a column name must not be empty")
    return name


@dataclass(frozen=True)
class Reference:
    """A column by its full dotted name (``"location.city"``)."""

    name: str

    def __post_init__(self) -> None:
        _check_name(self.name, "Reference")

    def __repr__(self) -> str:
        return f"Reference({self.name!r})"

    def __str__(self) -> str:
        return name_text(self.name)


@dataclass(frozen=True, init=False)
class Transform:
    """A partition transform of a column, e.g. ``Transform("bucket[16]", "id")``.

    ``transform`` is kept in its normalized Appendix C form (``"bucket[16]"``, ``"day"``).
    """

    transform: str
    name: str

    def __init__(self, transform: str, name: str | Reference) -> None:
        if isinstance(name, Reference):
            name = name.name
        _check_name(name, "Transform")
        if not isinstance(transform, str):
            raise FrazilTypeError(f"Transform: the transform must be a str, got {transform!r}")
        object.__setattr__(self, "transform", str(_native.Transform(transform)))
        object.__setattr__(self, "name", name)

    def __repr__(self) -> str:
        return f"Transform({self.transform!r}, {self.name!r})"

    def __str__(self) -> str:
        return f"{self.transform}({name_text(self.name)})"


Term = Reference | Transform
"""What a predicate tests: a column, or a transform of one."""


def as_term(term: object, where: str) -> Term:
    from frazil.expressions.builder import Column

    if isinstance(term, Reference | Transform):
        return term
    if isinstance(term, Column):
        return term.ref
    if isinstance(term, str):
        return Reference(_check_name(term, where))
    raise FrazilTypeError(
        f"{where}: the term must be a column name (str), a Reference or a Transform, "
        f"got {term!r} ({term.__class__.__name__})"
    )


def _term_repr(term: Term) -> str:
    return repr(term.name) if isinstance(term, Reference) else repr(term)


# --- constants and the boolean tree ------------------------------------------------------------


@dataclass(frozen=True, repr=False)
class AlwaysTrue(Expression):
    """The expression that every row satisfies."""

    def __invert__(self) -> Expression:
        return AlwaysFalse()

    def __repr__(self) -> str:
        return "AlwaysTrue()"

    def _text(self) -> str:
        return "TRUE"


@dataclass(frozen=True, repr=False)
class AlwaysFalse(Expression):
    """The expression that no row satisfies."""

    def __invert__(self) -> Expression:
        return AlwaysTrue()

    def __repr__(self) -> str:
        return "AlwaysFalse()"

    def _text(self) -> str:
        return "FALSE"


def _check_child(child: object, where: str) -> Expression:
    if not isinstance(child, Expression):
        raise FrazilTypeError(
            f"{where}: expected an expression, got {child!r} ({child.__class__.__name__})"
        )
    return child


def _operand(child: Expression, minimum: int) -> str:
    text = child._text()
    return f"({text})" if child._precedence() < minimum else text


class _Junction(Expression):
    """An AND or OR of two or more operands, kept flat: an operand of the same kind is spliced
    in, so that ``And(And(a, b), c)``, ``And(a, And(b, c))`` and ``And(a, b, c)`` are one node
    with operands ``(a, b, c)`` and are equal. A chain of any length is one node, and every walk
    over the tree recurses only as deep as it nests (:data:`MAX_DEPTH`).

    Folding a chain one operand at a time (``functools.reduce(And, terms)``, ``a & b & c``)
    costs linear time: a node made from an AND on its left keeps a reference to it and
    gathers the operands once, when first asked.
    """

    __slots__ = ("_depth", "_hash", "_inner", "_items", "_prefix", "_size", "_tail")
    __match_args__ = ("left", "right")  # `case And(left, right)`, as for pyiceberg's
    _word: ClassVar[str]
    _prefix: _Junction | None  # the same-kind left operand whose operands come first
    _tail: tuple[Expression, ...]  # the operands after the prefix's
    _size: int
    _inner: int  # the depth of the deepest operand
    _items: tuple[Expression, ...] | None  # every operand, once gathered
    _hash: int | None

    def __init__(self, left: Expression, right: Expression, *rest: Expression) -> None:
        cls = self.__class__
        prefix: _Junction | None = None
        tail: list[Expression] = []
        inner = 0
        for i, operand in enumerate((left, right, *rest)):
            operand = _check_child(operand, cls.__name__)
            if operand.__class__ is cls:
                assert isinstance(operand, _Junction)
                if i == 0:
                    prefix = operand
                else:
                    tail.extend(operand.operands)
                inner = max(inner, operand._inner)
            else:
                tail.append(operand)
                inner = max(inner, operand._depth)
        self._init(prefix, tuple(tail), inner)

    def _init(self, prefix: _Junction | None, tail: tuple[Expression, ...], inner: int) -> None:
        size = len(tail) + (0 if prefix is None else prefix._size)
        depth = inner + _levels(size)
        if depth > MAX_DEPTH:
            raise _too_deep(self.__class__.__name__, depth)
        for name, value in (
            ("_prefix", prefix),
            ("_tail", tail),
            ("_size", size),
            ("_inner", inner),
            ("_depth", depth),
            ("_items", tail if prefix is None else None),
            ("_hash", None),
        ):
            object.__setattr__(self, name, value)

    @classmethod
    def _of(cls, operands: Sequence[Expression]) -> Expression:
        """The node over ``operands`` (none of this kind), or the only one."""
        if len(operands) == 1:
            return operands[0]
        node = cls.__new__(cls)
        node._init(None, tuple(operands), max(o._depth for o in operands))
        return node

    @property
    def operands(self) -> tuple[Expression, ...]:
        """The operands, left to right (two or more, none of this node's kind)."""
        items = self._items
        if items is None:
            # Gathered without recursion along the chain of prefixes. Nothing is ever unset,
            # so threads that race here compute the same tuple.
            tails = []
            node: _Junction = self
            while node._items is None:
                tails.append(node._tail)
                assert node._prefix is not None
                node = node._prefix
            tails.append(node._items)
            items = tuple(itertools.chain.from_iterable(reversed(tails)))
            object.__setattr__(self, "_items", items)
        return items

    @property
    def left(self) -> Expression:
        """The first ceil(n/2) operands (the only one, or a node of this kind): the left side
        of the balanced binary node that Iceberg's JSON writes (pyiceberg's ``left``)."""
        items = self.operands
        return self._of(items[: (len(items) + 1) // 2])

    @property
    def right(self) -> Expression:
        """The operands after :attr:`left`'s."""
        items = self.operands
        return self._of(items[(len(items) + 1) // 2 :])

    def __setattr__(self, name: str, value: object) -> None:
        raise FrozenInstanceError(f"cannot assign to field {name!r}")

    def __delattr__(self, name: str) -> None:
        raise FrozenInstanceError(f"cannot delete field {name!r}")

    def __eq__(self, other: object) -> bool:
        if other.__class__ is not self.__class__:
            return NotImplemented
        assert isinstance(other, _Junction)
        return self._size == other._size and self.operands == other.operands

    def __hash__(self) -> int:
        cached = self._hash
        if cached is None:
            cached = hash((self.__class__.__name__, self.operands))
            object.__setattr__(self, "_hash", cached)
        return cached

    def __reduce__(self) -> tuple[Any, ...]:
        return (self.__class__, self.operands)

    def __repr__(self) -> str:
        return f"{self.__class__.__name__}({', '.join(repr(o) for o in self.operands)})"

    def _text(self) -> str:
        minimum = self._precedence()
        return f" {self._word} ".join(_operand(o, minimum) for o in self.operands)


class And(_Junction):
    """``a AND b AND ...``: ``And(a, b, c)`` is ``a AND b AND c``, equal to
    ``And(And(a, b), c)`` (operands are kept flat, see :attr:`operands`)."""

    __slots__ = ()
    _word = "AND"

    def _precedence(self) -> int:
        return 2


class Or(_Junction):
    """``a OR b OR ...``: ``Or(a, b, c)`` is ``a OR b OR c``, equal to ``Or(Or(a, b), c)``."""

    __slots__ = ()
    _word = "OR"

    def _precedence(self) -> int:
        return 1


@dataclass(frozen=True, repr=False)
class Not(Expression):
    """``NOT child``."""

    child: Expression

    def __post_init__(self) -> None:
        _check_child(self.child, "Not")
        depth = self.child._depth + 1
        if depth > MAX_DEPTH:
            raise _too_deep("Not", depth)
        object.__setattr__(self, "_depth", depth)

    def __invert__(self) -> Expression:
        return self.child

    def __repr__(self) -> str:
        return f"Not({self.child!r})"

    def _text(self) -> str:
        return f"NOT {_operand(self.child, 3)}"


# --- predicates ----------------------------------------------------------------------------------


@dataclass(frozen=True, init=False, eq=False, repr=False)
class UnboundPredicate(Expression):
    """A test of one term: unary, against one value, or against a set of values.

    Predicates compare their values by kind as well as value (``EqualTo("x", 1)`` is not
    ``EqualTo("x", True)`` nor ``EqualTo("x", 1.0)``; ``-0.0`` is not ``0.0``), as binding
    tells them apart.
    """

    term: Term

    def _key(self) -> tuple[Any, ...]:
        raise NotImplementedError  # pragma: no cover - every subclass overrides it

    def __eq__(self, other: object) -> bool:
        if other.__class__ is not self.__class__:
            return NotImplemented
        assert isinstance(other, UnboundPredicate)
        return self._key() == other._key()

    def __hash__(self) -> int:
        return hash((self.__class__.__name__, self._key()))

    def negate(self) -> UnboundPredicate:
        """The predicate true exactly where this one is false (``EqualTo`` -> ``NotEqualTo``),
        as NOT of it binds to."""
        raise NotImplementedError  # pragma: no cover - every subclass overrides it


@dataclass(frozen=True, init=False, eq=False, repr=False)
class UnaryPredicate(UnboundPredicate):
    """A predicate without a value: IS NULL, IS NOT NULL, IS NAN, IS NOT NAN."""

    _symbol: ClassVar[str]
    _negation: ClassVar[type[UnaryPredicate]]

    def __init__(self, term: str | Term | Column) -> None:
        object.__setattr__(self, "term", as_term(term, self.__class__.__name__))

    def _key(self) -> tuple[Any, ...]:
        return (self.term,)

    def __repr__(self) -> str:
        return f"{self.__class__.__name__}({_term_repr(self.term)})"

    def _text(self) -> str:
        return f"{self.term} {self._symbol}"

    def negate(self) -> UnboundPredicate:
        return self._negation(self.term)


@dataclass(frozen=True, init=False, eq=False, repr=False)
class IsNull(UnaryPredicate):
    _symbol = "IS NULL"


@dataclass(frozen=True, init=False, eq=False, repr=False)
class NotNull(UnaryPredicate):
    _symbol = "IS NOT NULL"


@dataclass(frozen=True, init=False, eq=False, repr=False)
class IsNaN(UnaryPredicate):
    _symbol = "IS NAN"


@dataclass(frozen=True, init=False, eq=False, repr=False)
class NotNaN(UnaryPredicate):
    _symbol = "IS NOT NAN"


IsNull._negation = NotNull
NotNull._negation = IsNull
IsNaN._negation = NotNaN
NotNaN._negation = IsNaN


@dataclass(frozen=True, init=False, eq=False, repr=False)
class LiteralPredicate(UnboundPredicate):
    """A comparison of the term with one value."""

    value: LiteralValue
    _symbol: ClassVar[str]
    _negation: ClassVar[type[LiteralPredicate]]

    def __init__(self, term: str | Term | Column, value: LiteralValue) -> None:
        where = self.__class__.__name__
        term = as_term(term, where)
        object.__setattr__(self, "term", term)
        object.__setattr__(self, "value", check_literal(value, f"{where}({_term_repr(term)})"))

    def _key(self) -> tuple[Any, ...]:
        return (self.term, literal_key(self.value))

    def __repr__(self) -> str:
        return f"{self.__class__.__name__}({_term_repr(self.term)}, {self.value!r})"

    def _text(self) -> str:
        return f"{self.term} {self._symbol} {literal_text(self.value)}"

    def negate(self) -> UnboundPredicate:
        return self._negation(self.term, self.value)


@dataclass(frozen=True, init=False, eq=False, repr=False)
class EqualTo(LiteralPredicate):
    _symbol = "="


@dataclass(frozen=True, init=False, eq=False, repr=False)
class NotEqualTo(LiteralPredicate):
    _symbol = "!="


@dataclass(frozen=True, init=False, eq=False, repr=False)
class LessThan(LiteralPredicate):
    _symbol = "<"


@dataclass(frozen=True, init=False, eq=False, repr=False)
class LessThanOrEqual(LiteralPredicate):
    _symbol = "<="


@dataclass(frozen=True, init=False, eq=False, repr=False)
class GreaterThan(LiteralPredicate):
    _symbol = ">"


@dataclass(frozen=True, init=False, eq=False, repr=False)
class GreaterThanOrEqual(LiteralPredicate):
    _symbol = ">="


@dataclass(frozen=True, init=False, eq=False, repr=False)
class _PrefixPredicate(LiteralPredicate):
    """StartsWith and NotStartsWith: a string term against a ``str`` prefix."""

    _negated: ClassVar[bool]

    def __init__(self, term: str | Term | Column, value: str) -> None:
        if not isinstance(value, str):
            raise FrazilTypeError(
                f"{self.__class__.__name__}: the prefix must be a str, got {value!r} "
                f"({value.__class__.__name__})"
            )
        super().__init__(term, value)

    @property
    def prefix(self) -> str:
        assert isinstance(self.value, str)
        return self.value

    def _text(self) -> str:
        # LIKE 'p%' when the prefix holds no wildcard; STARTS WITH otherwise (LIKE has no
        # escape character in this text form).
        not_ = "NOT " if self._negated else ""
        if "%" in self.prefix or "_" in self.prefix:
            return f"{self.term} {not_}STARTS WITH {quote_string(self.prefix)}"
        return f"{self.term} {not_}LIKE {quote_string(self.prefix + '%')}"


@dataclass(frozen=True, init=False, eq=False, repr=False)
class StartsWith(_PrefixPredicate):
    """The term (a string column) starts with ``value``."""

    _negated = False


@dataclass(frozen=True, init=False, eq=False, repr=False)
class NotStartsWith(_PrefixPredicate):
    """The term (a string column) does not start with ``value`` (or is null)."""

    _negated = True


EqualTo._negation = NotEqualTo
NotEqualTo._negation = EqualTo
LessThan._negation = GreaterThanOrEqual
GreaterThanOrEqual._negation = LessThan
LessThanOrEqual._negation = GreaterThan
GreaterThan._negation = LessThanOrEqual
StartsWith._negation = NotStartsWith
NotStartsWith._negation = StartsWith


@dataclass(frozen=True, init=False, eq=False, repr=False)
class SetPredicate(UnboundPredicate):
    """A test of the term against a set of values: distinct Iceberg literals, in Iceberg's
    order (a tuple, not a frozenset: Python calls 0.0 and -0.0 equal, Iceberg does not)."""

    values: tuple[LiteralValue, ...]
    _symbol: ClassVar[str]
    _negation: ClassVar[type[SetPredicate]]

    def __init__(self, term: str | Term | Column, values: Iterable[LiteralValue]) -> None:
        where = self.__class__.__name__
        term = as_term(term, where)
        where = f"{where}({_term_repr(term)})"
        if isinstance(values, str | bytes | bytearray) or not isinstance(values, Iterable):
            raise FrazilTypeError(
                f"{where}: values must be a collection of values (list, tuple, set), got {values!r}"
            )
        checked = [check_literal(v, where) for v in values]
        by_key = {literal_key(v): v for v in checked}
        # Python merges 1, 1.0 and True, which bind differently: refuse a mix rather than
        # silently drop one of them. 0.0 and -0.0 are both kept (distinct Iceberg values).
        seen: dict[LiteralValue, LiteralValue] = {}
        for v in by_key.values():
            if v in seen and not (isinstance(v, float) and isinstance(seen[v], float)):
                raise ValidationError(
                    f"{where}: the values {seen[v]!r} and {v!r} are equal in Python but "
                    f"different Iceberg literals; give values of one kind"
                )
            seen[v] = v
        object.__setattr__(self, "term", term)
        object.__setattr__(self, "values", tuple(by_key[k] for k in sorted(by_key)))

    def _sorted(self) -> list[LiteralValue]:
        return list(self.values)

    def _key(self) -> tuple[Any, ...]:
        return (self.term, frozenset(literal_key(v) for v in self.values))

    def __repr__(self) -> str:
        values = ", ".join(repr(v) for v in self._sorted())
        return f"{self.__class__.__name__}({_term_repr(self.term)}, [{values}])"

    def _text(self) -> str:
        values = ", ".join(literal_text(v) for v in self._sorted())
        return f"{self.term} {self._symbol} ({values})"

    def negate(self) -> UnboundPredicate:
        return self._negation(self.term, self.values)


@dataclass(frozen=True, init=False, eq=False, repr=False)
class In(SetPredicate):
    _symbol = "IN"


@dataclass(frozen=True, init=False, eq=False, repr=False)
class NotIn(SetPredicate):
    _symbol = "NOT IN"


In._negation = NotIn
NotIn._negation = In
