//! [`AccessPath`]: where in a graph a mismatch lies, printed as `<root>.body.args[2].lhs`.

use core::fmt;

use crate::any::Any;

/// One step of an [`AccessPath`].
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum PathStep {
    /// A reflected field (or a built-in's part: `len`, `dtype`, `shape`, `data`,
    /// `keys`), printed `.name`.
    Field(&'static str),
    /// An array item, printed `[i]`.
    Index(usize),
    /// A map entry's value, printed `[key]` (the key's `Debug`).
    Key(Any),
}

/// A path from a root to a value: the steps taken, printed as `<root>.body.args[2]`.
///
/// ```
/// use object_core::structural::{AccessPath, PathStep};
/// let p = AccessPath::from_steps(vec![PathStep::Field("args"), PathStep::Index(2)]);
/// assert_eq!(p.to_string(), "<root>.args[2]");
/// assert_eq!(p.steps().len(), 2);
/// ```
#[derive(Debug, Clone, PartialEq, Eq, Hash, Default)]
pub struct AccessPath {
    steps: Vec<PathStep>,
}

impl AccessPath {
    /// The root itself.
    pub fn root() -> AccessPath {
        AccessPath::default()
    }

    /// A path made of `steps`, from the root.
    pub fn from_steps(steps: Vec<PathStep>) -> AccessPath {
        AccessPath { steps }
    }

    /// The steps, from the root.
    pub fn steps(&self) -> &[PathStep] {
        &self.steps
    }
}

impl fmt::Display for AccessPath {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("<root>")?;
        for s in &self.steps {
            match s {
                PathStep::Field(n) => write!(f, ".{n}")?,
                PathStep::Index(i) => write!(f, "[{i}]")?,
                PathStep::Key(k) => write!(f, "[{:?}]", k.view())?,
            }
        }
        Ok(())
    }
}

/// Where the engine records paths: nowhere (plain equality), or in an arena.
pub(crate) trait Paths {
    type Id: Copy;
    /// Whether paths are recorded (then plain values are compared in field order too).
    const TRACK: bool;
    fn root(&mut self) -> Self::Id;
    fn child(&mut self, parent: Self::Id, step: impl FnOnce() -> PathStep) -> Self::Id;
}

/// No paths: every id is `()`.
pub(crate) struct NoPaths;

impl Paths for NoPaths {
    type Id = ();
    const TRACK: bool = false;
    #[inline(always)]
    fn root(&mut self) {}
    #[inline(always)]
    fn child(&mut self, _: (), _: impl FnOnce() -> PathStep) {}
}

/// Paths as a tree of steps, each pointing at its parent.
#[derive(Default)]
pub(crate) struct PathArena {
    nodes: Vec<(u32, Option<PathStep>)>,
}

impl Paths for PathArena {
    type Id = u32;
    const TRACK: bool = true;
    fn root(&mut self) -> u32 {
        self.nodes.push((0, None));
        (self.nodes.len() - 1) as u32
    }
    fn child(&mut self, parent: u32, step: impl FnOnce() -> PathStep) -> u32 {
        self.nodes.push((parent, Some(step())));
        (self.nodes.len() - 1) as u32
    }
}

impl PathArena {
    /// The path ending at `id`.
    pub(crate) fn path(&self, mut id: u32) -> AccessPath {
        let mut steps = Vec::new();
        while let Some((parent, Some(step))) = self.nodes.get(id as usize) {
            steps.push(step.clone());
            id = *parent;
        }
        steps.reverse();
        AccessPath { steps }
    }
}
