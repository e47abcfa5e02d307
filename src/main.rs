//! The `toolgauge` binary: parse arguments, run, exit with the documented code.

use std::process::ExitCode;

use clap::Parser;

fn main() -> ExitCode {
    let cli = toolgauge::cli::Cli::parse();
    ExitCode::from(toolgauge::app::main(cli))
}
