//! BFCL's `TravelAPI` (travel_booking): a token-protected account with credit cards,
//! flight bookings, insurance and a few lookups. Ids and card balances come from the
//! instance's own `random.Random`, in call order.

use std::sync::LazyLock;

use super::seeded_random;
use super::tables::{TABLES, pair};
use super::{
    Method, PyException, World, bind_method, config_get, dict, error, get, opt, py_arith, py_cmp,
    py_float, req, s, set_key,
};
use crate::bfcl::pyfmt::{py_repr, py_str};
use crate::bfcl::pyrandom::Random;
use crate::bfcl::value::PyValue;

const CLASS: &str = "TravelAPI";

/// Seed used when the config sets no `random_seed` (no dataset item does).
const DEFAULT_SEED: i128 = 141053;

const METHODS: &[Method] = &[
    (
        "authenticate_travel",
        &[
            req("client_id"),
            req("client_secret"),
            req("refresh_token"),
            req("grant_type"),
            req("user_first_name"),
            req("user_last_name"),
        ],
    ),
    ("travel_get_login_status", &[]),
    (
        "get_budget_fiscal_year",
        &[
            opt("lastModifiedAfter", "None"),
            opt("includeRemoved", "None"),
        ],
    ),
    (
        "register_credit_card",
        &[
            req("access_token"),
            req("card_number"),
            req("expiration_date"),
            req("cardholder_name"),
            req("card_verification_number"),
        ],
    ),
    (
        "get_flight_cost",
        &[
            req("travel_from"),
            req("travel_to"),
            req("travel_date"),
            req("travel_class"),
        ],
    ),
    (
        "get_credit_card_balance",
        &[req("access_token"), req("card_id")],
    ),
    (
        "book_flight",
        &[
            req("access_token"),
            req("card_id"),
            req("travel_date"),
            req("travel_from"),
            req("travel_to"),
            req("travel_class"),
        ],
    ),
    (
        "retrieve_invoice",
        &[
            req("access_token"),
            opt("booking_id", "None"),
            opt("insurance_id", "None"),
        ],
    ),
    ("get_booking_history", &[req("access_token")]),
    ("list_all_airports", &[]),
    ("cancel_booking", &[req("access_token"), req("booking_id")]),
    (
        "compute_exchange_rate",
        &[req("base_currency"), req("target_currency"), req("value")],
    ),
    (
        "verify_traveler_information",
        &[
            req("first_name"),
            req("last_name"),
            req("date_of_birth"),
            req("passport_number"),
        ],
    ),
    (
        "set_budget_limit",
        &[req("access_token"), req("budget_limit")],
    ),
    ("get_nearest_airport_by_city", &[req("location")]),
    (
        "purchase_insurance",
        &[
            req("access_token"),
            req("insurance_type"),
            req("booking_id"),
            req("insurance_cost"),
            req("card_id"),
        ],
    ),
    (
        "contact_customer_support",
        &[req("booking_id"), req("message")],
    ),
    ("get_all_credit_cards", &[]),
];

/// `list_all_airports()`, in BFCL's order.
const AIRPORTS: &[&str] = &[
    "RMS", "SBK", "MPC", "SVP", "SHD", "CDG", "LHR", "SSV", "OKD", "WLB", "PEK", "HND", "HKG",
    "CIA", "CRH", "ATV", "PHV", "GFD", "SFO", "LAX", "JFK", "ORD", "BOS",
];

const CLASSES: &[(&str, f64)] = &[("economy", 1.0), ("business", 2.0), ("first", 5.0)];

/// Public attributes after the two dicts, in Python's order.
const SCALARS: &[&str] = &[
    "access_token",
    "token_type",
    "token_expires_in",
    "token_scope",
    "user_first_name",
    "user_last_name",
    "budget_limit",
];

/// What BFCL's `long_context` mode adds (the extensions of its `long_context.py`),
/// read from the `TravelAPI.long_context` entry of `tables.json`.
struct LongContext {
    /// Cards merged into `credit_card_list` at load (ids already present are kept).
    credit_card_list: Vec<(PyValue, PyValue)>,
    /// Bookings merged into `booking_record` at load, the same way.
    booking_record: Vec<(PyValue, PyValue)>,
    /// `get_flight_cost` then prices every route, in this order.
    route_order: Vec<(String, String)>,
}

static LONG_CONTEXT: LazyLock<LongContext> = LazyLock::new(|| {
    let all: serde_json::Value = serde_json::from_str(include_str!("tables.json"))
        .expect("src/bfcl/worlds/tables.json parses");
    let lc = &all[CLASS]["long_context"];
    // The dicts are stored as JSON texts, which keep BFCL's key order.
    let dict = |key: &str| {
        let text = lc[key].as_str().expect("long_context dict as JSON text");
        let value: serde_json::Value =
            serde_json::from_str(text).expect("long_context dict parses");
        match PyValue::from_json(&value) {
            PyValue::Dict(d) => d,
            _ => panic!("long_context {key} is a dict"),
        }
    };
    let route_order = lc["route_order"]
        .as_array()
        .expect("route_order list")
        .iter()
        .map(|p| {
            let side = |i: usize| p[i].as_str().expect("airport code").to_string();
            (side(0), side(1))
        })
        .collect();
    LongContext {
        credit_card_list: dict("credit_card_list"),
        booking_record: dict("booking_record"),
        route_order,
    }
});

/// Add the `extra` entries whose keys `items` lacks, at its end.
fn merge_missing(items: &mut Vec<(PyValue, PyValue)>, extra: &[(PyValue, PyValue)]) {
    for (k, v) in extra {
        if find(items, k).is_none() {
            items.push((k.clone(), v.clone()));
        }
    }
}

/// State of a `TravelAPI` instance.
#[derive(Debug, Clone)]
pub struct TravelApi {
    credit_card_list: Vec<(PyValue, PyValue)>,
    booking_record: Vec<(PyValue, PyValue)>,
    /// Values of [`SCALARS`], in order.
    scalars: Vec<PyValue>,
    long_context: bool,
    random: Random,
}

impl Default for TravelApi {
    fn default() -> Self {
        TravelApi {
            credit_card_list: Vec::new(),
            booking_record: Vec::new(),
            scalars: vec![PyValue::None; SCALARS.len()],
            long_context: false,
            random: Random::cached(DEFAULT_SEED),
        }
    }
}

fn find<'a>(items: &'a [(PyValue, PyValue)], key: &PyValue) -> Option<&'a PyValue> {
    items.iter().find(|(k, _)| k.py_eq(key)).map(|(_, v)| v)
}

fn find_mut<'a>(items: &'a mut [(PyValue, PyValue)], key: &PyValue) -> Option<&'a mut PyValue> {
    items.iter_mut().find(|(k, _)| k.py_eq(key)).map(|(_, v)| v)
}

/// `strptime(text, "%Y-%m-%d")`: (year, month, day) or `None` when it raises.
fn ymd(v: &PyValue) -> Option<(i64, u32, u32)> {
    let PyValue::Str(t) = v else { return None };
    let parts: Vec<&str> = t.split('-').collect();
    let digits =
        |p: &str, lo, hi| (lo..=hi).contains(&p.len()) && p.bytes().all(|b| b.is_ascii_digit());
    if parts.len() != 3
        || !digits(parts[0], 4, 4)
        || !digits(parts[1], 1, 2)
        || !digits(parts[2], 1, 2)
    {
        return None;
    }
    let (y, m, d) = (
        parts[0].parse().ok()?,
        parts[1].parse().ok()?,
        parts[2].parse().ok()?,
    );
    let leap = y % 4 == 0 && (y % 100 != 0 || y % 400 == 0);
    let days = [
        31,
        if leap { 29 } else { 28 },
        31,
        30,
        31,
        30,
        31,
        31,
        30,
        31,
        30,
        31,
    ];
    ((1..=12).contains(&m) && d >= 1 && d <= days[m as usize - 1]).then_some((y, m, d))
}

/// Today's UTC date (BFCL uses `datetime.today()`; the fixtures run with `TZ=UTC`).
fn today() -> (i64, u32, u32) {
    let secs = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs() as i64);
    // Civil-from-days (Howard Hinnant's algorithm).
    let z = secs.div_euclid(86400) + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = (doy - (153 * mp + 2) / 5 + 1) as u32;
    let m = if mp < 10 { mp + 3 } else { mp - 9 } as u32;
    (yoe + era * 400 + i64::from(m <= 2), m, d)
}

impl TravelApi {
    fn scalar(&self, name: &str) -> &PyValue {
        let i = SCALARS
            .iter()
            .position(|n| *n == name)
            .expect("known attribute");
        &self.scalars[i]
    }

    fn set_scalar(&mut self, name: &str, v: PyValue) {
        let i = SCALARS
            .iter()
            .position(|n| *n == name)
            .expect("known attribute");
        self.scalars[i] = v;
    }

    /// The shared token check: expired first, then the token itself.
    fn token_error(&self, given: &PyValue) -> Option<&'static str> {
        if self.scalar("token_expires_in").py_eq(&PyValue::Int(0)) {
            return Some("Token expired");
        }
        (!given.py_eq(self.scalar("access_token"))).then_some("Invalid access token")
    }

    fn draw(&mut self, lo: i128, hi: i128) -> i128 {
        self.random.randint(lo, hi).expect("range")
    }

    fn flight_cost(&self, a: &[PyValue]) -> Result<f64, PyException> {
        let (base, factor, weekend) = self.flight_cost_parts(a)?;
        Ok(base * factor * weekend)
    }

    /// `get_flight_cost`'s checks, then (base fare, class factor, date factor).
    fn flight_cost_parts(&self, a: &[PyValue]) -> Result<(f64, f64, f64), PyException> {
        let (from, to) = (py_str(&a[0]), py_str(&a[1]));
        let Some(base) = pair(&TABLES.travel.routes, &from, &to) else {
            return Err(PyException::new(
                "ValueError",
                "No available route for the given airports.",
            ));
        };
        let Some((_, factor)) = CLASSES.iter().find(|(c, _)| *c == py_str(&a[3])) else {
            return Err(PyException::new(
                "ValueError",
                "Invalid travel class. Options are: economy, business, first.",
            ));
        };
        let digit_sum: u32 = py_str(&a[2]).chars().filter_map(|c| c.to_digit(10)).sum();
        let weekend = if digit_sum.is_multiple_of(2) {
            2.0
        } else {
            1.0
        };
        Ok((base, *factor, weekend))
    }

    /// `get_flight_cost`: one cost, or with `long_context` every route's cost at this
    /// class and date (the asked route must exist all the same).
    fn flight_cost_list(&self, a: &[PyValue]) -> Result<PyValue, PyException> {
        let (base, factor, weekend) = self.flight_cost_parts(a)?;
        let costs = if self.long_context {
            LONG_CONTEXT
                .route_order
                .iter()
                .map(|(from, to)| {
                    let base = pair(&TABLES.travel.routes, from, to).expect("ordered route");
                    PyValue::Float(base * factor * weekend)
                })
                .collect()
        } else {
            vec![PyValue::Float(base * factor * weekend)]
        };
        Ok(dict([("travel_cost_list", PyValue::List(costs))]))
    }

    fn book_flight(&mut self, a: Vec<PyValue>) -> Result<PyValue, PyException> {
        let fail = |msg: &str| dict([("booking_status", PyValue::Bool(false)), ("error", s(msg))]);
        if let Some(e) = self.token_error(&a[0]) {
            return Ok(fail(e));
        }
        let Some(card) = find(&self.credit_card_list, &a[1]) else {
            return Ok(fail("Card not registered"));
        };
        let Some(balance) = get(card, "balance").cloned() else {
            // Not pinned by a fixture (every card has a balance there).
            return Ok(fail("Balance not found"));
        };
        let (date, from, to, class) = (&a[2], &a[3], &a[4], &a[5]);
        if !AIRPORTS.contains(&py_str(from).as_str()) {
            return Ok(fail(&format!(
                "Invalid departure airport code: {}",
                py_str(from)
            )));
        }
        if !AIRPORTS.contains(&py_str(to).as_str()) {
            return Ok(fail(&format!(
                "Invalid destination airport code: {}",
                py_str(to)
            )));
        }
        if ymd(date).is_none() {
            return Ok(fail("Invalid date format. Use YYYY-MM-DD."));
        }
        if !CLASSES.iter().any(|(c, _)| *c == py_str(class)) {
            // Python prints a set here, whose order varies between processes.
            return Ok(fail(
                "Invalid travel class. Options are: {'economy', 'business', 'first'}",
            ));
        }
        let cost = match self.flight_cost(&[from.clone(), to.clone(), date.clone(), class.clone()])
        {
            Ok(c) => PyValue::Float(c),
            Err(e) => return Ok(fail(&e.message)),
        };
        if py_cmp(&balance, "<", &cost)? {
            return Ok(fail("Insufficient funds"));
        }
        let limit = self.scalar("budget_limit").clone();
        if !matches!(limit, PyValue::None) && py_cmp(&balance, "<", &limit)? {
            return Ok(fail("Balance is less than budget limit"));
        }
        let new_balance = py_arith(&balance, '-', &cost)?;
        if let Some(card) = find_mut(&mut self.credit_card_list, &a[1]) {
            set_key(card, "balance", new_balance);
        }
        let booking_id = s(self.draw(1_000_000, 9_999_999).to_string());
        let transaction_id = s(self.draw(10_000_000, 99_999_999).to_string());
        let record = dict([
            ("card_id", a[1].clone()),
            ("travel_date", date.clone()),
            ("travel_from", from.clone()),
            ("travel_to", to.clone()),
            ("travel_class", class.clone()),
            ("travel_cost", cost),
            ("transaction_id", transaction_id.clone()),
        ]);
        self.booking_record.push((booking_id.clone(), record));
        // Only long_context mode shows the history (every booking, this one included).
        let history = if self.long_context {
            self.booking_record.clone()
        } else {
            Vec::new()
        };
        Ok(dict([
            ("booking_id", booking_id),
            ("transaction_id", transaction_id),
            ("booking_status", PyValue::Bool(true)),
            ("booking_history", PyValue::Dict(history)),
        ]))
    }

    fn verify(&self, a: &[PyValue]) -> PyValue {
        let fail = |msg: String| {
            dict([
                ("verification_status", PyValue::Bool(false)),
                ("verification_failure", s(msg)),
            ])
        };
        let (first, last) = (
            self.scalar("user_first_name"),
            self.scalar("user_last_name"),
        );
        if !a[0].py_eq(first) || !a[1].py_eq(last) {
            return fail(format!(
                "Cannot book flight information for another user.Expected {} {}, got {} {}",
                py_str(first),
                py_str(last),
                py_str(&a[0]),
                py_str(&a[1])
            ));
        }
        let Some((y, m, d)) = ymd(&a[2]) else {
            return fail("Invalid date of birth format. Please use YYYY-MM-DD.".into());
        };
        let (ty, tm, td) = today();
        let age = ty - y - i64::from((tm, td) < (m, d));
        if age < 18 {
            return fail("Traveler must be at least 18 years old.".into());
        }
        if !py_str(&a[3]).starts_with("US") {
            return fail("Passport must be issued by the United States.".into());
        }
        dict([("verification_status", PyValue::Bool(true))])
    }

    fn dispatch(&mut self, m: &str, a: Vec<PyValue>) -> Result<PyValue, PyException> {
        Ok(match m {
            "authenticate_travel" => {
                let token = s(self.draw(100_000, 999_999).to_string());
                self.set_scalar("access_token", token.clone());
                self.set_scalar("token_type", s("Bearer"));
                self.set_scalar("token_expires_in", PyValue::Int(2));
                self.set_scalar("token_scope", a[3].clone());
                self.set_scalar("user_first_name", a[4].clone());
                self.set_scalar("user_last_name", a[5].clone());
                dict([
                    ("expires_in", PyValue::Int(2)),
                    ("access_token", token),
                    ("token_type", s("Bearer")),
                    ("scope", a[3].clone()),
                ])
            }
            "travel_get_login_status" => {
                let e = self.scalar("token_expires_in");
                let on = !matches!(e, PyValue::None) && !e.py_eq(&PyValue::Int(0));
                dict([("status", PyValue::Bool(on))])
            }
            "get_budget_fiscal_year" => dict([("budget_fiscal_year", s("2018"))]),
            "register_credit_card" => {
                if self.scalar("token_expires_in").py_eq(&PyValue::Int(0)) {
                    return Ok(error("Token expired"));
                }
                if matches!(self.scalar("access_token"), PyValue::None) {
                    return Ok(error("Token not initialized"));
                }
                if let Some(e) = self.token_error(&a[0]) {
                    return Ok(error(e));
                }
                // BFCL compares the number with card ids, so this rarely triggers; the
                // text is not pinned by a fixture.
                if find(&self.credit_card_list, &a[1]).is_some() {
                    return Ok(error("Card already registered"));
                }
                let id = s(self.draw(100_000_000_000, 999_999_999_999).to_string());
                let balance = PyValue::Int(self.draw(10_000, 99_999));
                let card = dict([
                    ("card_number", a[1].clone()),
                    ("expiration_date", a[2].clone()),
                    ("cardholder_name", a[3].clone()),
                    ("card_verification_number", a[4].clone()),
                    ("balance", balance),
                ]);
                self.credit_card_list.push((id.clone(), card));
                dict([("card_id", id)])
            }
            "get_flight_cost" => self.flight_cost_list(&a)?,
            "get_credit_card_balance" => {
                if let Some(e) = self.token_error(&a[0]) {
                    return Ok(error(e));
                }
                match find(&self.credit_card_list, &a[1]) {
                    Some(card) => dict([(
                        "card_balance",
                        get(card, "balance").cloned().unwrap_or(PyValue::None),
                    )]),
                    None => {
                        let ids = self
                            .credit_card_list
                            .iter()
                            .map(|(k, _)| k.clone())
                            .collect();
                        error(format!(
                            "Card not registered. Here are a list of card_id's: {}",
                            py_repr(&PyValue::List(ids))
                        ))
                    }
                }
            }
            "book_flight" => return self.book_flight(a),
            "retrieve_invoice" => {
                if let Some(e) = self.token_error(&a[0]) {
                    return Ok(error(e));
                }
                let Some(b) = find(&self.booking_record, &a[1]) else {
                    return Ok(error("Booking not found"));
                };
                let field = |k: &str| get(b, k).cloned().unwrap_or(PyValue::None);
                dict([(
                    "invoice",
                    dict([
                        ("booking_id", a[1].clone()),
                        ("travel_date", field("travel_date")),
                        ("travel_from", field("travel_from")),
                        ("travel_to", field("travel_to")),
                        ("travel_class", field("travel_class")),
                        ("travel_cost", field("travel_cost")),
                        ("transaction_id", field("transaction_id")),
                    ]),
                )])
            }
            "get_booking_history" => {
                if let Some(e) = self.token_error(&a[0]) {
                    return Ok(error(e));
                }
                dict([(
                    "booking_history",
                    PyValue::Dict(self.booking_record.clone()),
                )])
            }
            "list_all_airports" => PyValue::List(AIRPORTS.iter().map(|x| s(*x)).collect()),
            "cancel_booking" => {
                let fail =
                    |msg: &str| dict([("cancel_status", PyValue::Bool(false)), ("error", s(msg))]);
                if let Some(e) = self.token_error(&a[0]) {
                    return Ok(fail(e));
                }
                let Some(pos) = self.booking_record.iter().position(|(k, _)| k.py_eq(&a[1])) else {
                    return Ok(fail("Booking not found"));
                };
                let booking = self.booking_record[pos].1.clone();
                let card_id = get(&booking, "card_id").cloned().unwrap_or(PyValue::None);
                let cost = get(&booking, "travel_cost")
                    .cloned()
                    .unwrap_or(PyValue::Int(0));
                let Some(card) = find_mut(&mut self.credit_card_list, &card_id) else {
                    return Err(PyException::key_error(&card_id));
                };
                let balance = get(card, "balance").cloned().unwrap_or(PyValue::None);
                set_key(card, "balance", py_arith(&balance, '+', &cost)?);
                self.booking_record.remove(pos);
                dict([("cancel_status", PyValue::Bool(true))])
            }
            "compute_exchange_rate" => {
                let (base, target) = (py_str(&a[0]), py_str(&a[1]));
                let rates = &TABLES.travel.exchange_rates;
                let value = py_float(&a[2])?;
                // BFCL's table has one direction per pair; the other one divides.
                let out = match (pair(rates, &base, &target), pair(rates, &target, &base)) {
                    (Some(r), _) => value * r,
                    (None, Some(r)) => {
                        let x: f64 = format!("{:.2}", value / r).parse().unwrap_or(f64::NAN);
                        x
                    }
                    _ => {
                        return Err(PyException::new(
                            "ValueError",
                            "No available exchange rate for the given currencies.",
                        ));
                    }
                };
                dict([("exchanged_value", PyValue::Float(out))])
            }
            "verify_traveler_information" => self.verify(&a),
            "set_budget_limit" => {
                if let Some(e) = self.token_error(&a[0]) {
                    return Ok(error(e));
                }
                let limit = PyValue::Float(py_float(&a[1])?);
                self.set_scalar("budget_limit", limit.clone());
                dict([("budget_limit", limit)])
            }
            "get_nearest_airport_by_city" => {
                let city = py_str(&a[0]);
                let code = TABLES
                    .travel
                    .nearest_airports
                    .get(&city)
                    .map_or("Unknown", String::as_str);
                dict([("nearest_airport", s(code))])
            }
            "purchase_insurance" => {
                let fail = |msg: &str| {
                    dict([
                        ("insurance_status", PyValue::Bool(false)),
                        ("error", s(msg)),
                    ])
                };
                if let Some(e) = self.token_error(&a[0]) {
                    return Ok(fail(e));
                }
                let (booking_id, cost, card_id) = (&a[2], &a[3], &a[4]);
                let limit = self.scalar("budget_limit").clone();
                if !matches!(limit, PyValue::None) && py_cmp(&limit, "<", cost)? {
                    return Ok(fail("Exceeded budget limit"));
                }
                if find(&self.booking_record, booking_id).is_none() {
                    return Ok(fail("Booking not found"));
                }
                let Some(card) = find_mut(&mut self.credit_card_list, card_id) else {
                    return Ok(fail("Credit card not registered"));
                };
                let balance = get(card, "balance").cloned().unwrap_or(PyValue::None);
                if py_cmp(&balance, "<", cost)? {
                    // Not pinned by a fixture.
                    return Ok(fail("Insufficient funds"));
                }
                set_key(card, "balance", py_arith(&balance, '-', cost)?);
                let id = s(self.draw(100_000_000, 999_999_999).to_string());
                dict([
                    ("insurance_id", id),
                    ("insurance_status", PyValue::Bool(true)),
                ])
            }
            "contact_customer_support" => {
                if find(&self.booking_record, &a[0]).is_none() {
                    return Ok(error("Booking not found"));
                }
                dict([(
                    "customer_support_message",
                    s(
                        "Thank you for contacting customer support. Your message has been received and we will get back to you shortly.",
                    ),
                )])
            }
            "get_all_credit_cards" => dict([(
                "credit_card_list",
                PyValue::Dict(self.credit_card_list.clone()),
            )]),
            _ => unreachable!("method table and dispatch agree"),
        })
    }
}

impl World for TravelApi {
    fn class(&self) -> &'static str {
        CLASS
    }

    fn load(&mut self, config: &serde_json::Value, long_context: bool) -> Result<(), PyException> {
        *self = TravelApi::default();
        let dict_of = |key: &str| match config_get(config, key) {
            Some(PyValue::Dict(d)) => d,
            _ => Vec::new(),
        };
        self.credit_card_list = dict_of("credit_card_list");
        self.booking_record = dict_of("booking_record");
        for (i, name) in SCALARS.iter().enumerate() {
            self.scalars[i] = config_get(config, name).unwrap_or(PyValue::None);
        }
        self.long_context = long_context;
        if long_context {
            merge_missing(&mut self.credit_card_list, &LONG_CONTEXT.credit_card_list);
            merge_missing(&mut self.booking_record, &LONG_CONTEXT.booking_record);
        }
        self.random = seeded_random(config, DEFAULT_SEED);
        Ok(())
    }

    fn call(
        &mut self,
        method: &str,
        args: Vec<PyValue>,
        kwargs: Vec<(String, PyValue)>,
    ) -> Result<PyValue, PyException> {
        let (m, a) = bind_method(CLASS, METHODS, method, args, kwargs)?;
        self.dispatch(m, a)
    }

    fn state(&self) -> Vec<(String, PyValue)> {
        let mut out = vec![
            (
                "credit_card_list".to_string(),
                PyValue::Dict(self.credit_card_list.clone()),
            ),
            (
                "booking_record".to_string(),
                PyValue::Dict(self.booking_record.clone()),
            ),
        ];
        out.extend(
            SCALARS
                .iter()
                .zip(&self.scalars)
                .map(|(n, v)| (n.to_string(), v.clone())),
        );
        out.push(("long_context".into(), PyValue::Bool(self.long_context)));
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn kw(pairs: &[(&str, &str)]) -> Vec<(String, PyValue)> {
        pairs.iter().map(|(k, v)| (k.to_string(), s(*v))).collect()
    }

    /// What a few long_context calls answer, and the state after them.
    fn run(w: &mut TravelApi) -> Vec<String> {
        let flight = [
            ("travel_date", "2024-11-15"),
            ("travel_from", "SFO"),
            ("travel_to", "LAX"),
            ("travel_class", "economy"),
        ];
        let mut book = kw(&[("access_token", "tok"), ("card_id", "c1")]);
        book.extend(kw(&flight));
        let calls = [
            ("get_flight_cost", kw(&flight)),
            ("book_flight", book),
            (
                "cancel_booking",
                kw(&[("access_token", "tok"), ("booking_id", "booking_901")]),
            ),
            ("get_all_credit_cards", Vec::new()),
        ];
        let mut out: Vec<String> = calls
            .into_iter()
            .map(|(m, k)| py_repr(&w.call(m, Vec::new(), k).expect("call")))
            .collect();
        out.extend(w.state().iter().map(|(k, v)| format!("{k}={}", py_repr(v))));
        out
    }

    #[test]
    fn a_clone_of_a_long_context_load_behaves_like_a_fresh_load() {
        let config = serde_json::json!({
            "credit_card_list": {"c1": {"balance": 5000.0}},
            "access_token": "tok",
            "token_expires_in": 3600,
        });
        let mut loaded = TravelApi::default();
        loaded.load(&config, true).expect("load");
        let mut copy = loaded.clone();
        let mut fresh = TravelApi::default();
        fresh.load(&config, true).expect("load");
        let want = run(&mut fresh);
        assert_eq!(run(&mut copy), want);
        assert_eq!(run(&mut loaded), want);
        // The extension was merged after the config's own card, and every route priced.
        assert!(
            want[3].starts_with(
                "{'credit_card_list': {'c1': {'balance': 4600.0}, '1234567812345678': {"
            )
        );
        assert!(want[0].matches(", ").count() + 1 == LONG_CONTEXT.route_order.len());
    }
}
