//! A minimal compiler front-end, written twice: once with objects ([`object_ir`]) and
//! once as the plain Rust baseline, an `enum` behind `Arc` ([`enum_ir`]).
//!
//! Both read the same text syntax ([`syntax`]: S-expressions, parsed iteratively through
//! a [`Builder`]), print it back, and run the same three passes with the same
//! algorithms, so their outputs print identically and their times compare:
//!
//! - **constant folding**: operators on constants (not where undefined, such as a
//!   division by zero), `not`, `select` and `if` on a constant; and a `let` whose folded
//!   value is an integer constant is substituted into its body and removed — in the
//!   same walk (the value is folded before the body is entered, with the binding in
//!   force);
//! - **CSE**: in each maximal `let`-free expression, a subexpression that occurs twice or
//!   more (found with structural hashing: `StructuralKey`s made through a
//!   `StructuralHashCache` for objects, the derived `Hash`/`Eq` for the enum) is bound
//!   once by a `let _tN` around it;
//! - **dead-let elimination**: a `let` whose variable is unused goes, and the uses in its
//!   value with it — in one walk that counts uses as it meets them.
//!
//! Expressions are integer constants, `f32` tensor constants (`(tensor (2 2) 1 0.5 -2
//! 0.25)`: an `NDArray` in the object version, a shape and a `Vec<f32>` in the enum
//! version), variables, one binary node for the eleven operators ([`BinOpKind`]: an
//! enum field of the object version's `frontend.Binary`), `not`, `select`, `let` and
//! calls of intrinsics.
//!
//! The [`generate`] function makes random programs of any size, deterministically from
//! a seed, for the tests and the benchmark (`benches/frontend.rs`): one variable per
//! block (some 12,000 in a 1,000,000-node program), used all over, so the expressions
//! CSE keys hold thousands of distinct free variables.
//!
//! Nothing recurses with the depth of a program: parser, printers, passes and (for the
//! enum) `Drop` use explicit stacks. The derived `Hash`/`Eq` of the enum do recurse,
//! so CSE only considers subexpressions up to [`MAX_CSE_HEIGHT`] high — in both
//! versions, which also bounds its cost; so do its serde derives (the benchmark reads a
//! deep program's JSON on a thread with a large stack).
//!
//! # Layout
//!
//! | file | holds | object version | enum version |
//! | --- | --- | --- | --- |
//! | `syntax.rs` | tokenizer, [`ParseError`], the [`Builder`] trait, [`parse`], [`syntax::write_tensor`] | shared | shared |
//! | `gen.rs` | [`generate`] | shared | shared |
//! | `ops.rs` | [`BinOpKind`]: symbols and folding arithmetic (`#[derive(ObjectEnum)]` and serde's derives) | shared | shared |
//! | `*/mod.rs` | node types and the builder (object: `…Node` types with their typed references, the views, methods on the references, JSON save/load; enum: constructors, serde's derives, its iterative `Drop`) | [`object_ir`] | [`enum_ir`] |
//! | `*/walk.rs` | the walks the passes use (object: [`mutate`] with a pass's `Rewriter`, a post-order walk for facts (one node's children: the library's `map_children`); enum: children, rebuild-if-changed, a post-order walk with a `Pass` hearing of `let` scopes) | [`object_ir::walk`] | [`enum_ir::walk`] |
//! | `*/print.rs` | the printer | [`object_ir::print`] | [`enum_ir::print`] |
//! | `*/passes.rs` | **the passes**: `fold_constants`, `cse`, `eliminate_dead_lets` and their helpers | `object_ir/passes.rs` | `enum_ir/passes.rs` |
//!
//! The two `passes.rs` files are the "pass source" whose lengths compare (each holds
//! nothing else): 331 lines for objects, 222 for the enum (251 and 179 without comments
//! and blank lines); with each version's `walk.rs`, 417 against 475 (306 against 365).
//! The object passes are longer: each scoped pass is a `Rewriter` impl (hooks `child`,
//! `pre`, `post` and `memoize`, with their signatures) where the enum's is a `Pass`
//! impl on its own walker, and CSE keeps the addresses of the subexpressions it keyed. The object
//! version has no hand-written constructors, type switch or rebuild rule: the derive
//! generates `new`s on the references (`Binary::new(op, lhs, rhs)`), `object_view!` the
//! exhaustive [`object_ir::ExprView`] and [`object_ir::StmtView`] (O(1) matching), the
//! generic mutator rebuilds a node only when a child changed and says which field a
//! child sits in (a binder's is a definition site: `ChildField::is_definition`).
//!
//! [`mutate`]: object_core::transform::mutate
//!
//! ```
//! use object_examples::frontend::{parse, enum_ir, object_ir};
//! let text = "(fn f (x) (eval (+ (* 2 3) (+ (* x x) (* x x)))))";
//! let a = parse(text, &mut enum_ir::EnumBuilder::default()).unwrap();
//! let b = parse(text, &mut object_ir::ObjectBuilder::default()).unwrap();
//! let a = enum_ir::cse(&enum_ir::fold_constants(&a));
//! let b = object_ir::cse(&object_ir::fold_constants(&b));
//! let want = "(fn f (x) (eval (let _t0 (* x x) (+ 6 (+ _t0 _t0)))))";
//! assert_eq!(enum_ir::print(&a), want);
//! assert_eq!(object_ir::print(&b), want);
//! ```

pub mod enum_ir;
mod gen;
pub mod object_ir;
mod ops;
pub mod syntax;

pub use gen::{generate, MAX_EXPR_DEPTH};
pub use ops::BinOpKind;
pub use syntax::{parse, Builder, ParseError, ParseErrorKind};

/// The tallest subexpression CSE considers (a leaf has height 0).
pub const MAX_CSE_HEIGHT: u32 = 64;
