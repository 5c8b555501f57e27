//! Discovery: the functions a tvm-ffi library exports, read from its ELF dynamic
//! symbol table (the `object` crate, read-only ELF parsing). tvm-ffi's export macro
//! names a function `__tvm_ffi_<name>`; its own symbols have a second underscore
//! (`__tvm_ffi__metadata_<name>`, `__tvm_ffi__doc_<name>`, `__tvm_ffi__library_ctx`).

use std::path::Path;

use object::{Object, ObjectSymbol};

/// The prefix of every exported tvm-ffi function.
pub(super) const PREFIX: &str = "__tvm_ffi_";

/// The names (without the prefix) of the functions the library at `path` exports,
/// sorted; an error message when the file cannot be read or is not an ELF file.
pub(crate) fn function_names(path: &Path) -> Result<Vec<String>, String> {
    let data = std::fs::read(path).map_err(|e| format!("cannot read `{}`: {e}", path.display()))?;
    let file = object::File::parse(&*data).map_err(|e| {
        format!(
            "cannot read the symbols of `{}` (not an ELF shared library?): {e}",
            path.display()
        )
    })?;
    let mut names: Vec<String> = file
        .dynamic_symbols()
        .filter(|s| s.is_definition() && s.is_global())
        .filter_map(|s| s.name().ok())
        .filter_map(|n| n.strip_prefix(PREFIX))
        .filter(|n| !n.is_empty() && !n.starts_with('_'))
        .map(str::to_owned)
        .collect();
    names.sort_unstable();
    names.dedup();
    Ok(names)
}
