//! The front-end example ([`object_examples::frontend`]: the S-expression parser, the
//! object IR with its printer, the passes and JSON save/load) shipped as a Rust plugin,
//! the way a compiler team gives its IR to users of another language: build the
//! `cdylib`, load it with `object_capi::load_module` (Rust), `obj_module_load` (C) or
//! `object_python.load_module` (Python), and call its functions.
//!
//! ```sh
//! cargo build -p object-frontend-plugin    # target/debug/libobject_frontend_plugin.so
//! ```
//!
//! Loading it registers the IR's node types (`frontend.Function`, `frontend.Expr`,
//! `frontend.Binary`, …: the `#[derive(Object)]` types of [`object_ir`]) and its enum
//! `frontend.BinOpKind` (a `Binary`'s `op`: an `IntEnum` in Python) in the host's
//! registry (the plugin *adopts* the host's: see `object_capi::plugin`), so the host
//! reads their fields by reflection and its `is`/`isinstance` checks see their bases.
//! The module is named [`MODULE_NAME`] (`frontend`); each of its functions is also a
//! global of the host named `frontend.<name>`:
//!
//! | function | does | errors |
//! | --- | --- | --- |
//! | `parse(text) -> Function` | [`parse`]: the text syntax into the IR | `ValueError` naming line and column |
//! | `print(node) -> str` | [`print()`]: a program, expression or statement as text | — |
//! | `passes() -> Array<str>` | [`passes`]: the names `run_pass` knows, in pipeline order | — |
//! | `run_pass(name, Function) -> Function` | [`run_pass`]: one pass by name | `ValueError` naming the known passes |
//! | `to_json(Function) -> str` | [`to_json`]: a JSON graph (tvm-ffi's format) | — |
//! | `from_json(text) -> Function` | [`from_json`]: the program a JSON graph holds | the graph's error; `TypeError` if its root is no program |
//! | `generate(nodes, seed) -> str` | [`generate`]: a random program's text, deterministic | — |
//!
//! A parse error is a `ValueError` (in Python, a `ValueError`, as `json.loads` raises
//! for bad text) whose message starts with `parse error at LINE:COLUMN:`.
//!
//! The plugin must be built from the same sources by the same compiler as its host
//! (adoption compares `object_core::registry::adopt::BUILD_ID`, and every shared
//! type's layout).
//!
//! Nothing here recurses with the depth of a program: parser, printer, passes and the
//! JSON graph all use explicit stacks.

use std::sync::OnceLock;

use object_capi::export_plugin;
use object_containers::{register_global_override, Array, Function, Module};
use object_core::{Error, ObjectRef};
use object_examples::frontend::object_ir::{self, ObjectBuilder};

pub use object_examples::frontend::object_ir::Function as Program;

/// The module's name (and the prefix of the globals: `frontend.parse`, …).
pub const MODULE_NAME: &str = "frontend";

/// A pass: a program in, a program out (unchanged parts shared).
pub type Pass = fn(&Program) -> Program;

/// The passes [`run_pass`] knows, by name, in the order a pipeline runs them.
pub const PASSES: &[(&str, Pass)] = &[
    ("fold_constants", object_ir::fold_constants),
    ("cse", object_ir::cse),
    ("eliminate_dead_lets", object_ir::eliminate_dead_lets),
];

/// Parses a program in the front-end's text syntax.
///
/// # Errors
///
/// A `ValueError` whose message is `parse error at LINE:COLUMN: what`.
pub fn parse(text: &str) -> Result<Program, Error> {
    object_examples::frontend::parse(text, &mut ObjectBuilder)
        .map_err(|e| Error::value_error(format!("parse error at {e}")))
}

/// Prints a node of the IR (a program, an expression or a statement) in the text
/// syntax; a program's text parses back.
pub fn print(node: &ObjectRef) -> String {
    object_ir::print_node(node)
}

/// The names of the passes, in pipeline order.
pub fn passes() -> Array<object_core::String> {
    PASSES
        .iter()
        .map(|(name, _)| object_core::String::from(*name))
        .collect()
}

/// Runs the pass named `name` on `program`.
///
/// # Errors
///
/// A `ValueError` naming the known passes if there is no pass of that name.
pub fn run_pass(name: &str, program: &Program) -> Result<Program, Error> {
    match PASSES.iter().find(|(n, _)| *n == name) {
        Some((_, pass)) => Ok(pass(program)),
        None => {
            let known: Vec<&str> = PASSES.iter().map(|(n, _)| *n).collect();
            Err(Error::value_error(format!(
                "unknown pass `{name}`: the passes are {}",
                known.join(", ")
            )))
        }
    }
}

/// Saves a program as a JSON graph (tvm-ffi's format; each variable written once).
///
/// # Errors
///
/// The graph writer's error (none for a program of the front-end's types).
pub fn to_json(program: &Program) -> Result<String, Error> {
    object_ir::save_json(program).map_err(json_error)
}

/// Loads a program saved by [`to_json`].
///
/// # Errors
///
/// The graph reader's error (kind and message) for bad text; a `TypeError` if the
/// graph's root is not a `frontend.Function`.
pub fn from_json(text: &str) -> Result<Program, Error> {
    object_ir::load_json(text).map_err(json_error)
}

fn json_error(e: object_ir::JsonError) -> Error {
    match e {
        object_ir::JsonError::Graph(g) => g.into(),
        e @ object_ir::JsonError::NotAFunction(_) => Error::type_error(e.to_string()),
    }
}

/// A random program of about `nodes` nodes, the same for the same `seed`
/// ([`object_examples::frontend::generate`]), as text.
pub fn generate(nodes: usize, seed: u64) -> String {
    object_examples::frontend::generate(nodes, seed)
}

/// The module's functions by name, each named `frontend.<name>` (its frame in errors).
pub fn functions() -> Vec<(&'static str, Function)> {
    fn f<Args, R, F: object_containers::TypedCallable<Args, R>>(
        name: &'static str,
        body: F,
    ) -> (&'static str, Function) {
        (
            name,
            Function::from_typed_named(&format!("{MODULE_NAME}.{name}"), body),
        )
    }
    vec![
        f("parse", |text: object_core::String| parse(text.as_str())),
        f("print", |node: ObjectRef| print(&node)),
        f("passes", passes),
        f("run_pass", |name: object_core::String, program: Program| {
            run_pass(name.as_str(), &program)
        }),
        f("to_json", |program: Program| to_json(&program)),
        f("from_json", |text: object_core::String| {
            from_json(text.as_str())
        }),
        f(
            "generate",
            |nodes: i64, seed: i64| -> Result<String, Error> {
                let nodes = usize::try_from(nodes)
                    .map_err(|_| Error::value_error(format!("a negative size: {nodes}")))?;
                // Any 64 bits are a seed: a negative one is its two's complement.
                Ok(generate(nodes, seed as u64))
            },
        ),
    ]
}

/// The plugin's `init`: registers each function as the global `frontend.<name>` (in
/// the host, once adopted) and returns a module holding the same functions. They are
/// made once per process: loading the library again (the same library: it is never
/// unloaded) hands out the same function objects again, so a second load adds nothing
/// to the host's live objects but its new module.
fn init() -> Result<Module, Error> {
    static FUNCTIONS: OnceLock<Vec<(&'static str, Function)>> = OnceLock::new();
    let mut module = Module::builder(MODULE_NAME);
    for (name, function) in FUNCTIONS.get_or_init(functions) {
        register_global_override(&format!("{MODULE_NAME}.{name}"), function.clone());
        module = module.function(name, function.clone());
    }
    Ok(module.build())
}

export_plugin!(c"frontend", init);
