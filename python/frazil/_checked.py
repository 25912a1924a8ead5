"""Type checks for the model's frozen dataclasses, driven by their annotations.

A model value built with an argument of the wrong kind must be refused when it is built, never
stored: ``PartitionSpec(PartitionField(...))`` once put the field in ``spec_id`` and created an
unpartitioned table. Every public dataclass of the model is decorated with :func:`checked`
(beneath ``@dataclass``), which runs, before the class's own ``__post_init__``, one check per
field compiled from the field's annotation:

- ``int`` takes an int, never a bool; ``bool``, ``str``, ``bytes`` and classes take their
  instances; ``Any`` takes anything;
- ``X | None`` also takes None; a ``str`` enum also takes its value as a string (the class
  converts it and names the allowed values);
- ``tuple[X, ...]`` and ``list[X]`` take a tuple or list of ``X`` (stored as the annotated
  container); ``dict[K, V]`` and ``Mapping[K, V]`` take a mapping of ``K`` to ``V`` (a
  ``Mapping`` that is not a dict is stored as a dict).

Some of these classes are built per field or per data file, so the checks of a class are
compiled once, at its first instance (annotations are strings until then), into one generated
function: per field, a fast test of the common case (``type(x) is int``; for a container, its
type and the set of its items' types against the types already accepted) and, only when that
fails, the full check, which converts, accepts subclasses or raises.
"""

from __future__ import annotations

import dataclasses
import enum
import itertools
import types
import typing
from collections.abc import Callable, Mapping
from typing import Any, TypeVar, overload

from frazil.errors import FrazilError, InternalError, InvalidMetadataError

__all__ = ["check_fields", "checked"]

T = TypeVar("T")

_UNSET: Any = object()


class _Mismatch(Exception):
    """A value that fails a check: what was expected, where inside the field (``[2]``, a
    mapping's ``[key]``), and the offending value when it is not the field's whole value."""

    def __init__(self, expected: str, where: str = "", value: Any = _UNSET) -> None:
        super().__init__(expected)
        self.expected = expected
        self.where = where
        self.value = value


_names = itertools.count()


class _Check:
    """One annotation's check. ``type_ok`` (plain checks): whether values of that exact type
    are acceptable as they are, so that a container's items are checked by their distinct
    types at C speed; ``convert`` (containers): the value to store, or _Mismatch. ``fast``:
    an expression of ``x`` true only for a value that is acceptable as it is (None: always
    take the full check), over the objects in ``env``."""

    __slots__ = ("convert", "env", "expected", "fast", "type_ok")

    def __init__(
        self,
        expected: str,
        type_ok: Callable[[type], bool] | None = None,
        convert: Callable[[Any], Any] | None = None,
        fast: str | None = None,
        env: dict[str, Any] | None = None,
    ) -> None:
        self.expected = expected
        self.type_ok = type_ok
        self.convert = convert
        self.fast = fast
        self.env = env or {}

    def __call__(self, value: Any) -> Any:
        if self.convert is not None:
            return self.convert(value)
        assert self.type_ok is not None
        if not self.type_ok(type(value)):
            raise _Mismatch(self.expected)
        return value


def _bind(env: dict[str, Any], value: Any) -> str:
    """A fresh name for ``value`` in a generated expression."""
    name = f"_v{next(_names)}"
    env[name] = value
    return name


def _describe(hint: Any, article: bool = True) -> str:
    """An annotation in words: ``a tuple of Snapshot``, ``a dict of int to bytes or None``."""
    origin = typing.get_origin(hint)
    if origin is typing.Union or origin is types.UnionType:
        return " or ".join(_describe(a, article) for a in typing.get_args(hint))
    if origin in (tuple, list, dict, Mapping):
        args = typing.get_args(hint)
        name = "mapping" if origin is Mapping else origin.__name__
        inner = (
            f"{_describe(args[0], False)} to {_describe(args[1], False)}"
            if origin in (dict, Mapping)
            else _describe(args[0], False)
        )
        return f"{'a ' if article else ''}{name} of {inner}"
    if hint is type(None):
        return "None"
    if hint is Any or hint is object:
        return "anything"
    if isinstance(hint, type):
        if hint is bytes or not article:
            return hint.__name__
        return f"{'an' if hint.__name__[0].lower() in 'aeiou' else 'a'} {hint.__name__}"
    return str(hint)


def _int_type(t: type) -> bool:
    return issubclass(t, int) and not issubclass(t, bool)


def _optional_int_type(t: type) -> bool:
    return t is type(None) or _int_type(t)


def _subclass_of(classes: tuple[type, ...]) -> Callable[[type], bool]:
    def type_ok(t: type) -> bool:
        return issubclass(t, classes)

    return type_ok


class _TypesChecker:
    """Whether every item of an iterable is acceptable, judged by their distinct types: one
    C-speed pass and a subset test against ``good``, the types found acceptable so far."""

    __slots__ = ("good", "type_ok")

    def __init__(self, type_ok: Callable[[type], bool]) -> None:
        self.type_ok = type_ok
        self.good: set[type] = set()

    def __call__(self, values: Any) -> bool:
        seen = set(map(type, values))
        if seen <= self.good:
            return True
        for t in seen - self.good:
            if not self.type_ok(t):
                return False
            self.good.add(t)
        return True


_ANY = _Check("anything", type_ok=lambda _t: True, fast="True")


def _plain(expected: str, type_ok: Callable[[type], bool], classes: tuple[type, ...]) -> _Check:
    env: dict[str, Any] = {}
    return _Check(expected, type_ok, fast=f"isinstance(x, {_bind(env, classes)})", env=env)


def _compile(hint: Any) -> _Check:
    """The check of one annotation; an annotation it does not know is an InternalError when
    the class is first built, so that a new field shape is noticed, never left unchecked."""
    if hint is Any or hint is object:
        return _ANY
    if hint is int:
        # Exactly int on the fast path; the full check takes int subclasses but bool.
        return _Check("an int", _int_type, fast="type(x) is int")
    origin = typing.get_origin(hint)
    if origin is typing.Union or origin is types.UnionType:
        return _union(typing.get_args(hint))
    if origin in (tuple, list):
        args = typing.get_args(hint)
        if origin is tuple and (len(args) != 2 or args[1] is not Ellipsis):
            raise InternalError(f"cannot check the fixed-length tuple annotation {hint}")
        return _sequence(origin, _compile(args[0]), _describe(hint))
    if origin in (dict, Mapping):
        key, value = typing.get_args(hint)
        return _mapping(_compile(key), _compile(value), _describe(hint))
    if isinstance(hint, type) and issubclass(hint, enum.Enum) and issubclass(hint, str):
        # The class itself converts the string and names the allowed values.
        classes = (hint, str)
        return _plain(f"a {hint.__name__} or its value", _subclass_of(classes), classes)
    if isinstance(hint, type) and origin is None:
        return _plain(_describe(hint), _subclass_of((hint,)), (hint,))
    raise InternalError(f"cannot check the annotation {hint!r}")


def _union(args: tuple[Any, ...]) -> _Check:
    expected = " or ".join(_describe(a) for a in args)
    parts = [_compile(a) for a in args]
    if all(isinstance(a, type) and a is not int and typing.get_origin(a) is None for a in args):
        # The common case (``str | None``, ``bytes | None``): one isinstance call.
        return _plain(expected, _subclass_of(args), args)
    if set(args) == {int, type(None)}:
        return _Check(expected, _optional_int_type, fast="x is None or type(x) is int")
    if len(args) == 2 and type(None) in args:
        # ``tuple[str, ...] | None``: None at once, else the container's check.
        inner = parts[0] if args[1] is type(None) else parts[1]
        inner_convert = inner.convert
        assert inner_convert is not None  # a plain inner check took a branch above

        def optional(value: Any) -> Any:
            if value is None:
                return None
            try:
                return inner_convert(value)
            except _Mismatch as mismatch:
                if mismatch.where:
                    raise
                raise _Mismatch(expected) from None

        fast = None if inner.fast is None else f"x is None or ({inner.fast})"
        return _Check(expected, convert=optional, fast=fast, env=inner.env)
    if all(p.convert is None for p in parts):
        type_oks = [p.type_ok for p in parts]

        def type_ok(t: type) -> bool:
            return any(ok(t) for ok in type_oks)  # type: ignore[misc]

        return _Check(expected, type_ok)

    def convert(value: Any) -> Any:
        for part in parts:
            try:
                return part(value)
            except _Mismatch:
                continue
        raise _Mismatch(expected)

    return _Check(expected, convert=convert)


def _converted(check: _Check, where: Any, item: Any, prefix: bool = True) -> Any:
    """``check(item)``, a mismatch located at ``[where]`` (or at ``where`` with no prefix)."""
    try:
        return check(item)
    except _Mismatch as mismatch:
        place = f"[{where!r}]" if prefix else str(where)
        value = item if mismatch.value is _UNSET else mismatch.value
        raise _Mismatch(mismatch.expected, place + mismatch.where, value) from None


def _sequence(container: type, element: _Check, expected: str) -> _Check:
    """``tuple[X, ...]`` or ``list[X]``: a tuple or list of X, stored as ``container``."""
    if element.convert is not None:

        def convert_each(value: Any) -> Any:
            if not isinstance(value, (tuple, list)):
                raise _Mismatch(expected)
            return container(_converted(element, i, item) for i, item in enumerate(value))

        return _Check(expected, convert=convert_each)
    assert element.type_ok is not None
    all_ok = _TypesChecker(element.type_ok)

    def convert(value: Any) -> Any:
        if not isinstance(value, (tuple, list)):
            raise _Mismatch(expected)
        if not all_ok(value):
            for i, item in enumerate(value):  # raises at the first item refused
                _converted(element, i, item)
        return value if type(value) is container else container(value)

    env: dict[str, Any] = {}
    fast = (
        f"type(x) is {_bind(env, container)} and "
        f"(not x or set(map(type, x)) <= {_bind(env, all_ok.good)})"
    )
    return _Check(expected, convert=convert, fast=fast, env=env)


def _mapping(key: _Check, val: _Check, expected: str) -> _Check:
    """``dict[K, V]`` or ``Mapping[K, V]``: a mapping of K to V, stored as a dict."""
    if key.convert is not None or val.convert is not None:

        def convert_each(value: Any) -> Any:
            if not isinstance(value, Mapping):
                raise _Mismatch(expected)
            return {
                _converted(key, f" key {k!r}", k, prefix=False): _converted(val, k, v)
                for k, v in value.items()
            }

        return _Check(expected, convert=convert_each)
    assert key.type_ok is not None and val.type_ok is not None
    keys_ok = _TypesChecker(key.type_ok)
    values_ok = None if val is _ANY else _TypesChecker(val.type_ok)

    def convert(value: Any) -> Any:
        is_dict = type(value) is dict
        if not (is_dict or isinstance(value, Mapping)):
            raise _Mismatch(expected)
        if value and not (
            keys_ok(value.keys()) and (values_ok is None or values_ok(value.values()))
        ):
            for k, v in value.items():  # raises at the first item refused
                _converted(key, f" key {k!r}", k, prefix=False)
                _converted(val, k, v)
        return value if is_dict else dict(value)

    env: dict[str, Any] = {}
    items = f"set(map(type, x)) <= {_bind(env, keys_ok.good)}"
    if values_ok is not None:
        items += f" and set(map(type, x.values())) <= {_bind(env, values_ok.good)}"
    fast = f"type(x) is dict and (not x or ({items}))"
    return _Check(expected, convert=convert, fast=fast, env=env)


# --- per class ----------------------------------------------------------------------------------

_CHECKERS: dict[type, Callable[[Any, type[FrazilError]], None]] = {}


def _full_check(obj: Any, name: str, check: _Check, error: type[FrazilError]) -> None:
    """The slow path of one field: accept (converting a container, taking a subclass) or raise
    ``error`` naming the class, the field (and the item inside it) and the value."""
    value = obj.__dict__[name]
    try:
        new = check(value)
    except _Mismatch as mismatch:
        shown = value if mismatch.value is _UNSET else mismatch.value
        wanted = mismatch.expected if mismatch.where else check.expected
        raise error(
            f"{type(obj).__name__}: {name}{mismatch.where} must be {wanted}, got {shown!r}"
        ) from None
    if new is not value:
        object.__setattr__(obj, name, new)


def _checker(cls: type) -> Callable[[Any, type[FrazilError]], None]:
    """The generated check function of ``cls``: for each field, its fast test, else the full
    check."""
    hints = typing.get_type_hints(cls)
    # Input forms the class's own __post_init__ converts (a Transform for a transform
    # string): accepted by the check too.
    for name, extra in getattr(cls, "__frazil_also__", {}).items():
        members = (hints[name], *extra)
        hints[name] = typing.Union[members]  # noqa: UP007 - built at run time
    env: dict[str, Any] = {"_full_check": _full_check}
    lines = ["def check(obj, error):", "    d = obj.__dict__"]
    for f in dataclasses.fields(cls):
        check = _compile(hints[f.name]) if f.init else _ANY
        if check is _ANY:
            continue
        full = f"_full_check(obj, {f.name!r}, {_bind(env, check)}, error)"
        if check.fast is None:
            lines.append(f"    {full}")
            continue
        env.update(check.env)
        lines.append(f"    x = d[{f.name!r}]")
        lines.append(f"    if not ({check.fast}):")
        lines.append(f"        {full}")
    if len(lines) == 2:
        lines.append("    pass")
    namespace: dict[str, Any] = {}
    # The code is built above from the annotations alone (names bound in env), never from data.
    exec("\n".join(lines), env, namespace)
    function: Callable[[Any, type[FrazilError]], None] = namespace["check"]
    return function


def check_fields(obj: Any, error: type[FrazilError] = InvalidMetadataError) -> None:
    """Check (and normalise) every field of the dataclass instance ``obj`` against its
    annotation; raise ``error`` naming the class, the field and the value otherwise."""
    cls = type(obj)
    function = _CHECKERS.get(cls)
    if function is None:
        function = _CHECKERS[cls] = _checker(cls)
    function(obj, error)


@overload
def checked(cls: type[T], /) -> type[T]: ...
@overload
def checked(
    *, error: type[FrazilError] = ..., also: Mapping[str, tuple[type, ...]] = ...
) -> Callable[[type[T]], type[T]]: ...


def checked(
    cls: type[T] | None = None,
    /,
    *,
    error: type[FrazilError] = InvalidMetadataError,
    also: Mapping[str, tuple[type, ...]] | None = None,
) -> type[T] | Callable[[type[T]], type[T]]:
    """Give a dataclass the checks of its annotations: ``@dataclass(frozen=True)`` above,
    ``@checked`` (or ``@checked(error=InvalidSchemaError)``) below. Its own ``__post_init__``
    runs after the checks, on the checked (and normalised) values; ``also`` names input types
    it accepts besides the annotated one for a field, because it converts them."""

    def decorate(target: type[T]) -> type[T]:
        if also:
            target.__frazil_also__ = dict(also)  # type: ignore[attr-defined]
        original = getattr(target, "__post_init__", None)
        # A checked parent's __post_init__ is its checks plus its own: keep only the latter.
        original = getattr(original, "__frazil_original__", original)

        def __post_init__(self: Any) -> None:
            cls = type(self)
            function = _CHECKERS.get(cls)
            if function is None:
                function = _CHECKERS[cls] = _checker(cls)
            function(self, error)
            if original is not None:
                original(self)

        __post_init__.__qualname__ = f"{target.__qualname__}.__post_init__"
        __post_init__.__frazil_original__ = original  # type: ignore[attr-defined]
        target.__post_init__ = __post_init__  # type: ignore[attr-defined]
        target.__frazil_checked__ = True  # type: ignore[attr-defined]
        return target

    return decorate if cls is None else decorate(cls)
