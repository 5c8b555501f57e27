//! Example object types: a small expression language built from objects, used by the
//! `tour` binary and by the tests.
//!
//! ```
//! use object_examples::expr::{add, eval, int, mul, print, var, Env};
//!
//! let x = var("x");
//! let e = mul(add(x.clone(), int(3)), x.clone());
//! assert_eq!(print(&e), "((x + 3) * x)");
//! let env = Env::new().bind(&x, 4);
//! assert_eq!(eval(&e, &env), Ok(28));
//! ```

pub mod expr;
#[cfg(feature = "frontend")]
pub mod frontend;
