//! Checking target names (`PROVIDER:MODEL`) where they are written: a suite's
//! `matrix.targets` and `run --target`, so a mistyped provider is refused before a run
//! instead of failing every trial (or, under replay, missing every cassette entry).

use crate::provider::Target;
use crate::provider::registry::provider_names;

/// Why a target name was refused: the message and how to fix it.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{message}")]
pub struct TargetProblem {
    /// What is wrong, with the user's text.
    pub message: String,
    /// How to fix it.
    pub hint: String,
}

/// Parse `spec` and check that its provider exists.
pub fn check_target(spec: &str) -> Result<Target, TargetProblem> {
    let target = Target::parse(spec).map_err(|e| TargetProblem {
        message: e.to_string(),
        hint: "write PROVIDER:MODEL, e.g. `openai:gpt-4o-mini` or `scripted:oracle`".into(),
    })?;
    let known = provider_names();
    if !known.contains(&target.provider.as_str()) {
        let suggestion = crate::util::suggest::closest(&target.provider, known.iter().copied());
        let hint = match suggestion {
            Some(p) => format!(
                "did you mean {p}? (`{p}:{}`); providers are: {}",
                target.model,
                known.join(", ")
            ),
            None => format!("providers are: {}", known.join(", ")),
        };
        return Err(TargetProblem {
            message: format!("unknown provider `{}` in target `{spec}`", target.provider),
            hint,
        });
    }
    Ok(target)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn known_providers_pass_and_typos_get_a_suggestion() {
        for ok in [
            "openai:gpt-4o-mini",
            "scripted:oracle",
            "ollama:qwen2.5",
            "openai-compatible:m@http://127.0.0.1:8000/v1",
            "anthropic:claude-x",
            "gemini:gemini-2.5-flash",
        ] {
            assert_eq!(check_target(ok).map(|t| t.spec), Ok(ok.to_string()));
        }
        // Every provider the registry lists passes, those replaying files included.
        for name in provider_names() {
            let spec = format!("{name}:results/x.json");
            assert_eq!(check_target(&spec).map(|t| t.spec), Ok(spec.clone()));
        }
        let e = check_target("opnai:gpt-4o-mini").unwrap_err();
        assert_eq!(
            e.message,
            "unknown provider `opnai` in target `opnai:gpt-4o-mini`"
        );
        assert_eq!(
            e.hint,
            format!(
                "did you mean openai? (`openai:gpt-4o-mini`); providers are: {}",
                provider_names().join(", ")
            )
        );
        let e = check_target("mistral:large").unwrap_err();
        assert!(e.hint.starts_with("providers are: scripted,"), "{}", e.hint);
        let e = check_target("gpt-4o").unwrap_err();
        assert!(
            e.message.contains("expected PROVIDER:MODEL"),
            "{}",
            e.message
        );
    }
}
