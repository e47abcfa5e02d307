//! The command-line glue: resolve settings (suite + flags), build providers, run, write
//! the run directory, print, and map every outcome to an exit code in one place.
//!
//! [`settings`] resolves the suite and flags into targets and providers, [`run`] runs
//! (and resumes) a suite, [`cassette`] writes hand-written cassettes.

mod cassette;
mod compare;
mod report;
mod run;
mod settings;

use std::path::Path;

use crate::cli::{CassetteCommand, Cli, Command, ValidateArgs};
use crate::exit;
use crate::suite::{self, Suite};

/// An error that ends a command, with its exit code.
#[derive(Debug, thiserror::Error)]
pub enum AppError {
    /// Bad input (suite, flags, cassette, script): exit 2.
    #[error("{message}")]
    BadInput {
        /// What is wrong.
        message: String,
        /// How to fix it.
        hint: Option<String>,
    },
    /// The run could not be carried out or written: exit 3.
    #[error("{0}")]
    Incomplete(String),
}

impl AppError {
    pub(crate) fn bad(message: impl Into<String>, hint: Option<&str>) -> AppError {
        AppError::BadInput {
            message: message.into(),
            hint: hint.map(str::to_string),
        }
    }

    /// The exit code.
    pub fn code(&self) -> u8 {
        match self {
            AppError::BadInput { .. } => exit::BAD_INPUT,
            AppError::Incomplete(_) => exit::RUN_INCOMPLETE,
        }
    }

    pub(crate) fn print(&self) {
        eprintln!("error: {self}");
        if let AppError::BadInput { hint: Some(h), .. } = self {
            eprintln!("hint: {h}");
        }
    }
}

/// Run the parsed command line; returns the exit code.
pub fn main(cli: Cli) -> u8 {
    let result = match cli.command {
        Command::Run(args) => run::run(&args),
        Command::Validate(args) => Ok(validate(&args)),
        Command::Report(args) => report::report(&args),
        Command::Compare(args) => compare::compare(&args),
        Command::Schema => {
            println!("{}", suite_schema());
            Ok(exit::OK)
        }
        Command::Cassette(CassetteCommand::Write(args)) => {
            cassette::cassette_write(&args).map(|()| exit::OK)
        }
    };
    result.unwrap_or_else(|e| {
        e.print();
        e.code()
    })
}

/// The suite format's JSON Schema, generated from the serde model.
pub fn suite_schema() -> String {
    let schema = schemars::schema_for!(crate::suite::model::SuiteFile);
    serde_json::to_string_pretty(&schema).unwrap_or_default()
}

pub(crate) fn load_suite(path: &Path) -> Result<Suite, AppError> {
    suite::load(path).map_err(|e| AppError::BadInput {
        message: e.to_string().trim_end().to_string(),
        hint: None,
    })
}

fn validate(args: &ValidateArgs) -> u8 {
    let mut code = exit::OK;
    for path in &args.suites {
        match suite::load(path) {
            Ok(s) => println!(
                "{}: ok ({} tools, {} cases, variants: {})",
                path.display(),
                s.tools.len(),
                s.cases.len(),
                s.variants.join(", ")
            ),
            Err(e) => {
                eprintln!("error: {}", e.to_string().trim_end());
                code = exit::BAD_INPUT;
            }
        }
    }
    code
}
