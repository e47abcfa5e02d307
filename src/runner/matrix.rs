//! Expanding a suite and its matrix into the ordered list of trials, restricted to the
//! cases and shards a run selected (see [`super::select`]).

use std::sync::{Arc, OnceLock};

use super::select::ShardSet;
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
    /// How many distractors each request adds (`distractors:`); `None` for suites
    /// without the axis.
    pub distractors: Option<u32>,
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
    /// Cells in order: target, then variant, then tool_choice, then distractor count.
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
    /// Which cases run, by index into `suite.cases` (`None`: all).
    selected: Option<Vec<bool>>,
    /// The shards whose trials run (`None`: all).
    shards: Option<ShardSet>,
    /// Token size of the tool definitions of (case, cell) requests with distractors,
    /// counted once (repeats send the same list).
    distractor_tokens: std::sync::Mutex<std::collections::HashMap<(usize, usize), u64>>,
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
                    // The count axis is innermost, so a cell's counts sit side by side.
                    let counts: Vec<Option<u32>> = match &suite.distractors {
                        Some(d) => d.n.iter().copied().map(Some).collect(),
                        None => vec![None],
                    };
                    for n in counts {
                        cells.push(Cell {
                            target: t.clone(),
                            variant: v.clone(),
                            tool_choice: m.clone(),
                            distractors: n,
                        });
                    }
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
            selected: None,
            shards: None,
            distractor_tokens: Default::default(),
        }
    }

    /// Run only the cases marked in `selected` (by index into `suite.cases`; `None`: all)
    /// and the trials of `shards` (`None`: all). Token estimates still cover the whole
    /// suite, so every shard of a run reports the same figures.
    pub fn restrict(&mut self, selected: Option<Vec<bool>>, shards: Option<ShardSet>) {
        self.selected = selected;
        self.shards = shards;
    }

    /// The shard (1-based, of `count`) of planned trial `t`; see
    /// [`crate::score::record::TrialId::shard`].
    pub fn shard_of(&self, t: PlannedTrial, count: u32) -> u32 {
        // A count joins the variant in the trial's identity, and the stream mode the
        // target, so trials at different counts or modes spread over shards on their
        // own (without the axes the identity is as before, and so is every shard).
        self.identity(t).shard(count)
    }

    /// The identity of planned trial `t`, as its record will have it
    /// ([`crate::score::record::TrialId::of`]): a distractor count joins the variant, the
    /// stream mode the target.
    pub fn identity(&self, t: PlannedTrial) -> crate::score::record::TrialId {
        let cell = &self.cells[t.cell];
        crate::score::record::TrialId {
            case_id: self.suite.cases[t.case].id.clone(),
            target: crate::score::stream::identity_target(&cell.target.spec, cell.target.stream)
                .into_owned(),
            variant: crate::score::distractors::identity_variant(&cell.variant, cell.distractors)
                .into_owned(),
            tool_choice: cell.tool_choice.to_string(),
            repeat: t.repeat,
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
            // Cases of imported suites often offer the same tools (BFCL's multi-turn items
            // share their classes' functions): each distinct list is counted once.
            let mut seen: std::collections::HashMap<u64, u64> = std::collections::HashMap::new();
            let total: u64 = sample
                .iter()
                .map(|own| match own {
                    Some(per_variant) => *seen
                        .entry(definitions_hash(&per_variant[i]))
                        .or_insert_with(|| tool_definition_tokens(&per_variant[i])),
                    None => *shared.get_or_init(|| tool_definition_tokens(&self.tools[i].1)),
                })
                .sum();
            total / sample.len().max(1) as u64
        })
    }

    /// The o200k_base token size of the system prompt `variant` sends to cases without
    /// one of their own, when some variant of the suite sets its own system prompt
    /// (`None` otherwise: every variant sends the same, so the figure tells them apart
    /// in nothing).
    pub fn system_tokens(&self, variant: &str) -> Option<u64> {
        if self.suite.variant_systems.is_empty() {
            return None;
        }
        Some(
            self.suite
                .system_in(variant)
                .map_or(0, crate::score::tokens::count),
        )
    }

    /// The o200k_base token size of the tool definitions of one request: the variant's
    /// (counted once), or those of a case with tools of its own.
    pub fn request_tool_tokens(&self, case: usize, variant: &str) -> u64 {
        match self.own_tools(case, variant) {
            Some(own) => crate::score::tokens::tool_definition_tokens(&own),
            None => self.tool_tokens(variant),
        }
    }

    /// The o200k_base token size of the tool definitions planned trial `t` sends: as
    /// [`Plan::request_tool_tokens`], or, in a cell with distractors, of the case's tools
    /// and its distractors (counted once per case and cell).
    pub fn trial_tool_tokens(&self, t: PlannedTrial) -> u64 {
        let cell = &self.cells[t.cell];
        if cell.distractors.is_none_or(|n| n == 0) {
            return self.request_tool_tokens(t.case, &cell.variant);
        }
        let key = (t.case, t.cell);
        if let Some(n) = self
            .distractor_tokens
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .get(&key)
        {
            return *n;
        }
        let (request, _) = self.request(t);
        let n = crate::score::tokens::tool_definition_tokens(&request.tools);
        self.distractor_tokens
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .insert(key, n);
        n
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
    /// to other modes are skipped in cells of those modes; cases and shards left out by
    /// [`Plan::restrict`] are skipped.
    pub fn trials(&self) -> Vec<PlannedTrial> {
        let mut out = Vec::new();
        for (ci, cell) in self.cells.iter().enumerate() {
            for (ki, case) in self.suite.cases.iter().enumerate() {
                if !case.applies_to(&cell.tool_choice)
                    || self
                        .selected
                        .as_ref()
                        .is_some_and(|s| s.get(ki) != Some(&true))
                {
                    continue;
                }
                for r in 0..self.repeats {
                    let t = PlannedTrial {
                        case: ki,
                        cell: ci,
                        repeat: r,
                    };
                    if let Some(s) = &self.shards
                        && !s.contains(self.shard_of(t, s.count))
                    {
                        continue;
                    }
                    out.push(t);
                }
            }
        }
        out
    }

    /// The distractors planned trial `t` offers beside its case's tools (the first `n` of
    /// its case's order in a cell of `distractors:`; none elsewhere): the judge tells a
    /// call of one of them, a wrong tool, from a call of a tool nobody offered.
    pub fn distractors_of(&self, t: PlannedTrial) -> Vec<&crate::chat::ToolDefinition> {
        match (self.cells[t.cell].distractors, &self.suite.distractors) {
            (Some(n), Some(d)) => d.for_case(t.case, n).collect(),
            _ => Vec::new(),
        }
    }

    /// The request and trial key of planned trial `t`.
    pub fn request(&self, t: PlannedTrial) -> (Request, TrialKey) {
        let cell = &self.cells[t.cell];
        let case = &self.suite.cases[t.case];
        let mut tools = self
            .own_tools(t.case, &cell.variant)
            .unwrap_or_else(|| self.tools_for(&cell.variant));
        if let (Some(n), Some(d)) = (cell.distractors, &self.suite.distractors)
            && n > 0
        {
            // The case's own tools first, as without distractors, then its first `n`.
            let mut all = tools.as_ref().clone();
            all.extend(d.for_case(t.case, n).cloned());
            tools = Arc::new(all);
        }
        let request = Request {
            messages: self.suite.messages_in(case, &cell.variant).into_owned(),
            tools,
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

/// A hash of a list of tool definitions (names, descriptions and parameter schemas), to
/// count the tokens of equal lists once.
fn definitions_hash(tools: &[crate::chat::ToolDefinition]) -> u64 {
    use std::hash::{Hash, Hasher};
    let mut h = std::collections::hash_map::DefaultHasher::new();
    for t in tools {
        t.name.hash(&mut h);
        t.description.hash(&mut h);
        t.parameters.to_string().hash(&mut h);
    }
    h.finish()
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

    #[test]
    fn shards_split_the_trials_into_disjoint_parts_and_a_mask_drops_cases() {
        let suite =
            Arc::new(crate::suite::load_str(SUITE, std::path::Path::new("t.yaml")).unwrap());
        let targets = [Target::parse("scripted:oracle").unwrap()];
        let modes = [ToolChoice::Auto, ToolChoice::Required];
        let variants = ["vague".to_string(), "clear".to_string()];
        let plan = |selected: Option<Vec<bool>>, shard: Option<(u32, u32)>| {
            let mut p = Plan::new(suite.clone(), &targets, &variants, &modes, 3);
            p.restrict(
                selected,
                shard.map(|(k, n)| ShardSet {
                    count: n,
                    indices: vec![k],
                }),
            );
            p.trials()
                .into_iter()
                .map(|t| (t.cell, t.case, t.repeat))
                .collect::<Vec<_>>()
        };
        let all = plan(None, None);
        // Case a in 4 cells, case b in the 2 auto cells; 3 repeats each.
        assert_eq!(all.len(), 18);
        let mut union = Vec::new();
        for k in 1..=3 {
            let part = plan(None, Some((k, 3)));
            // Each part keeps plan order, and holds only trials of its own shard.
            assert!(part.windows(2).all(|w| w[0] < w[1]));
            union.extend(part);
        }
        union.sort();
        assert_eq!(union, all, "every trial is in exactly one shard");
        let only_b = plan(Some(vec![false, true]), None);
        assert_eq!(only_b.len(), 6);
        assert!(only_b.iter().all(|(_, case, _)| *case == 1));
        // A shard of a selection is the selection's trials in that shard.
        let b_in_1 = plan(Some(vec![false, true]), Some((1, 2)));
        let in_1: Vec<_> = plan(None, Some((1, 2)))
            .into_iter()
            .filter(|(_, case, _)| *case == 1)
            .collect();
        assert_eq!(b_in_1, in_1);
    }

    /// One tool under four variants: as written, parameter descriptions, its own
    /// schema (no `seat`, a closed `class` enum), and another system prompt; one case
    /// with a system message of its own.
    const VARIANTS: &str = r#"
system: "Be helpful."
variants:
  plain: {}
  dated: {system: "Be helpful. Today is 2026-08-08."}
tools:
  - name: book
    description: "Book a train."
    variants:
      doc:
        parameter_descriptions: {date: "YYYY-MM-DD.", "stops[].city": "A stop."}
      strict:
        parameters: {type: object, properties: {date: {type: string}, class: {type: string, enum: [first]}}, required: [date], additionalProperties: false}
    parameters: {type: object, properties: {date: {type: string, description: "Day."}, class: {type: string, enum: [first, second]}, stops: {type: array, items: {type: object, properties: {city: {type: string}}}}}, required: [date]}
cases:
  - {id: a, kind: should_call, prompt: "明天 first class", expect: {calls: [{tool: book, args: {date: "2026-08-09"}}]}}
  - id: own
    kind: should_not_call
    messages: [{role: system, content: "Mine."}, {role: user, content: "hi"}]
"#;

    fn variants_plan() -> Plan {
        let suite =
            Arc::new(crate::suite::load_str(VARIANTS, std::path::Path::new("v.yaml")).unwrap());
        let variants: Vec<String> = ["plain", "doc", "strict", "dated"].map(String::from).into();
        Plan::new(
            suite,
            &[Target::parse("openai:gpt-4o-mini").unwrap()],
            &variants,
            &[ToolChoice::Auto],
            1,
        )
    }

    /// The OpenAI request body of case `case` under variant cell `cell`.
    fn body(plan: &Plan, cell: usize, case: usize) -> serde_json::Value {
        use crate::provider::config::ProviderConfig;
        use crate::provider::http::{Http, HttpSettings};
        let provider = crate::provider::openai::OpenAiProvider::new(
            ProviderConfig::new("openai", "gpt-4o-mini", "http://127.0.0.1:9"),
            Http::new(HttpSettings::default()).unwrap(),
        );
        let (request, _) = plan.request(PlannedTrial {
            case,
            cell,
            repeat: 0,
        });
        provider.build_body(&request).unwrap()
    }

    #[test]
    fn each_variant_sends_its_descriptions_schema_and_system_prompt() {
        use serde_json::json;
        let plan = variants_plan();
        let base = json!({"type": "object", "properties": {
            "date": {"type": "string", "description": "Day."},
            "class": {"type": "string", "enum": ["first", "second"]},
            "stops": {"type": "array", "items": {"type": "object", "properties": {"city": {"type": "string"}}}}},
            "required": ["date"]});
        let doc = json!({"type": "object", "properties": {
            "date": {"type": "string", "description": "YYYY-MM-DD."},
            "class": {"type": "string", "enum": ["first", "second"]},
            "stops": {"type": "array", "items": {"type": "object", "properties": {"city": {"type": "string", "description": "A stop."}}}}},
            "required": ["date"]});
        let strict = json!({"type": "object", "properties": {
            "date": {"type": "string"}, "class": {"type": "string", "enum": ["first"]}},
            "required": ["date"], "additionalProperties": false});
        let helpful = json!({"role": "system", "content": "Be helpful."});
        let dated = json!({"role": "system", "content": "Be helpful. Today is 2026-08-08."});
        let user = json!({"role": "user", "content": "明天 first class"});
        for (cell, params, system) in [
            (0, &base, &helpful),
            (1, &doc, &helpful),
            (2, &strict, &helpful),
            (3, &base, &dated),
        ] {
            let b = body(&plan, cell, 0);
            assert_eq!(
                b["tools"],
                json!([{"type": "function", "function": {"name": "book", "description": "Book a train.", "parameters": params}}]),
                "variant {}",
                plan.cells[cell].variant
            );
            assert_eq!(
                b["messages"],
                json!([system, user]),
                "variant {}",
                plan.cells[cell].variant
            );
        }
        // A case's own system message is never replaced.
        assert_eq!(
            body(&plan, 3, 1)["messages"],
            json!([{"role": "system", "content": "Mine."}, {"role": "user", "content": "hi"}])
        );
        // Variants that change nothing of a part send that part byte for byte: the same
        // schema (one shared value) and the same conversation.
        let (plain, _) = plan.request(PlannedTrial {
            case: 0,
            cell: 0,
            repeat: 0,
        });
        let (dated_req, _) = plan.request(PlannedTrial {
            case: 0,
            cell: 3,
            repeat: 0,
        });
        assert!(Arc::ptr_eq(
            &plain.tools[0].parameters,
            &dated_req.tools[0].parameters
        ));
        assert!(Arc::ptr_eq(
            &plain.tools[0].parameters,
            &plan.suite.tools[0].parameters
        ));
    }

    #[test]
    fn token_figures_count_the_exact_definitions_and_system_prompt() {
        use crate::score::tokens::count;
        let plan = variants_plan();
        for (cell, v) in ["plain", "doc", "strict", "dated"].iter().enumerate() {
            // The tool definitions as an OpenAI `tools` array, as the body sends them.
            let tools = body(&plan, cell, 0)["tools"].to_string();
            assert_eq!(plan.tool_tokens(v), count(&tools), "{v}");
        }
        assert!(plan.tool_tokens("doc") > plan.tool_tokens("plain"));
        assert_eq!(plan.system_tokens("plain"), Some(count("Be helpful.")));
        assert_eq!(plan.system_tokens("strict"), Some(count("Be helpful.")));
        assert_eq!(
            plan.system_tokens("dated"),
            Some(count("Be helpful. Today is 2026-08-08."))
        );
        // By hand: "Be", " helpful", ".".
        assert_eq!(plan.system_tokens("plain"), Some(3));
        // Without a variant that sets a system prompt there is no such figure.
        let suite =
            Arc::new(crate::suite::load_str(SUITE, std::path::Path::new("t.yaml")).unwrap());
        let plan = Plan::new(
            suite,
            &[Target::parse("scripted:oracle").unwrap()],
            &["vague".into()],
            &[ToolChoice::Auto],
            1,
        );
        assert_eq!(plan.system_tokens("vague"), None);
    }

    #[test]
    fn calls_are_scored_against_the_schema_the_variant_offered() {
        use crate::judge::CaseScorer;
        use crate::provider::{Response, ToolCall};
        let plan = variants_plan();
        let scorer = CaseScorer::new(&plan.suite, &plan.suite.cases[0]);
        let call = |args: &str| Response {
            tool_calls: vec![ToolCall {
                id: Some("c1".into()),
                name: "book".into(),
                arguments: args.into(),
            }],
            ..Response::default()
        };
        let codes = |variant: &str, args: &str| {
            let (checks, reasons) = scorer.score_variant(variant, &ToolChoice::Auto, &call(args));
            let codes: Vec<String> = reasons.into_iter().map(|r| r.code).collect();
            (checks.calls[0].schema_ok, codes)
        };
        // `second` is in the tool's enum, not in the strict variant's.
        let second = r#"{"date": "2026-08-09", "class": "second"}"#;
        assert_eq!(codes("plain", second), (Some(true), vec![]));
        assert_eq!(codes("doc", second), (Some(true), vec![]));
        assert_eq!(
            codes("strict", second),
            (Some(false), vec!["schema_violation".to_string()])
        );
        // `stops` exists in the tool's schema; the strict variant removed it.
        let stops = r#"{"date": "2026-08-09", "stops": []}"#;
        assert_eq!(codes("dated", stops), (Some(true), vec![]));
        assert_eq!(codes("strict", stops).1, ["schema_violation"]);
        // The plain scorer (no variant) keeps checking against the tool's own schema.
        assert!(scorer.score(&ToolChoice::Auto, &call(second)).1.is_empty());
    }

    #[test]
    fn values_are_grounded_in_the_system_prompt_the_variant_sent() {
        use crate::judge::CaseScorer;
        use crate::provider::{Response, ToolCall};
        let plan = variants_plan();
        let scorer = CaseScorer::new(&plan.suite, &plan.suite.cases[0]);
        // "2026-08-08" is only in the dated variant's system prompt.
        let r = Response {
            tool_calls: vec![ToolCall {
                id: Some("c1".into()),
                name: "book".into(),
                arguments: r#"{"date": "2026-08-08"}"#.into(),
            }],
            ..Response::default()
        };
        let ungrounded = |v: &str| {
            scorer.score_variant(v, &ToolChoice::Auto, &r).0.calls[0]
                .ungrounded
                .clone()
        };
        assert_eq!(ungrounded("plain"), ["date = \"2026-08-08\""]);
        assert!(ungrounded("dated").is_empty());
    }
}
