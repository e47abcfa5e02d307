//! Scoring profiles' judges: the verdict a declared profile gives in place of toolgauge's
//! own checks, found by the profile's name in a registry of plugins.
//!
//! Today's checks (`crate::judge::calls::CaseScorer`) are the default judge: every suite
//! gets them, and they feed the metrics. A suite that declares a profile
//! (`crate::suite::profile`, which reads and compiles its settings) is judged by that
//! profile's [`ScoringProfile`], registered by the plugin with
//! `inventory::submit! { ProfileJudge { .. } }` beside its [`crate::suite::profile::ProfileFormat`].
//! The judge layer names no benchmark: a plugin's logic lives in its own module
//! (BFCL's: `crate::bfcl::profile`).

use crate::episode::EpisodeOutcome;
use crate::judge::calls::Reason;
use crate::provider::Response;
use crate::suite::profile::CompiledProfile;
use crate::suite::{Case, Suite};

/// A profile's judge of one case, prepared once per case and asked once per trial.
///
/// The default checks still run on every response (they feed the metrics); a case judge
/// decides the verdict and its reasons.
pub trait CaseJudge: Send + Sync {
    /// The reasons `response` fails (none when it passes).
    fn reasons(&self, response: &Response) -> Vec<Reason>;

    /// The tool a call named `called` means, when the profile lets models name tools
    /// otherwise than the suite does (e.g. `_` for `.`); `None`: the name as called.
    /// The default checks (known tool, schema, tool selection) then see the tool meant.
    fn tool_meant(&self, called: &str) -> Option<&str> {
        let _ = called;
        None
    }

    /// The profile's verdict on a played tool loop, in place of the default episode
    /// checks' (which still run and feed the metrics); `None`: the default checks decide.
    fn episode_reasons(&self, outcome: &EpisodeOutcome) -> Option<Vec<Reason>> {
        let _ = outcome;
        None
    }
}

/// How a compiled profile judges a suite's cases.
pub trait ScoringProfile: Send + Sync {
    /// Do now the per-tool work that judging `suite`'s cases will need (a run calls this
    /// on the thread that loads the next suite).
    fn prepare(&self, suite: &Suite);

    /// The judge of `case` of `suite`.
    fn case_judge(&self, suite: &Suite, case: &Case) -> Box<dyn CaseJudge>;
}

/// A profile plugin's judge: registered once per plugin with
/// `inventory::submit! { ProfileJudge { .. } }`.
pub struct ProfileJudge {
    /// The profile's name (its key under `profile:`).
    pub name: &'static str,
    /// The compiled profile's judge (`None` when `profile` is not this plugin's).
    pub judge: fn(&dyn CompiledProfile) -> Option<&dyn ScoringProfile>,
}

inventory::collect!(ProfileJudge);

/// The judge of the profile `suite` declares; `None` under toolgauge's own checks.
///
/// A declared profile always has one: a plugin registers its format and its judge
/// together, and a test checks every registered format has its judge.
pub fn scoring_profile(suite: &Suite) -> Option<&dyn ScoringProfile> {
    let profile = suite.profile.get()?;
    inventory::iter::<ProfileJudge>()
        .filter(|j| j.name == profile.name())
        .find_map(|j| (j.judge)(profile))
}

/// Do now the per-tool work the declared profile's judge will need.
pub fn prepare(suite: &Suite) {
    if let Some(p) = scoring_profile(suite) {
        p.prepare(suite);
    }
}

/// The judge of `case` of `suite`; `None` under toolgauge's own checks.
pub fn case_judge(suite: &Suite, case: &Case) -> Option<Box<dyn CaseJudge>> {
    scoring_profile(suite).map(|p| p.case_judge(suite, case))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_registered_profile_has_its_judge() {
        let formats = crate::suite::profile::formats();
        assert!(!formats.is_empty(), "no profile is registered");
        for f in formats {
            assert!(
                inventory::iter::<ProfileJudge>().any(|j| j.name == f.name),
                "profile `{}` has no registered judge",
                f.name
            );
        }
    }
}
