//! The walks the passes share: [`run`], the generic mutator
//! ([`object_core::transform::mutate`]) with a pass's [`Rewriter`] on a typed
//! reference; [`rewrite`], the same with closures for `pre` and `post`; and
//! [`visit_post`], a post-order walk over every occurrence of a node (children from
//! [`object_core::transform::for_each_child`]) for bottom-up facts. All iterative.

use object_core::prelude::*;
use object_core::transform::{for_each_child, mutate, Rewriter, TransformError};

struct Hooks<P, Q>(P, Q);

impl<P, Q> Rewriter for Hooks<P, Q>
where
    P: FnMut(&ObjectRef) -> Option<ObjectRef>,
    Q: FnMut(ObjectRef) -> ObjectRef,
{
    type Error = TransformError;
    fn pre(&mut self, node: &ObjectRef) -> Result<Option<ObjectRef>, TransformError> {
        Ok((self.0)(node))
    }
    fn post(&mut self, node: ObjectRef, _: &ObjectRef) -> Result<ObjectRef, TransformError> {
        Ok((self.1)(node))
    }
}

/// Runs the pass `r` over `root` with [`mutate`] (one walk: its `pre`, `child` and
/// `post` hooks; a shared node rewritten once unless its `memoize` says otherwise).
///
/// # Panics
///
/// If a hook puts a node where its type does not fit (a statement for an expression),
/// or turns the root into another type: a bug in the pass, not in its input.
pub fn run<T: TypedRef>(root: &T, r: &mut impl Rewriter<Error = TransformError>) -> T {
    match mutate(root.as_object_ref(), r).map(T::try_from_object) {
        Ok(Ok(n)) => n,
        Ok(Err(n)) => panic!("a pass turned the root into a `{}`", n.type_key()),
        Err(e) => panic!("a pass put a node where it does not fit: {e}"),
    }
}

/// Rewrites `root` bottom-up with [`mutate`]: `pre` may replace a node (its children
/// are then not visited), `post` gets every other node as the default rule left it
/// (itself if no child changed, else a copy with the new children). A shared node is
/// rewritten once.
///
/// # Panics
///
/// As [`run`].
pub fn rewrite<T: TypedRef>(
    root: &T,
    pre: impl FnMut(&ObjectRef) -> Option<ObjectRef>,
    post: impl FnMut(ObjectRef) -> ObjectRef,
) -> T {
    run(root, &mut Hooks(pre, post))
}

/// Walks the tree under `root` in post-order with an explicit stack: `post` gets each
/// node and the results of its children, and its result goes to the parent. Returns the
/// root's result. A shared subtree is walked once per occurrence.
pub fn visit_post<A>(root: &ObjectRef, mut post: impl FnMut(&ObjectRef, &[A]) -> A) -> A {
    // A node, and how many children it has once they were scheduled.
    let mut tasks: Vec<(ObjectRef, Option<usize>)> = vec![(root.clone(), None)];
    let mut results: Vec<A> = Vec::new();
    while let Some((n, kids)) = tasks.pop() {
        if let Some(count) = kids {
            let start = results.len() - count;
            let r = post(&n, &results[start..]);
            results.truncate(start);
            results.push(r);
            continue;
        }
        let at = tasks.len();
        let mut count = 0;
        for_each_child(&n, |c| {
            tasks.push((c.clone(), None));
            count += 1;
        });
        tasks[at..].reverse();
        // (The node itself goes below its children, moved rather than cloned.)
        tasks.insert(at, (n, Some(count)));
    }
    match results.pop() {
        Some(r) => r,
        None => unreachable!("the root's result is always pushed"),
    }
}
