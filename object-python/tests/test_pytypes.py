"""Types defined in Python (``@op.py_class``): fields of every kind, defaults, parents
(a Rust type, a Python-defined type), ``final``/``abstract``, positional and keyword
construction, read-only fields and ``replace``; the objects seen by Rust's reflection,
the printer, the JSON graph (saved here, loaded by Rust, and back), structural
equality and hashing, a Rust pass over a tree mixing Rust and Python node types, and
C's field table read through ctypes; registration errors.

The classes are made at import (a type lives for the process, and its methods'
functions with it: the leak check of each test starts after them)."""

import copy
import ctypes
import pickle
import typing
from typing import Any, Dict, List, Optional

import pytest

import object_python as op

pytestmark = pytest.mark.skipif(not op._native._testing, reason="needs the testing build")

tour = op.namespace("tour")
Color = op.enum_class("testing.Color") if op._native._testing else None
g = op.get_global


@op.py_class("pyt.Point")
class Point(op.Object):
    """A point with defaults."""

    x: int
    y: float = 0.5
    label: str = "p"

    def norm1(self):
        return abs(self.x) + abs(self.y)

    @property
    def doubled(self):
        return 2 * self.x

    @staticmethod
    def origin():
        return Point(0, 0.0)


@op.py_class("pyt.Every")
class Every(op.Object):
    b: bool
    i: int
    f: float
    s: str
    dt: op.DataType
    dev: op.Device
    anything: Any
    o: op.Object
    ints: list[int]
    floats: List[float]
    names: dict[str, int]
    points: Dict[str, Point]
    color: Color
    maybe_i: Optional[int] = None
    maybe_s: "str | None" = None
    maybe_p: Optional[Point] = None
    nxt: Optional["Every"] = None
    level: int = op.field(default=7, no_eq=True)
    kind: typing.ClassVar[str] = "not a field"


@op.py_class("pyt.Neg")
class Neg(tour.Expr):
    """A Python node under the Rust base `tour.Expr`."""

    arg: tour.Expr


@op.py_class("pyt.Scaled")
class Scaled(tour.BinOp):
    """A Python node under the Rust `tour.BinOp` (which has fields): its objects start
    with `BinOp`'s struct, so Rust reads `lhs` and `rhs` in place."""

    factor: int = 2
    note: str = ""


@op.py_class("pyt.Shape", abstract=True, slots=4)
class Shape(op.Object):
    name: str


@op.py_class("pyt.Circle", final=True)
class Circle(Shape):
    r: float


@op.py_class("pyt.LabelledCircle")
class Labelled(Shape):
    """A subtype of a Python-defined type: the parent's fields first."""

    label: str = "L"
    tags: list[str] = ["a", "b"]


def every(**changes):
    fields = dict(
        b=True, i=-3, f=2.5, s="a string long enough to be an object",
        dt=op.DataType("float32"), dev=op.Device("cpu"), anything=[1, "x"],
        o=tour.IntImm(value=4), ints=[1, 2, 3], floats=[1, 2.5], names={"a": 1},
        points={"p": Point(1)}, color="Green",
    )
    fields.update(changes)
    return Every(**fields)


def test_a_python_class_is_a_registered_type():
    assert Point._type_key == "pyt.Point" and Point.__name__ == "Point"
    assert Point.__doc__ == "A point with defaults."
    assert isinstance(Point, op.ObjectMeta)
    assert op.type_class("pyt.Point") is Point
    assert "pyt.Point" in op.type_keys()
    assert [f for f in ("x", "y", "label") if isinstance(Point.__dict__[f], op.Field)] == [
        "x", "y", "label"
    ]
    assert Point.x.type_key == "int" and Point.label.type_key == "ffi.String"
    assert op._native._field_types(Point._type_index) == {
        "x": "int", "y": "float", "label": "str"
    }
    assert op._native._field_types(Every._type_index)["points"] == "Map[str, pyt.Point]"
    assert op.namespace("pyt").Circle is Circle
    assert Every.kind == "not a field"


def test_construction_positional_and_by_keyword_with_defaults():
    p = Point(3)
    assert (p.x, p.y, p.label) == (3, 0.5, "p")
    q = Point(3, 4, label="q")
    assert (q.x, q.y, q.label) == (3, 4.0, "q") and type(q.y) is float
    assert Point(x=1, y=2.0).y == 2.0
    assert type(p) is Point and isinstance(p, op.Object)
    assert p.norm1() == 3.5 and p.doubled == 6
    assert Point.origin().x == 0
    with pytest.raises(TypeError, match="at most 3 positional values"):
        Point(1, 2.0, "l", 4)
    with pytest.raises(ValueError, match="missing field `x`"):
        Point()
    with pytest.raises(TypeError, match="field `x` of `pyt.Point`: expected int"):
        Point("three")
    with pytest.raises(ValueError, match="has no field `z`"):
        Point(1, z=2)
    # A Rust type is still built by keyword only.
    with pytest.raises(TypeError, match="built by keyword"):
        tour.IntImm(3)


def test_fields_of_every_kind():
    e = every()
    assert e.b is True and e.i == -3 and e.f == 2.5
    assert e.s == "a string long enough to be an object"
    assert str(e.dt) == "float32" and e.dev.device_type == 1
    assert list(e.anything) == [1, "x"]
    assert e.o.value == 4
    assert list(e.ints) == [1, 2, 3] and list(e.floats) == [1.0, 2.5]
    assert all(type(x) is float for x in e.floats), "ints in a list[float] are converted"
    assert dict(e.names) == {"a": 1} and e.points["p"].x == 1
    assert e.color is Color.Green and type(e.color) is Color
    assert e.maybe_i is None and e.maybe_s is None and e.maybe_p is None and e.nxt is None
    assert e.level == 7
    f = every(maybe_i=5, maybe_s="s", maybe_p=Point(2), nxt=e, color=Color.blue, level=1)
    assert (f.maybe_i, f.maybe_s, f.maybe_p.x, f.color) == (5, "s", 2, Color.blue)
    assert f.nxt.same_as(e)
    # Wrong values name the field.
    for bad, msg in [
        (dict(i="x"), "field `i` of `pyt.Every`: expected int"),
        (dict(o=3), "field `o`"),
        (dict(ints=[1, "two"]), r"Array\[int\] \(at 1: expected int"),
        (dict(names={"a": "b"}), r"Map\[str, int\]"),
        (dict(points={"p": tour.IntImm(value=1)}), "expected pyt.Point"),
        (dict(color="Purple"), '"Purple" is none of them'),
        (dict(maybe_p=tour.IntImm(value=1)), "expected pyt.Point, got tour.IntImm"),
        (dict(nxt=Point(1)), "expected pyt.Every, got pyt.Point"),
    ]:
        with pytest.raises(TypeError, match=msg):
            every(**bad)


def test_fields_are_read_only_and_replace_makes_a_copy():
    p = Point(1, 2.0)
    with pytest.raises(AttributeError, match="read-only"):
        p.x = 5
    with pytest.raises(AttributeError):
        p.extra = 1
    q = op.replace(p, x=5)
    assert (q.x, q.y, q.label) == (5, 2.0, "p") and type(q) is Point
    assert p.x == 1
    r = p.__replace__(label="r")  # `copy.replace` from Python 3.13 on
    assert r.label == "r" and r.x == 1
    if hasattr(copy, "replace"):
        assert copy.replace(p, y=9.0).y == 9.0
    with pytest.raises(TypeError, match="field `x`"):
        op.replace(p, x="no")
    with pytest.raises(ValueError, match="has no field `nope`"):
        op.replace(p, nope=1)
    # It works for Rust types too.
    assert op.replace(tour.IntImm(value=1), value=2).value == 2


def test_parents_final_and_abstract():
    c = Circle("c", 2)
    assert isinstance(c, Circle) and isinstance(c, Shape) and isinstance(c, op.Object)
    assert not isinstance(c, Labelled)
    assert (c.name, c.r) == ("c", 2.0)
    with pytest.raises(TypeError, match="abstract"):
        Shape(name="s")
    lab = Labelled("l")
    assert (lab.name, lab.label, list(lab.tags)) == ("l", "L", ["a", "b"])
    assert repr(lab) == 'pyt.LabelledCircle { name: "l", label: "L", tags: ["a", "b"] }'
    # The parent's cells are where the child's are.
    parent = {r[0]: r[3] for r in g("testing.field_table")("pyt.Shape")}
    child = {r[0]: r[3] for r in g("testing.field_table")("pyt.LabelledCircle")}
    assert child["name"] == parent["name"]
    with pytest.raises(ValueError, match="final"):
        @op.py_class("pyt.Ellipse")
        class Ellipse(Circle):
            e: float


def test_a_python_subclass_of_a_rust_type_keeps_its_layout():
    one, two = tour.IntImm(value=1), tour.IntImm(value=2)
    s = Scaled(lhs=one, rhs=two, factor=3, note="n")
    assert isinstance(s, tour.BinOp) and isinstance(s, tour.Expr)
    assert not isinstance(s, tour.Add)
    assert s.lhs.same_as(one) and s.factor == 3
    # Rust reads the BinOp part in place (`tour.print` downcasts to BinOp) and the
    # rest through reflection.
    assert g("tour.print")(s) == "(1 ? 2)"
    assert g("testing.get_attr")(s, "factor") == 3
    assert g("testing.get_attr")(s, "rhs").same_as(two)
    rows = g("testing.field_table")("pyt.Scaled")
    assert [r[0] for r in rows] == ["lhs", "rhs", "factor", "note"]
    assert rows[0][3] == 16 and rows[2][3] > rows[1][3]
    n = Neg(arg=s)
    assert repr(n) == (
        'pyt.Neg { arg: pyt.Scaled { lhs: tour.IntImm { value: 1 }, '
        'rhs: tour.IntImm { value: 2 }, factor: 3, note: "n" } }'
    )
    with pytest.raises(TypeError, match="expected tour.Expr, got pyt.Point"):
        Neg(arg=Point(1))


def test_rust_creates_python_types_by_key():
    p = g("testing.create")("pyt.Point", {"x": 4})
    assert type(p) is Point and (p.x, p.y) == (4, 0.5)
    with pytest.raises(ValueError, match="missing field `x`"):
        g("testing.create")("pyt.Point", {})


def test_the_printer_structural_equality_and_hashing():
    assert repr(Point(1)) == 'pyt.Point { x: 1, y: 0.5, label: "p" }'
    assert "color: Green" in repr(every())
    a, b = every(), every()
    assert a != b and op.structural_equal(a, b)
    assert op.structural_hash(a) == op.structural_hash(b)
    assert op.structural_equal(every(level=1), every(level=2)), "`level` is no_eq"
    assert not op.structural_equal(every(i=1), every(i=2))
    assert op.first_mismatch(every(i=1), every(i=2)) == ("<root>.i", "<root>.i")
    assert op.first_mismatch(every(ints=[1]), every(ints=[2]))[0] == "<root>.ints[0]"


def test_json_graph_saved_here_loaded_by_rust_and_back():
    tree = Neg(arg=Scaled(lhs=tour.IntImm(value=1), rhs=Neg(arg=tour.IntImm(value=2))))
    e = every(nxt=every(), maybe_p=Point(5))
    for value in (tree, e, [tree, tree]):
        text = op.save_json_graph(value)
        loaded = g("testing.from_json")(text)  # Rust's loader
        assert op.structural_equal(loaded, value)
        again = op.load_json_graph(g("testing.to_json")(loaded))  # Rust's saver
        assert op.structural_equal(again, value)
    assert '"type":"pyt.Neg"' in op.save_json_graph(tree)
    loaded = g("testing.from_json")(op.save_json_graph(tree))
    assert type(loaded) is Neg and type(loaded.arg) is Scaled
    shared = op.load_json_graph(op.save_json_graph([tree, tree]))
    assert shared[0].same_as(shared[1])
    # Pickle goes through the same graph.
    back = pickle.loads(pickle.dumps(e))
    assert type(back) is Every and op.structural_equal(back, e)
    assert back.color is Color.Green and back.level == 7
    assert copy.deepcopy(Point(2)).x == 2


def test_a_rust_pass_rewrites_a_tree_mixing_rust_and_python_nodes():
    inner = Neg(arg=tour.IntImm(value=3))
    tree = tour.Add(
        lhs=Neg(arg=tour.IntImm(value=1)),
        rhs=Scaled(lhs=tour.IntImm(value=2), rhs=inner, factor=4, note="n"),
    )
    out = g("testing.bump_ints")(tree)
    assert repr(out) == (
        "tour.Add { lhs: pyt.Neg { arg: tour.IntImm { value: 2 } }, rhs: pyt.Scaled { lhs: "
        'tour.IntImm { value: 3 }, rhs: pyt.Neg { arg: tour.IntImm { value: 4 } }, '
        'factor: 4, note: "n" } }'
    )
    assert type(out.lhs) is Neg and type(out.rhs) is Scaled and type(out.rhs.rhs) is Neg
    assert not out.rhs.rhs.same_as(inner)
    assert tree.lhs.arg.value == 1, "the original is unchanged"
    # Nothing to change: the same tree back.
    plain = Neg(arg=tour.Var(name="x"))
    assert g("testing.bump_ints")(plain).same_as(plain)


def test_deep_trees_of_python_nodes():
    e = tour.IntImm(value=0)
    for _ in range(20000):
        e = Neg(arg=e)
    assert op.structural_equal(e, op.load_json_graph(op.save_json_graph(e)))
    assert repr(e).startswith("pyt.Neg { arg: pyt.Neg")
    out = g("testing.bump_ints")(e)
    assert type(out) is Neg


OBJ_FIELD_OPTIONAL, OBJ_FIELD_HAS_DEFAULT, OBJ_FIELD_ANY_LAYOUT = 8, 32, 64
OBJ_FIELD_C_READABLE, OBJ_LAYOUT_FIELDS = 256, 3


class ObjStr(ctypes.Structure):
    _fields_ = [("data", ctypes.c_void_p), ("len", ctypes.c_size_t)]

    def text(self):
        return ctypes.string_at(self.data, self.len).decode()


class ObjFieldInfo(ctypes.Structure):
    _fields_ = [
        ("name", ObjStr), ("offset", ctypes.c_uint64), ("size", ctypes.c_uint32),
        ("kind", ctypes.c_uint32), ("flags", ctypes.c_uint32),
        ("static_type_index", ctypes.c_uint32), ("static_type_key", ObjStr),
        ("rust_type", ObjStr),
    ]


class ObjTypeLayout(ctypes.Structure):
    _fields_ = [
        ("size", ctypes.c_uint64), ("align", ctypes.c_uint32), ("owner", ctypes.c_uint32),
        ("fields_fingerprint", ctypes.c_uint64), ("object_size", ctypes.c_uint64),
        ("rust_index", ctypes.c_uint32), ("reserved", ctypes.c_uint32),
    ]


def c_fields(index):
    capi = ctypes.CDLL(op.runtime()["extension"])
    rows, n = ctypes.POINTER(ObjFieldInfo)(), ctypes.c_size_t()
    assert capi.obj_type_fields(ctypes.c_uint32(index), ctypes.byref(rows), ctypes.byref(n)) == 0
    return capi, {rows[i].name.text(): rows[i] for i in range(n.value)}


def test_c_reads_the_field_table_and_the_cells_in_place():
    capi, rows = c_fields(Point._type_index)
    assert list(rows) == ["x", "y", "label"]
    assert [r.offset for r in rows.values()] == [
        r[3] for r in g("testing.field_table")("pyt.Point")
    ]
    x, y, label = rows["x"], rows["y"], rows["label"]
    assert x.size == 8 and x.flags & OBJ_FIELD_C_READABLE and x.static_type_key.text() == "int"
    assert y.flags & OBJ_FIELD_HAS_DEFAULT and label.flags & OBJ_FIELD_ANY_LAYOUT
    p = Point(-7, 1.25)
    assert ctypes.c_int64.from_address(p.address + x.offset).value == -7
    assert ctypes.c_double.from_address(p.address + y.offset).value == 1.25
    # Optional and object fields; the layout C sees.
    _, rows = c_fields(Every._type_index)
    assert rows["maybe_p"].flags & OBJ_FIELD_OPTIONAL and rows["maybe_p"].size == 8
    assert rows["maybe_p"].static_type_index == Point._type_index
    assert rows["color"].size == 1, "a repr(u8) enum, stored as its repr"
    e = every(maybe_p=Point(1))
    assert ctypes.c_void_p.from_address(e.address + rows["maybe_p"].offset).value == e.maybe_p.address
    assert ctypes.c_uint8.from_address(e.address + rows["color"].offset).value == 5
    layout = ObjTypeLayout()
    assert capi.obj_type_layout(ctypes.c_uint32(Scaled._type_index), ctypes.byref(layout)) == 0
    assert layout.owner == OBJ_LAYOUT_FIELDS
    assert layout.rust_index == tour.BinOp._type_index and layout.size == 32
    assert layout.object_size > layout.size


def test_registering_again_and_registration_errors():
    # The same body again: the same type and class.
    @op.py_class("pyt.Point")
    class Point2(op.Object):
        x: int
        y: float = 0.5
        label: str = "p"

    assert Point2 is Point
    # Other fields under the same key: refused, naming both.
    with pytest.raises(ValueError, match="already registered"):
        @op.py_class("pyt.Point")
        class Point3(op.Object):
            x: float

    def refused(match, exc=TypeError):
        return pytest.raises(exc, match=match)

    with refused("not a field type"):
        @op.py_class("pyt.bad.Tuple")
        class T1(op.Object):
            t: tuple

    with refused("only `Optional"):
        @op.py_class("pyt.bad.Union")
        class T2(op.Object):
            u: typing.Union[int, str]

    with refused("not a Rust enum"):
        import enum

        class Plain(enum.IntEnum):
            A = 1

        @op.py_class("pyt.bad.Enum")
        class T3(op.Object):
            e: Plain

    with refused("the name is taken"):
        @op.py_class("pyt.bad.Shadow")
        class T4(tour.BinOp):
            lhs: int

    with refused("its default does not fit"):
        @op.py_class("pyt.bad.Default")
        class T5(op.Object):
            n: int = "x"

    with refused("define no `__init__`"):
        @op.py_class("pyt.bad.Init")
        class T6(op.Object):
            def __init__(self):
                pass

    with refused("exactly one object class"):
        @op.py_class("pyt.bad.Base")
        class T7:
            n: int

    with refused("built-in"):
        @op.py_class("pyt.bad.Array")
        class T8(op.Array):
            n: int

    with refused("abstract and final"):
        @op.py_class("pyt.bad.Both", abstract=True, final=True)
        class T9(op.Object):
            n: int

    with refused("`lhs` is a field and also defined"):
        @op.py_class("pyt.bad.Method")
        class T10(tour.BinOp):
            def lhs(self):
                return 0

    class Helper(tour.Expr):  # a plain Python subclass: not a type of its own
        pass

    with refused("not a registered type's class"):
        @op.py_class("pyt.bad.Helper")
        class T11(Helper):
            n: int

    # Nothing was registered by the refusals.
    assert not [k for k in op.type_keys() if k.startswith("pyt.bad.")]


def test_a_type_defined_in_a_test_without_methods():
    @op.py_class("pyt.Local")
    class Local(op.Object):
        n: int
        node: Optional["Local"] = None

    chain = Local(1, Local(2))
    assert chain.node.n == 2 and type(chain.node) is Local
    with pytest.raises(TypeError, match="expected pyt.Local, got pyt.Point"):
        Local(1, Point(1))
