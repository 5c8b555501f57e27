"""Deliberate type errors against the typed modules `object_python.stubgen` writes (see
stubs_usage.py): tests/test_stubgen.py runs mypy on this file and checks that it reports
an error of the code a line's `# error: CODE` comment names on that line, and none on
any other line. Never run."""

from __future__ import annotations

import object_python as op
from typed import stubt, testing, tour
from typed.tour import Add, Expr, IntImm, Var

IntImm(value="three")  # error: arg-type
Var(nam="x")  # error: call-arg
Add(lhs=Var(name="x"))  # error: call-arg
Var(name="x").nmae  # error: attr-defined
IntImm(value=1).value = 2  # error: misc
tour.add("one")  # error: arg-type
tour.add(1, z=2)  # error: call-arg
tour.eval(Var(name="x"), {"x": 1})  # error: dict-item
s: str = IntImm(value=1).value  # error: assignment
testing.Paint(color=testing.Color.Green, sign=1.5)  # error: arg-type
t: testing.Sign = testing.Paint(color=0, sign=1).color  # error: assignment
stubt.Circle(r="big")  # error: arg-type
stubt.Circle(r=1.0).scaled(k="twice")  # error: arg-type
vs: op.Array[str] = tour.Function(params=[], body=IntImm(value=1)).params  # error: assignment
tour.Function(params=[IntImm(value=1)], body=IntImm(value=1))  # error: list-item


@op.py_class("stubs_errors.Twice")
class Twice(Expr):
    arg: Expr


Twice(arg=1)  # error: arg-type
Twice(arg=IntImm(value=1)).arg = IntImm(value=2)  # error: misc
op.Map({"a": 1})["a"].upper()  # error: attr-defined
