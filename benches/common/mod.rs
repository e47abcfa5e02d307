//! Shared fixtures for the criterion benches: a realistic generated suite (15 tools
//! from `benches/data/tools.yaml`, cases from 24 templates), synthetic trials with a
//! fixed mix of outcomes, and trial records for the metrics bench.
//!
//! Everything is deterministic (a fixed-seed xorshift), so runs compare.

#![allow(dead_code)]

use std::fmt::Write as _;
use std::path::Path;

use serde_json::{Map, Value, json};
use toolgauge::judge::calls::Reason;
use toolgauge::judge::{CaseScorer, TrialChecks};
use toolgauge::provider::{Response, ToolCall, ToolChoice, Usage};
use toolgauge::score::{TrialRecord, Verdict};
use toolgauge::suite::{CallsExpectation, Case, Expectation, Outcome, Suite};

/// The tools every bench suite offers (block-style YAML starting with `tools:`).
pub const TOOLS_YAML: &str = include_str!("../data/tools.yaml");

/// Number of case templates; case `i` uses template `i % TEMPLATES`.
pub const TEMPLATES: usize = 24;

const CITIES: &[(&str, &str, &str)] = &[
    ("北京", "Beijing", "PEK"),
    ("上海", "Shanghai", "PVG"),
    ("Paris", "巴黎", "CDG"),
    ("London", "伦敦", "LHR"),
    ("Tokyo", "東京", "HND"),
    ("New York", "NYC", "JFK"),
    ("São Paulo", "Sao Paulo", "GRU"),
    ("Berlin", "柏林", "BER"),
    ("Madrid", "马德里", "MAD"),
    ("Sydney", "悉尼", "SYD"),
];

const PEOPLE: &[(&str, &str)] = &[
    ("Li Wei", "li.wei@example.com"),
    ("Anna Schmidt", "anna.schmidt@example.de"),
    ("María García", "maria.garcia@example.es"),
    ("John Smith", "john.smith@example.com"),
    ("佐藤 花子", "hanako.sato@example.jp"),
];

const TICKERS: &[(&str, &str)] = &[
    ("AAPL", "NASDAQ"),
    ("MSFT", "NASDAQ"),
    ("BRK.B", "NYSE"),
    ("TSLA", "NASDAQ"),
    ("BABA", "NYSE"),
    ("HSBA", "LSE"),
];

const CURRENCIES: &[&str] = &["USD", "EUR", "CNY", "JPY", "GBP", "CHF"];
const LANGUAGES: &[(&str, &str)] = &[
    ("fr", "French"),
    ("de", "German"),
    ("zh-CN", "Chinese"),
    ("ja", "Japanese"),
    ("es", "Spanish"),
];
const COUNTRIES: &[(&str, &str)] = &[
    ("France", "Paris"),
    ("Japan", "Tokyo"),
    ("Brazil", "Brasília"),
    ("Kenya", "Nairobi"),
    ("Canada", "Ottawa"),
    ("Australia", "Canberra"),
];
const AMENITIES: &[&str] = &["wifi", "pool", "parking", "gym", "breakfast"];

/// A YAML double-quoted scalar (JSON strings are valid YAML).
fn q(s: &str) -> String {
    serde_json::to_string(s).expect("a string serialises")
}

fn date(i: usize) -> String {
    format!("2025-{:02}-{:02}", 1 + i % 12, 1 + i % 27)
}

fn next_day(i: usize, d: usize) -> String {
    format!("2025-{:02}-{:02}", 1 + i % 12, 1 + i % 27 + d)
}

/// The text of case `i` (two-space indented list item under `cases:`).
pub fn case_yaml(i: usize) -> String {
    let t = i % TEMPLATES;
    let k = i / TEMPLATES;
    let (city, alt, iata) = CITIES[(i / 3) % CITIES.len()];
    let (city2, alt2, iata2) = CITIES[(i / 3 + 1 + k) % CITIES.len()];
    let (person, email) = PEOPLE[i % PEOPLE.len()];
    let d = date(i);
    let mut s = String::new();
    let id = format!("t{t:02}-{i:04}");
    let head = |s: &mut String, kind: &str, tags: &str| {
        writeln!(s, "  - id: {id}\n    kind: {kind}\n    tags: [{tags}]").unwrap();
    };
    match t {
        0 => {
            head(&mut s, "should_call", "weather, single");
            writeln!(
                s,
                "    prompt: {}",
                q(&format!("What's the weather in {city} on {d}?"))
            )
            .unwrap();
            writeln!(s, "    expect:\n      calls:\n        - tool: get_weather").unwrap();
            writeln!(
                s,
                "          args: {{city: {{one_of: [{}, {}]}}, date: {}, units: {{optional: true}}}}",
                q(city),
                q(alt),
                q(&d)
            )
            .unwrap();
        }
        1 => {
            let n = 1 + i % 4;
            head(&mut s, "should_call", "travel, flights");
            writeln!(
                s,
                "    prompt: {}",
                q(&format!(
                    "Find me a business class flight from {city} ({iata}) to {city2} ({iata2}) on {d} for {n} passengers."
                ))
            )
            .unwrap();
            writeln!(
                s,
                "    expect:\n      calls:\n        - tool: search_flights"
            )
            .unwrap();
            writeln!(s, "          args:").unwrap();
            writeln!(
                s,
                "            origin: {iata}\n            destination: {iata2}"
            )
            .unwrap();
            writeln!(s, "            depart_date: {}", q(&d)).unwrap();
            writeln!(
                s,
                "            passengers: {{range: {{min: {n}, max: {n}}}}}"
            )
            .unwrap();
            writeln!(s, "            cabin: business").unwrap();
            writeln!(s, "            return_date: {{absent: true}}").unwrap();
        }
        2 => {
            head(&mut s, "should_call", "weather, parallel");
            writeln!(
                s,
                "    prompt: {}",
                q(&format!("{city}和{city2}今天多少度？"))
            )
            .unwrap();
            writeln!(s, "    expect:\n      calls:").unwrap();
            writeln!(
                s,
                "        - {{tool: get_weather, args: {{city: {{one_of: [{}, {}]}}}}}}",
                q(city),
                q(alt)
            )
            .unwrap();
            writeln!(
                s,
                "        - {{tool: get_weather, args: {{city: {{one_of: [{}, {}]}}}}}}",
                q(city2),
                q(alt2)
            )
            .unwrap();
        }
        3 => {
            let a = AMENITIES[i % AMENITIES.len()];
            let b = AMENITIES[(i + 2) % AMENITIES.len()];
            head(&mut s, "should_call", "travel, hotel");
            writeln!(
                s,
                "    prompt: {}",
                q(&format!(
                    "Book a hotel in {city} from {d} to {} for 2 guests, it must have {a} and {b}.",
                    next_day(i, 1)
                ))
            )
            .unwrap();
            writeln!(
                s,
                "    expect:\n      calls:\n        - tool: book_hotel\n          args:"
            )
            .unwrap();
            writeln!(s, "            city: {{one_of: [{}, {}]}}", q(city), q(alt)).unwrap();
            writeln!(
                s,
                "            check_in: {}\n            check_out: {}",
                q(&d),
                q(&next_day(i, 1))
            )
            .unwrap();
            writeln!(
                s,
                "            guests: 2\n            amenities: {{unordered: [{a}, {b}]}}"
            )
            .unwrap();
        }
        4 => {
            head(&mut s, "should_call", "email, conversation");
            writeln!(s, "    messages:").unwrap();
            writeln!(
                s,
                "      - {{role: user, content: {}}}",
                q(&format!("Email {person} that the meeting moved to {d}."))
            )
            .unwrap();
            writeln!(s, "      - role: assistant\n        tool_calls:").unwrap();
            writeln!(
                s,
                "          - {{id: call_a{i}, name: lookup_contact, arguments: {{name: {}, field: email}}}}",
                q(person)
            )
            .unwrap();
            writeln!(
                s,
                "      - {{role: tool, tool_call_id: call_a{i}, content: {}}}",
                q(&json!({"name": person, "email": email}).to_string())
            )
            .unwrap();
            writeln!(
                s,
                "    expect:\n      calls:\n        - tool: send_email\n          args:"
            )
            .unwrap();
            writeln!(s, "            to: [{}]", q(email)).unwrap();
            writeln!(
                s,
                "            subject: {{contains: meeting, normalize: [casefold]}}"
            )
            .unwrap();
            writeln!(s, "            body: {{regex: {}}}", q(&regex_escape(&d))).unwrap();
        }
        5 => {
            let from = CURRENCIES[i % CURRENCIES.len()];
            let to = CURRENCIES[(i + 1) % CURRENCIES.len()];
            let amount = 10 * (1 + i % 50);
            head(&mut s, "should_call", "finance, currency");
            writeln!(
                s,
                "    prompt: {}",
                q(&format!("How much is {amount}.50 {from} in {to}?"))
            )
            .unwrap();
            writeln!(
                s,
                "    expect:\n      calls:\n        - tool: convert_currency"
            )
            .unwrap();
            writeln!(
                s,
                "          args: {{amount: {{approx: {amount}.5, tolerance: 0.01}}, from_currency: {from}, to_currency: {{one_of: [{to}]}}}}"
            )
            .unwrap();
            writeln!(s, "          extra_args: deny").unwrap();
        }
        6 => {
            let n = 1 + i % 5;
            head(&mut s, "should_call", "commerce, nested");
            writeln!(
                s,
                "    prompt: {}",
                q(&format!(
                    "Order {n} of SKU A-{i} and one B-7 for {person} ({email}), express shipping to 1 Main St, {city}."
                ))
            )
            .unwrap();
            writeln!(
                s,
                "    expect:\n      calls:\n        - tool: create_order\n          args:"
            )
            .unwrap();
            writeln!(
                s,
                "            customer: {{name: {}, email: {}}}",
                q(person),
                q(email)
            )
            .unwrap();
            writeln!(
                s,
                "            items: {{unordered: [{{sku: A-{i}, quantity: {n}}}, {{sku: B-7, quantity: 1}}]}}"
            )
            .unwrap();
            writeln!(
                s,
                "            shipping: {{express: true, address: {{contains: {}}}}}",
                q("Main St")
            )
            .unwrap();
        }
        7 => {
            let (sym, ex) = TICKERS[i % TICKERS.len()];
            head(&mut s, "should_call", "finance, stocks");
            writeln!(
                s,
                "    prompt: {}",
                q(&format!("What is {sym} trading at on the {ex}?"))
            )
            .unwrap();
            writeln!(
                s,
                "    expect:\n      calls:\n        - tool: get_stock_quote"
            )
            .unwrap();
            writeln!(
                s,
                "          args: {{symbol: {{regex: {}}}, exchange: {{one_of: [{ex}], optional: true}}}}",
                q(&format!("^{}$", regex_escape(sym)))
            )
            .unwrap();
        }
        8 => {
            let (code, lang) = LANGUAGES[i % LANGUAGES.len()];
            head(&mut s, "should_call", "language");
            writeln!(
                s,
                "    prompt: {}",
                q(&format!(
                    "Translate \"The train to {city} leaves at nine\" into {lang}."
                ))
            )
            .unwrap();
            writeln!(
                s,
                "    expect:\n      calls:\n        - tool: translate_text"
            )
            .unwrap();
            writeln!(
                s,
                "          args: {{text: {{contains: {}, normalize: [casefold, whitespace]}}, target_language: {{one_of: [{code}, {}]}}}}",
                q(&format!("train to {city}")),
                q(&format!("{}-XX", code.split('-').next().unwrap_or(code)))
            )
            .unwrap();
        }
        9 => {
            let (a, b) = (17 + i, 23 + k);
            head(&mut s, "should_call", "math");
            writeln!(
                s,
                "    prompt: {}",
                q(&format!("What is {a} * {b} exactly?"))
            )
            .unwrap();
            writeln!(s, "    expect:\n      calls:\n        - tool: calculate").unwrap();
            writeln!(
                s,
                "          args: {{expression: {{regex: {}}}, precision: {{type: integer, optional: true}}}}",
                q(&format!("^\\s*{a}\\s*\\*\\s*{b}\\s*$"))
            )
            .unwrap();
            writeln!(s, "          extra_args: deny").unwrap();
        }
        10 => {
            head(&mut s, "should_call", "search");
            writeln!(
                s,
                "    prompt: {}",
                q(&format!(
                    "Search the web for the opening hours of the {city} public library."
                ))
            )
            .unwrap();
            writeln!(s, "    expect:\n      calls:\n        - tool: search_web").unwrap();
            writeln!(
                s,
                "          args: {{query: {{contains: library, normalize: [casefold]}}, max_results: {{range: {{min: 1, max: 20}}, optional: true}}}}"
            )
            .unwrap();
        }
        11 => {
            head(&mut s, "should_call", "reminder");
            writeln!(
                s,
                "    prompt: {}",
                q(&format!("Remind me every day at 8am to call {person}."))
            )
            .unwrap();
            writeln!(s, "    expect:\n      calls:\n        - tool: set_reminder").unwrap();
            writeln!(
                s,
                "          args: {{message: {{contains: {}}}, remind_at: {{type: string}}, recurrence: daily}}",
                q(person)
            )
            .unwrap();
        }
        12 => {
            let (p2, _) = PEOPLE[(i + 1) % PEOPLE.len()];
            head(&mut s, "should_call", "calendar");
            writeln!(s, "    messages:").unwrap();
            writeln!(
                s,
                "      - {{role: system, content: {}}}",
                q("You manage the user's calendar. Times are in the user's local time zone.")
            )
            .unwrap();
            writeln!(
                s,
                "      - {{role: user, content: {}}}",
                q(&format!(
                    "Set up a project sync with {person} and {p2} on {d} at 10:00 in {city}."
                ))
            )
            .unwrap();
            writeln!(
                s,
                "    expect:\n      calls:\n        - tool: create_event\n          args:"
            )
            .unwrap();
            writeln!(s, "            title: {{regex: {}}}", q("(?i)sync")).unwrap();
            writeln!(
                s,
                "            start: {{regex: {}}}",
                q(&format!("^{d}T10:00"))
            )
            .unwrap();
            writeln!(
                s,
                "            attendees: {{unordered: [{}, {}]}}",
                q(person),
                q(p2)
            )
            .unwrap();
            writeln!(
                s,
                "            location: {{optional: true, contains: {}}}",
                q(city)
            )
            .unwrap();
        }
        13 => {
            head(&mut s, "should_call", "maps");
            writeln!(
                s,
                "    prompt: {}",
                q(&format!("How do I get from {city} central station to the airport by public transport, avoiding ferries?"))
            )
            .unwrap();
            writeln!(
                s,
                "    expect:\n      count: at_least\n      calls:\n        - tool: get_directions"
            )
            .unwrap();
            writeln!(
                s,
                "          args: {{origin: {{contains: station, normalize: [casefold]}}, destination: {{contains: airport, normalize: [casefold]}}, mode: transit, avoid: {{unordered: [ferries]}}}}"
            )
            .unwrap();
        }
        14 => {
            head(&mut s, "should_call", "travel, parallel");
            writeln!(
                s,
                "    prompt: {}",
                q(&format!("Find flights {iata} to {iata2} on {d} and book a hotel in {city2} from {d} to {}.", next_day(i, 2)))
            )
            .unwrap();
            writeln!(s, "    expect:\n      calls:").unwrap();
            writeln!(
                s,
                "        - {{tool: search_flights, args: {{origin: {iata}, destination: {iata2}, depart_date: {}}}}}",
                q(&d)
            )
            .unwrap();
            writeln!(
                s,
                "        - {{tool: book_hotel, args: {{city: {{one_of: [{}, {}]}}, check_in: {}, check_out: {}}}}}",
                q(city2),
                q(alt2),
                q(&d),
                q(&next_day(i, 2))
            )
            .unwrap();
        }
        15 => {
            let (country, capital) = COUNTRIES[i % COUNTRIES.len()];
            head(&mut s, "should_not_call", "knowledge");
            writeln!(
                s,
                "    prompt: {}",
                q(&format!("What is the capital of {country}?"))
            )
            .unwrap();
            writeln!(s, "    expect: {{contains: [{}]}}", q(capital)).unwrap();
        }
        16 => {
            head(&mut s, "should_not_call", "chitchat");
            writeln!(
                s,
                "    prompt: {}",
                q(&format!("Tell me a short joke about {city}."))
            )
            .unwrap();
            writeln!(s, "    expect: {{regex: {}}}", q("(?i)\\w+.*[.!?]")).unwrap();
        }
        17 => {
            head(&mut s, "should_not_call", "chitchat");
            writeln!(s, "    prompt: {}", q("Thanks, that's all for now!")).unwrap();
        }
        18 => {
            head(&mut s, "should_not_call", "knowledge");
            writeln!(
                s,
                "    prompt: {}",
                q("Explain in two sentences what a JSON Schema is.")
            )
            .unwrap();
            writeln!(s, "    expect: {{contains: [schema, JSON]}}").unwrap();
        }
        19 => {
            head(&mut s, "should_not_call", "math");
            writeln!(s, "    prompt: {}", q(&format!("What is {} + {}?", k, 2))).unwrap();
            writeln!(s, "    expect: {{contains: [{}]}}", q(&(k + 2).to_string())).unwrap();
        }
        20 => {
            head(&mut s, "ambiguous", "weather, vague");
            writeln!(s, "    prompt: {}", q("What's the weather like?")).unwrap();
            writeln!(s, "    expect:\n      any_of:\n        - clarify: true").unwrap();
            writeln!(
                s,
                "        - calls: [{{tool: get_weather, args: {{city: {{type: string}}}}}}]"
            )
            .unwrap();
        }
        21 => {
            head(&mut s, "ambiguous", "music");
            writeln!(s, "    prompt: {}", q("Put some music on.")).unwrap();
            writeln!(s, "    expect:\n      any_of:").unwrap();
            writeln!(s, "        - calls: [{{tool: play_music, args: {{shuffle: {{optional: true, type: boolean}}}}}}]").unwrap();
            writeln!(s, "        - {{clarify: true, contains: [music]}}").unwrap();
        }
        22 => {
            head(&mut s, "ambiguous", "travel, vague");
            writeln!(
                s,
                "    prompt: {}",
                q(&format!("I need somewhere to stay in {city}."))
            )
            .unwrap();
            writeln!(
                s,
                "    expect:\n      any_of:\n        - {{clarify: true, regex: {}}}",
                q("(?i)date|when")
            )
            .unwrap();
            writeln!(
                s,
                "        - calls: [{{tool: book_hotel, args: {{city: {{one_of: [{}, {}]}}}}}}]",
                q(city),
                q(alt)
            )
            .unwrap();
            writeln!(s, "        - {{no_call: true, contains: [hotel]}}").unwrap();
        }
        _ => {
            head(&mut s, "should_call", "contacts, modes");
            writeln!(
                s,
                "    prompt: {}",
                q(&format!("What's {person}'s phone number?"))
            )
            .unwrap();
            writeln!(s, "    modes: [auto, required, none]").unwrap();
            writeln!(
                s,
                "    expect:\n      calls:\n        - tool: lookup_contact"
            )
            .unwrap();
            writeln!(s, "          args: {{name: {}, field: phone}}", q(person)).unwrap();
            writeln!(
                s,
                "    per_mode:\n      - modes: [none]\n        kind: ambiguous"
            )
            .unwrap();
            writeln!(
                s,
                "        expect: {{any_of: [{{clarify: true}}, {{no_call: true, contains: [contacts]}}]}}"
            )
            .unwrap();
        }
    }
    s
}

fn regex_escape(s: &str) -> String {
    regex::escape(s)
}

/// A whole suite with `cases` cases: the 15 tools, two variants, three tool_choice modes.
pub fn suite_yaml(cases: usize) -> String {
    let mut s = String::with_capacity(64 * 1024 + cases * 400);
    s.push_str("name: bench-suite\n");
    s.push_str("description: Generated by benches/common for the toolgauge benches.\n");
    s.push_str("normalize: [whitespace, fullwidth]\n");
    s.push_str("defaults: {count: exact, extra_args: allow}\n");
    s.push_str(TOOLS_YAML);
    s.push_str("cases:\n");
    for i in 0..cases {
        s.push_str(&case_yaml(i));
    }
    s.push_str("matrix:\n  targets: [openai:gpt-4o-mini]\n  variants: [vague, clear]\n");
    s.push_str("  tool_choice: [auto, required, none]\n  repeats: 1\n");
    s.push_str("thresholds:\n  - {metric: accuracy, min: 0.8}\n");
    s.push_str("  - {metric: invalid_call_rate, max: 0.05}\n");
    s.push_str("  - {metric: trigger_recall, min: 0.9, variant: clear}\n");
    s
}

/// Load the generated suite (panics if it does not compile: the generator is wrong).
pub fn suite(cases: usize) -> Suite {
    let text = suite_yaml(cases);
    match toolgauge::suite::load_str(&text, Path::new("bench-suite.yaml")) {
        Ok(s) => s,
        Err(e) => panic!("generated suite does not load:\n{e}"),
    }
}

/// The kinds of synthetic response, each a way a model answers.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ResponseKind {
    /// Exactly the expected calls (or the expected text when no call is expected).
    Right,
    /// Right tool, one argument wrong.
    WrongArgs,
    /// A different tool than expected, with valid arguments for it.
    WrongTool,
    /// A plain text answer with no call.
    NoCall,
    /// The expected tool with arguments that are not JSON.
    BadJson,
    /// The expected tool with arguments of the wrong types.
    SchemaViolation,
    /// The expected calls plus an extra call in the same turn.
    Parallel,
    /// A text answer that asks a clarifying question.
    Clarify,
}

/// Weights (out of 100) of each kind in the default mix.
pub const MIX: &[(ResponseKind, u32)] = &[
    (ResponseKind::Right, 35),
    (ResponseKind::WrongArgs, 8),
    (ResponseKind::WrongTool, 10),
    (ResponseKind::NoCall, 12),
    (ResponseKind::BadJson, 6),
    (ResponseKind::SchemaViolation, 8),
    (ResponseKind::Parallel, 10),
    (ResponseKind::Clarify, 11),
];

/// One synthetic trial to score.
pub struct Trial {
    /// Index into `suite.cases`.
    pub case: usize,
    /// The tool_choice mode.
    pub mode: ToolChoice,
    /// What the "model" answered.
    pub response: Response,
    /// How the response was made.
    pub kind: ResponseKind,
}

/// A small deterministic generator (xorshift64*).
pub struct Rng(u64);

impl Rng {
    /// Seeded generator.
    pub fn new(seed: u64) -> Rng {
        Rng(seed.max(1))
    }

    /// Next value.
    pub fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }

    /// Uniform in `0..n`.
    pub fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }
}

/// Valid arguments for each tool (used for wrong-tool and extra calls).
fn sample_args(tool: &str) -> Value {
    match tool {
        "get_weather" => json!({"city": "Paris"}),
        "search_flights" => {
            json!({"origin": "PEK", "destination": "CDG", "depart_date": "2025-03-04"})
        }
        "book_hotel" => {
            json!({"city": "London", "check_in": "2025-05-01", "check_out": "2025-05-03"})
        }
        "send_email" => json!({"to": ["a@example.com"], "subject": "Hello", "body": "Hi there."}),
        "create_event" => json!({"title": "Lunch", "start": "2025-04-02T12:00"}),
        "convert_currency" => json!({"amount": 12.5, "from_currency": "USD", "to_currency": "EUR"}),
        "get_stock_quote" => json!({"symbol": "AAPL"}),
        "translate_text" => json!({"text": "hello", "target_language": "fr"}),
        "set_reminder" => json!({"message": "stretch", "remind_at": "2025-01-01T09:00"}),
        "search_web" => json!({"query": "toolgauge benchmarks", "max_results": 5}),
        "get_directions" => json!({"origin": "home", "destination": "work", "mode": "walking"}),
        "create_order" => {
            json!({"customer": {"name": "Li Wei", "email": "li.wei@example.com"}, "items": [{"sku": "A-1", "quantity": 1}]})
        }
        "lookup_contact" => json!({"name": "John Smith", "field": "email"}),
        "play_music" => json!({"playlist": "Focus", "shuffle": true}),
        _ => json!({"expression": "6 * 7"}),
    }
}

fn first_calls(e: &Expectation) -> Option<&CallsExpectation> {
    match e {
        Expectation::Calls(c) => Some(c),
        Expectation::AnyOf(o) => o.iter().find_map(|o| match o {
            Outcome::Calls(c) => Some(c),
            _ => None,
        }),
        Expectation::NoCall(_) => None,
    }
}

/// The text a right answer gives when no call is expected.
fn right_text(e: &Expectation) -> String {
    let contains = match e {
        Expectation::NoCall(t) => &t.contains,
        Expectation::AnyOf(o) => match o.iter().find(|o| !matches!(o, Outcome::Calls(_))) {
            Some(Outcome::Clarify(t)) => {
                return format!(
                    "{} Could you tell me which city and dates you mean?",
                    t.contains.join(" ")
                );
            }
            Some(Outcome::NoCall(t)) => &t.contains,
            _ => return "Which one do you mean?".into(),
        },
        Expectation::Calls(_) => return "Here is what I found.".into(),
    };
    if contains.is_empty() {
        "You're welcome! Let me know if there is anything else.".into()
    } else {
        format!("Sure. {}. Hope that helps!", contains.join(", "))
    }
}

/// Arguments satisfying each matcher that has an easy example.
fn oracle_args(c: &toolgauge::suite::ExpectedCall) -> Map<String, Value> {
    let mut args = Map::new();
    for (name, m) in &c.args {
        if !m.optional
            && let Some(v) = m.example()
        {
            args.insert(name.clone(), v);
        }
    }
    args
}

fn call(i: usize, name: &str, arguments: String) -> ToolCall {
    ToolCall {
        id: Some(format!("call_{}", i + 1)),
        name: name.to_string(),
        arguments,
    }
}

/// The response of `kind` to `case` under `mode`.
pub fn response(
    suite: &Suite,
    case: &Case,
    mode: &ToolChoice,
    kind: ResponseKind,
    n: usize,
) -> Response {
    let (_, expect) = case.effective(mode);
    let expected = first_calls(expect);
    let expected_tool = expected
        .and_then(|e| e.calls.first())
        .map(|c| c.tool.as_str())
        .unwrap_or(suite.tools[n % suite.tools.len()].name.as_str());
    let other_tool = suite
        .tools
        .iter()
        .map(|t| t.name.as_str())
        .filter(|t| *t != expected_tool)
        .nth(n % (suite.tools.len() - 1))
        .unwrap_or("calculate");
    let right_calls = || -> Vec<ToolCall> {
        match expected {
            Some(e) => e
                .calls
                .iter()
                .enumerate()
                .map(|(i, c)| call(i, &c.tool, Value::Object(oracle_args(c)).to_string()))
                .collect(),
            None => vec![call(
                0,
                expected_tool,
                sample_args(expected_tool).to_string(),
            )],
        }
    };
    let text = |t: String| Response {
        text: Some(t),
        ..Response::default()
    };
    let mut r = match kind {
        ResponseKind::Right => match expect {
            Expectation::NoCall(_) => text(right_text(expect)),
            _ => Response {
                tool_calls: right_calls(),
                ..Response::default()
            },
        },
        ResponseKind::WrongArgs => {
            let mut calls = right_calls();
            if let Some(c) = calls.first_mut() {
                let mut v: Value = serde_json::from_str(&c.arguments).unwrap_or(json!({}));
                if let Some(obj) = v.as_object_mut() {
                    let key = obj.keys().next().cloned().unwrap_or_else(|| "city".into());
                    obj.insert(key, Value::from("Atlantis"));
                }
                c.arguments = v.to_string();
            }
            Response {
                tool_calls: calls,
                ..Response::default()
            }
        }
        ResponseKind::WrongTool => Response {
            tool_calls: vec![call(0, other_tool, sample_args(other_tool).to_string())],
            ..Response::default()
        },
        ResponseKind::NoCall => text("I'm sorry, I can't look that up right now.".into()),
        ResponseKind::BadJson => {
            let mut calls = right_calls();
            if let Some(c) = calls.first_mut() {
                c.arguments.pop();
                c.arguments.push_str(",\"");
            }
            Response {
                tool_calls: calls,
                ..Response::default()
            }
        }
        ResponseKind::SchemaViolation => {
            let schema = toolgauge::scripted::wrong_types(
                suite
                    .tools
                    .iter()
                    .find(|t| t.name == expected_tool)
                    .map(|t| &*t.parameters),
            );
            Response {
                tool_calls: vec![call(0, expected_tool, schema.to_string())],
                ..Response::default()
            }
        }
        ResponseKind::Parallel => {
            let mut calls = right_calls();
            let extra = if n.is_multiple_of(2) {
                other_tool
            } else {
                expected_tool
            };
            calls.push(call(calls.len(), extra, sample_args(extra).to_string()));
            Response {
                tool_calls: calls,
                ..Response::default()
            }
        }
        ResponseKind::Clarify => text(right_text(expect)),
    };
    let calls = !r.tool_calls.is_empty();
    r.finish_reason = Some(if calls { "tool_calls" } else { "stop" }.into());
    r.usage = Some(Usage {
        input_tokens: 900 + (n % 300) as u64,
        output_tokens: 20 + (n % 60) as u64,
        estimated: false,
        ..Default::default()
    });
    r.latency_ms = 250.0 + (n % 997) as f64;
    r
}

/// `n` trials over every case of `suite`, in a fixed pseudo-random order, with modes
/// auto (50%), required (30%) and none (20%) and the response kinds weighted by [`MIX`].
pub fn trials(suite: &Suite, n: usize, seed: u64) -> Vec<Trial> {
    trials_of(suite, n, seed, None)
}

/// Like [`trials`], with every response of `only` kind when given.
pub fn trials_of(suite: &Suite, n: usize, seed: u64, only: Option<ResponseKind>) -> Vec<Trial> {
    let mut rng = Rng::new(seed);
    let total: u32 = MIX.iter().map(|(_, w)| w).sum();
    let mut out = Vec::with_capacity(n);
    while out.len() < n {
        let ci = rng.below(suite.cases.len());
        let case = &suite.cases[ci];
        let mode = match rng.below(10) {
            0..=4 => ToolChoice::Auto,
            5..=7 => ToolChoice::Required,
            _ => ToolChoice::None,
        };
        if !case.applies_to(&mode) {
            continue;
        }
        let kind = only.unwrap_or_else(|| {
            let mut x = rng.below(total as usize) as u32;
            MIX.iter()
                .find(|(_, w)| {
                    if x < *w {
                        true
                    } else {
                        x -= w;
                        false
                    }
                })
                .map_or(ResponseKind::Right, |(k, _)| *k)
        });
        let response = response(suite, case, &mode, kind, out.len());
        out.push(Trial {
            case: ci,
            mode,
            response,
            kind,
        });
    }
    out
}

/// One prepared scorer per case, in case order.
pub fn scorers(suite: &Suite) -> Vec<CaseScorer<'_>> {
    CaseScorer::for_suite(suite)
}

/// Score every trial; returns how many passed (so the work is observable).
pub fn score_all(scorers: &[CaseScorer<'_>], trials: &[Trial]) -> usize {
    let mut passed = 0;
    for t in trials {
        let (checks, reasons): (TrialChecks, Vec<Reason>) =
            scorers[t.case].score(&t.mode, &t.response);
        std::hint::black_box(&checks);
        passed += usize::from(reasons.is_empty());
    }
    passed
}

/// Full trial records (as a run keeps them) for the metrics bench: scored trials over
/// two targets, both variants and three repeats, with 2% provider errors.
pub fn records(suite: &Suite, trials: Vec<Trial>) -> Vec<TrialRecord> {
    let scorers = scorers(suite);
    let targets = ["openai:gpt-4o-mini", "anthropic:claude-haiku"];
    let variants = ["vague", "clear"];
    trials
        .into_iter()
        .enumerate()
        .map(|(i, t)| {
            let case = &suite.cases[t.case];
            let (kind, _) = case.effective(&t.mode);
            let mut r = TrialRecord {
                judge: Vec::new(),
                case_id: case.id.clone(),
                kind,
                tags: case.tags.clone(),
                target: targets[i % 2].to_string(),
                variant: variants[(i / 2) % 2].to_string(),
                tool_choice: t.mode.clone(),
                repeat: ((i / 4) % 3) as u32,
                stream: false,
                messages: case.messages.clone(),
                response: None,
                checks: None,
                verdict: Verdict::Error,
                reasons: Vec::new(),
                cost_usd: None,
                distractors: None,
                episode: None,
            };
            if i % 50 == 49 {
                r.reasons
                    .push(Reason::new("provider_error", "HTTP 503 from the provider"));
                return r;
            }
            let (checks, reasons) = scorers[t.case].score(&t.mode, &t.response);
            r.verdict = if reasons.is_empty() {
                Verdict::Pass
            } else {
                Verdict::Fail
            };
            r.reasons = reasons;
            r.checks = Some(checks);
            r.cost_usd = Some(0.000_15 * (i % 7) as f64);
            r.response = Some(t.response);
            r
        })
        .collect()
}
