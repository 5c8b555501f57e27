"""`object_python.stubgen`: typed modules (.py + .pyi) for the registered types, enums
and global functions, written from this process's registry (the test build's `tour` and
`testing` namespaces, and `stubt`, defined here in Python); what they declare, that
they bind the run-time objects, and that mypy accepts code using them (stubs_usage.py,
with `--strict`) and reports each deliberate error of stubs_errors.py. The mypy tests
are skipped, saying so, when mypy is not installed; scripts/python.sh installs it."""

import importlib
import importlib.util
import inspect
import os
import pathlib
import re
import subprocess
import sys
from typing import Optional

import pytest

import object_python as op
from object_python import stubgen

HERE = pathlib.Path(__file__).resolve().parent
README = HERE.parents[1] / "README.md"
tour = op.namespace("tour")
Color = op.enum_class("testing.Color")


# Types defined in Python, in a namespace of their own (and a nested one): a
# defaulted field before a required one, every kind of field type, methods.
@op.py_class("stubt.Shape", abstract=True)
class Shape(op.Object):
    name: str = "shape"


@op.py_class("stubt.Circle")
class Circle(Shape):
    r: float
    center: Optional[tour.Expr] = None
    tags: list[str] = op.field(default=[], no_eq=True)
    weights: dict[str, int] = {}
    color: Color = Color.Green
    sizes: op.Array[int] = []

    def scaled(self, k: float = 2.0) -> float:
        return self.r * k

    @staticmethod
    def unit() -> "Circle":
        return Circle(r=1.0)


@op.py_class("stubt.inner.Deep")
class Deep(op.Object):
    circle: Circle
    anything: object


PREFIXES = ["tour", "testing", "stubt"]


@pytest.fixture(scope="module")
def out(tmp_path_factory):
    """The typed modules of PREFIXES, as the package `typed`, and that directory on
    `sys.path` while the module's tests run (the modules imported before any leak
    check starts)."""
    root = tmp_path_factory.mktemp("stubs")
    stubgen.generate(PREFIXES, root, package="typed")
    sys.path.insert(0, str(root))
    for name in ("typed.tour", "typed.testing", "typed.stubt", "typed.stubt.inner"):
        importlib.import_module(name)
    yield root
    sys.path.remove(str(root))
    for name in [m for m in sys.modules if m == "typed" or m.startswith("typed.")]:
        del sys.modules[name]


def _class_block(text, name):
    """The lines of `class name(...)` in a stub, up to the next top-level statement."""
    m = re.search(r"^(?:@_t\.final\n)?class {}\(.*?(?=^\S)".format(name), text + "\nEND",
                  re.S | re.M)
    assert m, "no class {} in the stub".format(name)
    return m.group(0)


def test_the_files_and_layout(out):
    for ns in ("tour", "testing", "stubt", "stubt/inner"):
        assert (out / "typed" / ns / "__init__.py").is_file()
        assert (out / "typed" / ns / "__init__.pyi").is_file()
    assert (out / "typed" / "__init__.py").is_file() and (out / "typed" / "py.typed").is_file()
    # A nested namespace is a subpackage, not a member of its parent.
    assert "Deep" not in (out / "typed" / "stubt" / "__init__.pyi").read_text()


def test_classes_fields_and_constructors(out):
    text = (out / "typed" / "tour" / "__init__.pyi").read_text()
    # Bases are the parents' classes; the root's is the package's Object.
    assert "class Expr(_op.Object):" in text and "class BinOp(Expr):" in text
    assert "@_t.final\nclass Add(BinOp):" in text
    imm = _class_block(text, "IntImm")
    assert "def value(self) -> int: ..." in imm
    assert "def __init__(self, *, value: int) -> None: ..." in imm
    # An Array's items from the Rust type (`Array<ObjectPtr<Var>>`), read and taken.
    fn = _class_block(text, "Function")
    assert "def params(self) -> _op.Array[Var]: ..." in fn
    assert "def __init__(self, *, params: _t.Sequence[Var], body: Expr) -> None: ..." in fn
    # Inherited fields are the base's properties; the constructor takes them all.
    add = _class_block(text, "Add")
    assert "@property" not in add and "lhs: Expr, rhs: Expr" in add
    # An abstract type gets no constructor.
    assert "__init__" not in _class_block(text, "BinOp")
    # Every reflected field of every type is declared on its class or a base.
    for name in ("Var", "IntImm", "Add", "Function"):
        cls = getattr(tour, name)
        for f in (v for v in vars(cls).values() if isinstance(v, op.Field)):
            assert re.search(r"def {}\(self\) -> ".format(f.name), text), f.name


def test_enums_and_optional_fields(out):
    text = (out / "typed" / "testing" / "__init__.pyi").read_text()
    assert "class Color(_enum.IntEnum):" in text
    for member in Color:
        assert "    {} = {}\n".format(member.name, int(member)) in text
    paint = _class_block(text, "Paint")
    assert "def color(self) -> Color: ..." in paint
    assert "def accent(self) -> Color | None: ..." in paint
    # Required, then optional (left out: None) and defaulted ones.
    assert ("color: Color | int | str, sign: Sign | int | str, "
            "accent: Color | int | str | None = ..., under: Color | int | str = ...") in paint


def test_python_types_methods_and_other_namespaces(out):
    text = (out / "typed" / "stubt" / "__init__.pyi").read_text()
    circle = _class_block(text, "Circle")
    assert "class Circle(Shape):" in circle
    # Positional in table order; a required field after a defaulted one is by keyword.
    assert "def __init__(self, name: str = ..., *, r: float, " in circle
    assert "center: _m_typed_tour.Expr | None = ..." in circle
    assert "def tags(self) -> _op.Array[str]: ..." in circle
    assert "def weights(self) -> _op.Map[str, int]: ..." in circle
    assert "def color(self) -> _m_typed_testing.Color: ..." in circle
    assert "def sizes(self) -> _op.Array[int]: ..." in circle
    assert "import typed.tour as _m_typed_tour" in text
    # Methods from the class body, with their signatures; a static method.
    assert "def scaled(self, k: float = ...) -> float: ..." in circle
    assert "    @staticmethod\n    def unit() -> Circle: ..." in circle
    inner = (out / "typed" / "stubt" / "inner" / "__init__.pyi").read_text()
    assert "def __init__(self, circle: _m_typed_stubt.Circle, anything: _t.Any)" in inner


def test_methods_and_global_signatures(out):
    text = (out / "typed" / "tour" / "__init__.pyi").read_text()
    # Rust methods: a typed closure's types (positional-only), `self` for the object.
    assert "def eval(self, arg1: _t.Mapping[Var, int], /) -> int: ..." in _class_block(
        text, "Expr"
    )
    assert "    @staticmethod\n    def make(arg0: int, /) -> IntImm: ..." in _class_block(
        text, "IntImm"
    )
    # A declared signature: names, a default, the doc.
    assert 'def add(x: int, y: int = ...) -> int:\n    """x + y; y is 1 unless given."""' in text
    assert str(inspect.signature(op.get_global("tour.add"))) == "(x: 'int', y: 'int' = 1) -> 'int'"
    testing_text = (out / "typed" / "testing" / "__init__.pyi").read_text()
    # A packed function takes anything; a keyword's name gets a `_`.
    assert "def echo(*args: _t.Any) -> _t.Any:" in testing_text
    assert "def raise_(arg0: str, arg1: str, /) -> None:" in testing_text
    assert "def error_kind(arg0: _op.Function | _t.Callable[..., _t.Any], /) -> str | None:" in (
        testing_text
    )


def test_type_text_parsing():
    p = stubgen._Parser({"tour.Var", "tour.Expr"}, {"testing.Color"})
    assert p.parse("ffi.Map of ffi.Map of int to str to ffi.Array of tour.Var") == (
        "map", ("map", ("name", "int"), ("name", "str")), ("array", ("object", "tour.Var"))
    )
    assert p.parse("Optional[ffi.String]") == ("optional", ("name", "str"))
    assert p.parse("Array[Optional[testing.Color]]") == (
        "array", ("optional", ("enum", "testing.Color"))
    )
    assert p.parse("typing.Optional[tour.Expr]") == p.parse("tour.Expr | None")
    assert p.parse("Map[str, tour.Var]") == ("map", ("name", "str"), ("object", "tour.Var"))
    assert p.parse("some.Unknown") == ("name", "Any") and p.parse("[[") == ("name", "Any")


def test_the_modules_bind_the_run_time_objects(out):
    import typed.stubt
    import typed.testing
    import typed.tour

    assert typed.tour.Add is op.type_class("tour.Add") and typed.tour.Expr is tour.Expr
    assert typed.testing.Color is Color and typed.stubt.Circle is Circle
    assert typed.tour.add(2) == 3 and typed.testing.raise_ is not None
    for module in (typed.tour, typed.testing, typed.stubt):
        for name in module.__all__:
            assert getattr(module, name) is not None, name
    e = typed.tour.Add(lhs=typed.tour.Var(name="x"), rhs=typed.tour.IntImm(value=1))
    assert isinstance(e, typed.tour.BinOp) and e.rhs.value == 1


def test_the_usage_file_runs(out):
    # In an interpreter of its own, which defines this module's types first: the file
    # registers a type whose method (and so the file's globals) lives for the process.
    code = "import test_stubgen, runpy; runpy.run_path('stubs_usage.py')"
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(out), str(HERE)]))
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                       cwd=HERE, env=env)
    assert r.returncode == 0, r.stderr


def test_the_command(tmp_path):
    # In a fresh interpreter (the test build's registry, without this module's types).
    r = subprocess.run(
        [sys.executable, "-m", "object_python.stubgen", "--prefix", "tour", "-o", str(tmp_path)],
        capture_output=True, text=True, cwd=HERE,
    )
    assert r.returncode == 0, r.stderr
    assert str(tmp_path / "tour" / "__init__.pyi") in r.stdout
    text = (tmp_path / "tour" / "__init__.pyi").read_text()
    assert "class IntImm(Expr):" in text and not (tmp_path / "testing").exists()


PLUGIN = os.environ.get("OBJECT_FRONTEND_PLUGIN")


@pytest.mark.skipif(not PLUGIN, reason="OBJECT_FRONTEND_PLUGIN is not set (scripts/python.sh)")
def test_a_plugins_namespace(tmp_path):
    # The front-end plugin's types (an enum field, optional fields, arrays of nodes),
    # loaded by the command in an interpreter of its own; mypy --strict accepts the
    # stubs and code that builds a node.
    r = subprocess.run(
        [sys.executable, "-m", "object_python.stubgen", "--load", PLUGIN,
         "--prefix", "frontend", "--package", "fe", "-o", str(tmp_path)],
        capture_output=True, text=True, cwd=HERE,
    )
    assert r.returncode == 0, r.stderr
    text = (tmp_path / "fe" / "frontend" / "__init__.pyi").read_text()
    assert "class BinOpKind(_enum.IntEnum):" in text
    assert "def op(self) -> BinOpKind: ..." in _class_block(text, "Binary")
    # `Array<Expr>`: `Expr` is the typed reference of `frontend.Expr`'s struct, which
    # the registry does not know (and `tour.Expr`'s Rust struct is also called `Expr`):
    # the items are not guessed.
    assert "def args(self) -> _op.Array[_t.Any]: ..." in _class_block(text, "Call")
    use = tmp_path / "use_frontend.py"
    use.write_text(
        "import fe.frontend as fe\n\n"
        "x = fe.Var(name='x')\n"
        "b = fe.Binary(op=fe.BinOpKind(0), lhs=x, rhs=fe.IntImm(value=1))\n"
        "kind: fe.BinOpKind = b.op\n"
        "lhs: fe.Expr = b.lhs\n"
    )
    r = _mypy(["--strict", str(use)], tmp_path, tmp_path)
    assert r.returncode == 0, r.stdout + r.stderr


def _mypy(args, cwd, mypypath):
    if importlib.util.find_spec("mypy") is None:
        print("mypy is not installed: skipping (scripts/python.sh installs it)")
        pytest.skip("mypy is not installed (pip install mypy; scripts/python.sh does)")
    env = dict(os.environ, MYPYPATH=str(mypypath))
    r = subprocess.run(
        [sys.executable, "-m", "mypy", "--no-error-summary", "--show-error-codes",
         "--cache-dir", os.devnull] + args,
        capture_output=True, text=True, cwd=cwd, env=env,
    )
    print(r.stdout, r.stderr)
    return r


def test_mypy_strict_accepts_the_usage_file(out):
    r = _mypy(["--strict", str(HERE / "stubs_usage.py")], HERE, out)
    assert r.returncode == 0, r.stdout + r.stderr


def test_mypy_strict_accepts_stubgen_itself(out):
    # (It uses the package through its stub, as any typed code would.)
    r = _mypy(["--strict", "-m", "object_python.stubgen"], HERE, out)
    assert r.returncode == 0, r.stdout + r.stderr


def test_mypy_reports_each_deliberate_error(out):
    path = HERE / "stubs_errors.py"
    expected = {}
    for i, line in enumerate(path.read_text().splitlines(), 1):
        m = re.search(r"# error: ([\w-]+)$", line)
        if m:
            expected[i] = m.group(1)
    assert len(expected) >= 10
    r = _mypy([str(path)], HERE, out)
    found = {}
    for line in r.stdout.splitlines():
        m = re.match(r".*stubs_errors\.py:(\d+): error: .*\[([\w-]+)\]$", line)
        if m:
            found.setdefault(int(m.group(1)), set()).add(m.group(2))
    assert r.returncode == 1
    missed = {i: c for i, c in expected.items() if c not in found.get(i, set())}
    assert not missed, "mypy did not report: {}".format(missed)
    extra = {i: c for i, c in found.items() if i not in expected}
    assert not extra, "errors on lines not marked: {}".format(extra)


def test_mypy_on_the_readme_examples(tmp_path):
    """The README's Python examples type-check against the package's stub, but for
    what no stub can declare: `.kind` on Python's own exception classes (the library's
    exceptions carry it), and the classes of `op.namespace(...)` used as annotations
    (made at run time: the reason for the generated modules)."""
    text = README.read_text(encoding="utf-8")
    section = text.split("## Using it from Python", 1)[1].split("\n## ", 1)[0]
    blocks = re.findall(r"```python\n(.*?)```", section, re.S)
    # (The example of stubs imports the modules it writes; mypy finds them here.)
    stubgen.generate(["tour"], tmp_path, package="typed_tour")
    files = []
    for i, code in enumerate(blocks):
        files.append(tmp_path / "readme_{}.py".format(i))
        files[-1].write_text(code, encoding="utf-8")
    r = _mypy([str(f) for f in files], tmp_path, tmp_path)
    errors = [line for line in r.stdout.splitlines() if ": error: " in line]
    allowed = re.compile(
        r'"\w*(Error|Exception)" has no attribute "kind"|Name "tour\.\w+" is not defined'
    )
    unexpected = [line for line in errors if not allowed.search(line)]
    assert not unexpected, "\n".join(unexpected)
