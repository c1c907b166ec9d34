"""Value classes for the modules every `hello-tui apply` loads, without `dataclasses`.

`@dataclass` compiles an `__init__`, `__repr__`, `__eq__` (and for a frozen
class `__setattr__`, `__delattr__`, `__hash__`) from generated source, per
class: for the three dozen classes of the patch engine, the config and the
notes that was about as much as all their other import work together. This
`dataclass` takes the same declarations (annotations, defaults,
`field(default_factory=..., init=False, repr=False, compare=False)`, `frozen`,
`eq`, `slots`, `__post_init__`, inheritance from another such class) and gives
the same behaviour from methods shared by every class, with nothing compiled:

- `__init__(*args, **kwargs)` in field order, defaults and factories as
  dataclasses applies them, the same TypeErrors for a missing, unexpected or
  repeated argument;
- `__repr__` as `Name(field=value, ...)`; `__eq__` on the compared fields of
  two instances of the same class; `__hash__` from them when frozen, none when
  not (as dataclasses with `eq`);
- a frozen class's instances refuse assignment and deletion
  (`FrozenInstanceError`, an AttributeError);
- `fields`, `replace` and `is_dataclass` work on them as dataclasses' do.

Type checkers read the decorator as a dataclass (`dataclass_transform`).
"""

from __future__ import annotations

from operator import attrgetter

TYPE_CHECKING = False  # typing is not imported at run time: it costs every command
if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import Any, TypeVar, dataclass_transform, overload

    _T = TypeVar("_T")
else:

    def dataclass_transform(**_kwargs):
        return lambda decorator: decorator

    def overload(function):
        return function


class _Missing:
    __slots__ = ()

    def __repr__(self) -> str:
        return "MISSING"


MISSING: Any = _Missing()


class FrozenInstanceError(AttributeError):
    """Assignment to a field of a frozen instance."""


class Field:
    """One field: its name, default or default factory, and where it takes part."""

    __slots__ = ("compare", "default", "default_factory", "init", "name", "repr")

    def __init__(
        self, default: Any, default_factory: Any, init: bool, repr: bool, compare: bool
    ) -> None:
        self.name = ""
        self.default, self.default_factory = default, default_factory
        self.init, self.repr, self.compare = init, repr, compare

    def __repr__(self) -> str:
        return f"Field(name={self.name!r}, default={self.default!r})"


@overload
def field(*, default: _T, init: bool = True, repr: bool = True, compare: bool = True) -> _T: ...
@overload
def field(  # noqa: F811
    *, default_factory: Callable[[], _T], init: bool = True, repr: bool = True, compare: bool = True
) -> _T: ...
@overload
def field(*, init: bool = True, repr: bool = True, compare: bool = True) -> Any: ...  # noqa: F811
def field(  # noqa: F811
    *,
    default: Any = MISSING,
    default_factory: Any = MISSING,
    init: bool = True,
    repr: bool = True,
    compare: bool = True,
) -> Any:
    """A field's default, default factory, and whether __init__, repr and == use it."""
    if default is not MISSING and default_factory is not MISSING:
        raise ValueError("cannot specify both default and default_factory")
    return Field(default, default_factory, init, repr, compare)


_FIELDS = "__plain_fields__"


@overload
def dataclass(cls: type[_T], /) -> type[_T]: ...
@overload
def dataclass(  # noqa: F811
    *, frozen: bool = False, eq: bool = True, slots: bool = False
) -> Callable[[type[_T]], type[_T]]: ...
@dataclass_transform(field_specifiers=(field, Field))
def dataclass(  # noqa: F811
    cls: Any = None, /, *, frozen: bool = False, eq: bool = True, slots: bool = False
) -> Any:
    """`@dataclass`, `@dataclass(frozen=True, eq=..., slots=...)`: see the module's text."""

    def wrap(cls: type) -> type:
        return _process(cls, frozen=frozen, eq=eq, slots=slots)

    return wrap if cls is None else wrap(cls)


def _process(cls: Any, *, frozen: bool, eq: bool, slots: bool) -> Any:
    inherited: dict[str, Field] = {}
    for base in reversed(cls.__mro__[1:]):
        inherited.update({f.name: f for f in getattr(base, _FIELDS, ())})
    own: dict[str, Field] = {}
    own_annotations = cls.__dict__.get("__annotations__", {})  # noqa: RUF063 - its own only
    for name, annotation in own_annotations.items():
        if isinstance(annotation, str) and annotation.startswith(("ClassVar", "typing.ClassVar")):
            continue
        value = cls.__dict__.get(name, MISSING)
        f = value if isinstance(value, Field) else Field(value, MISSING, True, True, True)
        f.name = name
        own[name] = f
        if isinstance(value, Field):
            if f.default is MISSING:
                delattr(cls, name)
            else:
                setattr(cls, name, f.default)
    all_fields = tuple({**inherited, **own}.values())
    if slots:
        body = {k: v for k, v in cls.__dict__.items() if k not in own and k != "__dict__"}
        body.pop("__weakref__", None)
        body["__slots__"] = tuple(own)
        cls = type(cls)(cls.__name__, cls.__bases__, body)
    setattr(cls, _FIELDS, all_fields)
    _add_init(cls, all_fields, slots)
    if "__repr__" not in cls.__dict__:
        cls.__repr__ = _repr
    compared = tuple(f.name for f in all_fields if f.compare)
    key = _key(compared)
    if eq and "__eq__" not in cls.__dict__:
        cls.__eq__ = _eq_for(key)
    if "__hash__" not in cls.__dict__ or cls.__dict__["__hash__"] is None:
        if eq and frozen:
            cls.__hash__ = lambda self: hash(key(self))
        elif eq:
            cls.__hash__ = None
    if frozen:
        cls.__setattr__ = _frozen_setattr
        cls.__delattr__ = _frozen_delattr
    return cls


def _key(names: tuple[str, ...]) -> Callable[[Any], tuple[Any, ...]]:
    """The compared fields' values as a tuple (attrgetter gives a bare value for one)."""
    if len(names) > 1:
        return attrgetter(*names)
    if not names:
        return lambda obj: ()
    get = attrgetter(names[0])
    return lambda obj: (get(obj),)


def _eq_for(key: Callable[[Any], Any]) -> Callable[[Any, Any], Any]:
    def __eq__(self: Any, other: Any) -> Any:
        if other.__class__ is self.__class__:
            return key(self) == key(other)
        return NotImplemented

    return __eq__


def _add_init(cls: Any, all_fields: tuple[Field, ...], set_each: bool) -> None:
    init_fields = [f for f in all_fields if f.init]
    names = tuple(f.name for f in init_fields)
    known = frozenset(names)
    defaults = {f.name: f.default for f in init_fields if f.default is not MISSING}
    factories = tuple(
        (f.name, f.default_factory) for f in init_fields if f.default_factory is not MISSING
    )
    required = tuple(
        f.name for f in init_fields if f.default is MISSING and f.default_factory is MISSING
    )
    # Fields not taken by __init__: their default (or factory) is set all the same.
    late = tuple((f.name, f.default, f.default_factory) for f in all_fields if not f.init)
    qualname = cls.__qualname__
    post_init = hasattr(cls, "__post_init__")

    def __init__(self: Any, *args: Any, **kwargs: Any) -> None:
        values = dict(defaults)
        if args:
            if len(args) > len(names):
                raise TypeError(
                    f"{qualname}.__init__() takes {len(names) + 1} positional arguments "
                    f"but {len(args) + 1} were given"
                )
            values.update(zip(names, args, strict=False))
        if kwargs:
            for name in kwargs:
                if name not in known:
                    raise TypeError(
                        f"{qualname}.__init__() got an unexpected keyword argument {name!r}"
                    )
                if args and names.index(name) < len(args):
                    raise TypeError(
                        f"{qualname}.__init__() got multiple values for argument {name!r}"
                    )
            values.update(kwargs)
        for name, factory in factories:
            if name not in values:
                values[name] = factory()
        for name in required:
            if name not in values:
                raise TypeError(
                    f"{qualname}.__init__() missing 1 required positional argument: {name!r}"
                )
        for name, default, factory in late:
            if default is not MISSING:
                values[name] = default
            elif factory is not MISSING:
                values[name] = factory()
        if set_each:
            for name, value in values.items():
                object.__setattr__(self, name, value)
        else:
            self.__dict__.update(values)
        if post_init:
            self.__post_init__()

    __init__.__qualname__ = f"{qualname}.__init__"
    cls.__init__ = __init__


def _repr(self: Any) -> str:
    shown = ", ".join(
        f"{f.name}={getattr(self, f.name)!r}" for f in getattr(self, _FIELDS) if f.repr
    )
    return f"{type(self).__qualname__}({shown})"


def _frozen_setattr(self: Any, name: str, value: Any) -> None:
    raise FrozenInstanceError(f"cannot assign to field {name!r}")


def _frozen_delattr(self: Any, name: str) -> None:
    raise FrozenInstanceError(f"cannot delete field {name!r}")


def is_dataclass(obj: Any) -> bool:
    """A class made by this `dataclass` (or one of its instances)."""
    return hasattr(obj, _FIELDS)


def fields(obj: Any) -> tuple[Field, ...]:
    """The fields of such a class or instance, in order."""
    try:
        return tuple(getattr(obj, _FIELDS))
    except AttributeError:
        raise TypeError("must be called with a plain_data class or instance") from None


def replace(obj: _T, /, **changes: Any) -> _T:
    """A new instance of `obj`'s class: its init fields, with `changes` applied."""
    for f in fields(obj):
        if not f.init and f.name in changes:
            raise ValueError(f"field {f.name} is declared with init=False, it cannot be replaced")
        if f.init and f.name not in changes:
            changes[f.name] = getattr(obj, f.name)
    return obj.__class__(**changes)
