"""Plain value classes, declared like dataclasses, without their cost at start-up.

``dataclasses`` (with ``inspect``, which it imports) and the code it generates for
each class cost a fresh ``mttui search`` about a tenth of its time. A subclass of
:class:`Plain` declares its fields the same way and gets the same behaviour: an
``__init__`` taking the fields in order (positionally or by name), defaults and
``field(default_factory=...)``, ``__eq__`` and ``__repr__`` over the fields, and
frozen instances (``__setattr__`` refuses, ``__hash__`` hashes the fields) unless the
class says ``frozen=False`` (then unhashable, as a dataclass). :func:`replace` is
``dataclasses.replace`` for these classes. Type checkers see them as dataclasses
(``dataclass_transform``).

Fields are the class's own annotations (a subclass of a :class:`Plain` class adds its
fields after its base's); a ``ClassVar`` annotation is not a field.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import ClassVar, TypeVar, dataclass_transform

T = TypeVar("T", bound="Plain")
V = TypeVar("V")


class FrozenInstanceError(AttributeError):
    """An assignment to a field of a frozen instance."""


class _Factory:
    __slots__ = ("make",)

    def __init__(self, make: Callable[[], object]) -> None:
        self.make = make


def field(*, default_factory: Callable[[], V]) -> V:
    """A field whose default is made by ``default_factory()`` for each instance."""
    return _Factory(default_factory)  # type: ignore[return-value]  # read by Plain


_MISSING = object()


@dataclass_transform(frozen_default=True, field_specifiers=(field,))
class Plain:
    """Base of the value classes (see the module docstring)."""

    plain_fields: ClassVar[tuple[str, ...]] = ()  # the names of the fields, in order
    _plain_defaults: ClassVar[dict[str, object]] = {}
    _plain_names: ClassVar[frozenset[str]] = frozenset()

    def __init_subclass__(cls, frozen: bool = True, **kwargs: object) -> None:
        super().__init_subclass__(**kwargs)
        names = list(cls.plain_fields)
        defaults = dict(cls._plain_defaults)
        for name, hint in cls.__dict__.get("__annotations__", {}).items():
            if "ClassVar" in str(hint):
                continue
            if name not in names:
                names.append(name)
            if name in cls.__dict__:
                defaults[name] = cls.__dict__[name]
                if isinstance(defaults[name], _Factory):
                    delattr(cls, name)
            elif defaults:
                raise TypeError(f"non-default argument {name!r} follows default argument")
        cls.plain_fields, cls._plain_defaults = tuple(names), defaults
        cls._plain_names = frozenset(names)
        if not frozen:  # as a dataclass: unhashable, and plain attribute assignment
            cls.__hash__ = None  # type: ignore[method-assign,assignment]
            cls.__setattr__ = object.__setattr__  # type: ignore[method-assign,assignment]
            cls.__delattr__ = object.__delattr__  # type: ignore[method-assign]

    def __init__(self, *args: object, **kwargs: object) -> None:
        names = self.plain_fields
        values = kwargs
        if args:
            if len(args) > len(names):
                raise TypeError(f"{type(self).__name__}() takes {len(names)} positional "
                                f"arguments but {len(args)} were given")  # fmt: skip
            values = dict(zip(names, args, strict=False))
            for key, value in kwargs.items():
                if key in values:
                    raise TypeError(f"{type(self).__name__}() got multiple values for {key!r}")
                values[key] = value
        if values.keys() != self._plain_names:  # defaults to fill in, or a wrong name
            for name in names:
                if name not in values:
                    value = self._plain_defaults.get(name, _MISSING)
                    if value is _MISSING:
                        raise TypeError(f"{type(self).__name__}() missing argument {name!r}")
                    values[name] = value.make() if isinstance(value, _Factory) else value
            for key in values.keys() - self._plain_names:
                raise TypeError(f"{type(self).__name__}() got an unexpected keyword argument "
                                f"{key!r}")  # fmt: skip
        self.__dict__.update(values)

    def __eq__(self, other: object) -> bool:
        if other.__class__ is not self.__class__:
            return NotImplemented
        mine, theirs, names = self.__dict__, other.__dict__, self.plain_fields
        return tuple(mine[n] for n in names) == tuple(theirs[n] for n in names)

    def __hash__(self) -> int:
        out = self.__dict__
        return hash(tuple(out[name] for name in self.plain_fields))

    def __repr__(self) -> str:
        out = self.__dict__
        inner = ", ".join(f"{name}={out[name]!r}" for name in self.plain_fields)
        return f"{type(self).__qualname__}({inner})"

    def __setattr__(self, name: str, value: object) -> None:
        raise FrozenInstanceError(f"cannot assign to field {name!r}")

    def __delattr__(self, name: str) -> None:
        raise FrozenInstanceError(f"cannot delete field {name!r}")


def replace(obj: T, **changes: object) -> T:
    """A copy of ``obj`` with ``changes`` (``dataclasses.replace`` for :class:`Plain`)."""
    out = obj.__dict__
    values = {name: out[name] for name in obj.plain_fields}
    unknown = set(changes) - set(values)
    if unknown:
        raise TypeError(f"{type(obj).__name__} has no field {sorted(unknown)[0]!r}")
    values.update(changes)
    return type(obj)(**values)
