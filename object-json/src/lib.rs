//! # object-json
//!
//! The JSON graph format (placeholder docs, rewritten below).

#![forbid(unsafe_code)]

mod graph;
mod json;

pub use graph::{from_json_graph, to_json_graph, to_json_graph_with_metadata};

/// The README's examples, compiled and run as a doctest.
#[cfg(doctest)]
#[doc = include_str!("../../README.md")]
struct ReadmeDoctests;
