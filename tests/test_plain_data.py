"""hello_tui.plain_data: the dataclass behaviour the engine's value classes rely on."""

from __future__ import annotations

import copy
import dataclasses

import pytest

from hello_tui import plain_data
from hello_tui.plain_data import dataclass, field


@dataclass
class Point:
    """A plain one."""

    x: int
    y: int = 0
    tags: list[str] = field(default_factory=list)
    note: str = field(default="", repr=False, compare=False)


@dataclass(frozen=True)
class Frozen:
    """A frozen one."""

    name: str
    size: int = 1


@dataclass(frozen=True, slots=True)
class Slotted:
    """A frozen one with slots and a derived field."""

    a: int
    b: list[int] = field(default_factory=list)
    total: int = field(init=False, default=0)

    def __post_init__(self) -> None:
        object.__setattr__(self, "total", self.a + sum(self.b))


@dataclass
class Child(Point):
    """Fields after its parent's."""

    z: int = 5


@dataclasses.dataclass
class StdPoint:
    """The standard library's, to compare with."""

    x: int
    y: int = 0
    tags: list[str] = dataclasses.field(default_factory=list)
    note: str = dataclasses.field(default="", repr=False, compare=False)


def test_init_takes_what_a_dataclass_takes():
    p = Point(1, tags=["a"])
    assert (p.x, p.y, p.tags, p.note) == (1, 0, ["a"], "")
    assert Point(1).tags is not Point(1).tags  # a fresh list each time
    assert Point.y == 0  # a plain default stays on the class, as with dataclasses
    for bad in (lambda: Point(), lambda: Point(1, 2, [], "", 5), lambda: Point(1, x=2)):
        with pytest.raises(TypeError):
            bad()
    with pytest.raises(TypeError, match="unexpected keyword argument 'w'"):
        Point(1, w=2)


def test_repr_eq_and_hash_match_the_standard_dataclass():
    p, s = Point(1, 2, ["t"], "n"), StdPoint(1, 2, ["t"], "n")
    assert repr(p).replace("Point", "X") == repr(s).replace("StdPoint", "X")
    assert Point(1, note="a") == Point(1, note="b")  # compare=False
    assert Point(1) != Point(2) and Point(1) != StdPoint(1)
    assert Point.__hash__ is None
    assert hash(Frozen("a")) == hash(Frozen("a")) and {Frozen("a"), Frozen("a")} == {Frozen("a")}


def test_frozen_instances_refuse_changes():
    f = Frozen("a")
    with pytest.raises(plain_data.FrozenInstanceError):
        f.name = "b"  # type: ignore[misc]
    with pytest.raises(AttributeError):
        del f.size  # type: ignore[misc]


def test_slots_post_init_and_init_false():
    s = Slotted(2, [3, 4])
    assert s.total == 9 and not hasattr(s, "__dict__") and Slotted.__slots__ == ("a", "b", "total")
    with pytest.raises(TypeError):
        Slotted(1, [], 3)  # type: ignore[call-arg]
    assert copy.copy(s) == s


def test_inheritance_fields_replace_and_is_dataclass():
    c = Child(1, z=7)
    assert [f.name for f in plain_data.fields(Child)] == ["x", "y", "tags", "note", "z"]
    assert (c.x, c.z) == (1, 7)
    moved = plain_data.replace(c, y=3)
    assert (moved.x, moved.y, moved.z) == (1, 3, 7) and type(moved) is Child
    assert plain_data.replace(Slotted(1, [1]), a=5).total == 6
    with pytest.raises(ValueError):
        plain_data.replace(Slotted(1), total=3)
    assert plain_data.is_dataclass(c) and plain_data.is_dataclass(Child)
    assert not plain_data.is_dataclass(StdPoint(1))
    f = plain_data.fields(Point)[1]
    assert f.default == 0 and f.default_factory is plain_data.MISSING
    c2 = copy.copy(c)
    assert c2 == c and c2 is not c
