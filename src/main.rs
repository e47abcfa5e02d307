//! The `toolgauge` binary: parse arguments, run, exit with the documented code.

use std::process::ExitCode;

use clap::Parser;

/// mimalloc rather than the system allocator: loading suites, scoring and reporting make
/// millions of small allocations on several threads, and glibc's malloc took a third of
/// the time of importing and scoring BFCL (0.47 s with glibc, 0.31 s with mimalloc, peak
/// memory 54 and 77 MB; `benches/bfcl.sh`), a 10,000-trial replay 0.58 s and 0.48 s.
/// The `system-alloc` feature builds with the system allocator, to compare:
/// `cargo build --release --features system-alloc --target-dir target/system-alloc`, then
/// `TOOLGAUGE=target/system-alloc/release/toolgauge benches/bfcl.sh`.
#[cfg(not(feature = "system-alloc"))]
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn main() -> ExitCode {
    let cli = toolgauge::cli::Cli::parse();
    ExitCode::from(toolgauge::app::main(cli))
}
