"""Code that uses the typed modules `object_python.stubgen` writes for the test build's
namespaces (`tour`, `testing`, and `stubt`, which tests/test_stubgen.py defines), as
the package `typed`: `mypy --strict` must pass on it, and it runs (both done by
tests/test_stubgen.py, with the generated modules on the path)."""

from __future__ import annotations

import object_python as op
from typed import stubt, testing, tour
from typed.stubt.inner import Deep
from typed.tour import Add, Expr, IntImm, Var

# Classes by keyword, fields read with their types, isinstance narrowing.
x = Var(name="x")
e = Add(lhs=x, rhs=IntImm(value=3))
lhs: Expr = e.lhs
assert lhs == x and isinstance(lhs, Var) and lhs.name == "x"
rhs = e.rhs
assert isinstance(rhs, IntImm) and rhs.value + 1 == 4
fn = tour.Function(params=[x], body=e)  # a list where an Array is asked
params: op.Array[Var] = fn.params
assert [p.name for p in params] == ["x"] and params[0] == x

# Global functions with their signatures; methods, static methods.
assert tour.add(1) == 2 and tour.add(1, y=5) == 6
assert tour.eval(e, {x: 4}) == 7
assert e.eval({x: 1}) == 4
assert IntImm.make(5).value == 5
assert testing.add(2, 3) == 5 and testing.raise_ == op.get_global("testing.raise")
text: str | None = testing.error_kind(lambda: None)
assert text is None

# Enums: members, names and values; optional and defaulted fields.
paint = testing.Paint(color=testing.Color.Green, sign="Minus")
color: testing.Color = paint.color
assert color is testing.Color.Green and paint.sign is testing.Sign.Minus
assert paint.accent is None and paint.under is testing.Color.Red

# Types defined in Python, their methods (signatures from the class body).
c = stubt.Circle("disc", r=2.0, tags=["a"], weights={"w": 1})
area: float = c.scaled(k=3.0)
assert area == 6.0 and c.scaled() == 4.0
assert c.tags[0] == "a" and c.weights["w"] == 1 and c.center is None
assert c.color is testing.Color.Green and list(c.sizes) == []
u: stubt.Circle = stubt.Circle.unit()
assert u.r == 1.0 and u.name == "shape"
deep = Deep(c, anything=[1, 2])
assert deep.circle.r == 2.0

# A @py_class under a generated class: checked as a dataclass, read-only fields.


@op.py_class("stubs_usage.Neg")
class Neg(Expr):
    arg: Expr
    note: str | None = None

    def depth(self) -> int:
        return 1


n = Neg(arg=e)
assert n.note is None and n.arg == e and n.depth() == 1
assert op.replace(n, note="hi").note == "hi"

# The package's own API.
m: op.Map[str, int] = op.Map({"a": 1})
assert m["a"] == 1 and m.get("b") is None and list(m.keys()) == ["a"]
arr: op.Array[int] = op.Array([1, 2, 3])
assert arr[1:] == [2, 3] and arr.index(3) == 2 and 2 in arr
shape = op.Shape([2, 3])
assert shape[0] * shape[1] == 6
f = op.get_global("tour.add")
assert f is not None and f(2, y=2) == 4
assert op.structural_equal(e, e) and isinstance(op.structural_hash(e), int)
assert op.first_mismatch(e, e) is None
dev = op.Device("cpu", 0)
assert dev.device_id == 0 and op.DataType("float32").bits == 32
