//! Expanding a suite and its matrix into the ordered list of trials.

use std::sync::{Arc, OnceLock};

use crate::provider::{Request, Target, ToolChoice, ToolDefinition, TrialKey};
use crate::suite::Suite;

/// Cases whose own tools are tokenized to estimate a variant's mean tool-definition size.
pub const TOKEN_SAMPLE: usize = 100;

/// One cell of the matrix.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Cell {
    /// The model.
    pub target: Target,
    /// The description variant.
    pub variant: String,
    /// The tool_choice mode.
    pub tool_choice: ToolChoice,
}

/// One trial to run: a case in a cell, one repeat.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PlannedTrial {
    /// Index into `suite.cases`.
    pub case: usize,
    /// Index into the plan's cells.
    pub cell: usize,
    /// Repeat index.
    pub repeat: u32,
}

/// The cells and trials of a run.
#[derive(Debug)]
pub struct Plan {
    /// The suite.
    pub suite: Arc<Suite>,
    /// Cells in order: target, then variant, then tool_choice.
    pub cells: Vec<Cell>,
    /// Repeats per trial.
    pub repeats: u32,
    /// Tool definitions per variant (shared by every trial of the variant).
    pub tools: Vec<(String, Arc<Vec<ToolDefinition>>)>,
    /// For each case with tools of its own: its definitions per variant, in the order
    /// of `tools`.
    case_tools: Vec<Option<Vec<Arc<Vec<ToolDefinition>>>>>,
    /// Token size of each variant's tool definitions, counted on first use.
    tool_tokens: Vec<OnceLock<u64>>,
}

impl Plan {
    /// The plan for `targets × variants × modes` with `repeats`.
    pub fn new(
        suite: Arc<Suite>,
        targets: &[Target],
        variants: &[String],
        modes: &[ToolChoice],
        repeats: u32,
    ) -> Plan {
        let mut cells = Vec::new();
        for t in targets {
            for v in variants {
                for m in modes {
                    cells.push(Cell {
                        target: t.clone(),
                        variant: v.clone(),
                        tool_choice: m.clone(),
                    });
                }
            }
        }
        let tools: Vec<(String, Arc<Vec<ToolDefinition>>)> = variants
            .iter()
            .map(|v| {
                (
                    v.clone(),
                    Arc::new(suite.tools.iter().map(|t| t.definition(v)).collect()),
                )
            })
            .collect();
        let case_tools = suite
            .cases
            .iter()
            .map(|c| {
                c.tools.as_ref().map(|own| {
                    variants
                        .iter()
                        .map(|v| Arc::new(own.iter().map(|t| t.definition(v)).collect()))
                        .collect()
                })
            })
            .collect();
        Plan {
            suite,
            cells,
            repeats,
            tool_tokens: tools.iter().map(|_| OnceLock::new()).collect(),
            tools,
            case_tools,
        }
    }

    /// The o200k_base token size of `variant`'s tool definitions (counted once). When
    /// cases offer tools of their own, the mean over cases of the tools each offers,
    /// estimated from at most [`TOKEN_SAMPLE`] cases spread evenly over the suite
    /// (tokenizing every case's tools would cost more than scoring a whole imported
    /// benchmark).
    pub fn tool_tokens(&self, variant: &str) -> u64 {
        use crate::score::tokens::tool_definition_tokens;
        let Some(i) = self.tools.iter().position(|(v, _)| v == variant) else {
            return 0;
        };
        *self.tool_tokens[i].get_or_init(|| {
            if self.case_tools.iter().all(Option::is_none) {
                return tool_definition_tokens(&self.tools[i].1);
            }
            let shared = OnceLock::new();
            let n = self.case_tools.len();
            let step = n.div_ceil(TOKEN_SAMPLE).max(1);
            let sample: Vec<_> = self.case_tools.iter().step_by(step).collect();
            let total: u64 = sample
                .iter()
                .map(|own| match own {
                    Some(per_variant) => tool_definition_tokens(&per_variant[i]),
                    None => *shared.get_or_init(|| tool_definition_tokens(&self.tools[i].1)),
                })
                .sum();
            total / sample.len().max(1) as u64
        })
    }

    /// The o200k_base token size of the tool definitions of one request: the variant's
    /// (counted once), or those of a case with tools of its own.
    pub fn request_tool_tokens(&self, case: usize, variant: &str) -> u64 {
        match self.own_tools(case, variant) {
            Some(own) => crate::score::tokens::tool_definition_tokens(&own),
            None => self.tool_tokens(variant),
        }
    }

    /// The tool definitions of `variant` (the suite's; see [`Plan::request`] for cases
    /// with tools of their own).
    pub fn tools_for(&self, variant: &str) -> Arc<Vec<ToolDefinition>> {
        self.tools
            .iter()
            .find(|(v, _)| v == variant)
            .map(|(_, t)| t.clone())
            .unwrap_or_default()
    }

    fn own_tools(&self, case: usize, variant: &str) -> Option<Arc<Vec<ToolDefinition>>> {
        let per_variant = self.case_tools.get(case)?.as_ref()?;
        let i = self.tools.iter().position(|(v, _)| v == variant)?;
        per_variant.get(i).cloned()
    }

    /// Every trial, in a stable order: cell, then case, then repeat. Cases restricted
    /// to other modes are skipped in cells of those modes.
    pub fn trials(&self) -> Vec<PlannedTrial> {
        let mut out = Vec::new();
        for (ci, cell) in self.cells.iter().enumerate() {
            for (ki, case) in self.suite.cases.iter().enumerate() {
                if !case.applies_to(&cell.tool_choice) {
                    continue;
                }
                for r in 0..self.repeats {
                    out.push(PlannedTrial {
                        case: ki,
                        cell: ci,
                        repeat: r,
                    });
                }
            }
        }
        out
    }

    /// The request and trial key of planned trial `t`.
    pub fn request(&self, t: PlannedTrial) -> (Request, TrialKey) {
        let cell = &self.cells[t.cell];
        let case = &self.suite.cases[t.case];
        let request = Request {
            messages: case.messages.clone(),
            tools: self
                .own_tools(t.case, &cell.variant)
                .unwrap_or_else(|| self.tools_for(&cell.variant)),
            tool_choice: cell.tool_choice.clone(),
        };
        let key = TrialKey {
            case_id: case.id.clone(),
            target: cell.target.spec.clone(),
            variant: cell.variant.clone(),
            tool_choice: cell.tool_choice.clone(),
            repeat: t.repeat,
        };
        (request, key)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const SUITE: &str = r#"
tools:
  - name: get_weather
    variants: {vague: "Weather.", clear: "Current weather for one city."}
    parameters: {type: object, properties: {city: {type: string}}, required: [city]}
cases:
  - {id: a, kind: should_call, prompt: "北京？", expect: {calls: [{tool: get_weather, args: {city: 北京}}]}}
  - {id: b, kind: should_not_call, prompt: "hi", modes: [auto]}
"#;

    #[test]
    fn trial_order_is_cell_then_case_then_repeat() {
        let suite =
            Arc::new(crate::suite::load_str(SUITE, std::path::Path::new("t.yaml")).unwrap());
        let targets = [Target::parse("scripted:oracle").unwrap()];
        let modes = [ToolChoice::Auto, ToolChoice::Required];
        let plan = Plan::new(
            suite,
            &targets,
            &["vague".into(), "clear".into()],
            &modes,
            2,
        );
        assert_eq!(plan.cells.len(), 4);
        assert_eq!(plan.cells[1].tool_choice, ToolChoice::Required);
        assert_eq!(plan.cells[2].variant, "clear");
        let trials = plan.trials();
        // Case b runs only under auto: 2 auto cells × 2 cases × 2 repeats + 2 required cells × 1 case × 2.
        assert_eq!(trials.len(), 12);
        let first: Vec<(usize, usize, u32)> = trials
            .iter()
            .take(5)
            .map(|t| (t.cell, t.case, t.repeat))
            .collect();
        assert_eq!(
            first,
            vec![(0, 0, 0), (0, 0, 1), (0, 1, 0), (0, 1, 1), (1, 0, 0)]
        );
        let (req, key) = plan.request(trials[0]);
        assert_eq!(req.tools[0].description, "Weather.");
        assert_eq!(
            key.to_string(),
            "case `a` in cell scripted:oracle × vague × auto (repeat 0)"
        );
    }
}
