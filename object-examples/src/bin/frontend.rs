//! A minimal compiler front-end, twice: with objects and with a plain `enum` + `Arc`.
//! Parses a small program, prints it, folds constants, eliminates common
//! subexpressions and dead `let`s, printing each stage from both versions (they must
//! agree), then saves the object version as a JSON graph and loads it back.
//!
//! Run it with `cargo run --release -p object-examples --bin frontend`.

use object_core::structural::structural_equal;
use object_core::TypedRef;
use object_examples::frontend::{enum_ir, object_ir, parse};

const SAMPLE: &str = "
(fn demo (n m)
  (let k (* 4 (+ 2 3))                          ; folds to 20
    (seq
      (store out (+ n k) (/ m 0))               ; division by zero: not folded
      (let unused (+ n 1)                       ; never used: removed
        (eval (+ (* (+ n m) k) (* (+ n m) k)))) ; a repeated product: CSE
      (if (< 1 2) (store out 0 (select 0 n m)) (eval 7))
      (eval (let x 1 (let x (+ x n) (* x x))))))) ; shadowing
";

fn stage(name: &str, e: &enum_ir::Function, o: &object_ir::Function) -> Result<(), String> {
    let (pe, po) = (enum_ir::print(e), object_ir::print(o));
    println!("{name:>10}: {po}");
    if pe != po {
        return Err(format!(
            "the versions disagree after {name}:\n  enum:   {pe}\n  object: {po}"
        ));
    }
    Ok(())
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    println!("source:{SAMPLE}");
    let e = parse(SAMPLE, &mut enum_ir::EnumBuilder)?;
    let o = parse(SAMPLE, &mut object_ir::ObjectBuilder)?;
    stage("parsed", &e, &o)?;
    let (e, o) = (enum_ir::fold_constants(&e), object_ir::fold_constants(&o));
    stage("folded", &e, &o)?;
    let (e, o) = (enum_ir::cse(&e), object_ir::cse(&o));
    stage("cse", &e, &o)?;
    let (e, o) = (
        enum_ir::eliminate_dead_lets(&e),
        object_ir::eliminate_dead_lets(&o),
    );
    stage("dead-let", &e, &o)?;
    println!("(both versions print the same text after every stage)");

    let again = object_ir::fold_constants(&object_ir::eliminate_dead_lets(&o));
    println!(
        "running fold and dead-let again changes nothing: the very same object comes back: {}",
        again.same_as(&o)
    );

    let json = object_ir::save_json(&o)?;
    println!(
        "saved as a JSON graph: {} bytes, {} nodes (each variable once, shared by its uses)",
        json.len(),
        json.matches("\"type\"").count()
    );
    let loaded = object_ir::load_json(&json)?;
    println!("loaded back: {}", object_ir::print(&loaded));
    println!(
        "structurally equal to what was saved: {}",
        structural_equal(&loaded, &o)
    );

    for bad in [
        "(fn f (x) (eval (+ x y)))",
        "(fn f (x)\n  (eval (+ x 1 2)))",
        "(fn f () (eval 99999999999999999999))",
    ] {
        if let Err(err) = parse(bad, &mut object_ir::ObjectBuilder) {
            println!("parse error in {bad:?}: {err} ({:?})", err.kind());
        }
    }
    Ok(())
}
