"""The text form of filters, read by a recursive-descent parser.

Grammar (keywords case-insensitive; NOT binds tighter than AND, AND tighter than OR)::

    expression := or
    or         := and (OR and)*
    and        := not (AND not)*
    not        := NOT not | primary
    primary    := '(' expression ')' | TRUE | FALSE | predicate
    predicate  := term op value | value op term            (a literal on the left flips)
                | term IS [NOT] NULL | term IS [NOT] NAN
                | term [NOT] IN '(' [value (',' value)*] ')'
                | term [NOT] LIKE 'prefix%' | term [NOT] STARTS WITH 'prefix'
                | term [NOT] BETWEEN value AND value      (inclusive: term >= a AND term <= b)
    op         := '=' | '==' | '!=' | '<>' | '<' | '<=' | '>' | '>='
    term       := name | transform '(' name ')'          (bucket[16](id), day(ts))
    name       := part ('.' part)*                        (location.city, "a.b".c)
    part       := word | '"' quoted, "" for a quote '"'

Values:

- ``42``, ``-7``: ``int`` (any size). ``1.5``, ``-2e10``: a ``float`` when the float holds the
  number exactly as written (its shortest text is the same number: ``1.50`` reads as 1.5);
  otherwise a ``decimal.Decimal``, so that no digit is lost (``12345678901234567.89``,
  ``1e400``). Either binds the same way to float, double and decimal columns.
- ``true``, ``false``: ``bool``.
- ``'text'`` (``''`` for a quote): a ``str``. Against a date, time, timestamp, decimal or uuid
  column, the text is parsed as that type when bound (``d = '2024-01-02'``).
- ``X'0a1b'``: ``bytes``, for binary and fixed columns.
- Typed literals, as ``str(expression)`` writes them: ``DATE '2024-01-02'``,
  ``TIME '10:30:00'``, ``TIMESTAMP '2024-01-02T10:30:00'`` (naive ``datetime``; with an
  offset or ``Z``, an aware one), ``DECIMAL '1.50'``, ``UUID '...'``, ``FLOAT 'inf'``.

``LIKE`` takes only a prefix pattern: ``'abc%'`` is ``StartsWith("abc")``; a pattern without a
wildcard is equality (``LIKE 'abc'`` is ``= 'abc'``, as in SQL); ``_`` anywhere, or ``%`` other
than at the end, is refused (use ``STARTS WITH 'a_b'`` for a prefix holding ``_`` or ``%``).

A syntax error raises :class:`frazil.errors.ExpressionSyntaxError`, naming the 1-based
character position and what was expected. A chain of terms joined by AND or OR may be of any
length (it becomes one flat node); NOT, and AND and OR within one another, nest at most
:data:`~frazil.expressions.MAX_DEPTH` (100) levels deep, parentheses at most
:data:`MAX_PARENTHESES` (1,000).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from decimal import Decimal
from typing import NoReturn

from frazil.errors import ExpressionSyntaxError, FrazilError, ValidationError
from frazil.expressions._base import (
    AlwaysFalse,
    AlwaysTrue,
    And,
    EqualTo,
    Expression,
    GreaterThan,
    GreaterThanOrEqual,
    In,
    IsNaN,
    IsNull,
    LessThan,
    LessThanOrEqual,
    LiteralPredicate,
    Not,
    NotEqualTo,
    NotIn,
    NotNaN,
    NotNull,
    NotStartsWith,
    Or,
    Reference,
    StartsWith,
    Term,
    Transform,
)
from frazil.expressions._literals import TYPED_LITERALS, LiteralValue, parse_typed

__all__ = ["MAX_PARENTHESES", "parse"]


@dataclass(frozen=True)
class _Token:
    kind: str  # word, quoted, string, hex, number, op, end
    text: str  # the value: a word, an unquoted identifier or string, digits, an operator
    pos: int  # 0-based offset into the source
    source: str  # as written, for messages

    def is_word(self, *words: str) -> bool:
        return self.kind == "word" and self.text.upper() in words

    def shown(self) -> str:
        return "end of input" if self.kind == "end" else repr(self.source)


_NUMBER = re.compile(r"-?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][+-]?\d+)?", re.ASCII)
_OPERATORS = ("<=", ">=", "<>", "!=", "==", "=", "<", ">", "(", ")", ",", ".", "[", "]")
_COMPARISONS: dict[str, type[LiteralPredicate]] = {
    "=": EqualTo,
    "==": EqualTo,
    "!=": NotEqualTo,
    "<>": NotEqualTo,
    "<": LessThan,
    "<=": LessThanOrEqual,
    ">": GreaterThan,
    ">=": GreaterThanOrEqual,
}
# `5 < x` is `x > 5`.
_FLIPPED: dict[type[LiteralPredicate], type[LiteralPredicate]] = {
    EqualTo: EqualTo,
    NotEqualTo: NotEqualTo,
    LessThan: GreaterThan,
    LessThanOrEqual: GreaterThanOrEqual,
    GreaterThan: LessThan,
    GreaterThanOrEqual: LessThanOrEqual,
}


def _syntax_error(message: str, pos: int, found: str = "") -> ExpressionSyntaxError:
    found = f", found {found}" if found else ""
    return ExpressionSyntaxError(f"{message} at position {pos + 1}{found}")


def _is_word_char(ch: str) -> bool:
    return ch.isalnum() or ch == "_"


def _quoted(source: str, start: int, quote: str, what: str) -> tuple[str, int]:
    """The text of a quoted string or identifier starting at ``start`` (the opening quote),
    with doubled quotes unescaped, and the offset after the closing quote."""
    parts = []
    i = start + 1
    while True:
        end = source.find(quote, i)
        if end < 0:
            raise _syntax_error(f"unterminated {what}: expected a closing {quote}", len(source))
        parts.append(source[i:end])
        if source.startswith(quote * 2, end):
            parts.append(quote)
            i = end + 2
        else:
            return "".join(parts), end + 1


def _tokens(source: str) -> list[_Token]:
    tokens: list[_Token] = []
    i = 0
    n = len(source)
    while i < n:
        ch = source[i]
        if ch.isspace():
            i += 1
            continue
        start = i
        if ch in "xX" and source.startswith("'", i + 1):
            text, i = _quoted(source, i + 1, "'", "binary literal")
            tokens.append(_Token("hex", text, start, source[start:i]))
        elif ch == "'":
            text, i = _quoted(source, i, "'", "string")
            tokens.append(_Token("string", text, start, source[start:i]))
        elif ch == '"':
            text, i = _quoted(source, i, '"', "quoted identifier")
            if not text:
                raise _syntax_error("a quoted identifier must not be empty", start)
            tokens.append(_Token("quoted", text, start, source[start:i]))
        elif (match := _NUMBER.match(source, i)) is not None:
            i = match.end()
            if i < n and (_is_word_char(source[i]) or source[i] == "."):
                raise _syntax_error(
                    f"malformed number {source[start : i + 1]!r}: expected a number", start
                )
            tokens.append(_Token("number", match.group(), start, match.group()))
        elif ch.isalpha() or ch == "_":
            while i < n and _is_word_char(source[i]):
                i += 1
            tokens.append(_Token("word", source[start:i], start, source[start:i]))
        else:
            op = next((o for o in _OPERATORS if source.startswith(o, i)), None)
            if op is None:
                raise _syntax_error(f"unexpected character {ch!r}", i)
            i += len(op)
            tokens.append(_Token("op", op, start, op))
    tokens.append(_Token("end", "", n, ""))
    return tokens


def _number(text: str) -> LiteralValue:
    """An int; else a float when it holds the number exactly as written; else a Decimal."""
    if not any(c in text for c in ".eE"):
        return int(text)
    exact = Decimal(text)
    as_float = float(text)
    # repr is the float's shortest round-trip text: when it denotes the written number, the
    # float loses nothing (1.50 -> 1.5); otherwise keep every digit (an overflow to inf too).
    return as_float if Decimal(repr(as_float)) == exact else exact


MAX_PARENTHESES = 1000
"""How deep parentheses may nest in the text form (nesting of NOT, AND and OR is limited by
:data:`~frazil.expressions.MAX_DEPTH`)."""


class _Group:
    """The filter, or one parenthesized part of it, while it is read: the operands of its OR
    so far, those of the AND being read, and the NOTs before the next operand."""

    def __init__(self, open_: _Token | None) -> None:
        self.open = open_  # the '(' (None for the whole filter)
        self.ors: list[Expression] = []
        self.ands: list[Expression] = []
        self.nots: list[_Token] = []

    def operand(self, operand: Expression) -> None:
        for token in reversed(self.nots):
            try:
                operand = Not(operand)
            except ValidationError as e:  # nested too deeply
                raise _syntax_error(str(e), token.pos) from None
        self.nots.clear()
        self.ands.append(operand)

    def next_or(self) -> None:
        self.ors.append(self._join(And, self.ands))
        self.ands = []

    def close(self) -> Expression:
        self.next_or()
        return self._join(Or, self.ors)

    def _join(self, cls: type[And | Or], operands: list[Expression]) -> Expression:
        if len(operands) == 1:
            return operands[0]
        try:
            return cls(*operands)
        except ValidationError as e:  # nested too deeply
            raise _syntax_error(str(e), 0 if self.open is None else self.open.pos) from None


class _Parser:
    def __init__(self, source: str) -> None:
        self.source = source
        self.tokens = _tokens(source)
        self.at = 0

    # --- token helpers ---------------------------------------------------------------------

    def peek(self, ahead: int = 0) -> _Token:
        return self.tokens[min(self.at + ahead, len(self.tokens) - 1)]

    def advance(self) -> _Token:
        token = self.peek()
        self.at = min(self.at + 1, len(self.tokens) - 1)
        return token

    def fail(self, expected: str) -> NoReturn:
        token = self.peek()
        after = f" after {self.tokens[self.at - 1].source!r}" if self.at > 0 else ""
        raise _syntax_error(f"expected {expected}{after}", token.pos, token.shown())

    def expect_op(self, op: str, expected: str) -> _Token:
        if self.peek().kind == "op" and self.peek().text == op:
            return self.advance()
        self.fail(expected)

    def expect_word(self, word: str) -> None:
        if not self.peek().is_word(word):
            self.fail(word)
        self.advance()

    # --- grammar ---------------------------------------------------------------------------

    def parse(self) -> Expression:
        if self.peek().kind == "end":
            raise _syntax_error("expected a filter", 0, "an empty string")
        expression = self.parse_boolean()
        if self.peek().kind != "end":
            self.fail("AND, OR or the end of the filter")
        return expression

    def parse_boolean(self) -> Expression:
        """``or := and (OR and)*``, ``and := not (AND not)*``, ``not := NOT not | primary``,
        ``primary := '(' or ')' | ...``, read in a loop with a stack of open parentheses rather
        than by recursion: a chain of any length (thousands of terms in generated filters)
        becomes one flat node, and nesting costs no Python stack. The model refuses nesting
        beyond MAX_DEPTH (NOT, and AND / OR within one another); parentheses themselves nest
        at most MAX_PARENTHESES deep."""
        groups = [_Group(None)]
        while True:
            group = groups[-1]
            while self.peek().is_word("NOT"):
                group.nots.append(self.advance())
            token = self.peek()
            if token.kind == "op" and token.text == "(":
                self.advance()
                if len(groups) > MAX_PARENTHESES:
                    raise _syntax_error(
                        f"the filter is nested too deeply: parentheses nest at most "
                        f"{MAX_PARENTHESES} deep",
                        token.pos,
                    )
                groups.append(_Group(token))
                continue
            operand = self.parse_primary()
            while True:  # after an operand: AND, OR, a closing parenthesis or the end
                group.operand(operand)
                token = self.peek()
                if token.is_word("AND"):
                    self.advance()
                    break
                if token.is_word("OR"):
                    self.advance()
                    group.next_or()
                    break
                if group.open is None:
                    return group.close()
                self.expect_op(")", f"')' (to close the '(' at position {group.open.pos + 1})")
                operand = group.close()
                groups.pop()
                group = groups[-1]

    def is_comparison(self, token: _Token) -> bool:
        return token.kind == "op" and token.text in _COMPARISONS

    def starts_value(self) -> bool:
        token = self.peek()
        if token.kind in ("number", "string", "hex"):
            return True
        if token.is_word("TRUE", "FALSE"):
            return self.is_comparison(self.peek(1))
        return token.kind == "word" and self.is_typed_literal()

    def is_typed_literal(self) -> bool:
        return self.peek().text.upper() in TYPED_LITERALS and self.peek(1).kind == "string"

    def parse_primary(self) -> Expression:
        """A predicate, TRUE or FALSE (parentheses are :meth:`parse_boolean`'s)."""
        token = self.peek()
        if self.starts_value():
            # A literal on the left: `5 < id` is `id > 5`.
            value = self.parse_value()
            op = self.peek()
            if not self.is_comparison(op):
                self.fail("a comparison operator (=, !=, <>, <, <=, >, >=)")
            self.advance()
            return _FLIPPED[_COMPARISONS[op.text]](self.parse_term(), value)
        if token.is_word("TRUE"):
            self.advance()
            return AlwaysTrue()
        if token.is_word("FALSE"):
            self.advance()
            return AlwaysFalse()
        if token.kind not in ("word", "quoted"):
            self.fail("a column name, NOT, TRUE, FALSE or '('")
        return self.parse_predicate(self.parse_term())

    def parse_term(self) -> Term:
        token = self.peek()
        after = self.peek(1)
        if token.kind == "word" and after.kind == "op" and after.text in ("(", "["):
            return self.parse_transform()
        return Reference(self.parse_name())

    def parse_name(self) -> str:
        parts: list[str] = []
        while True:
            token = self.peek()
            if token.kind not in ("word", "quoted"):
                self.fail("a column name" if not parts else "a field name after '.'")
            parts.append(self.advance().text)
            if not (self.peek().kind == "op" and self.peek().text == "."):
                return ".".join(parts)
            self.advance()

    def parse_transform(self) -> Transform:
        start = self.advance()
        text = start.text
        if self.peek().text == "[":
            self.advance()
            if self.peek().kind != "number":
                self.fail(f"the parameter of {start.text}[N]")
            text += f"[{self.advance().text}]"
            self.expect_op("]", "']'")
        self.expect_op("(", f"'(' and a column name after the transform {text}")
        name = self.parse_name()
        self.expect_op(")", f"')' after the column of {text}(...)")
        try:
            return Transform(text, name)
        except FrazilError as e:
            raise _syntax_error(f"invalid transform {text!r}: {e}", start.pos) from None

    def parse_predicate(self, term: Term) -> Expression:
        token = self.peek()
        if self.is_comparison(token):
            self.advance()
            return _COMPARISONS[token.text](term, self.parse_value())
        if token.is_word("IS"):
            self.advance()
            negated = self.peek().is_word("NOT")
            if negated:
                self.advance()
            if self.peek().is_word("NULL"):
                self.advance()
                return NotNull(term) if negated else IsNull(term)
            if self.peek().is_word("NAN"):
                self.advance()
                return NotNaN(term) if negated else IsNaN(term)
            self.fail("NULL or NAN")
        negated = token.is_word("NOT")
        if negated:
            self.advance()
        if self.peek().is_word("IN"):
            self.advance()
            start = self.peek()
            values = self.parse_list()
            try:
                return NotIn(term, values) if negated else In(term, values)
            except FrazilError as e:
                raise _syntax_error(f"{e}: in the list of values", start.pos) from None
        if self.peek().is_word("LIKE"):
            self.advance()
            return self.parse_like(term, negated)
        if self.peek().is_word("BETWEEN"):
            # SQL's BETWEEN includes both ends; NOT BETWEEN is its negation.
            self.advance()
            low = self.parse_value()
            self.expect_word("AND")
            high = self.parse_value()
            between = And(GreaterThanOrEqual(term, low), LessThanOrEqual(term, high))
            return Not(between) if negated else between
        if self.peek().is_word("STARTS"):
            self.advance()
            self.expect_word("WITH")
            prefix = self.peek()
            if prefix.kind != "string":
                self.fail("a quoted prefix")
            self.advance()
            return NotStartsWith(term, prefix.text) if negated else StartsWith(term, prefix.text)
        if negated:
            self.fail("IN, LIKE, BETWEEN or STARTS WITH")
        self.fail(
            "a comparison operator (=, !=, <>, <, <=, >, >=), IS, IN, LIKE, BETWEEN or STARTS WITH"
        )

    def parse_list(self) -> list[LiteralValue]:
        self.expect_op("(", "'(' to open the list of values")
        values: list[LiteralValue] = []
        if self.peek().kind == "op" and self.peek().text == ")":
            self.advance()
            return values
        while True:
            values.append(self.parse_value())
            token = self.peek()
            if token.kind == "op" and token.text == ")":
                self.advance()
                return values
            if not (token.kind == "op" and token.text == ","):
                self.fail("',' or ')' in the list of values")
            self.advance()

    def parse_like(self, term: Term, negated: bool) -> Expression:
        token = self.peek()
        if token.kind != "string":
            self.fail("a quoted pattern such as 'abc%'")
        self.advance()
        pattern = token.text
        where = f"in the LIKE pattern {token.source}"
        underscore = pattern.find("_")
        if underscore >= 0:
            raise _syntax_error(
                f"'_' {where} is not supported: LIKE takes a prefix pattern 'abc%'; for a "
                f"prefix that holds '_' use STARTS WITH {token.source[:-1].rstrip('%')}'",
                token.pos,
            )
        percent = pattern.find("%")
        if percent < 0:
            # No wildcard: LIKE is equality, as in SQL.
            return NotEqualTo(term, pattern) if negated else EqualTo(term, pattern)
        if percent != len(pattern) - 1:
            raise _syntax_error(
                f"'%' {where} is supported only at the end (a prefix pattern such as 'abc%'); "
                f"for a prefix that holds '%' use STARTS WITH",
                token.pos,
            )
        prefix = pattern[:-1]
        return NotStartsWith(term, prefix) if negated else StartsWith(term, prefix)

    def parse_value(self) -> LiteralValue:
        token = self.peek()
        if token.kind == "number":
            self.advance()
            return _number(token.text)
        if token.kind == "string":
            self.advance()
            return token.text
        if token.kind == "hex":
            self.advance()
            try:
                return bytes.fromhex(token.text)
            except ValueError:
                raise _syntax_error(
                    f"invalid binary literal {token.source}: expected pairs of hex digits",
                    token.pos,
                ) from None
        if token.is_word("TRUE", "FALSE"):
            self.advance()
            return token.text.upper() == "TRUE"
        if token.kind == "word" and self.is_typed_literal():
            self.advance()
            text = self.advance()
            try:
                return parse_typed(token.text.upper(), text.text)
            except FrazilError as e:
                raise _syntax_error(str(e), text.pos) from None
        if token.is_word("NULL"):
            raise _syntax_error("NULL is not a value: test for null with IS NULL", token.pos)
        if token.is_word("NAN"):
            raise _syntax_error("NaN is not a value: test for NaN with IS NAN", token.pos)
        if token.kind == "quoted":
            # "x" names a column (SQL); text in double quotes is a common slip.
            quoted = "'" + token.text.replace("'", "''") + "'"
            raise _syntax_error(
                f"{token.source} is a quoted column name, not a value: write text in single "
                f"quotes, {quoted}",
                token.pos,
            )
        self.fail("a value")


def parse(text: str) -> Expression:
    """The expression of a filter in the text form, e.g. ``"id > 5 AND name LIKE 'a%'"``."""
    if not isinstance(text, str):
        raise ExpressionSyntaxError(f"a filter must be a str, got {text.__class__.__name__}")
    return _Parser(text).parse()
