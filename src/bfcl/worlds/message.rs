//! BFCL's `MessageAPI`: a workspace messenger with users, an inbox of one-entry dicts
//! and random message ids from the instance's own `random.Random`.

use super::seeded_random;
use super::{
    Method, PyException, World, bind_method, config_get, dict, error, py_set, req, s, truthy,
};
use crate::bfcl::pyfmt::py_str;
use crate::bfcl::pyrandom::Random;
use crate::bfcl::value::PyValue;

const CLASS: &str = "MessageAPI";

/// Seed used when the config sets no `random_seed` (no dataset item does).
const DEFAULT_SEED: i128 = 200191;

const METHODS: &[Method] = &[
    ("list_users", &[]),
    ("get_user_id", &[req("user")]),
    ("message_login", &[req("user_id")]),
    ("message_get_login_status", &[]),
    ("send_message", &[req("receiver_id"), req("message")]),
    ("delete_message", &[req("receiver_id")]),
    ("view_messages_sent", &[]),
    ("add_contact", &[req("user_name")]),
    ("search_messages", &[req("keyword")]),
    ("get_message_stats", &[]),
];

const NOT_LOGGED_IN: &str = "No user is currently logged in.";

/// State of a `MessageAPI` instance.
#[derive(Debug, Clone)]
pub struct MessageApi {
    generated_ids: Vec<PyValue>,
    user_count: PyValue,
    user_map: Vec<(PyValue, PyValue)>,
    inbox: Vec<PyValue>,
    message_count: PyValue,
    current_user: PyValue,
    random: Random,
}

fn default_users() -> Vec<(PyValue, PyValue)> {
    ["Alice", "Bob", "Catherine", "Daniel"]
        .iter()
        .enumerate()
        .map(|(i, n)| (s(*n), s(format!("USR{:03}", i + 1))))
        .collect()
}

fn default_inbox() -> Vec<PyValue> {
    [
        ("USR002", "My name is Alice. I want to connect."),
        ("USR003", "Could you upload the file?"),
        ("USR004", "Could you upload the file?"),
    ]
    .iter()
    .map(|(r, m)| dict([(r, s(*m))]))
    .collect()
}

impl Default for MessageApi {
    fn default() -> Self {
        MessageApi {
            generated_ids: Vec::new(),
            user_count: PyValue::Int(4),
            user_map: default_users(),
            inbox: default_inbox(),
            message_count: PyValue::Int(3),
            current_user: PyValue::None,
            random: Random::cached(DEFAULT_SEED),
        }
    }
}

/// The (receiver, message) pairs of the inbox entries, in order.
/// Each inbox message's receiver and content, as BFCL reads them:
/// `list(message.items())[0]`, the first entry only (an initial inbox may hold one dict
/// with several receivers, and BFCL sees the first). A message that is not a dict, or an
/// empty one, raises Python's error when it is reached.
fn entries(inbox: &[PyValue]) -> impl Iterator<Item = Result<(&PyValue, &PyValue), PyException>> {
    inbox.iter().map(|m| match m {
        PyValue::Dict(d) => d
            .first()
            .map(|(k, v)| (k, v))
            .ok_or_else(|| PyException::new("IndexError", "list index out of range")),
        other => Err(PyException::no_attribute(other, "items")),
    })
}

fn add_one(v: &PyValue) -> PyValue {
    match v {
        PyValue::Int(i) => PyValue::Int(i + 1),
        PyValue::Float(f) => PyValue::Float(f + 1.0),
        other => other.clone(),
    }
}

impl MessageApi {
    fn is_user_id(&self, id: &PyValue) -> bool {
        self.user_map.iter().any(|(_, v)| v.py_eq(id))
    }

    fn dispatch(&mut self, m: &str, a: Vec<PyValue>) -> Result<PyValue, PyException> {
        let logged_in = truthy(&self.current_user);
        let needs_login = !matches!(
            m,
            "list_users" | "get_user_id" | "message_login" | "message_get_login_status"
        );
        if needs_login && !logged_in {
            return Ok(error(NOT_LOGGED_IN));
        }
        Ok(match m {
            "list_users" => dict([(
                "user_list",
                PyValue::List(self.user_map.iter().map(|(k, _)| k.clone()).collect()),
            )]),
            "get_user_id" => match self.user_map.iter().find(|(k, _)| k.py_eq(&a[0])) {
                Some((_, id)) => dict([("user_id", id.clone())]),
                None => error(format!(
                    "User '{}' not found in the workspace.",
                    py_str(&a[0])
                )),
            },
            "message_login" => {
                if !self.is_user_id(&a[0]) {
                    return Ok(dict([
                        ("login_status", PyValue::Bool(false)),
                        (
                            "message",
                            s(format!("User ID '{}' not found.", py_str(&a[0]))),
                        ),
                    ]));
                }
                self.current_user = a[0].clone();
                dict([
                    ("login_status", PyValue::Bool(true)),
                    (
                        "message",
                        s(format!("User '{}' logged in successfully.", py_str(&a[0]))),
                    ),
                ])
            }
            "message_get_login_status" => dict([("login_status", PyValue::Bool(logged_in))]),
            "send_message" => {
                let [receiver, message]: [PyValue; 2] = a.try_into().expect("bound");
                if !self.is_user_id(&receiver) {
                    return Ok(error(format!(
                        "Receiver ID '{}' not found.",
                        py_str(&receiver)
                    )));
                }
                let id = loop {
                    let id = PyValue::Int(self.random.randint(10000, 99999).expect("range"));
                    if !id.py_in(&self.generated_ids) {
                        break id;
                    }
                };
                self.generated_ids.push(id.clone());
                let text = format!("Message sent to '{}' successfully.", py_str(&receiver));
                self.inbox.push(PyValue::Dict(vec![(receiver, message)]));
                self.message_count = add_one(&self.message_count);
                dict([
                    ("sent_status", PyValue::Bool(true)),
                    ("message_id", dict([("new_id", id)])),
                    ("message", s(text)),
                ])
            }
            "delete_message" => {
                let r = &a[0];
                // Newest first, each message's first receiver, as BFCL reads them.
                let mut found = None;
                for (i, e) in entries(&self.inbox)
                    .enumerate()
                    .collect::<Vec<_>>()
                    .into_iter()
                    .rev()
                {
                    let (k, _) = e?;
                    if k.py_eq(r) {
                        found = Some((i, k.clone()));
                        break;
                    }
                }
                match found {
                    Some((i, receiver)) => {
                        self.inbox.remove(i);
                        let r = py_str(r);
                        dict([
                            ("deleted_status", PyValue::Bool(true)),
                            ("receiver_id", receiver),
                            (
                                "message",
                                s(format!(
                                    "Receiver {r}'s latest message deleted successfully."
                                )),
                            ),
                        ])
                    }
                    None => error(format!("Receiver ID {} not found.", py_str(r))),
                }
            }
            "view_messages_sent" => {
                let mut by: Vec<(PyValue, PyValue)> = Vec::new();
                for e in entries(&self.inbox) {
                    let (r, msg) = e?;
                    match by.iter_mut().find(|(k, _)| k.py_eq(r)) {
                        Some((_, PyValue::List(l))) => l.push(msg.clone()),
                        _ => by.push((r.clone(), PyValue::List(vec![msg.clone()]))),
                    }
                }
                dict([("messages", PyValue::Dict(by))])
            }
            "add_contact" => {
                if self.user_map.iter().any(|(k, _)| k.py_eq(&a[0])) {
                    return Ok(error(format!(
                        "User name '{}' already exists.",
                        py_str(&a[0])
                    )));
                }
                self.user_count = add_one(&self.user_count);
                let id = s(match &self.user_count {
                    PyValue::Int(i) => format!("USR{i:03}"),
                    other => format!("USR{}", py_str(other)),
                });
                self.user_map.push((a[0].clone(), id.clone()));
                dict([
                    ("added_status", PyValue::Bool(true)),
                    ("user_id", id),
                    (
                        "message",
                        s(format!("Contact '{}' added successfully.", py_str(&a[0]))),
                    ),
                ])
            }
            "search_messages" => {
                let PyValue::Str(kw) = &a[0] else {
                    return Err(PyException::no_attribute(&a[0], "lower"));
                };
                let kw = kw.to_lowercase();
                let mut found = Vec::new();
                for e in entries(&self.inbox) {
                    let (r, msg) = e?;
                    let PyValue::Str(text) = msg else {
                        return Err(PyException::no_attribute(msg, "lower"));
                    };
                    if text.to_lowercase().contains(&kw) {
                        found.push(dict([("receiver_id", r.clone()), ("message", msg.clone())]));
                    }
                }
                dict([("results", PyValue::List(found))])
            }
            "get_message_stats" => {
                let mut contacts: Vec<&PyValue> = Vec::new();
                let mut received = 0;
                for e in entries(&self.inbox) {
                    let (r, _) = e?;
                    received += 1;
                    if !contacts.iter().any(|c| c.py_eq(r)) {
                        contacts.push(r);
                    }
                }
                dict([(
                    "stats",
                    dict([
                        ("received_count", PyValue::Int(received)),
                        ("total_contacts", PyValue::Int(contacts.len() as i128)),
                    ]),
                )])
            }
            _ => unreachable!("method table and dispatch agree"),
        })
    }
}

impl World for MessageApi {
    fn class(&self) -> &'static str {
        CLASS
    }

    fn load(&mut self, config: &serde_json::Value, _long_context: bool) -> Result<(), PyException> {
        let d = MessageApi::default();
        self.generated_ids = Vec::new();
        self.user_count = config_get(config, "user_count").unwrap_or(d.user_count);
        self.user_map = match config_get(config, "user_map") {
            Some(PyValue::Dict(m)) => m,
            _ => d.user_map,
        };
        self.inbox = match config_get(config, "inbox") {
            Some(PyValue::List(l)) => l,
            _ => d.inbox,
        };
        self.message_count = config_get(config, "message_count").unwrap_or(d.message_count);
        self.current_user = config_get(config, "current_user").unwrap_or(d.current_user);
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
            ("generated_ids".into(), py_set(&self.generated_ids)),
            ("user_count".into(), self.user_count.clone()),
            ("user_map".into(), PyValue::Dict(self.user_map.clone())),
            ("inbox".into(), PyValue::List(self.inbox.clone())),
            ("message_count".into(), self.message_count.clone()),
            ("current_user".into(), self.current_user.clone()),
        ]
    }
}
