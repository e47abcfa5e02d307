//! `toolgauge import when2call`: the command-line side of [`crate::when2call::import`].

use std::path::{Path, PathBuf};

use super::AppError;
use crate::cli::{ImportWhen2CallArgs, When2CallArgMatch};
use crate::exit;
use crate::when2call::import::{self, ArgMatch, ImportError, Options};

/// Write the suite and say what it holds; bad input is exit 2 with a hint.
pub(crate) fn import_when2call(args: &ImportWhen2CallArgs) -> Result<u8, AppError> {
    let opts = Options {
        args: match args.args {
            When2CallArgMatch::Values => ArgMatch::Values,
            When2CallArgMatch::Names => ArgMatch::Names,
            When2CallArgMatch::Tool => ArgMatch::Tool,
        },
        force: args.force,
    };
    let file = data_file(&args.file)?;
    let done = import::import(&file, &args.out, &opts).map_err(|e| match e {
        // A directory that cannot be created or written is the user's --out to fix.
        ImportError::Write { .. } => {
            AppError::bad(e.to_string(), Some("give --out a directory you can write to"))
        }
        ImportError::Exists { .. } => {
            AppError::bad(e.to_string(), Some("give --force to replace it, or another --out"))
        }
        ImportError::Item(_) | ImportError::Check { .. } => AppError::bad(
            e.to_string(),
            Some(
                "give a When2Call JSONL file (one item per line: uuid, question, correct_answer, \
                 tools, target_tool, answers), e.g. datasets/when2call/when2call_test_llm_judge.jsonl",
            ),
        ),
    })?;
    let labels: Vec<String> = done
        .by_label
        .iter()
        .map(|(b, n)| format!("{n} {}", b.label()))
        .collect();
    sayln!(
        "when2call: {} cases ({}; {} without tools) -> {}",
        done.cases(),
        labels.join(", "),
        done.without_tools,
        done.path.display()
    );
    if !done.unchecked.is_empty() {
        warnln!(
            "warning: {} example argument(s) do not fit their own parameter's schema (a defect of the data), so they are not demanded (the argument may be left out):",
            done.unchecked.len()
        );
        for u in &done.unchecked {
            warnln!(
                "  - line {} (uuid `{}`): `{}` = {}",
                u.line,
                u.uuid,
                u.param,
                u.value
            );
        }
    }
    Ok(exit::OK)
}

/// The file When2Call's test data is read from: `path` itself, or, for a directory (as
/// `import bfcl` takes), the LLM-judge test split inside it, where the dataset's own
/// layout keeps it (`data/test/`), or the directory's only JSONL file.
fn data_file(path: &Path) -> Result<PathBuf, AppError> {
    const NAME: &str = "when2call_test_llm_judge.jsonl";
    if !path.is_dir() {
        return Ok(path.to_path_buf());
    }
    for sub in ["", "test", "data/test"] {
        let f = path.join(sub).join(NAME);
        if f.is_file() {
            return Ok(f);
        }
    }
    let mut jsonl: Vec<PathBuf> = std::fs::read_dir(path)
        .map_err(|e| {
            AppError::bad(
                format!("can not read the directory `{}`: {e}", path.display()),
                None,
            )
        })?
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.is_file() && p.extension().is_some_and(|x| x == "jsonl"))
        .collect();
    jsonl.sort();
    match jsonl.as_slice() {
        [one] => Ok(one.clone()),
        [] => Err(AppError::bad(
            format!(
                "no When2Call data in `{}`: neither {NAME} (there, in test/ or in data/test/) nor any .jsonl file",
                path.display()
            ),
            Some("give the JSONL file, e.g. datasets/when2call/when2call_test_llm_judge.jsonl"),
        )),
        many => Err(AppError::bad(
            format!(
                "`{}` holds {} JSONL files and no {NAME}: {}",
                path.display(),
                many.len(),
                many.iter()
                    .map(|p| p.file_name().unwrap_or_default().to_string_lossy())
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
            Some("give the file to import"),
        )),
    }
}
