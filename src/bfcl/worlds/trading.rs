//! BFCL's `TradingBot`: a brokerage account with orders, a watch list and a
//! transaction history whose timestamps come from the instance's `random.Random`.
//!
//! With `long_context` (the `multi_turn_long_context` category) some answers carry
//! BFCL's constant padding (its `long_context.py`), kept in `trading_long_context.json`
//! (written by `tests/bfcl_worlds/generate_trading_long_context.py`): stock info gets
//! 2000-value moving-average lists, order details a `metadata` dict of texts naming the
//! order's symbol, the watch list (then a bare list) and the sectors' stock lists gain
//! 1000 more symbols, the transaction history 1000 more entries. The padding is never
//! stored in the state.

use super::seeded_random;
use super::tables::TABLES;
use super::{
    Method, PyException, World, bind_method, dict, error, get, opt, py_arith, py_cmp, py_float,
    req, s, set_key, truthy,
};
use crate::bfcl::pyfmt::{py_repr, py_str};
use crate::bfcl::pyrandom::Random;
use crate::bfcl::value::PyValue;

const CLASS: &str = "TradingBot";

/// Seed used when the config sets no `random_seed` (no dataset item does).
const DEFAULT_SEED: i128 = 1053520;

const METHODS: &[Method] = &[
    ("get_current_time", &[]),
    ("get_symbol_by_name", &[req("name")]),
    ("get_stock_info", &[req("symbol")]),
    ("get_order_details", &[req("order_id")]),
    ("cancel_order", &[req("order_id")]),
    (
        "place_order",
        &[
            req("order_type"),
            req("symbol"),
            req("price"),
            req("amount"),
        ],
    ),
    ("withdraw_funds", &[req("amount")]),
    ("get_account_info", &[]),
    ("trading_login", &[req("username"), req("password")]),
    ("trading_get_login_status", &[]),
    ("trading_logout", &[]),
    ("fund_account", &[req("amount")]),
    ("remove_stock_from_watchlist", &[req("symbol")]),
    ("get_watchlist", &[]),
    ("get_order_history", &[]),
    (
        "get_transaction_history",
        &[opt("start_date", "None"), opt("end_date", "None")],
    ),
    ("get_available_stocks", &[req("sector")]),
    (
        "filter_stocks_by_price",
        &[req("stocks"), req("min_price"), req("max_price")],
    ),
    ("add_to_watchlist", &[req("stock")]),
    ("notify_price_change", &[req("stocks"), req("threshold")]),
];

/// The class's default state (as the fixtures show it after loading `{}`).
const DEFAULT_STATE: &str = r#"{
 "orders": {"12345": {"id": 12345, "order_type": "Buy", "symbol": "AAPL", "price": 210.65, "amount": 10, "status": "Completed"},
            "12446": {"id": 12446, "order_type": "Sell", "symbol": "GOOG", "price": 2840.56, "amount": 5, "status": "Pending"}},
 "account_info": {"account_id": 12345, "balance": 10000.0, "binding_card": 1974202140965533},
 "authenticated": false,
 "market_status": "Closed",
 "order_counter": 12446,
 "stocks": {
  "AAPL": {"price": 227.16, "percent_change": 0.17, "volume": 2.552, "MA(5)": 227.11, "MA(20)": 227.09},
  "GOOG": {"price": 2840.34, "percent_change": 0.24, "volume": 1.123, "MA(5)": 2835.67, "MA(20)": 2842.15},
  "TSLA": {"price": 667.92, "percent_change": -0.12, "volume": 1.654, "MA(5)": 671.15, "MA(20)": 668.2},
  "MSFT": {"price": 310.23, "percent_change": 0.09, "volume": 3.234, "MA(5)": 309.88, "MA(20)": 310.11},
  "NVDA": {"price": 220.34, "percent_change": 0.34, "volume": 1.234, "MA(5)": 220.45, "MA(20)": 220.67},
  "ALPH": {"price": 1320.45, "percent_change": -0.08, "volume": 1.567, "MA(5)": 1321.12, "MA(20)": 1325.78},
  "OMEG": {"price": 457.23, "percent_change": 0.12, "volume": 2.345, "MA(5)": 456.78, "MA(20)": 458.12},
  "QUAS": {"price": 725.89, "percent_change": -0.03, "volume": 1.789, "MA(5)": 726.45, "MA(20)": 728.0},
  "NEPT": {"price": 88.34, "percent_change": 0.19, "volume": 0.654, "MA(5)": 88.21, "MA(20)": 88.67},
  "SYNX": {"price": 345.67, "percent_change": 0.11, "volume": 2.112, "MA(5)": 345.34, "MA(20)": 346.12},
  "ZETA": {"price": 22.09, "percent_change": -0.05, "volume": 0.789, "MA(5)": 22.12, "MA(20)": 22.34}},
 "watch_list": ["NVDA"],
 "transaction_history": []
}"#;

/// `CURRENT_TIME`, 2024-09-01 10:30:00, as seconds since 1970 (UTC, as the fixtures).
const CURRENT_TIME: i64 = 1_725_186_600;

/// BFCL's long-context padding for TradingBot, as read from `trading_long_context.json`.
struct LongContext {
    /// `MA_5_EXTENSION`: replaces a stock's `MA(5)` in `get_stock_info`.
    ma_5: PyValue,
    /// `MA_20_EXTENSION`: replaces a stock's `MA(20)`.
    ma_20: PyValue,
    /// `ORDER_DETAIL_EXTENSION`: `(key, template)` in order; `{symbol}` is the order's symbol.
    order_metadata: Vec<(String, String)>,
    /// `WATCH_LIST_EXTENSION` (its trailing Python `...` included).
    watch_list: Vec<PyValue>,
    /// `TRANSACTION_HISTORY_EXTENSION`.
    transaction_history: Vec<PyValue>,
    /// `TECHNOLOGY_EXTENSION`, added to the `Technology` sector.
    technology: Vec<PyValue>,
    /// `AUTOMOBILE_EXTENSION`, added to the `Automobile` sector.
    automobile: Vec<PyValue>,
}

static LONG_CONTEXT: std::sync::LazyLock<LongContext> = std::sync::LazyLock::new(|| {
    let data: serde_json::Value =
        serde_json::from_str(include_str!("trading_long_context.json")).expect("padding is JSON");
    let list = |key: &str| -> Vec<serde_json::Value> {
        data[key].as_array().cloned().expect("padding list")
    };
    let floats = |key: &str| {
        PyValue::List(
            list(key)
                .iter()
                .map(|v| PyValue::Float(v.as_f64().expect("float")))
                .collect(),
        )
    };
    let strings = |key: &str| -> Vec<PyValue> {
        list(key)
            .iter()
            .map(|v| s(v.as_str().expect("str")))
            .collect()
    };
    let mut watch_list = strings("watch_list");
    if data["watch_list_ends_with_ellipsis"].as_bool() == Some(true) {
        watch_list.push(PyValue::Other {
            type_name: "ellipsis".into(),
            repr: "Ellipsis".into(),
        });
    }
    let transaction_history = list("transaction_history")
        .iter()
        .map(|t| {
            dict([
                ("type", s(t["type"].as_str().expect("type"))),
                (
                    "amount",
                    PyValue::Float(t["amount"].as_f64().expect("amount")),
                ),
                ("timestamp", s(t["timestamp"].as_str().expect("timestamp"))),
            ])
        })
        .collect();
    let order_metadata = list("order_metadata")
        .iter()
        .map(|pair| {
            let text = |i: usize| pair[i].as_str().expect("template pair").to_string();
            (text(0), text(1))
        })
        .collect();
    LongContext {
        ma_5: floats("ma_5"),
        ma_20: floats("ma_20"),
        order_metadata,
        watch_list,
        transaction_history,
        technology: strings("technology"),
        automobile: strings("automobile"),
    }
});

/// Python's `value.copy()` followed by `copy[key] = ...` on a config value: a dict
/// copies; a list copies but refuses a str index; other types have no `copy`.
fn copy_for_str_key(value: &PyValue) -> Result<PyValue, PyException> {
    match value {
        PyValue::Dict(_) => Ok(value.clone()),
        PyValue::List(_) => Err(PyException::type_error(
            "list indices must be integers or slices, not str",
        )),
        _ => Err(PyException::no_attribute(value, "copy")),
    }
}

/// State of a `TradingBot` instance.
#[derive(Debug, Clone)]
pub struct TradingBot {
    orders: Vec<(PyValue, PyValue)>,
    account_info: PyValue,
    authenticated: PyValue,
    market_status: PyValue,
    order_counter: PyValue,
    stocks: PyValue,
    watch_list: PyValue,
    transaction_history: Vec<PyValue>,
    long_context: bool,
    random: Random,
}

/// Config orders: keys made of digits become ints, others stay (Python's
/// `int(k) if k.isdigit() else k`).
fn orders_from(v: PyValue) -> Vec<(PyValue, PyValue)> {
    match v {
        PyValue::Dict(items) => items
            .into_iter()
            .map(|(k, v)| match &k {
                PyValue::Str(t) if !t.is_empty() && t.chars().all(|c| c.is_ascii_digit()) => {
                    (PyValue::Int(t.parse().unwrap_or(0)), v)
                }
                _ => (k, v),
            })
            .collect(),
        _ => Vec::new(),
    }
}

impl Default for TradingBot {
    fn default() -> Self {
        let mut bot = TradingBot {
            orders: Vec::new(),
            account_info: PyValue::None,
            authenticated: PyValue::Bool(false),
            market_status: PyValue::None,
            order_counter: PyValue::None,
            stocks: PyValue::None,
            watch_list: PyValue::None,
            transaction_history: Vec::new(),
            long_context: false,
            random: Random::cached(DEFAULT_SEED),
        };
        bot.load(&serde_json::json!({}), false)
            .expect("defaults load");
        bot
    }
}

/// `YYYY-MM-DD HH:MM:SS` for seconds since 1970 (proleptic Gregorian, UTC).
fn format_time(t: i64) -> String {
    let (days, secs) = (t.div_euclid(86400), t.rem_euclid(86400));
    // Civil-from-days (Howard Hinnant's algorithm).
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    let y = yoe + era * 400 + i64::from(m <= 2);
    format!(
        "{y:04}-{m:02}-{d:02} {:02}:{:02}:{:02}",
        secs / 3600,
        secs % 3600 / 60,
        secs % 60
    )
}

/// `datetime.strptime(text, "%Y-%m-%d")` as a sortable `YYYY-MM-DD 00:00:00` text,
/// with Python's error message for other shapes.
fn parse_date(v: &PyValue) -> Result<String, PyException> {
    let fail = || {
        PyException::new(
            "ValueError",
            format!("time data {} does not match format '%Y-%m-%d'", py_repr(v)),
        )
    };
    let PyValue::Str(t) = v else {
        return Err(PyException::type_error(format!(
            "strptime() argument 1 must be str, not {}",
            v.type_name()
        )));
    };
    let parts: Vec<&str> = t.split('-').collect();
    let ok = |p: &str, lo: usize, hi: usize| {
        (lo..=hi).contains(&p.len()) && p.chars().all(|c| c.is_ascii_digit())
    };
    if parts.len() != 3 || !ok(parts[0], 4, 4) || !ok(parts[1], 1, 2) || !ok(parts[2], 1, 2) {
        return Err(fail());
    }
    let (y, m, d): (u32, u32, u32) = (
        parts[0].parse().map_err(|_| fail())?,
        parts[1].parse().map_err(|_| fail())?,
        parts[2].parse().map_err(|_| fail())?,
    );
    if !(1..=12).contains(&m) || !(1..=31).contains(&d) {
        return Err(fail());
    }
    Ok(format!("{y:04}-{m:02}-{d:02} 00:00:00"))
}

impl TradingBot {
    fn logged_in(&self) -> bool {
        truthy(&self.authenticated)
    }

    fn order_pos(&self, id: &PyValue) -> Option<usize> {
        self.orders.iter().position(|(k, _)| k.py_eq(id))
    }

    fn stock(&self, symbol: &PyValue) -> Option<&PyValue> {
        match &self.stocks {
            PyValue::Dict(d) => d.iter().find(|(k, _)| k.py_eq(symbol)).map(|(_, v)| v),
            _ => None,
        }
    }

    fn balance(&self) -> PyValue {
        get(&self.account_info, "balance")
            .cloned()
            .unwrap_or(PyValue::None)
    }

    /// Appends a deposit or withdrawal stamped `CURRENT_TIME` plus a random offset
    /// of up to one day (BFCL draws `randint(start, start + 86400) - start`).
    fn record(&mut self, kind: &str, amount: PyValue) {
        let offset = self.random.randint(0, 86400).expect("range") as i64;
        self.transaction_history.push(dict([
            ("type", s(kind)),
            ("amount", amount),
            ("timestamp", s(format_time(CURRENT_TIME + offset))),
        ]));
    }

    fn dispatch(&mut self, m: &str, a: Vec<PyValue>) -> Result<PyValue, PyException> {
        let zero = PyValue::Int(0);
        let login_needed = match m {
            "place_order" => "place an order",
            "withdraw_funds" => "make a transaction",
            "get_account_info" => "view account information",
            "fund_account" => "fund the account",
            "remove_stock_from_watchlist" => "modify the watchlist",
            _ => "",
        };
        if !login_needed.is_empty() && !self.logged_in() {
            return Ok(error(format!(
                "User not authenticated. Please log in to {login_needed}."
            )));
        }
        Ok(match m {
            "get_current_time" => dict([("current_time", s("10:30 AM"))]),
            "get_symbol_by_name" => {
                let name = py_str(&a[0]);
                let found = TABLES.trading.symbols.get(&name);
                dict([("symbol", s(found.map_or("Stock not found", String::as_str)))])
            }
            "get_stock_info" => match self.stock(&a[0]) {
                Some(info) if self.long_context => {
                    let mut info = copy_for_str_key(info)?;
                    set_key(&mut info, "MA(5)", LONG_CONTEXT.ma_5.clone());
                    set_key(&mut info, "MA(20)", LONG_CONTEXT.ma_20.clone());
                    info
                }
                Some(info) => info.clone(),
                None => error(format!("Stock with symbol '{}' not found.", py_str(&a[0]))),
            },
            "get_order_details" => match self.order_pos(&a[0]) {
                Some(i) if self.long_context => {
                    let mut order = copy_for_str_key(&self.orders[i].1)?;
                    let key = s("symbol");
                    let symbol =
                        py_str(get(&order, "symbol").ok_or_else(|| PyException::key_error(&key))?);
                    let metadata = LONG_CONTEXT
                        .order_metadata
                        .iter()
                        .map(|(k, template)| {
                            (s(k.as_str()), s(template.replace("{symbol}", &symbol)))
                        })
                        .collect();
                    set_key(&mut order, "metadata", PyValue::Dict(metadata));
                    order
                }
                Some(i) => self.orders[i].1.clone(),
                None => {
                    let ids = PyValue::List(self.orders.iter().map(|(k, _)| k.clone()).collect());
                    error(format!(
                        "Order with ID {} not found.Here is the list of orders_id: {}",
                        py_str(&a[0]),
                        py_repr(&ids)
                    ))
                }
            },
            "cancel_order" => {
                let id = py_str(&a[0]);
                let Some(i) = self.order_pos(&a[0]) else {
                    return Ok(error(format!("Order with ID {id} not found.")));
                };
                let order = &mut self.orders[i].1;
                let PyValue::Dict(_) = order else {
                    return Err(PyException::type_error(format!(
                        "{} indices must be integers, not 'str'",
                        if matches!(order, PyValue::Str(_)) {
                            "string"
                        } else {
                            "list"
                        }
                    )));
                };
                if get(order, "status").is_some_and(|st| st.py_eq(&s("Completed"))) {
                    return Ok(error(format!(
                        "Can't cancel order {id}. Order is already completed."
                    )));
                }
                set_key(order, "status", s("Cancelled"));
                dict([("order_id", a[0].clone()), ("status", s("Cancelled"))])
            }
            "place_order" => {
                let [order_type, symbol, price, amount]: [PyValue; 4] =
                    a.try_into().expect("bound");
                if self.stock(&symbol).is_none() {
                    return Ok(error(format!("Invalid stock symbol: {}", py_str(&symbol))));
                }
                if py_cmp(&price, "<=", &zero)? || py_cmp(&amount, "<=", &zero)? {
                    return Ok(error("Price and amount must be positive values."));
                }
                let balance = self.balance();
                if order_type.py_eq(&s("Buy")) {
                    let total = py_arith(&price, '*', &amount)?;
                    if py_cmp(&total, ">", &balance)? {
                        return Ok(error(format!(
                            "Insufficient funds: required ${:.2} but only ${:.2} available.",
                            py_float(&total)?,
                            py_float(&balance)?
                        )));
                    }
                }
                let id = self.order_counter.clone();
                let price = PyValue::Float(py_float(&price)?);
                let order = dict([
                    ("id", id.clone()),
                    ("order_type", order_type.clone()),
                    ("symbol", symbol),
                    ("price", price.clone()),
                    ("amount", amount.clone()),
                    ("status", s("Open")),
                ]);
                match self.order_pos(&id) {
                    Some(i) => self.orders[i].1 = order,
                    None => self.orders.push((id.clone(), order)),
                }
                self.order_counter = py_arith(&self.order_counter, '+', &PyValue::Int(1))?;
                dict([
                    ("order_id", id),
                    ("order_type", order_type),
                    ("status", s("Pending")),
                    ("price", price),
                    ("amount", amount),
                ])
            }
            "withdraw_funds" => {
                if !self.market_status.py_eq(&s("Open")) {
                    return Ok(error("Market is closed. Transactions are not allowed."));
                }
                if py_cmp(&a[0], "<=", &zero)? {
                    return Ok(error("Transaction amount must be positive."));
                }
                let balance = self.balance();
                if py_cmp(&a[0], ">", &balance)? {
                    return Ok(error("Insufficient funds for withdrawal."));
                }
                let new = py_arith(&balance, '-', &a[0])?;
                set_key(&mut self.account_info, "balance", new.clone());
                self.record("withdrawal", a[0].clone());
                dict([("status", s("Withdrawal successful")), ("new_balance", new)])
            }
            "fund_account" => {
                if py_cmp(&a[0], "<=", &zero)? {
                    return Ok(error("Funding amount must be positive."));
                }
                let new = py_arith(&self.balance(), '+', &a[0])?;
                set_key(&mut self.account_info, "balance", new.clone());
                self.record("deposit", a[0].clone());
                dict([
                    ("status", s("Account funded successfully")),
                    ("new_balance", new),
                ])
            }
            "get_account_info" => self.account_info.clone(),
            "trading_login" => {
                if self.logged_in() {
                    return Ok(dict([("status", s("Already logged in"))]));
                }
                self.authenticated = PyValue::Bool(true);
                dict([("status", s("Logged in successfully"))])
            }
            "trading_get_login_status" => dict([("status", self.authenticated.clone())]),
            "trading_logout" => {
                if !self.logged_in() {
                    return Ok(dict([("status", s("No user is currently logged in"))]));
                }
                self.authenticated = PyValue::Bool(false);
                dict([("status", s("Logged out successfully"))])
            }
            "remove_stock_from_watchlist" => {
                let sym = py_str(&a[0]);
                let PyValue::List(list) = &mut self.watch_list else {
                    return Ok(error(format!("Stock {sym} not found in watchlist.")));
                };
                match list.iter().position(|x| x.py_eq(&a[0])) {
                    Some(i) => {
                        list.remove(i);
                        dict([(
                            "status",
                            s(format!("Stock {sym} removed from watchlist successfully.")),
                        )])
                    }
                    None => error(format!("Stock {sym} not found in watchlist.")),
                }
            }
            "get_watchlist" => {
                if !self.logged_in() {
                    return Ok(PyValue::List(vec![s(
                        "Error: User not authenticated. Please log in to view the watchlist.",
                    )]));
                }
                if self.long_context {
                    // A bare list then: `self.watch_list.copy()` extended with the padding.
                    let PyValue::List(list) = &self.watch_list else {
                        let missing = if matches!(self.watch_list, PyValue::Dict(_)) {
                            "extend"
                        } else {
                            "copy"
                        };
                        return Err(PyException::no_attribute(&self.watch_list, missing));
                    };
                    let mut list = list.clone();
                    list.extend(LONG_CONTEXT.watch_list.iter().cloned());
                    return Ok(PyValue::List(list));
                }
                dict([("watchlist", self.watch_list.clone())])
            }
            "get_order_history" => {
                if !self.logged_in() {
                    return Ok(PyValue::List(vec![error(
                        "User not authenticated. Please log in to view order history.",
                    )]));
                }
                let ids = self.orders.iter().map(|(k, _)| k.clone()).collect();
                dict([("history", PyValue::List(ids))])
            }
            "get_transaction_history" => {
                if !self.logged_in() {
                    return Ok(PyValue::List(vec![error(
                        "User not authenticated. Please log in to view transaction history.",
                    )]));
                }
                let start = match &a[0] {
                    PyValue::None => None,
                    v => Some(parse_date(v)?),
                };
                let end = match &a[1] {
                    PyValue::None => None,
                    v => Some(parse_date(v)?),
                };
                // Timestamps are zero-padded `YYYY-MM-DD HH:MM:SS`, so text order is
                // time order.
                let within = |t: &PyValue| {
                    let ts = py_str(get(t, "timestamp").unwrap_or(&PyValue::None));
                    start.as_ref().is_none_or(|st| *st <= ts)
                        && end.as_ref().is_none_or(|en| ts <= *en)
                };
                let mut list: Vec<PyValue> = self
                    .transaction_history
                    .iter()
                    .filter(|t| within(t))
                    .cloned()
                    .collect();
                if self.long_context {
                    // Appended after the date filter, so never filtered.
                    list.extend(LONG_CONTEXT.transaction_history.iter().cloned());
                }
                dict([("transaction_history", PyValue::List(list))])
            }
            "get_available_stocks" => {
                let sector = py_str(&a[0]);
                let mut list: Vec<PyValue> = TABLES
                    .trading
                    .sectors
                    .get(&sector)
                    .map_or(Vec::new(), |l| l.iter().map(|x| s(x.as_str())).collect());
                if self.long_context {
                    match sector.as_str() {
                        "Technology" => list.extend(LONG_CONTEXT.technology.iter().cloned()),
                        "Automobile" => list.extend(LONG_CONTEXT.automobile.iter().cloned()),
                        _ => {}
                    }
                }
                dict([("stock_list", PyValue::List(list))])
            }
            "filter_stocks_by_price" => {
                let items = match &a[0] {
                    PyValue::List(l) | PyValue::Tuple(l) => l.clone(),
                    _ => Vec::new(),
                };
                let mut out = Vec::new();
                for sym in items {
                    // Unknown symbols count as price 0.
                    let price = self
                        .stock(&sym)
                        .and_then(|info| get(info, "price"))
                        .cloned()
                        .unwrap_or(PyValue::Int(0));
                    if py_cmp(&a[1], "<=", &price)? && py_cmp(&price, "<=", &a[2])? {
                        out.push(sym);
                    }
                }
                dict([("filtered_stocks", PyValue::List(out))])
            }
            "add_to_watchlist" => {
                let known = self.stock(&a[0]).is_some();
                if let PyValue::List(list) = &mut self.watch_list
                    && known
                    && !a[0].py_in(list)
                {
                    list.push(a[0].clone());
                }
                dict([("watchlist", self.watch_list.clone())])
            }
            "notify_price_change" => {
                let items = match &a[0] {
                    PyValue::List(l) | PyValue::Tuple(l) => l.clone(),
                    _ => Vec::new(),
                };
                let mut hits = Vec::new();
                for sym in items {
                    let change = self.stock(&sym).and_then(|i| get(i, "percent_change"));
                    if let Some(c) = change {
                        let c = PyValue::Float(py_float(c)?.abs());
                        if py_cmp(&c, ">=", &a[1])? {
                            hits.push(py_str(&sym));
                        }
                    }
                }
                let text = if hits.is_empty() {
                    "No significant price changes in the selected stocks.".to_string()
                } else {
                    format!("Stocks {} have significant price changes.", hits.join(", "))
                };
                dict([("notification", s(text))])
            }
            _ => unreachable!("method table and dispatch agree"),
        })
    }
}

impl World for TradingBot {
    fn class(&self) -> &'static str {
        CLASS
    }

    fn load(&mut self, config: &serde_json::Value, long_context: bool) -> Result<(), PyException> {
        // Parsed once: every trial and judge replay loads its instances afresh.
        static DEFAULTS: std::sync::LazyLock<serde_json::Value> = std::sync::LazyLock::new(|| {
            serde_json::from_str(DEFAULT_STATE).expect("default state is JSON")
        });
        let defaults = &*DEFAULTS;
        let cfg = |key: &str| PyValue::from_json(config.get(key).unwrap_or(&defaults[key]));
        self.orders = orders_from(cfg("orders"));
        self.account_info = cfg("account_info");
        self.authenticated = cfg("authenticated");
        self.market_status = cfg("market_status");
        self.order_counter = cfg("order_counter");
        self.stocks = cfg("stocks");
        self.watch_list = cfg("watch_list");
        self.transaction_history = match cfg("transaction_history") {
            PyValue::List(l) => l,
            _ => Vec::new(),
        };
        self.long_context = long_context;
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
        vec![
            ("orders".into(), PyValue::Dict(self.orders.clone())),
            ("account_info".into(), self.account_info.clone()),
            ("authenticated".into(), self.authenticated.clone()),
            ("market_status".into(), self.market_status.clone()),
            ("order_counter".into(), self.order_counter.clone()),
            ("stocks".into(), self.stocks.clone()),
            ("watch_list".into(), self.watch_list.clone()),
            (
                "transaction_history".into(),
                PyValue::List(self.transaction_history.clone()),
            ),
            ("long_context".into(), PyValue::Bool(self.long_context)),
        ]
    }
}

#[cfg(test)]
mod tests {
    use super::{TradingBot, World};
    use crate::bfcl::pyfmt::{py_repr, result_text};
    use crate::bfcl::value::PyValue;

    #[test]
    fn long_context_copy_behaves_like_a_fresh_load() {
        let config = serde_json::json!({"authenticated": true});
        let mut fresh = TradingBot::default();
        fresh.load(&config, true).expect("load");
        let mut copy = fresh.clone();
        let calls: &[(&str, Vec<PyValue>)] = &[
            ("get_watchlist", vec![]),
            ("fund_account", vec![PyValue::Int(10)]),
            ("get_transaction_history", vec![]),
            ("get_stock_info", vec![PyValue::Str("AAPL".into())]),
            ("get_order_details", vec![PyValue::Int(12345)]),
        ];
        for (method, args) in calls {
            let a = fresh.call(method, args.clone(), vec![]).expect("call");
            let b = copy.call(method, args.clone(), vec![]).expect("call");
            assert_eq!(result_text(&a), result_text(&b), "{method}");
        }
        let watch = result_text(&fresh.call("get_watchlist", vec![], vec![]).expect("call"));
        assert!(watch.starts_with("['NVDA', 'JHGUN', "), "{}", &watch[..40]);
        assert!(watch.ends_with(", 'ZRFRE', Ellipsis]"));
        // The padding is never stored.
        let repr = |w: &TradingBot| {
            w.state()
                .iter()
                .map(|(k, v)| format!("{k}={}", py_repr(v)))
                .collect::<Vec<_>>()
        };
        assert_eq!(repr(&fresh), repr(&copy));
    }

    #[test]
    fn timestamps() {
        assert_eq!(
            super::format_time(super::CURRENT_TIME),
            "2024-09-01 10:30:00"
        );
        assert_eq!(super::format_time(0), "1970-01-01 00:00:00");
    }
}
