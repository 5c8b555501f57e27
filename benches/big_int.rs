//! Criterion benchmarks of `BigInt`'s decimal text on a number of a million digits
//! ([`BigInt::MAX_DIGITS`], the longest text a JSON graph may hold), each beside the
//! integer crate behind it (`dashu_int::IBig`) doing the same work directly, in the
//! *same* group, so that what the object and the graph add is read from one run.
//!
//! Run with `cargo bench -p object-benches --bench big_int`.
//!
//! # Groups
//!
//! Each iteration takes a good part of a second, so every group uses flat sampling, 10
//! samples and a short measurement time; throughput is in decimal digits.
//!
//! - `big_int_parse`: `str::parse::<BigInt>` against `str::parse::<IBig>`.
//! - `big_int_to_string`: `BigInt::to_string` against `IBig::to_string`.
//! - `big_int_json_save`: `to_json_graph` of the number (one `ffi.BigInt` node) against
//!   `serde_json::to_string` of the `IBig`'s decimal text (its `to_string` timed too).
//! - `big_int_json_load`: `from_json_graph` of that graph against
//!   `serde_json::from_str::<String>` of the JSON string, then `parse::<IBig>`.
//! - `big_int_print`: the reflection printer (`{:?}` of an `ffi.List` holding the
//!   number) against `format!("{}", ibig)`.
//!
//! # Targets
//!
//! | benchmark | target |
//! | --- | --- |
//! | every `big_int_*` row of ours | well under a second (issue 35: before, 2.8 s to load, ~15 s to save or print) |
//! | `big_int_parse/big_int`, `big_int_to_string/big_int` | ≤ 1.1 × the `ibig` row |
//!
//! # Reading the numbers
//!
//! - Before (the hand-written conversion, multiplying or dividing the whole number by
//!   10⁹ per chunk: quadratic), as issue 35 measured it: 2.8 s to load a 976 KB node,
//!   ~15 s to save or print one.
//! - After (`dashu-int`), a `--quick` run on the shared 2-core machine under a load of
//!   about 4.7: parse 249 ms (`ibig` 270), to_string 619 ms (595), JSON save 626 ms
//!   (621), JSON load 264 ms (263), printer 614 ms (`ibig_display` 654). The object and
//!   the graph add nothing measurable to the crate's conversion; a standalone run on a
//!   quieter machine took 0.22 s to parse and 0.35 s to write the text.
//! - The printer formats an object twice (a counting pass into a sink that finds
//!   shared objects, then the printing pass), but skips a `BigInt`'s digits in the
//!   counting pass (it holds no object), so `big_int_print` is one conversion, like
//!   `big_int_to_string`; before that skip it was two.

use std::hint::black_box;
use std::time::Duration;

use criterion::{criterion_group, criterion_main, BatchSize, Criterion, SamplingMode, Throughput};
use dashu_int::IBig;
use object_containers::{BigInt, List};
use object_core::Any;
use object_json::{from_json_graph, to_json_graph};

/// The digits: a leading 7, then a fixed pseudo-random sequence (xorshift).
fn digits(n: usize) -> String {
    let mut s = String::with_capacity(n);
    s.push('7');
    let mut x: u64 = 0x9E37_79B9_7F4A_7C15;
    while s.len() < n {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        s.push(char::from(b'0' + (x % 10) as u8));
    }
    s
}

/// A group for one conversion: flat sampling, 10 samples, throughput in digits.
fn group<'c>(
    c: &'c mut Criterion,
    name: &str,
    digits: usize,
) -> criterion::BenchmarkGroup<'c, criterion::measurement::WallTime> {
    let mut g = c.benchmark_group(name);
    g.sampling_mode(SamplingMode::Flat);
    g.sample_size(10);
    g.warm_up_time(Duration::from_secs(1));
    g.measurement_time(Duration::from_secs(4));
    g.throughput(Throughput::Elements(digits as u64));
    g
}

fn big_int(c: &mut Criterion) {
    let n = BigInt::MAX_DIGITS;
    let text = digits(n);
    let ours: BigInt = text.parse().unwrap();
    let theirs: IBig = text.parse().unwrap();
    let any = Any::from(ours.clone());
    let graph = to_json_graph(&any).unwrap();
    let serde_text = serde_json::to_string(&theirs.to_string()).unwrap();
    let list: List<Any> = [any.clone()].into_iter().collect();
    // The inputs agree, and so do the outputs.
    // (Compared with `==`, not `assert_eq!`: a failure would print megabytes.)
    assert!(ours.to_string() == text && theirs.to_string() == text);
    assert!(graph.contains(&serde_text));
    assert!(format!("{list:?}") == format!("[{text}]"));
    eprintln!(
        "big_int: {n} digits, {} bytes of JSON graph, {} of serde_json",
        graph.len(),
        serde_text.len()
    );

    let mut g = group(c, "big_int_parse", n);
    g.bench_function("big_int", |b| {
        b.iter_batched(
            || (),
            |()| black_box(&text).parse::<BigInt>().unwrap(),
            BatchSize::PerIteration,
        )
    });
    g.bench_function("ibig", |b| {
        b.iter_batched(
            || (),
            |()| black_box(&text).parse::<IBig>().unwrap(),
            BatchSize::PerIteration,
        )
    });
    g.finish();

    let mut g = group(c, "big_int_to_string", n);
    g.bench_function("big_int", |b| b.iter(|| black_box(&ours).to_string()));
    g.bench_function("ibig", |b| b.iter(|| black_box(&theirs).to_string()));
    g.finish();

    let mut g = group(c, "big_int_json_save", n);
    g.bench_function("to_json_graph", |b| {
        b.iter(|| to_json_graph(black_box(&any)).unwrap())
    });
    g.bench_function("ibig_serde_json", |b| {
        b.iter(|| serde_json::to_string(&black_box(&theirs).to_string()).unwrap())
    });
    g.finish();

    let mut g = group(c, "big_int_json_load", n);
    g.bench_function("from_json_graph", |b| {
        b.iter_batched(
            || (),
            |()| from_json_graph(black_box(&graph)).unwrap(),
            BatchSize::PerIteration,
        )
    });
    g.bench_function("serde_json_ibig", |b| {
        b.iter_batched(
            || (),
            |()| {
                serde_json::from_str::<String>(black_box(&serde_text))
                    .unwrap()
                    .parse::<IBig>()
                    .unwrap()
            },
            BatchSize::PerIteration,
        )
    });
    g.finish();

    let mut g = group(c, "big_int_print", n);
    g.bench_function("printer", |b| b.iter(|| format!("{:?}", black_box(&list))));
    g.bench_function("ibig_display", |b| {
        b.iter(|| format!("{}", black_box(&theirs)))
    });
    g.finish();
}

criterion_group!(benches, big_int);
criterion_main!(benches);
