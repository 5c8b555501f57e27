//! # object-containers
//!
//! The containers of the unified object protocol — `String`, `Bytes`, `Array`, `Map`,
//! `Shape`, and later `Function`, `Module` and `NDArray` — each an ordinary object type
//! registered with its static index (`ffi.String` = 65, …), so one `Array<ObjectRef>`
//! can hold AST nodes and runtime values alike.
//!
//! This crate is empty until the containers' issue lands; it exists so the workspace's
//! dependency direction (`object-core` ← `object-containers` ← `object-examples`) is in
//! place from the start.
//!
//! ```
//! // The core types it builds on:
//! use object_core::{ObjectRef, ObjectPtr};
//! let _: Option<ObjectRef> = None;
//! ```
