"""Methods: one table per process, found along the type's ancestry (the nearest
ancestor with the name), visible from every language. Rust methods of Rust types called
here (``e.eval(env)``, ``Cls.make(...)``); Python methods of ``@py_class`` types called
by Rust (also from a thread without Python state) and by C (through the extension's
exported C API); C methods called here; methods registered after the class was made;
errors, both ways."""

import ctypes
import types

import pytest

import object_python as op

pytestmark = pytest.mark.skipif(not op._native._testing, reason="needs the testing build")

tour = op.namespace("tour")
g = op.get_global


@op.py_class("pym.Neg")
class Neg(tour.Expr):
    arg: tour.Expr

    def eval(self, env):
        # Through the table: the child's `eval` may be Rust's or Python's.
        return -op.call_method(self.arg, "eval", env)

    def fail(self):
        raise ZeroDivisionError("no")

    @staticmethod
    def of(value):
        return Neg(arg=tour.IntImm(value=value))

    def _private(self):
        return "not in the table"


@op.py_class("pym.Counter")
class Counter(op.Object):
    start: int = 0

    def plus(self, n):
        return self.start + n

    @classmethod
    def python_only(cls):
        return cls.__name__


@op.py_class("pym.Counter2")
class Counter2(Counter):
    def plus(self, n):
        return 100 + self.start + n


def test_rust_methods_of_rust_types():
    x = tour.Var(name="x")
    e = tour.Add(lhs=x, rhs=tour.IntImm(value=2))
    assert e.eval({x: 40}) == 42
    assert isinstance(e.eval, types.MethodType)
    assert e.describe() == "a Rust method of tour.Expr, on a tour.Add"
    # Static: through the class and through an object.
    seven = tour.IntImm.make(7)
    assert type(seven) is tour.IntImm and seven.value == 7
    assert seven.make(8).value == 8
    # An instance method through the class takes the object first.
    assert tour.Expr.eval(e, {x: 1}) == 3
    assert op.get_method(tour.IntImm, "eval") is not None
    assert set(op.methods(tour.Expr)) >= {"eval", "describe"}
    assert "eval" not in op.methods(tour.IntImm)
    with pytest.raises(AttributeError, match="no attribute 'nope'"):
        e.nope
    with pytest.raises(AttributeError, match="nope"):
        tour.Expr.nope
    assert not hasattr(e, "_type_private")
    with pytest.raises(ValueError, match="unbound"):
        e.eval({})


def test_a_python_type_finds_rust_methods_of_its_rust_ancestor():
    n = Neg(arg=tour.IntImm(value=5))
    assert n.describe() == "a Rust method of tour.Expr, on a pym.Neg"
    # Its own Python `eval` is nearer than `tour.Expr`'s.
    assert n.eval({}) == -5
    m = op._native._find_method(Neg, "eval")
    assert m[2] == Neg._type_index and m[1] is False
    assert op._native._find_method(Neg, "describe")[2] == tour.Expr._type_index


def test_rust_calls_python_methods():
    n = Neg(arg=Neg(arg=tour.IntImm(value=3)))
    # Rust's `call_method` (the method runs under the GIL the call kept).
    assert g("testing.call_method")(n, "eval", {}) == 3
    assert op.call_method(n, "eval", {}) == 3
    # From a thread Rust made, without Python state (the long-running call let the
    # GIL go; the thread takes it).
    assert g("testing.call_method_in_thread")(n, "eval", {}) == 3
    c = Counter(start=2)
    assert g("testing.call_method_in_thread")(c, "plus", 5) == 7
    # A static method registered from the class body.
    made = g("testing.call_method")(n, "of", 9)
    assert type(made) is Neg and made.arg.value == 9
    # The nearest type's method.
    assert g("testing.call_method")(Counter2(start=1), "plus", 1) == 102
    # Private and class methods stay Python's.
    assert op.get_method(Neg, "_private") is None
    assert op.get_method(Counter, "python_only") is None
    assert Counter.python_only() == "Counter"


def test_errors_cross_both_ways():
    n = Neg(arg=tour.IntImm(value=1))
    with pytest.raises(ZeroDivisionError) as first:
        g("testing.call_method")(n, "fail")
    with pytest.raises(ZeroDivisionError):
        g("testing.call_method_in_thread")(n, "fail")
    assert str(first.value) == "no"
    with pytest.raises(AttributeError, match="`pym.Neg` has no method `nope`"):
        g("testing.call_method")(n, "nope")
    with pytest.raises(TypeError):
        g("testing.call_method")(Counter(), "plus")  # a missing argument: Python's
    with pytest.raises(TypeError, match="argument"):
        tour.IntImm(value=1).eval()  # Rust's: a missing argument


def test_methods_registered_after_the_class_was_made():
    e = tour.Add(lhs=tour.IntImm(value=1), rhs=tour.IntImm(value=2))
    assert not hasattr(e, "doubled")

    @op.method(tour.Expr)
    def doubled(self, env):
        return 2 * self.eval(env)

    try:
        assert e.doubled({}) == 6, "found on an object made before"
        assert Neg(arg=e).doubled({}) == -6
        assert g("testing.call_method")(e, "doubled", {}) == 6
        with pytest.raises(KeyError, match="already has a method `doubled`"):
            op.register_method(tour.Expr, "doubled", doubled)
        op.register_method("tour.Expr", "doubled", lambda self, env: 0, override=True)
        assert e.doubled({}) == 0
        op.register_method(tour.IntImm._type_index, "zero", lambda: 0, static=True)
        assert tour.IntImm.zero() == 0 and tour.IntImm(value=4).zero() == 0
    finally:
        assert op.remove_method(tour.Expr, "doubled")
        assert op.remove_method(tour.IntImm, "zero")
    assert not op.remove_method(tour.Expr, "doubled")
    with pytest.raises(AttributeError):
        e.doubled
    with pytest.raises(TypeError, match="callable"):
        op.register_method(tour.Expr, "x", 3)
    with pytest.raises(TypeError, match="object class, a type key or a type index"):
        op.register_method(3.5, "x", len)


class ObjAny(ctypes.Structure):
    _fields_ = [("type_index", ctypes.c_uint32), ("small", ctypes.c_uint32), ("v", ctypes.c_int64)]


OBJ_KIND_INT, OBJ_KIND_FLOAT = 1, 3
OBJ_METHOD_INSTANCE, OBJ_METHOD_STATIC = 0, 1
CFUNC = ctypes.CFUNCTYPE(
    ctypes.c_int32, ctypes.c_void_p, ctypes.POINTER(ObjAny), ctypes.c_int32, ctypes.POINTER(ObjAny)
)


def c_api():
    lib = ctypes.CDLL(op.runtime()["extension"])
    lib.obj_method_get.argtypes = [
        ctypes.c_uint32, ctypes.c_char_p, ctypes.POINTER(ctypes.c_void_p),
        ctypes.POINTER(ctypes.c_int32),
    ]
    lib.obj_method_set.argtypes = [
        ctypes.c_uint32, ctypes.c_char_p, ctypes.c_void_p, ctypes.c_int32, ctypes.c_int32
    ]
    lib.obj_object_call_method.argtypes = [
        ctypes.c_void_p, ctypes.c_char_p, ctypes.POINTER(ObjAny), ctypes.c_int32,
        ctypes.POINTER(ObjAny),
    ]
    lib.obj_function_create.argtypes = [
        CFUNC, ctypes.c_void_p, ctypes.c_void_p, ctypes.c_char_p, ctypes.POINTER(ctypes.c_void_p)
    ]
    lib.obj_dec_ref.argtypes = [ctypes.c_void_p]
    lib.obj_error_take.argtypes = [ctypes.POINTER(ctypes.c_void_p)]
    return lib


def test_c_calls_python_and_rust_methods():
    lib = c_api()
    c = Counter(start=40)
    fn, kind = ctypes.c_void_p(), ctypes.c_int32(-1)
    assert lib.obj_method_get(Counter2._type_index, b"plus", ctypes.byref(fn), ctypes.byref(kind)) == 0
    assert fn.value and kind.value == OBJ_METHOD_INSTANCE
    assert lib.obj_dec_ref(fn) == 0
    arg, ret = ObjAny(OBJ_KIND_INT, 0, 2), ObjAny()
    assert lib.obj_object_call_method(c.address, b"plus", ctypes.byref(arg), 1, ctypes.byref(ret)) == 0
    assert (ret.type_index, ret.v) == (OBJ_KIND_INT, 42)
    # A Rust method of a Rust type, from C.
    e = tour.Add(lhs=tour.IntImm(value=1), rhs=tour.IntImm(value=2))
    env = op.Map({})
    env_arg = ObjAny(env.type_index, 0, env.address)
    assert lib.obj_object_call_method(e.address, b"eval", ctypes.byref(env_arg), 1, ctypes.byref(ret)) == 0
    assert ret.v == 3
    # None of that name: an error waiting, nothing written.
    assert lib.obj_object_call_method(c.address, b"nope", None, 0, ctypes.byref(ret)) != 0
    err = ctypes.c_void_p()
    assert lib.obj_error_take(ctypes.byref(err)) == 0 and err.value
    lib.obj_dec_ref(err)
    assert lib.obj_method_get(Counter._type_index, b"nope", ctypes.byref(fn), None) == 0
    assert not fn.value


def test_python_calls_c_methods():
    lib = c_api()
    calls = []

    @CFUNC
    def times_ten(ctx, args, n, ret):
        calls.append(n)
        start = op._native._testing and n  # (n is the count: self and one int)
        ret[0] = ObjAny(OBJ_KIND_INT, 0, args[1].v * 10 + start)
        return 0

    fn = ctypes.c_void_p()
    assert lib.obj_function_create(times_ten, None, None, b"times_ten", ctypes.byref(fn)) == 0
    try:
        assert lib.obj_method_set(Counter._type_index, b"times_ten", fn, OBJ_METHOD_INSTANCE, 0) == 0
        assert lib.obj_dec_ref(fn) == 0
        assert Counter(start=1).times_ten(4) == 42
        assert Counter2().times_ten(1) == 12, "found for the subtype"
        assert g("testing.call_method")(Counter(), "times_ten", 2) == 22
        assert calls == [2, 2, 2]
    finally:
        assert op.remove_method(Counter, "times_ten")
