//! Records the compiler that builds this crate, for the plugin handshake
//! (`registry::adopt::BUILD_ID`): Rust types are shared with a plugin only when both
//! sides were built by the same compiler from the same source.

fn main() {
    let rustc = std::env::var("RUSTC").unwrap_or_else(|_| "rustc".into());
    let version = std::process::Command::new(rustc)
        .arg("--version")
        .output()
        .ok()
        .and_then(|o| String::from_utf8(o.stdout).ok())
        .map(|s| s.trim().to_owned())
        .unwrap_or_else(|| "unknown rustc".into());
    println!("cargo:rustc-env=OBJECT_CORE_RUSTC={version}");
    println!("cargo:rerun-if-env-changed=RUSTC");
}
