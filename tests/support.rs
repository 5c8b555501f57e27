//! Helpers shared by the workspace's integration tests.
//!
//! - [`scaled`]: iteration counts read the `OBJECT_TEST_SCALE` knob (a factor, default
//!   1.0), so the valgrind run (`scripts/valgrind.sh`) can shrink them.
//! - [`Rng`]: a small deterministic generator; tests print their seed and accept
//!   `OBJECT_TEST_SEED` to replay one.
//! - [`DropCounter`]: counts how many times values were dropped, to prove deleters run
//!   exactly once.
//! - [`LeakCheck`]: asserts that the live-object count is back to its baseline at the
//!   end of a test.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Mutex, MutexGuard, PoisonError};

/// The iteration-count factor from `OBJECT_TEST_SCALE` (default 1.0).
pub fn scale() -> f64 {
    std::env::var("OBJECT_TEST_SCALE")
        .ok()
        .and_then(|s| s.parse::<f64>().ok())
        .filter(|f| *f > 0.0)
        .unwrap_or(1.0)
}

/// `n` scaled by [`scale`], but never below `min` — except under Miri, which runs
/// some thousand times slower than native code: there the floor is at most
/// [`MIRI_FLOOR`].
pub fn scaled(n: usize, min: usize) -> usize {
    let min = if cfg!(miri) { min.min(MIRI_FLOOR) } else { min };
    ((n as f64 * scale()) as usize).max(min)
}

/// Whether case `i` of an exhaustive loop runs: every case natively, every `every`-th
/// under Miri (the cases are alike; Miri checks the code paths, not the table).
pub fn sampled(i: usize, every: usize) -> bool {
    !cfg!(miri) || i % every == 0
}

/// The largest floor [`scaled`] keeps under Miri.
pub const MIRI_FLOOR: usize = 16;

/// The seed from `OBJECT_TEST_SEED`, or `default`; printed so a failure can be replayed.
pub fn seed(test: &str, default: u64) -> u64 {
    let s = std::env::var("OBJECT_TEST_SEED")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(default);
    println!("{test}: seed {s} (replay with OBJECT_TEST_SEED={s})");
    s
}

/// SplitMix64: tiny, fast, and good enough to sample test cases.
#[derive(Debug, Clone)]
pub struct Rng(u64);

impl Rng {
    /// A generator from a seed.
    pub fn new(seed: u64) -> Self {
        Rng(seed)
    }
    /// The next 64 random bits.
    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }
    /// A number in `0..n` (`n > 0`).
    pub fn below(&mut self, n: usize) -> usize {
        (self.next_u64() % n as u64) as usize
    }
    /// True with probability `p`.
    pub fn chance(&mut self, p: f64) -> bool {
        (self.next_u64() >> 11) as f64 / (1u64 << 53) as f64 <= p
    }
}

/// Counts drops of [`Tracked`] values made from it.
#[derive(Debug, Default)]
pub struct DropCounter(AtomicUsize);

impl DropCounter {
    /// A counter at zero (usable in a `static`).
    pub const fn new() -> Self {
        DropCounter(AtomicUsize::new(0))
    }
    /// Drops counted so far.
    pub fn get(&self) -> usize {
        self.0.load(Ordering::SeqCst)
    }
    /// A value that bumps this counter when dropped.
    pub fn track(&'static self) -> Tracked {
        Tracked(self)
    }
}

/// Bumps its [`DropCounter`] when dropped.
#[derive(Debug)]
pub struct Tracked(&'static DropCounter);

/// Counts on a counter nobody reads: what a `Tracked` field holds in an object built by
/// reflection (`#[object(skip)]` fields are filled with `Default`).
static UNOBSERVED: DropCounter = DropCounter::new();

impl Default for Tracked {
    fn default() -> Self {
        Tracked(&UNOBSERVED)
    }
}

impl Drop for Tracked {
    fn drop(&mut self) {
        self.0 .0.fetch_add(1, Ordering::SeqCst);
    }
}

/// Tests in one binary run on parallel threads but the live-object counter is global,
/// so every test that checks it holds this lock for its whole run.
static LEAK_LOCK: Mutex<()> = Mutex::new(());

/// Takes the leak lock, records `object_core::live_objects()`, and on drop asserts that
/// the count is back to that baseline (unless the test is already failing).
#[derive(Debug)]
pub struct LeakCheck {
    base: isize,
    _lock: MutexGuard<'static, ()>,
}

impl LeakCheck {
    /// Starts checking.
    pub fn new() -> Self {
        // A failed test poisons the lock; the other tests still run.
        let lock = LEAK_LOCK.lock().unwrap_or_else(PoisonError::into_inner);
        LeakCheck {
            base: object_core::live_objects(),
            _lock: lock,
        }
    }

    /// Objects made and not released since the check started.
    pub fn live(&self) -> isize {
        object_core::live_objects() - self.base
    }
}

impl Default for LeakCheck {
    fn default() -> Self {
        Self::new()
    }
}

impl Drop for LeakCheck {
    fn drop(&mut self) {
        if !std::thread::panicking() {
            assert_eq!(
                object_core::live_objects(),
                self.base,
                "live objects at the end of the test differ from the start: leaked or freed twice"
            );
        }
    }
}

/// The stack size deep-graph tests run on: 2 MiB, a common thread default (nothing
/// recurses in proportion to graph depth; see ARCHITECTURE.md).
pub const SMALL_STACK: usize = 2 << 20;

/// Runs `f` on a fresh thread with a [`SMALL_STACK`], returning its result (and
/// re-raising its panic on this thread).
pub fn on_small_stack<R: Send + 'static>(f: impl FnOnce() -> R + Send + 'static) -> R {
    let handle = std::thread::Builder::new()
        .name("small-stack".to_owned())
        .stack_size(SMALL_STACK)
        .spawn(f)
        .expect("spawning a thread");
    match handle.join() {
        Ok(r) => r,
        Err(panic) => std::panic::resume_unwind(panic),
    }
}

/// How deep the deep-graph tests go: 10,000,000 at full scale.
pub fn deep() -> usize {
    scaled(10_000_000, 10_000)
}

/// The environment variable that marks a test's child process (see [`run_in_child`]).
const CHILD_ENV: &str = "OBJECT_TEST_CHILD";

/// Whether this process is the child [`run_in_child`] started: the test then runs the
/// scenario that is expected to end the process (an abort).
pub fn in_child() -> bool {
    std::env::var_os(CHILD_ENV).is_some()
}

/// Runs the test `name` of the current test binary again, alone, in a child process
/// (where [`in_child`] is true), and returns how it exited and what it wrote to stderr.
/// For scenarios that abort the process by design.
pub fn run_in_child(name: &str) -> (std::process::ExitStatus, std::string::String) {
    let exe = std::env::current_exe().expect("the test binary's path");
    let out = std::process::Command::new(exe)
        .args([name, "--exact", "--nocapture", "--test-threads=1"])
        .env(CHILD_ENV, "1")
        .output()
        .expect("running the test binary again");
    (
        out.status,
        std::string::String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// Whether `status` is an abort (`SIGABRT` on Unix).
pub fn aborted(status: &std::process::ExitStatus) -> bool {
    #[cfg(unix)]
    {
        use std::os::unix::process::ExitStatusExt as _;
        status.signal() == Some(6)
    }
    #[cfg(not(unix))]
    {
        !status.success()
    }
}

/// `native` normally, `miri` under Miri: for sizes a scale factor does not reach, such
/// as the length of a property test's random operation lists.
pub const fn native_or_miri(native: usize, miri: usize) -> usize {
    if cfg!(miri) {
        miri
    } else {
        native
    }
}
