//! BFCL's `TicketAPI`: a ticket queue with a trivial login.

use super::{
    Method, PyException, World, bind_method, config_get, dict, error, get, opt, req, s, set_key,
    truthy,
};
use crate::bfcl::pyfmt::py_str;
use crate::bfcl::value::PyValue;

const CLASS: &str = "TicketAPI";

const METHODS: &[Method] = &[
    (
        "create_ticket",
        &[req("title"), opt("description", "''"), opt("priority", "1")],
    ),
    ("get_ticket", &[req("ticket_id")]),
    ("close_ticket", &[req("ticket_id")]),
    ("resolve_ticket", &[req("ticket_id"), req("resolution")]),
    ("edit_ticket", &[req("ticket_id"), req("updates")]),
    ("ticket_login", &[req("username"), req("password")]),
    ("ticket_get_login_status", &[]),
    ("logout", &[]),
    ("get_user_tickets", &[opt("status", "None")]),
];

/// Fields `edit_ticket` may change.
const EDITABLE: &[&str] = &["title", "description", "status", "priority"];

/// State of a `TicketAPI` instance.
#[derive(Debug, Clone)]
pub struct TicketApi {
    ticket_queue: Vec<PyValue>,
    ticket_counter: PyValue,
    current_user: PyValue,
}

impl Default for TicketApi {
    fn default() -> Self {
        TicketApi {
            ticket_queue: Vec::new(),
            ticket_counter: PyValue::Int(1),
            current_user: PyValue::None,
        }
    }
}

impl TicketApi {
    fn find(&mut self, id: &PyValue) -> Option<&mut PyValue> {
        self.ticket_queue
            .iter_mut()
            .find(|t| get(t, "id").is_some_and(|i| i.py_eq(id)))
    }

    fn not_found(id: &PyValue) -> PyValue {
        error(format!("Ticket with ID {} not found.", py_str(id)))
    }

    fn create_ticket(&mut self, a: Vec<PyValue>) -> Result<PyValue, PyException> {
        if !truthy(&self.current_user) {
            return Ok(error(
                "User not authenticated. Please log in to create a ticket.",
            ));
        }
        let [title, description, priority]: [PyValue; 3] = a.try_into().expect("bound");
        // `priority < 1 or priority > 5`: the first comparison raises for a str.
        if compare_int(&priority, 1, "<")? || compare_int(&priority, 5, ">")? {
            return Ok(error("Invalid priority. Priority must be between 1 and 5."));
        }
        let ticket = dict([
            ("id", self.ticket_counter.clone()),
            ("title", title),
            ("description", description),
            ("status", s("Open")),
            ("priority", priority),
            ("created_by", self.current_user.clone()),
        ]);
        self.ticket_queue.push(ticket.clone());
        self.ticket_counter = match self.ticket_counter {
            PyValue::Int(i) => PyValue::Int(i + 1),
            PyValue::Float(f) => PyValue::Float(f + 1.0),
            ref other => other.clone(),
        };
        Ok(ticket)
    }

    fn dispatch(&mut self, m: &str, a: Vec<PyValue>) -> Result<PyValue, PyException> {
        Ok(match m {
            "create_ticket" => return self.create_ticket(a),
            "get_ticket" => match self.find(&a[0]) {
                Some(t) => t.clone(),
                None => Self::not_found(&a[0]),
            },
            "close_ticket" => {
                let id = py_str(&a[0]);
                match self.find(&a[0]) {
                    None => Self::not_found(&a[0]),
                    Some(t) if get(t, "status").is_some_and(|v| v.py_eq(&s("Closed"))) => {
                        error(format!("Ticket with ID {id} is already closed."))
                    }
                    Some(t) => {
                        set_key(t, "status", s("Closed"));
                        dict([(
                            "status",
                            s(format!("Ticket {id} has been closed successfully.")),
                        )])
                    }
                }
            }
            "resolve_ticket" => {
                let id = py_str(&a[0]);
                match self.find(&a[0]) {
                    None => Self::not_found(&a[0]),
                    Some(t) if get(t, "status").is_some_and(|v| v.py_eq(&s("Resolved"))) => {
                        error(format!("Ticket with ID {id} is already resolved."))
                    }
                    Some(t) => {
                        set_key(t, "status", s("Resolved"));
                        set_key(t, "resolution", a[1].clone());
                        dict([(
                            "status",
                            s(format!("Ticket {id} has been resolved successfully.")),
                        )])
                    }
                }
            }
            "edit_ticket" => {
                let id = py_str(&a[0]);
                let Some(t) = self.find(&a[0]) else {
                    return Ok(Self::not_found(&a[0]));
                };
                let PyValue::Dict(updates) = &a[1] else {
                    return Err(PyException::no_attribute(&a[1], "keys"));
                };
                let invalid: Vec<String> = updates
                    .iter()
                    .map(|(k, _)| py_str(k))
                    .filter(|k| !EDITABLE.contains(&k.as_str()))
                    .collect();
                if !invalid.is_empty() {
                    // Python joins a set here; its order is per-process, so only the
                    // one-field text is reproducible. We keep the given order.
                    return Ok(error(format!(
                        "Invalid fields for update: {}",
                        invalid.join(", ")
                    )));
                }
                for (k, v) in updates {
                    if !matches!(v, PyValue::None) {
                        set_key(t, &py_str(k), v.clone());
                    }
                }
                dict([(
                    "status",
                    s(format!("Ticket {id} has been updated successfully.")),
                )])
            }
            "ticket_login" => {
                let ok = truthy(&a[0]) && truthy(&a[1]);
                if ok {
                    self.current_user = a[0].clone();
                }
                dict([("success", PyValue::Bool(ok))])
            }
            "ticket_get_login_status" => {
                dict([("login_status", PyValue::Bool(truthy(&self.current_user)))])
            }
            "logout" => {
                let ok = truthy(&self.current_user);
                if ok {
                    self.current_user = PyValue::None;
                }
                dict([("success", PyValue::Bool(ok))])
            }
            "get_user_tickets" => {
                if !truthy(&self.current_user) {
                    return Ok(PyValue::List(vec![error(
                        "User not authenticated. Please log in to view tickets.",
                    )]));
                }
                let want = match &a[0] {
                    PyValue::None => None,
                    PyValue::Str(st) => Some(st.to_lowercase()),
                    other => return Err(PyException::no_attribute(other, "lower")),
                };
                let user = self.current_user.clone();
                let mut out = Vec::new();
                for t in &self.ticket_queue {
                    if !get(t, "created_by").is_some_and(|c| c.py_eq(&user)) {
                        continue;
                    }
                    if let Some(w) = &want {
                        let status = match get(t, "status") {
                            Some(PyValue::Str(st)) => st.to_lowercase(),
                            _ => String::new(),
                        };
                        if &status != w {
                            continue;
                        }
                    }
                    out.push(t.clone());
                }
                PyValue::List(out)
            }
            _ => unreachable!("method table and dispatch agree"),
        })
    }
}

/// `v < n` or `v > n` for an int bound, with Python's `TypeError` for a non-number.
fn compare_int(v: &PyValue, n: i128, op: &str) -> Result<bool, PyException> {
    let x = match v {
        PyValue::Int(i) => *i as f64,
        PyValue::Bool(b) => f64::from(u8::from(*b)),
        PyValue::Float(f) => *f,
        other => return Err(PyException::not_orderable(op, other, &PyValue::Int(n))),
    };
    Ok(if op == "<" {
        x < n as f64
    } else {
        x > n as f64
    })
}

impl World for TicketApi {
    fn class(&self) -> &'static str {
        CLASS
    }

    fn load(&mut self, config: &serde_json::Value, _long_context: bool) -> Result<(), PyException> {
        let d = TicketApi::default();
        self.ticket_queue = match config_get(config, "ticket_queue") {
            Some(PyValue::List(l)) => l,
            _ => d.ticket_queue,
        };
        self.ticket_counter = config_get(config, "ticket_counter").unwrap_or(d.ticket_counter);
        self.current_user = config_get(config, "current_user").unwrap_or(d.current_user);
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
            (
                "ticket_queue".into(),
                PyValue::List(self.ticket_queue.clone()),
            ),
            ("ticket_counter".into(), self.ticket_counter.clone()),
            ("current_user".into(), self.current_user.clone()),
        ]
    }
}
