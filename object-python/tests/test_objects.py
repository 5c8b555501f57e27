import collections.abc
import copy
import pickle
import re
import sys
import weakref

import pytest

import object_python as op


def test_classes_follow_the_registry(tour):
    assert tour.Add.__mro__[:4] == (tour.Add, tour.BinOp, tour.Expr, op.Object)
    assert issubclass(tour.IntImm, tour.Expr)
    assert op.type_class("tour.Add") is tour.Add
    assert tour.Add._type_key == "tour.Add"
    assert op.Array is op.type_class("ffi.Array")
    assert issubclass(op.Array, op.ArrayBase) and issubclass(op.Array, op.Object)


def test_isinstance_is_the_registry_check(tour):
    x = tour.Var(name="x")
    e = tour.Add(lhs=x, rhs=tour.IntImm(value=3))
    assert type(e) is tour.Add
    assert isinstance(e, tour.BinOp) and isinstance(e, tour.Expr) and isinstance(e, op.Object)
    assert not isinstance(e, tour.Mul) and not isinstance(x, tour.BinOp)
    assert op._native._is_instance(e, tour.BinOp._type_index)
    assert not isinstance(3, tour.Expr)


def _assign_class_every_way(o, cls):
    """Tries each way of assigning ``o.__class__``; all must raise TypeError."""
    name = re.escape(type(o).__qualname__)
    with pytest.raises(TypeError, match=rf"`{name}`.* to `{re.escape(cls.__qualname__)}`"):
        o.__class__ = cls
    with pytest.raises(TypeError, match=rf"`{name}`"):
        setattr(o, "__class__", cls)
    with pytest.raises(TypeError, match=rf"`{name}`"):
        object.__setattr__(o, "__class__", cls)


def test_the_class_of_an_object_cannot_be_assigned(tour):
    import numpy as np

    x = tour.Var(name="x")
    # Each of these layouts CPython would accept: `x` would become an IntImm.
    for cls in (tour.IntImm, tour.Add, op.Object, tour.Var):
        _assign_class_every_way(x, cls)
    with pytest.raises(TypeError, match="a `int` value"):
        x.__class__ = 3
    with pytest.raises(TypeError, match="cannot delete the class of a `tour.Var`"):
        del x.__class__
    assert type(x) is tour.Var and x.__class__ is tour.Var and x.name == "x"
    assert isinstance(x, tour.Var) and isinstance(x, tour.Expr)
    assert not isinstance(x, tour.IntImm) and not op._native._is_instance(x, tour.IntImm._type_index)

    # `Object` itself, containers, functions, tensors.
    others = [
        op.Object(),
        op.Array([1]),
        op.Map({"a": 1}),
        op.Shape([2, 3]),
        op.as_function(lambda: 1),
        op.from_dlpack(np.arange(3)),
        tour.IntImm(value=1),
    ]
    for o in others:
        before = type(o)
        for cls in (tour.Var, op.Object, before):
            _assign_class_every_way(o, cls)
        assert type(o) is before and o.__class__ is before
        assert not isinstance(o, tour.Var)


def test_python_subclasses_cannot_be_reclassed_either(tour):
    class MyVar(tour.Var):
        pass

    class MyImm(tour.IntImm):
        pass

    class SlotVar(tour.Var):
        __slots__ = ()

    class SlotImm(tour.IntImm):
        __slots__ = ()

    m, s = MyVar(name="m"), SlotVar(name="s")
    for o, targets in ((m, (MyImm, tour.IntImm, tour.Var)), (s, (SlotImm, tour.IntImm, tour.Var))):
        for cls in targets:
            _assign_class_every_way(o, cls)
    # A `__class__` in the instance's dict changes nothing either.
    m.__dict__["__class__"] = MyImm
    assert type(m) is MyVar and m.__class__ is MyVar and type(s) is SlotVar
    assert not isinstance(m, tour.IntImm) and not isinstance(s, tour.IntImm)
    assert isinstance(m, tour.Var) and m.name == "m"
    # A subclass's own attributes are still set as usual.
    m.note = 1
    del m.note


def test_types_registered_later_get_classes(tour):
    Neg = op.register_type("pytest.Pow", "tour.BinOp")
    assert Neg.__mro__[1] is tour.BinOp
    assert op.register_type("pytest.Pow", "tour.BinOp") is Neg  # idempotent
    n = Neg(lhs=tour.IntImm(value=2), rhs=tour.IntImm(value=5))
    assert type(n) is Neg and isinstance(n, tour.BinOp) and not isinstance(n, tour.Add)
    assert n.lhs.value == 2
    assert "pytest.Pow" in op.type_keys()
    with pytest.raises(ValueError):
        op.register_type("pytest.Bad", "tour.Add")  # a final parent


def test_fields_are_read_only_attributes(tour):
    x = tour.Var(name="x")
    e = tour.Mul(lhs=x, rhs=tour.IntImm(value=7))
    assert e.lhs == x and e.rhs.value == 7 and x.name == "x"
    # Read in place: integers at both ends and negative ones, inline and object strings.
    for v in [0, -3, 2**63 - 1, -(2**63)]:
        assert tour.IntImm(value=v).value == v
    long = "a name longer than seven bytes"
    assert tour.Var(name=long).name == long
    assert {"lhs", "rhs", "type_key"} <= set(dir(e))
    assert isinstance(tour.Add.lhs, op.Field) and tour.Add.lhs.name == "lhs"
    with pytest.raises(AttributeError, match="read-only"):
        e.lhs = x
    with pytest.raises(AttributeError, match="read-only"):
        del e.rhs
    with pytest.raises(AttributeError):
        e.nope
    with pytest.raises(AttributeError):
        e.other = 1  # no __dict__


def test_repr_is_the_printer(tour):
    x = tour.Var(name="x")
    e = tour.Add(lhs=x, rhs=x)
    assert repr(e) == 'tour.Add { lhs: tour.Var #1 { name: "x" }, rhs: #1 }'
    assert op.get_global("tour.print")(e) == "(x + x)"


def test_keyword_construction_errors(tour):
    with pytest.raises(Exception) as missing:
        tour.Var()
    assert str(missing.value) == "missing field `name` (ffi.String) of `tour.Var`"
    with pytest.raises(Exception) as extra:
        tour.Var(name="x", nope=1)
    assert "nope" in str(extra.value)
    with pytest.raises(TypeError) as wrong:
        tour.IntImm(value="three")
    assert "value" in str(wrong.value)
    with pytest.raises(TypeError, match="by keyword"):
        tour.Var("x")


def test_construction_by_vectorcall_and_by_type_call_agree(tour):
    """`cls(...)` takes the class's vectorcall entry (no argument tuple, no keyword
    dict); `type.__call__(cls, ...)` takes `__new__`. Same objects, same errors."""
    assert type(tour.Var).__flags__ & (1 << 11)  # ObjectMeta: Py_TPFLAGS_HAVE_VECTORCALL
    for make in (tour.Add, lambda **kw: type.__call__(tour.Add, **kw)):
        x = tour.Var(name="x")
        e = make(lhs=x, rhs=tour.IntImm(value=2))
        assert type(e) is tour.Add and e.lhs == x and e.rhs.value == 2
    for make in (tour.Var, lambda *a, **kw: type.__call__(tour.Var, *a, **kw)):
        with pytest.raises(Exception, match=r"missing field `name` \(ffi.String\) of `tour.Var`"):
            make()
        with pytest.raises(Exception, match="nope"):
            make(name="x", nope=1)
        with pytest.raises(TypeError, match="by keyword"):
            make("x")
        with pytest.raises(TypeError, match="by keyword"):
            make("x", name="x")
    # Nine keywords: past the inline arrays (the extra ones are refused by name).
    with pytest.raises(Exception, match="has no field `k1`"):
        tour.Var(name="x", **{f"k{i}": i for i in range(1, 9)})


def test_a_class_builds_the_type_it_was_made_for(tour):
    """A generated class finds its registered type by its own address, not by reading
    `_type_index` on each call: rebinding that attribute changes neither path."""
    cls = op.register_type("pytest.Fixed", "tour.BinOp")
    two, five = tour.IntImm(value=2), tour.IntImm(value=5)
    own = cls._type_index
    cls._type_index = tour.Add._type_index
    try:
        for make in (cls, lambda **kw: type.__call__(cls, **kw)):
            made = make(lhs=two, rhs=five)
            assert type(made) is cls and made.type_key == "pytest.Fixed"
            assert made.type_index == own and made.lhs == two and made.rhs == five
    finally:
        cls._type_index = own


def test_construction_honours_replaced_init_and_python_subclasses(tour):
    """A class whose `__init__` a user set is constructed as `type.__call__` would (the
    vectorcall entry steps aside); a Python subclass of a generated class is built as
    itself."""
    cls = op.register_type("pytest.InitHook")
    calls = []
    cls.__init__ = lambda self, **kw: calls.append(sorted(kw))
    obj = cls()
    assert type(obj) is cls and calls == [[]]
    # Wrapping an object Rust hands back calls the class as well, `__init__` included.
    again = op.Array([obj])[0]
    assert type(again) is cls and again == obj and calls == [[], []]
    del cls.__init__
    cls()
    again = op.Array([obj])[0]  # the plain class again: made directly
    assert type(again) is cls and again == obj and calls == [[], []]

    class Meta(type):
        pass

    with pytest.raises(TypeError, match="set once"):
        op._native._set_metaclass(Meta)  # the metaclass in use stays the only one
    with pytest.raises(TypeError, match="derive from `type`"):
        op._native._set_metaclass(int)

    class Mine(tour.IntImm):
        __slots__ = ()

    m = Mine(value=5)
    assert type(m) is Mine and m.value == 5 and isinstance(m, tour.IntImm)


def test_identity_equality_hash_and_weakref(tour):
    x = tour.Var(name="x")
    y = tour.Var(name="x")
    e = tour.Add(lhs=x, rhs=x)
    assert e.lhs == e.rhs and e.lhs is not e.rhs  # two wrappers, one object
    assert e.lhs == x and x != y
    assert hash(e.lhs) == hash(x)
    assert len({x, e.lhs, y}) == 2
    r = weakref.ref(x)
    assert r() is x
    del x
    assert r() is None


def test_pickle_and_copy_through_the_json_graph(tour):
    x = tour.Var(name="x")
    e = tour.Add(lhs=x, rhs=tour.Mul(lhs=x, rhs=tour.IntImm(value=2)))
    back = pickle.loads(pickle.dumps(e))
    assert back != e and repr(back) == repr(e)
    assert back.lhs == back.rhs.lhs  # sharing preserved
    assert repr(copy.deepcopy(e)) == repr(e)


def test_deep_graphs_do_not_recurse(tour):
    e = tour.IntImm(value=0)
    one = tour.IntImm(value=1)
    for _ in range(20000):
        e = tour.Add(lhs=e, rhs=one)
    back = pickle.loads(pickle.dumps(e))
    assert type(back) is tour.Add and back.rhs == back.rhs
    assert repr(back).startswith("tour.Add")


def test_wrapping_does_not_leak_references(tour):
    x = tour.Var(name="x")
    e = tour.Add(lhs=x, rhs=x)
    r = weakref.ref(e.lhs)
    assert r() is None  # the wrapper went with its last reference
    name = x.name
    before = sys.getrefcount(name)
    for _ in range(100):
        e.lhs.name
    assert sys.getrefcount(name) == before
    before = (sys.getrefcount(tour.Var), sys.getrefcount(tour.Add), sys.getrefcount(op.Array))
    for _ in range(100):
        e.lhs
        tour.Add(lhs=x, rhs=x)
        op.Array([1])
    assert (sys.getrefcount(tour.Var), sys.getrefcount(tour.Add), sys.getrefcount(op.Array)) == before
    assert isinstance(op.Array([1]), collections.abc.Sequence)
