//! BFCL's `TwitterAPI` (posting_api): tweets, comments, retweets and follows, including
//! Python's shared mutable default lists of `post_tweet`.

use super::{
    Method, PyException, World, bind_method, config_get, dict, error, get, get_mut, opt, req, s,
};
use crate::bfcl::pyfmt::py_str;
use crate::bfcl::value::PyValue;

const CLASS: &str = "TwitterAPI";

const METHODS: &[Method] = &[
    ("authenticate_twitter", &[req("username"), req("password")]),
    ("posting_get_login_status", &[]),
    (
        "post_tweet",
        &[req("content"), opt("tags", "[]"), opt("mentions", "[]")],
    ),
    ("retweet", &[req("tweet_id")]),
    ("comment", &[req("tweet_id"), req("comment_content")]),
    ("mention", &[req("tweet_id"), req("mentioned_usernames")]),
    ("follow_user", &[req("username_to_follow")]),
    ("list_all_following", &[]),
    ("unfollow_user", &[req("username_to_unfollow")]),
    ("get_tweet", &[req("tweet_id")]),
    ("get_user_tweets", &[req("username")]),
    ("search_tweets", &[req("keyword")]),
    ("get_tweet_comments", &[req("tweet_id")]),
    ("get_user_stats", &[req("username")]),
];

/// One stored tweet. `post_tweet` without `tags`/`mentions` stores Python's single
/// default list object, so a later `mention` on such a tweet extends the default and
/// every tweet sharing it; the flags mark those aliases.
#[derive(Debug, Clone)]
struct Tweet {
    fields: PyValue,
    shared_tags: bool,
    shared_mentions: bool,
}

/// State of a `TwitterAPI` instance. BFCL shares the default lists across all
/// instances of one Python process; here they live per instance, as in the fixtures
/// (each sequence re-imports the module).
#[derive(Debug, Clone)]
pub struct TwitterApi {
    username: PyValue,
    password: PyValue,
    authenticated: PyValue,
    tweets: Vec<(PyValue, Tweet)>,
    comments: Vec<(PyValue, PyValue)>,
    retweets: Vec<(PyValue, PyValue)>,
    following_list: PyValue,
    tweet_counter: PyValue,
    default_tags: Vec<PyValue>,
    default_mentions: Vec<PyValue>,
}

impl Default for TwitterApi {
    fn default() -> Self {
        TwitterApi {
            username: s("john"),
            password: s("john123"),
            authenticated: PyValue::Bool(false),
            tweets: Vec::new(),
            comments: Vec::new(),
            retweets: Vec::new(),
            following_list: PyValue::List(vec![s("alice"), s("bob")]),
            tweet_counter: PyValue::Int(0),
            default_tags: Vec::new(),
            default_mentions: Vec::new(),
        }
    }
}

/// Python's `int(key)` of a config key (str digits, or already a number).
fn int_key(k: &PyValue) -> PyValue {
    match k {
        PyValue::Str(t) => t.trim().parse().map_or_else(|_| k.clone(), PyValue::Int),
        other => other.clone(),
    }
}

fn not_authenticated(action: &str) -> PyValue {
    error(format!(
        "User not authenticated. Please authenticate before {action}."
    ))
}

fn find<'a, T>(items: &'a [(PyValue, T)], key: &PyValue) -> Option<&'a T> {
    items.iter().find(|(k, _)| k.py_eq(key)).map(|(_, v)| v)
}

impl TwitterApi {
    /// The tweet as Python sees it, with shared default lists filled in.
    fn view(&self, t: &Tweet) -> PyValue {
        let mut v = t.fields.clone();
        if t.shared_tags
            && let Some(slot) = get_mut(&mut v, "tags")
        {
            *slot = PyValue::List(self.default_tags.clone());
        }
        if t.shared_mentions
            && let Some(slot) = get_mut(&mut v, "mentions")
        {
            *slot = PyValue::List(self.default_mentions.clone());
        }
        v
    }

    fn tweet_values(&self) -> Vec<PyValue> {
        self.tweets.iter().map(|(_, t)| self.view(t)).collect()
    }

    fn not_found(id: &PyValue) -> PyValue {
        error(format!("Tweet with ID {} not found.", py_str(id)))
    }

    fn logged_in(&self) -> bool {
        super::truthy(&self.authenticated)
    }

    fn list_mut(list: &mut PyValue) -> &mut Vec<PyValue> {
        if !matches!(list, PyValue::List(_)) {
            *list = PyValue::List(Vec::new());
        }
        match list {
            PyValue::List(l) => l,
            _ => unreachable!(),
        }
    }

    fn dispatch(
        &mut self,
        m: &str,
        a: Vec<PyValue>,
        defaulted: [bool; 2],
    ) -> Result<PyValue, PyException> {
        let action = match m {
            "post_tweet" => "posting",
            "retweet" => "retweeting",
            "comment" => "commenting",
            "follow_user" => "following",
            "list_all_following" => "listing following",
            "unfollow_user" => "unfollowing",
            _ => "",
        };
        if !action.is_empty() && !self.logged_in() {
            return Ok(not_authenticated(action));
        }
        Ok(match m {
            "authenticate_twitter" => {
                let ok = a[0].py_eq(&self.username) && a[1].py_eq(&self.password);
                if ok {
                    self.authenticated = PyValue::Bool(true);
                }
                dict([("authentication_status", PyValue::Bool(ok))])
            }
            "posting_get_login_status" => dict([("login_status", PyValue::Bool(self.logged_in()))]),
            "post_tweet" => {
                let [content, tags, mentions]: [PyValue; 3] = a.try_into().expect("bound");
                let fields = dict([
                    ("id", self.tweet_counter.clone()),
                    ("username", self.username.clone()),
                    ("content", content),
                    ("tags", tags),
                    ("mentions", mentions),
                ]);
                let tweet = Tweet {
                    fields,
                    shared_tags: defaulted[0],
                    shared_mentions: defaulted[1],
                };
                let shown = self.view(&tweet);
                self.tweets.push((self.tweet_counter.clone(), tweet));
                self.tweet_counter = match &self.tweet_counter {
                    PyValue::Int(i) => PyValue::Int(i + 1),
                    other => other.clone(),
                };
                shown
            }
            "retweet" => {
                let id = &a[0];
                if find(&self.tweets, id).is_none() {
                    return Ok(Self::not_found(id));
                }
                let user = self.username.clone();
                let pos = match self.retweets.iter().position(|(k, _)| k.py_eq(&user)) {
                    Some(p) => p,
                    None => {
                        self.retweets.push((user, PyValue::List(Vec::new())));
                        self.retweets.len() - 1
                    }
                };
                let list = Self::list_mut(&mut self.retweets[pos].1);
                if id.py_in(list) {
                    dict([("retweet_status", s("Already retweeted"))])
                } else {
                    list.push(id.clone());
                    dict([("retweet_status", s("Successfully retweeted"))])
                }
            }
            "comment" => {
                let [id, content]: [PyValue; 2] = a.try_into().expect("bound");
                if find(&self.tweets, &id).is_none() {
                    return Ok(Self::not_found(&id));
                }
                let entry = dict([("username", self.username.clone()), ("content", content)]);
                match self.comments.iter_mut().find(|(k, _)| k.py_eq(&id)) {
                    Some((_, list)) => Self::list_mut(list).push(entry),
                    None => self.comments.push((id, PyValue::List(vec![entry]))),
                }
                dict([("comment_status", s("Comment added successfully"))])
            }
            "mention" => {
                let id = &a[0];
                let Some(pos) = self.tweets.iter().position(|(k, _)| k.py_eq(id)) else {
                    return Ok(Self::not_found(id));
                };
                let names = match &a[1] {
                    PyValue::List(l) | PyValue::Tuple(l) => l.clone(),
                    PyValue::Str(t) => t.chars().map(|c| s(c.to_string())).collect(),
                    other => {
                        return Err(PyException::type_error(format!(
                            "'{}' object is not iterable",
                            other.type_name()
                        )));
                    }
                };
                let tweet = &mut self.tweets[pos].1;
                if tweet.shared_mentions {
                    self.default_mentions.extend(names);
                } else {
                    match get_mut(&mut tweet.fields, "mentions") {
                        Some(PyValue::List(l)) => l.extend(names),
                        Some(other) => return Err(PyException::no_attribute(other, "extend")),
                        None => return Err(PyException::key_error(&s("mentions"))),
                    }
                }
                dict([("mention_status", s("Users mentioned successfully"))])
            }
            "follow_user" => {
                let list = Self::list_mut(&mut self.following_list);
                let new = !a[0].py_in(list);
                if new {
                    list.push(a[0].clone());
                }
                dict([("follow_status", PyValue::Bool(new))])
            }
            "list_all_following" => dict([("following_list", self.following_list.clone())]),
            "unfollow_user" => {
                let list = Self::list_mut(&mut self.following_list);
                let pos = list.iter().position(|x| x.py_eq(&a[0]));
                if let Some(p) = pos {
                    list.remove(p);
                }
                dict([("unfollow_status", PyValue::Bool(pos.is_some()))])
            }
            "get_tweet" => match find(&self.tweets, &a[0]) {
                Some(t) => self.view(t),
                None => Self::not_found(&a[0]),
            },
            "get_user_tweets" => PyValue::List(
                self.tweet_values()
                    .into_iter()
                    .filter(|t| get(t, "username").is_some_and(|u| u.py_eq(&a[0])))
                    .collect(),
            ),
            "search_tweets" => {
                let PyValue::Str(kw) = &a[0] else {
                    return Err(PyException::no_attribute(&a[0], "lower"));
                };
                let kw = kw.to_lowercase();
                let mut out = Vec::new();
                for t in self.tweet_values() {
                    let content = match get(&t, "content") {
                        Some(PyValue::Str(c)) => c.to_lowercase(),
                        Some(other) => return Err(PyException::no_attribute(other, "lower")),
                        None => return Err(PyException::key_error(&s("content"))),
                    };
                    let tag_hit = match get(&t, "tags") {
                        Some(PyValue::List(tags)) => tags
                            .iter()
                            .any(|g| matches!(g, PyValue::Str(g) if g.to_lowercase() == kw)),
                        _ => false,
                    };
                    if content.contains(&kw) || tag_hit {
                        out.push(t);
                    }
                }
                PyValue::List(out)
            }
            "get_tweet_comments" => {
                if find(&self.tweets, &a[0]).is_none() {
                    return Ok(Self::not_found(&a[0]));
                }
                find(&self.comments, &a[0])
                    .cloned()
                    .unwrap_or(PyValue::List(Vec::new()))
            }
            "get_user_stats" => {
                let user = &a[0];
                let tweets = self
                    .tweet_values()
                    .iter()
                    .filter(|t| get(t, "username").is_some_and(|u| u.py_eq(user)))
                    .count();
                let following = match &self.following_list {
                    PyValue::List(l) if user.py_eq(&self.username) => l.len(),
                    _ => 0,
                };
                let retweets = match find(&self.retweets, user) {
                    Some(PyValue::List(l)) => l.len(),
                    _ => 0,
                };
                dict([
                    ("tweet_count", PyValue::Int(tweets as i128)),
                    ("following_count", PyValue::Int(following as i128)),
                    ("retweet_count", PyValue::Int(retweets as i128)),
                ])
            }
            _ => unreachable!("method table and dispatch agree"),
        })
    }
}

impl World for TwitterApi {
    fn class(&self) -> &'static str {
        CLASS
    }

    fn load(&mut self, config: &serde_json::Value, _long_context: bool) -> Result<(), PyException> {
        let d = TwitterApi::default();
        self.username = config_get(config, "username").unwrap_or(d.username);
        self.password = config_get(config, "password").unwrap_or(d.password);
        self.authenticated = config_get(config, "authenticated").unwrap_or(d.authenticated);
        self.tweets = match config_get(config, "tweets") {
            Some(PyValue::Dict(items)) => items
                .into_iter()
                .map(|(k, v)| {
                    let tweet = Tweet {
                        fields: v,
                        shared_tags: false,
                        shared_mentions: false,
                    };
                    (int_key(&k), tweet)
                })
                .collect(),
            _ => d.tweets,
        };
        self.comments = match config_get(config, "comments") {
            Some(PyValue::Dict(items)) => items,
            _ => d.comments,
        };
        self.retweets = match config_get(config, "retweets") {
            Some(PyValue::Dict(items)) => items,
            _ => d.retweets,
        };
        self.following_list = config_get(config, "following_list").unwrap_or(d.following_list);
        self.tweet_counter = config_get(config, "tweet_counter").unwrap_or(d.tweet_counter);
        self.default_tags.clear();
        self.default_mentions.clear();
        Ok(())
    }

    fn call(
        &mut self,
        method: &str,
        args: Vec<PyValue>,
        kwargs: Vec<(String, PyValue)>,
    ) -> Result<PyValue, PyException> {
        // Whether post_tweet's tags/mentions fall back to the shared defaults.
        let given = |i: usize, name: &str| args.len() > i || kwargs.iter().any(|(k, _)| k == name);
        let defaulted = [!given(1, "tags"), !given(2, "mentions")];
        let (m, a) = bind_method(CLASS, METHODS, method, args, kwargs)?;
        self.dispatch(m, a, defaulted)
    }

    fn state(&self) -> Vec<(String, PyValue)> {
        let tweets = self
            .tweets
            .iter()
            .map(|(k, t)| (k.clone(), self.view(t)))
            .collect();
        vec![
            ("username".into(), self.username.clone()),
            ("password".into(), self.password.clone()),
            ("authenticated".into(), self.authenticated.clone()),
            ("tweets".into(), PyValue::Dict(tweets)),
            ("comments".into(), PyValue::Dict(self.comments.clone())),
            ("retweets".into(), PyValue::Dict(self.retweets.clone())),
            ("following_list".into(), self.following_list.clone()),
            ("tweet_counter".into(), self.tweet_counter.clone()),
        ]
    }
}
