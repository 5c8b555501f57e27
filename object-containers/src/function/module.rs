//! `Module` (`ffi.Module`, static index 73): a named table of functions with imports.

use core::fmt;
use std::collections::{BTreeMap, HashSet};

use object_core::{make_object, Object, ObjectPtr};

use super::Function;

/// The object behind [`Module`].
#[derive(object_core::Object)]
#[repr(C)]
#[object(key = "ffi.Module", index = 73, final, opaque)]
pub struct ModuleObj {
    base: Object,
    name: std::string::String,
    functions: BTreeMap<std::string::String, Function>,
    imports: Vec<Module>,
}

impl fmt::Debug for ModuleObj {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ModuleObj")
            .field("name", &self.name)
            .field("functions", &self.functions.keys().collect::<Vec<_>>())
            .field(
                "imports",
                &self.imports.iter().map(Module::name).collect::<Vec<_>>(),
            )
            .finish()
    }
}

/// A module: an immutable, named table of [`Function`]s plus imported modules. It is an
/// object, so it can sit in containers and be passed through functions. Modules are
/// built bottom-up ([`Module::builder`]), so imports can never form a cycle.
///
/// ```
/// use object_containers::{Function, Module};
///
/// let math = Module::builder("math").function("add", Function::from_typed(|a: i64, b: i64| a + b)).build();
/// let app = Module::builder("app").function("main", Function::from_typed(|| 0i64)).import(math).build();
/// assert!(app.get_function("add", false).is_none());
/// let add = app.get_function("add", true).unwrap();
/// assert_eq!(add.typed::<(i64, i64), i64>().call((2, 3)).unwrap(), 5);
/// ```
#[repr(transparent)]
#[derive(Clone)]
pub struct Module(ObjectPtr<ModuleObj>);

/// Assembles a [`Module`].
#[derive(Debug)]
pub struct ModuleBuilder {
    name: std::string::String,
    functions: BTreeMap<std::string::String, Function>,
    imports: Vec<Module>,
}

impl ModuleBuilder {
    /// Adds (or replaces) a function.
    ///
    /// # Examples
    ///
    /// ```
    /// use object_containers::{Function, Module};
    /// let m = Module::builder("m")
    ///     .function("one", Function::from_typed(|| 1i64))
    ///     .function("one", Function::from_typed(|| 2i64)) // replaces the first
    ///     .build();
    /// let one = m.get_function("one", false).unwrap();
    /// assert_eq!(one.typed::<(), i64>().call(()).unwrap(), 2);
    /// ```
    pub fn function(mut self, name: &str, f: Function) -> Self {
        self.functions.insert(name.to_owned(), f);
        self
    }
    /// Adds an import, searched after this module's own functions, in order.
    ///
    /// # Examples
    ///
    /// ```
    /// use object_containers::{Function, Module};
    /// let a = Module::builder("a").function("f", Function::from_typed(|| 1i64)).build();
    /// let b = Module::builder("b").function("f", Function::from_typed(|| 2i64)).build();
    /// let app = Module::builder("app").import(a).import(b).build();
    /// let f = app.get_function("f", true).unwrap(); // `a`'s: imports are searched in order
    /// assert_eq!(f.typed::<(), i64>().call(()).unwrap(), 1);
    /// ```
    pub fn import(mut self, m: Module) -> Self {
        self.imports.push(m);
        self
    }
    /// The module.
    ///
    /// # Examples
    ///
    /// ```
    /// use object_containers::Module;
    /// let m = Module::builder("empty").build();
    /// assert_eq!((m.name(), m.function_names().count()), ("empty", 0));
    /// ```
    pub fn build(self) -> Module {
        Module(make_object(ModuleObj {
            base: Object::new(),
            name: self.name,
            functions: self.functions,
            imports: self.imports,
        }))
    }
}

impl Module {
    /// A builder for a module called `name`.
    ///
    /// # Examples
    ///
    /// ```
    /// use object_containers::{Function, Module};
    /// let m = Module::builder("math")
    ///     .function("neg", Function::from_typed(|x: i64| -x))
    ///     .build();
    /// assert_eq!(m.name(), "math");
    /// ```
    pub fn builder(name: &str) -> ModuleBuilder {
        ModuleBuilder {
            name: name.to_owned(),
            functions: BTreeMap::new(),
            imports: Vec::new(),
        }
    }
    /// The module's name.
    ///
    /// # Examples
    ///
    /// ```
    /// use object_containers::Module;
    /// assert_eq!(Module::builder("math").build().name(), "math");
    /// ```
    pub fn name(&self) -> &str {
        &self.0.name
    }
    /// The names of the module's own functions, sorted.
    ///
    /// # Examples
    ///
    /// ```
    /// use object_containers::{Function, Module};
    /// let m = Module::builder("m")
    ///     .function("sub", Function::from_typed(|a: i64, b: i64| a - b))
    ///     .function("add", Function::from_typed(|a: i64, b: i64| a + b))
    ///     .build();
    /// assert_eq!(m.function_names().collect::<Vec<_>>(), ["add", "sub"]);
    /// ```
    pub fn function_names(&self) -> impl Iterator<Item = &str> {
        self.0.functions.keys().map(|k| k.as_str())
    }
    /// The imported modules, in search order.
    ///
    /// # Examples
    ///
    /// ```
    /// use object_containers::Module;
    /// let app = Module::builder("app")
    ///     .import(Module::builder("io").build())
    ///     .import(Module::builder("math").build())
    ///     .build();
    /// let names: Vec<&str> = app.imports().iter().map(Module::name).collect();
    /// assert_eq!(names, ["io", "math"]);
    /// ```
    pub fn imports(&self) -> &[Module] {
        &self.0.imports
    }
    /// The function `name`: this module's own first, then (if `query_imports`) the
    /// imports' depth-first, in import order (an import's own functions, then its
    /// imports, before the next import).
    ///
    /// Each module is searched once however many modules import it, so shared
    /// ("diamond") imports cost one visit each, and the search keeps an explicit work
    /// list instead of recursing, so a chain of imports of any depth cannot overflow the
    /// stack.
    ///
    /// # Examples
    ///
    /// ```
    /// use object_containers::{Function, Module};
    /// let math = Module::builder("math").function("neg", Function::from_typed(|x: i64| -x)).build();
    /// let app = Module::builder("app").import(math).build();
    /// assert!(app.get_function("neg", false).is_none()); // not its own
    /// let neg = app.get_function("neg", true).unwrap();
    /// assert_eq!(neg.typed::<(i64,), i64>().call((5,)).unwrap(), -5);
    /// assert!(app.get_function("missing", true).is_none());
    /// ```
    pub fn get_function(&self, name: &str, query_imports: bool) -> Option<Function> {
        if let Some(f) = self.0.functions.get(name) {
            return Some(f.clone());
        }
        if query_imports {
            return self.find_in_imports(name);
        }
        None
    }

    /// The imports' part of [`Module::get_function`]: a pre-order depth-first search
    /// with a stack (pushed in reverse import order, so the first import is searched
    /// first) and a set of the modules already searched.
    fn find_in_imports(&self, name: &str) -> Option<Function> {
        let mut visited: HashSet<*const ModuleObj> = HashSet::new();
        visited.insert(ObjectPtr::as_ptr(&self.0));
        let mut stack: Vec<&Module> = self.0.imports.iter().rev().collect();
        while let Some(m) = stack.pop() {
            if !visited.insert(ObjectPtr::as_ptr(&m.0)) {
                continue;
            }
            if let Some(f) = m.0.functions.get(name) {
                return Some(f.clone());
            }
            stack.extend(m.0.imports.iter().rev());
        }
        None
    }
}

impl fmt::Debug for Module {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(&*self.0, f)
    }
}

crate::handle::object_handle!(Module, ModuleObj, "ffi.Module");
super::impl_call_traits!(Module);
