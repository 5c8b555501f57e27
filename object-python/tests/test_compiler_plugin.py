"""A compiler shipped to Python through a plugin: the front-end example
(``object-examples/plugin``, the crate ``object-frontend-plugin``) loaded with
``load_module``. Its IR's types become classes and its functions the module's and the
process's globals; the flow a compiler's users follow: parse a program, read its nodes'
fields, run a pass by name, print, save and load.

``OBJECT_FRONTEND_PLUGIN`` names the plugin's library (built by ``scripts/python.sh``
with the extension's profile and compiler, from the same tree: adoption requires it);
without it the tests are skipped outside CI and fail in CI.
"""

import os
import pathlib
import re

import pytest

import object_python as op

PLUGIN = os.environ.get("OBJECT_FRONTEND_PLUGIN")
if PLUGIN is None:
    if os.environ.get("CI"):
        raise RuntimeError("OBJECT_FRONTEND_PLUGIN is not set: scripts/python.sh sets it in CI")
    print("SKIPPED test_compiler_plugin.py: OBJECT_FRONTEND_PLUGIN names no plugin library")
pytestmark = pytest.mark.skipif(PLUGIN is None, reason="OBJECT_FRONTEND_PLUGIN is not set")

# The front-end's types the process knew before the plugin came: none, since the
# extension links object-examples for the tour's types only.
KNOWN_BEFORE = sorted(k for k in op.type_keys() if k.startswith("frontend."))

# Loaded once before the tests: the load registers the plugin's globals and types,
# which live for the process, so the leak checks around each test start after it.
fe = op.load_module(PLUGIN) if PLUGIN is not None else None

PROGRAM = """
(fn demo (n m)
  (let k (* 4 (+ 2 3))                          ; folds to 20, substituted
    (seq
      (store out (+ n k) (/ m 0))               ; division by zero: not folded
      (let unused (+ n 1)                       ; never used: removed
        (eval (+ (* (+ n m) k) (* (+ n m) k)))))))  ; repeated: CSE
"""

STAGES = {
    "fold_constants": "(fn demo (n m) (seq (store out (+ n 20) (/ m 0)) "
    "(let unused (+ n 1) (eval (+ (* (+ n m) 20) (* (+ n m) 20))))))",
    "cse": "(fn demo (n m) (seq (store out (+ n 20) (/ m 0)) "
    "(let unused (+ n 1) (eval (let _t0 (+ n m) (let _t1 (* _t0 20) (+ _t1 _t1)))))))",
    "eliminate_dead_lets": "(fn demo (n m) (seq (store out (+ n 20) (/ m 0)) "
    "(eval (let _t0 (+ n m) (let _t1 (* _t0 20) (+ _t1 _t1))))))",
}


def ns():
    return op.namespace("frontend")


def test_the_types_come_from_the_plugin():
    assert KNOWN_BEFORE == [], "the extension itself ships no front-end types"
    keys = set(op.type_keys())
    assert {"frontend.Expr", "frontend.Binary", "frontend.TensorImm", "frontend.Function"} <= keys
    assert "frontend.Add" not in keys  # one node type for every operator
    assert "frontend.BinOpKind" in op.enum_keys()
    assert isinstance(fe, op.Module)
    assert fe.name == "frontend"
    assert fe.functions() == sorted(
        ["from_json", "generate", "parse", "passes", "print", "run_pass", "to_json"]
    )
    assert fe.imports == []
    assert "parse" in fe and "no_such" not in fe
    # The module's functions are the globals (the same objects: `==` is identity).
    assert fe["parse"] == fe.parse == op.get_global("frontend.parse")
    # Loading again gives the same library and the same functions.
    assert op.load_module(PLUGIN).run_pass == fe.run_pass
    with pytest.raises(KeyError):
        fe["no_such"]
    with pytest.raises(AttributeError):
        fe.no_such


def test_parse_read_fields_run_passes_print_save_and_load(tmp_path):
    f = fe.parse(PROGRAM)
    t = ns()
    assert type(f) is t.Function and f.name == "demo"
    assert [p.name for p in f.params] == ["n", "m"]
    assert "frontend.Function" in repr(f)

    # Fields by name; the classes stand under the front-end's bases.
    body = f.body
    assert type(body) is t.LetStmt and isinstance(body, t.Stmt) and not isinstance(body, t.Expr)
    k = body.value
    assert type(k).__mro__[:3] == (t.Binary, t.Expr, op.Object)
    assert isinstance(k, t.Expr) and isinstance(k, op.Object)
    # The operator is an enum field: an IntEnum member.
    BinOpKind = op.enum_class("frontend.BinOpKind")
    assert t.BinOpKind is BinOpKind and t.Binary.op.enum is BinOpKind
    assert k.op is BinOpKind.Mul and k.op.name == "Mul"
    assert k.lhs.value == 4 and type(k.rhs) is t.Binary and k.rhs.op is BinOpKind.Add
    store = body.body.seq[0]
    assert type(store) is t.Store and store.buffer == "out"
    assert store.index.lhs == f.params[0]  # a use of a variable is its binder (identity)

    # Printing a program, and any node of it.
    assert fe.print(k) == "(* 4 (+ 2 3))"
    assert fe.print(store) == "(store out (+ n k) (/ m 0))"

    # The passes by name, in pipeline order.
    assert list(fe.passes()) == list(STAGES)
    g = f
    for name, want in STAGES.items():
        g = fe.run_pass(name, g)
        assert fe.print(g) == want, name
    assert fe.run_pass("fold_constants", g) == g  # nothing to do: the very same program
    assert op.structural_equal(fe.parse(fe.print(g)), g)

    # Saved and loaded: by the plugin, and by object_python's own JSON graph helpers
    # (the same format), through a file too.
    back = fe.from_json(fe.to_json(g))
    assert back != g and op.structural_equal(back, g)
    assert fe.print(back) == fe.print(g)
    assert op.structural_equal(op.load_json_graph(fe.to_json(g)), g)
    assert op.structural_equal(fe.from_json(op.save_json_graph(g)), g)
    path = tmp_path / "demo.json"
    op.save(g, path)
    assert fe.print(op.load(path)) == STAGES["eliminate_dead_lets"]


def test_programs_compare_up_to_renaming():
    a = fe.parse("(fn f (x) (eval (let y (* x x) (+ y 1))))")
    b = fe.parse("(fn f (z) (eval (let w (* z z) (+ w 1))))")
    c = fe.parse("(fn f (z) (eval (let w (* z z) (+ w 2))))")
    assert a != b and op.structural_equal(a, b)
    assert op.structural_hash(a) == op.structural_hash(b)
    assert not op.structural_equal(a, c)
    assert op.first_mismatch(a, c) is not None


def test_a_program_built_in_python_goes_through_the_passes():
    t = ns()
    x = t.Var(name="x")
    # The operator by member, by name or by value.
    six = t.Binary(op=t.BinOpKind.Mul, lhs=t.IntImm(value=2), rhs=t.IntImm(value=3))
    body = t.Evaluate(value=t.Binary(op="Add", lhs=six, rhs=x))
    f = t.Function(name="h", params=[x], body=body)
    assert fe.print(f) == "(fn h (x) (eval (+ (* 2 3) x)))"
    assert fe.print(fe.run_pass("fold_constants", f)) == "(fn h (x) (eval (+ 6 x)))"
    assert op.structural_equal(f, fe.parse("(fn h (y) (eval (+ (* 2 3) y)))"))
    assert not op.structural_equal(f, fe.parse("(fn h (y) (eval (- (* 2 3) y)))"))
    lt = t.Binary(op=int(t.BinOpKind.Lt), lhs=x, rhs=x)
    assert lt.op is t.BinOpKind.Lt and fe.print(lt) == "(< x x)"


def test_tensor_constants():
    t = ns()
    f = fe.parse("(fn f (x) (eval (call g (tensor (2 2) 1 0.5 -2 0.25) x)))")
    tensor = f.body.value.args[0]
    assert type(tensor) is t.TensorImm
    assert fe.print(tensor) == "(tensor (2 2) 1 0.5 -2 0.25)"
    back = fe.from_json(fe.to_json(f))
    assert op.structural_equal(back, f) and fe.print(back) == fe.print(f)


def test_the_globals_are_the_module_functions():
    names = set(op.list_globals())
    assert {f"frontend.{n}" for n in fe.functions()} <= names
    parse, print_ = op.get_global("frontend.parse"), op.get_global("frontend.print")
    run_pass = op.get_global("frontend.run_pass")
    f = run_pass("fold_constants", parse("(fn f (x) (eval (+ (* 2 3) x)))"))
    assert print_(f) == "(fn f (x) (eval (+ 6 x)))"
    text = op.get_global("frontend.generate")(300, 7)
    assert text == fe.generate(300, 7)
    printed = fe.print(fe.parse(text))
    assert printed.startswith("(fn main (a b c) (let x0 ")
    assert fe.print(fe.parse(printed)) == printed


def test_errors_keep_their_kind_and_say_where():
    with pytest.raises(ValueError, match=r"^parse error at 2:14: unbound variable `y`") as err:
        fe.parse("(fn f (x)\n  (eval (+ x y)))")
    assert err.value.kind == "ValueError"
    assert "frontend.parse" in err.value.frames
    with pytest.raises(ValueError, match=r"^parse error at 1:18: "):
        fe.parse("(fn f () (eval 1)")

    f = fe.parse("(fn f (x) (eval x))")
    with pytest.raises(ValueError) as err:
        fe.run_pass("inline", f)
    assert str(err.value).startswith(
        "unknown pass `inline`: the passes are fold_constants, cse, eliminate_dead_lets"
    )
    with pytest.raises(TypeError):
        fe.run_pass("cse", f.body)  # a pass takes a program
    with pytest.raises(ValueError):
        fe.from_json("{not json")
    with pytest.raises(TypeError, match="not a function"):
        fe.from_json(op.save_json_graph(3))


def test_a_deep_program_crosses_without_recursion():
    depth = 100_000
    src = "(fn f (x) (eval " + "(+ 1 " * depth + "x" + ")" * depth + "))"
    f = fe.run_pass("fold_constants", fe.parse(src))
    e = f.body.value
    for _ in range(3):
        e = e.rhs
    assert type(e) is ns().Binary and e.op.name == "Add"
    assert fe.print(fe.from_json(fe.to_json(f))) == src
    del f, e  # the last references go from Python: freed without recursion too


def test_the_readme_example():
    readme = pathlib.Path(__file__).resolve().parents[2] / "README.md"
    section = readme.read_text(encoding="utf-8").split(
        "## A compiler shipped to Python through a plugin", 1
    )[1]
    code = re.search(r"```python\n(.*?)```", section, re.S).group(1)
    literal = '"target/debug/libobject_frontend_plugin.so"'
    assert literal in code
    exec(compile(code.replace(literal, repr(PLUGIN)), str(readme), "exec"), {})
