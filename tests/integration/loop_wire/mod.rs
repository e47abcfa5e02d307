//! Tool loops over HTTP: whole episodes played by the library's episode runner
//! (`toolgauge::episode::run_episode`) against local fake OpenAI-compatible, Ollama
//! (`/v1`), Anthropic and Gemini servers, with the suite's mocks answering the calls.
//!
//! The fake servers answer each round with a real response body from
//! `src/provider/testdata/` (copies of `../shared/wire-examples/`, sources in their
//! README), and the tests assert what the server received in the later rounds: the
//! assistant turns echoed (OpenAI `tool_calls`, Anthropic `thinking` blocks with their
//! signatures, Gemini `thoughtSignature`s), the tool results in each provider's form,
//! in call order, with the right ids, and injected faults as that provider's tool
//! error ([`openai`], [`ollama`], [`anthropic`], [`gemini`]). Also covered: compatible
//! servers that refuse what OpenAI lets pass ([`compat`]: DeepSeek's reasoning,
//! shared call ids, malformed arguments replayed to vLLM or Ollama), a turn's calls
//! answered out of order by a host whose executions finish in a set order ([`order`]),
//! and server faults in the middle of a loop ([`faults`]: 429 then success, a 500 that
//! persists, a refused key, malformed bodies, a timeout).
//!
//! Requests go through the same code as `toolgauge run`: the first request and trial
//! key come from the run plan (`runner::matrix::Plan`), keyless targets from
//! `provider::registry::live_provider`; targets that need a key are built from a
//! `ProviderConfig` holding the key, which is what `live_provider` does after reading
//! it from the environment (tests must not set process environment variables).

mod anthropic;
mod compat;
mod faults;
mod gemini;
mod ollama;
mod openai;
mod order;

use std::collections::HashMap;
use std::path::Path;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use secrecy::SecretString;
use serde_json::Value;
use toolgauge::episode::{EpisodeOutcome, run_episode};
use toolgauge::judge::{JudgeInput, judge_episode};
use toolgauge::provider::anthropic::AnthropicProvider;
use toolgauge::provider::config::ProviderConfig;
use toolgauge::provider::gemini::GeminiProvider;
use toolgauge::provider::http::{Http, HttpSettings};
use toolgauge::provider::openai::OpenAiProvider;
use toolgauge::provider::registry::{LiveSettings, live_provider};
use toolgauge::provider::{Message, Provider, Target, ToolChoice};
use toolgauge::runner::matrix::Plan;
use toolgauge::suite::Suite;
use toolgauge::tools::{ToolHost, suite_host};
use wiremock::matchers::method;
use wiremock::{Mock, MockServer, Respond, ResponseTemplate};

/// The key every keyed fake target is given; it must reach the server's auth header
/// and nothing else.
pub const KEY: &str = "sk-loop-wire-test-0123456789abcdef";

/// A real response body from `src/provider/testdata/`.
pub fn testdata(path: &str) -> Value {
    let file = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("src/provider/testdata")
        .join(path);
    let text = std::fs::read_to_string(&file)
        .unwrap_or_else(|e| panic!("failed to read {}: {e}", file.display()));
    serde_json::from_str(&text).unwrap_or_else(|e| panic!("{} is not JSON: {e}", file.display()))
}

/// A 200 answer with `body`.
pub fn ok(body: &Value) -> ResponseTemplate {
    ResponseTemplate::new(200).set_body_json(body)
}

// ---------------------------------------------------------------------------------
// The fake server
// ---------------------------------------------------------------------------------

/// Which round a request body belongs to: how many assistant turns it carries.
pub type RoundOf = fn(&Value) -> usize;

/// OpenAI-compatible and Anthropic bodies: assistant messages in `messages`.
pub fn assistant_turns(body: &Value) -> usize {
    count_role(&body["messages"], "assistant")
}

/// Gemini bodies: `model` contents.
pub fn model_turns(body: &Value) -> usize {
    count_role(&body["contents"], "model")
}

fn count_role(list: &Value, role: &str) -> usize {
    list.as_array()
        .map_or(0, |l| l.iter().filter(|m| m["role"] == role).count())
}

/// What a server demands of the request of round `n` (0-based), as a real server
/// would refuse it: `Err` says what is missing.
pub type Check = fn(usize, &Value) -> Result<(), String>;

/// Answers a loop round by round: round `n` (counted by [`RoundOf`]) gets
/// `replies[n][k]` on its `k`-th attempt (the last reply of a round repeats), so a
/// round can fail before it succeeds. A round past the script is a 400 naming it,
/// which fails the episode visibly; so is a request the `check` refuses.
struct Script {
    round_of: RoundOf,
    check: Option<Check>,
    replies: Vec<Vec<ResponseTemplate>>,
    attempts: Mutex<HashMap<usize, usize>>,
}

impl Respond for Script {
    fn respond(&self, request: &wiremock::Request) -> ResponseTemplate {
        let Ok(body) = serde_json::from_slice::<Value>(&request.body) else {
            return ResponseTemplate::new(400).set_body_string("fake: the body is not JSON");
        };
        let round = (self.round_of)(&body);
        if let Some(Err(why)) = self.check.map(|check| check(round, &body)) {
            return ResponseTemplate::new(400).set_body_json(serde_json::json!({"error": {
                "message": format!("fake: round {}: {why}", round + 1),
                "type": "invalid_request_error"
            }}));
        }
        let attempt = {
            let mut attempts = self.attempts.lock().unwrap();
            let n = attempts.entry(round).or_default();
            *n += 1;
            *n - 1
        };
        match self.replies.get(round) {
            Some(replies) => replies[attempt.min(replies.len() - 1)].clone(),
            None => ResponseTemplate::new(400)
                .set_body_string(format!("fake: the script has no round {}", round + 1)),
        }
    }
}

/// A local server playing `replies` (one list per round, see [`Script`]).
pub async fn serve(round_of: RoundOf, replies: Vec<Vec<ResponseTemplate>>) -> MockServer {
    serve_script(round_of, None, replies).await
}

/// A local server playing `replies` to the requests `check` accepts.
pub async fn serve_checked(
    round_of: RoundOf,
    check: Check,
    replies: Vec<Vec<ResponseTemplate>>,
) -> MockServer {
    serve_script(round_of, Some(check), replies).await
}

async fn serve_script(
    round_of: RoundOf,
    check: Option<Check>,
    replies: Vec<Vec<ResponseTemplate>>,
) -> MockServer {
    let server = MockServer::start().await;
    Mock::given(method("POST"))
        .respond_with(Script {
            round_of,
            check,
            replies,
            attempts: Mutex::default(),
        })
        .mount(&server)
        .await;
    server
}

/// Every request the server received, in arrival order.
pub async fn received(server: &MockServer) -> Vec<wiremock::Request> {
    server
        .received_requests()
        .await
        .expect("request recording is on")
}

/// The JSON bodies of every request the server received, in arrival order.
pub async fn bodies(server: &MockServer) -> Vec<Value> {
    received(server)
        .await
        .iter()
        .map(|r| serde_json::from_slice(&r.body).expect("a JSON request body"))
        .collect()
}

// ---------------------------------------------------------------------------------
// Targets and trials
// ---------------------------------------------------------------------------------

/// Retries that take milliseconds: three attempts, backoff from 1 ms, every wait
/// (`Retry-After` included) capped at 20 ms. The timeout is far above any answer of
/// the fake servers, so no count depends on the machine's speed.
pub fn fast() -> HttpSettings {
    HttpSettings {
        timeout: Duration::from_secs(30),
        max_attempts: 3,
        base_delay: Duration::from_millis(1),
        max_delay: Duration::from_millis(20),
    }
}

/// The live provider of a target that needs a key, built as `live_provider` builds it
/// once it has read the key (from `KEY_VAR`, named in failure messages).
pub fn keyed(spec: &str, http: HttpSettings) -> Arc<dyn Provider> {
    let target = Target::parse(spec).unwrap();
    let url = target.base_url.as_deref().expect("a test target has a URL");
    let mut config = ProviderConfig::new(&target.provider, &target.model, url);
    config.api_key = Some(SecretString::from(KEY.to_string()));
    config.key_var = Some("KEY_VAR".into());
    let http = Http::for_url(http, url).unwrap();
    match target.provider.as_str() {
        "anthropic" => Arc::new(AnthropicProvider::new(config, http)),
        "gemini" => Arc::new(GeminiProvider::new(config, http)),
        "openai" => Arc::new(OpenAiProvider::new(config, http)),
        other => panic!("no keyed test target for `{other}`"),
    }
}

/// The live provider of a keyless target (`ollama`, `openai-compatible`), from the
/// registry.
pub fn keyless(spec: &str, http: HttpSettings) -> Arc<dyn Provider> {
    let settings = LiveSettings {
        http,
        ..LiveSettings::default()
    };
    live_provider(&Target::parse(spec).unwrap(), &settings).unwrap()
}

/// One trial of a loop case, as a run plans it.
pub struct Trial {
    /// The loaded suite.
    pub suite: Arc<Suite>,
    /// The case's index.
    pub case: usize,
    /// The target spec.
    pub target: String,
    /// The trial's tool_choice mode (auto unless [`Trial::with_mode`] says otherwise).
    pub mode: ToolChoice,
}

impl Trial {
    /// Case `id` of the suite `yaml`, for `target` (first variant, tool_choice auto).
    pub fn new(yaml: &str, id: &str, target: &str) -> Trial {
        let suite = toolgauge::suite::load_str(yaml, Path::new("loop_wire.yaml"))
            .unwrap_or_else(|e| panic!("the test suite does not load: {e}"));
        let case = suite
            .cases
            .iter()
            .position(|c| c.id == id)
            .expect("the case");
        Trial {
            suite: Arc::new(suite),
            case,
            target: target.to_string(),
            mode: ToolChoice::Auto,
        }
    }

    /// The same trial under tool_choice `mode`.
    pub fn with_mode(mut self, mode: ToolChoice) -> Trial {
        self.mode = mode;
        self
    }

    /// Play the episode with `provider` and `host`.
    pub async fn play_with(&self, provider: &dyn Provider, host: &dyn ToolHost) -> EpisodeOutcome {
        let target = Target::parse(&self.target).unwrap();
        let plan = Plan::new(
            self.suite.clone(),
            &[target],
            &self.suite.variants[..1],
            std::slice::from_ref(&self.mode),
            1,
        );
        let planned = plan
            .trials()
            .into_iter()
            .find(|t| t.case == self.case)
            .expect("the case is planned");
        let (request, key) = plan.request(planned);
        let spec = self.suite.cases[self.case]
            .episode
            .clone()
            .expect("a loop case");
        run_episode(provider, host, spec, request, &key).await
    }

    /// Play the episode with `provider` and the suite's mocks.
    pub async fn play(&self, provider: &dyn Provider) -> EpisodeOutcome {
        self.play_with(provider, suite_host().as_ref()).await
    }

    /// The episode judge's reason codes for `outcome` (empty: the case passed).
    pub fn judge(&self, outcome: &EpisodeOutcome) -> Vec<String> {
        let case = &self.suite.cases[self.case];
        let traits = toolgauge::episode::tool_traits(&self.suite, case);
        let input = JudgeInput {
            expect: case.loop_expect.as_ref().expect("loop expectations"),
            tools: &traits,
            norm: self.suite.norm,
        };
        let episode = outcome.transcript().expect("a finished episode");
        judge_episode(&input, &episode)
            .0
            .into_iter()
            .map(|r| r.code)
            .collect()
    }
}

/// The tool messages the episode appended, as (call id, tool, content, is_error).
pub fn tool_messages(outcome: &EpisodeOutcome) -> Vec<(String, String, String, bool)> {
    outcome
        .messages
        .iter()
        .filter_map(|m| match m {
            Message::Tool {
                tool_call_id,
                name,
                content,
                is_error,
            } => Some((
                tool_call_id.clone(),
                name.clone(),
                content.clone(),
                *is_error,
            )),
            _ => None,
        })
        .collect()
}

/// The final text of an episode.
pub fn final_text(outcome: &EpisodeOutcome) -> Option<&str> {
    outcome.rounds.last()?.response.text.as_deref()
}

/// Owned tuple of a tool message, for comparing with [`tool_messages`].
pub fn tool(id: &str, name: &str, content: &str, is_error: bool) -> (String, String, String, bool) {
    (id.into(), name.into(), content.into(), is_error)
}

/// Panics when `text` holds the test key (it must reach only the auth header).
pub fn assert_no_key(text: &str) {
    assert!(!text.contains(KEY), "the API key leaked: {text}");
}
