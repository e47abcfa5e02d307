#!/usr/bin/env python3
"""Generate the BFCL multi-turn backend fixtures under fixtures/bfcl_worlds/.

toolgauge re-implements BFCL's eight multi-turn backends in Rust. Their result
strings and end states must be byte-identical to BFCL's, so the Rust unit tests
compare against examples produced here by BFCL's own Python code.

This script is ours; it only *imports* the installed `bfcl_eval` package and
drives it. Run it in a throwaway virtualenv:

    python -m venv /tmp/bfcl-venv
    /tmp/bfcl-venv/bin/pip install --no-deps bfcl-eval==2026.3.23 mpmath==1.3.0
    /tmp/bfcl-venv/bin/python tests/bfcl_worlds/generate.py

(`--no-deps` is enough: the eight backends need only the standard library and
mpmath; the full dependency set of bfcl-eval is large.)

Every call is executed by BFCL's own executor
(`bfcl_eval.eval_checker.multi_turn_eval.multi_turn_utils.execute_multi_turn_func_call`),
one call string per invocation, so parsing, instance handling, result
formatting and the `Error during execution: ` texts are BFCL's.

Output, one JSON object per line, per class in `<Class>.jsonl`:

    class       backend class name
    seq         sequence id; every sequence starts from a fresh instance
    config_id   id of the multi-turn item whose initial_config[class] was
                loaded ("default" = {}, "synthetic:..." = made up here)
    step        0 = the state right after _load_scenario (call is null),
                1.. = one call each, executed in order on the same instance
    call        the call string exactly as handed to the executor
    func        method name called (null for step 0)
    args        positional arguments (JSON, tagged), [] if none
    kwargs      keyword arguments (JSON, tagged)
    result      the result string BFCL produced
    state       public attributes of the instance after the call (tagged JSON)
    cwd         GorillaFileSystem only: path of the private current directory
    seed        random seed the instance was built with (classes using random)
    long_context  step 0 only, present (true) when the instance was loaded with
                long_context=True (the config id names a long_context item)

Tagged JSON: JSON-native values are written as is (dicts with string keys keep
their order); anything else is an object with a "__type__" key:
    {"__type__": "tuple", "items": [...]}
    {"__type__": "set", "items": [...]}            (items sorted by repr)
    {"__type__": "dict", "items": [[key, value], ...]}   (a non-str key)
    {"__type__": "float", "repr": "inf"}           (inf, -inf, nan)
    {"__type__": "Directory", "name": ..., "contents": {...}}
    {"__type__": "File", "name": ..., "content": ...}
    {"__type__": "datetime", "iso": ...} / "Decimal" / "mpf" / other: "repr"
"""

import argparse
import ast
import decimal
import importlib
import json
import math
import os
import platform
import random
import sys
from pathlib import Path

# Hash randomisation changes the iteration order of sets of strings, which a few
# BFCL error texts expose; the timezone matters for TradingBot's timestamps.
# Pin both so that a rerun gives byte-identical files.
if os.environ.get("PYTHONHASHSEED") != "0" or os.environ.get("TZ") != "UTC":
    env = dict(os.environ, PYTHONHASHSEED="0", TZ="UTC")
    os.execve(sys.executable, [sys.executable] + sys.argv, env)

import bfcl_eval  # noqa: E402
import mpmath  # noqa: E402
from bfcl_eval.constants.executable_backend_config import (  # noqa: E402
    CLASS_FILE_PATH_MAPPING,
    STATELESS_CLASSES,
)
from bfcl_eval.eval_checker.multi_turn_eval import multi_turn_utils  # noqa: E402

try:
    from importlib.metadata import version as _pkg_version

    BFCL_VERSION = _pkg_version("bfcl-eval")
except Exception:  # pragma: no cover
    BFCL_VERSION = "unknown"

REPO = Path(__file__).resolve().parents[2]
DATA = Path(bfcl_eval.__file__).parent / "data"
MODEL_NAME = "toolgauge_fixture"

# Where each class takes its seed from when the initial config has no
# "random_seed" (no item of the dataset sets one).
DEFAULT_SEEDS = {
    "MessageAPI": 200191,  # hard-coded in message_api.py _load_scenario
    "TradingBot": 1053520,  # DEFAULT_STATE["random_seed"]
    "TravelAPI": 141053,  # DEFAULT_STATE["random_seed"]
    "VehicleControlAPI": 141053,  # DEFAULT_STATE["random_seed"]
}


# ---------------------------------------------------------------- encoding ---


def enc(v):
    """Tagged JSON of a Python value (see module docstring)."""
    # bool before int: bool is an int subclass
    if v is None or isinstance(v, (bool, str)):
        return v
    if isinstance(v, int):
        return v
    if isinstance(v, float):
        if math.isfinite(v):
            return v
        return {"__type__": "float", "repr": repr(v)}
    if isinstance(v, list):
        return [enc(x) for x in v]
    if isinstance(v, tuple):
        return {"__type__": "tuple", "items": [enc(x) for x in v]}
    if isinstance(v, (set, frozenset)):
        return {"__type__": "set", "items": [enc(x) for x in sorted(v, key=repr)]}
    if isinstance(v, dict):
        if all(isinstance(k, str) for k in v) and "__type__" not in v:
            return {k: enc(x) for k, x in v.items()}
        return {"__type__": "dict", "items": [[enc(k), enc(x)] for k, x in v.items()]}
    name = type(v).__name__
    if name == "Directory":
        return {"__type__": "Directory", "name": v.name, "contents": enc(v.contents)}
    if name == "File":
        return {"__type__": "File", "name": v.name, "content": v.content}
    if name in ("datetime", "date", "time"):
        return {"__type__": name, "iso": v.isoformat()}
    if isinstance(v, decimal.Decimal):
        return {"__type__": "Decimal", "repr": str(v)}
    if name in ("mpf", "mpc"):
        return {"__type__": name, "repr": repr(v)}
    return {"__type__": name, "repr": repr(v)}


def public_state(instance):
    return {k: enc(v) for k, v in vars(instance).items() if not k.startswith("_")}


def fs_cwd(instance):
    parts = []
    d = instance._current_dir
    while d is not None:
        parts.append(d.name)
        d = d.parent
    return "/".join(reversed(parts))


# ------------------------------------------------------------- call specs ---


class Var:
    """A value saved from an earlier result of the same sequence."""

    def __init__(self, name):
        self.name = name


def C(func, _save=None, **kwargs):
    """A keyword-only call, formatted the way BFCL's FC handlers format calls."""
    return {"func": func, "kwargs": kwargs, "save": _save or {}}


def R(call):
    """A call string used verbatim (positional args, bad names, missing args)."""
    return {"raw": call, "save": {}}


def resolve(v, saved):
    if isinstance(v, Var):
        return saved[v.name]
    if isinstance(v, list):
        return [resolve(x, saved) for x in v]
    if isinstance(v, dict):
        return {k: resolve(x, saved) for k, x in v.items()}
    return v


def call_string(func, kwargs):
    # Same shape as bfcl_eval.model_handler.utils.convert_to_function_call
    return f"{func}({','.join(f'{k}={repr(v)}' for k, v in kwargs.items())})"


def parse_raw(call):
    """Name, positional args and keyword args of a raw call string (literals only)."""
    node = ast.parse(call, mode="eval").body
    assert isinstance(node, ast.Call) and isinstance(node.func, ast.Name), call
    args = [ast.literal_eval(a) for a in node.args]
    kwargs = {k.arg: ast.literal_eval(k.value) for k in node.keywords}
    return node.func.id, args, kwargs


# ------------------------------------------------------------------ plans ---
# Each class: list of (config_id, [calls]). Every sequence runs on a fresh
# instance. Between them every public method is called at least once with
# valid arguments and at least once in an error path.

TOK = Var("token")
CARD = Var("card")
BOOK = Var("booking")

PLANS = {
    "GorillaFileSystem": [
        (
            "multi_turn_base_0",
            [
                C("pwd"),
                C("ls"),
                C("ls", a=True),
                C("cd", folder="document"),
                C("pwd"),
                C("cat", file_name="final_report.pdf"),
                C("cat", file_name="nope.txt"),
                C("cat", file_name="a/b"),
                C("mkdir", dir_name="temp"),
                C("mkdir", dir_name="temp"),
                C("mkdir", dir_name="bad:name"),
                C("mv", source="final_report.pdf", destination="temp"),
                C("mv", source="missing.pdf", destination="temp"),
                C("mv", source="previous_report.pdf", destination="temp/x"),
                C("cd", folder="temp"),
                C("grep", file_name="final_report.pdf", pattern="budget analysis"),
                C("grep", file_name="final_report.pdf", pattern="no such words"),
                C("grep", file_name="missing.pdf", pattern="x"),
                R("sort('final_report.pdf')"),
                C("sort", file_name="nope.pdf"),
                C("cd", folder=".."),
                C("mv", source="previous_report.pdf", destination="temp"),
                C("cd", folder="temp"),
                C("diff", file_name1="final_report.pdf", file_name2="previous_report.pdf"),
                C("diff", file_name1="final_report.pdf", file_name2="ghost.pdf"),
                C("wc", file_name="final_report.pdf", mode="w"),
                C("wc", file_name="final_report.pdf", mode="c"),
                C("wc", file_name="final_report.pdf"),
                C("wc", file_name="final_report.pdf", mode="x"),
                C("wc", file_name="ghost.pdf"),
                C("tail", file_name="final_report.pdf", lines=1),
                C("tail", file_name="ghost.pdf"),
                C("du"),
                C("du", human_readable=True),
                C("cd", folder="/"),
                C("pwd"),
                C("cd", folder=".."),
                C("cd", folder="document/temp"),
                C("cd", folder="nowhere"),
                C("find"),
                C("find", path="document", name="report"),
                C("find", path="/", name="temp"),
                C("find", path="/nonexistent"),
                C("find", path="document/temp/"),
            ],
        ),
        (
            "multi_turn_base_4",
            [
                C("touch", file_name="notes.txt"),
                C("touch", file_name="notes.txt"),
                C("touch", file_name="bad|name"),
                C("echo", content="zeta line\nalpha line\nMiddle line", file_name="notes.txt"),
                C("echo", content="just print me"),
                C("echo", content="x", file_name="ghost.txt"),
                C("echo", content="x", file_name="bad*name"),
                C("echo", content="empty name", file_name=""),
                C("cat", file_name="notes.txt"),
                C("sort", file_name="notes.txt"),
                C("tail", file_name="notes.txt", lines=2),
                C("tail", file_name="notes.txt", lines=100),
                C("tail", file_name="notes.txt", lines=0),
                C("wc", file_name="notes.txt", mode="l"),
                C("mkdir", dir_name="sub"),
                C("cp", source="notes.txt", destination="sub"),
                C("cp", source="notes.txt", destination="sub"),
                C("cp", source="notes.txt", destination="copy.txt"),
                C("cp", source="ghost.txt", destination="x.txt"),
                C("cp", source="notes.txt", destination="a/b"),
                C("cp", source="report.txt", destination="copy.txt"),
                C("cp", source="sub", destination="sub2"),
                C("rmdir", dir_name="sub2"),
                C("rm", file_name="ghost.txt"),
                C("rmdir", dir_name="ghost"),
                C("rmdir", dir_name="notes.txt"),
                C("rm", file_name="copy.txt"),
                C("mkdir", dir_name="empty"),
                C("rmdir", dir_name="empty"),
                C("rm", file_name="sub2"),
                C("mv", source="notes.txt", destination="renamed.txt"),
                C("mv", source="renamed.txt", destination="report.txt"),
                C("mv", source="sub", destination="moved"),
                C("mv", source="renamed.txt", destination="moved"),
                C("ls"),
                C("cd", folder="moved/"),
                C("ls"),
                C("cd", folder=".."),
                C("find", path=".", name="notes"),
                # cp of a directory copies its contents dict shallowly: the
                # File objects are shared between the original and the copy.
                C("mkdir", dir_name="src"),
                C("cd", folder="src"),
                C("touch", file_name="a.txt"),
                C("echo", content="v1", file_name="a.txt"),
                C("cd", folder=".."),
                C("cp", source="src", destination="dup"),
                C("cd", folder="dup"),
                C("echo", content="v2", file_name="a.txt"),
                C("cd", folder=".."),
                C("cd", folder="src"),
                C("cat", file_name="a.txt"),
                C("cd", folder=".."),
                C("echo", content="x" * 3000, file_name="report.txt"),
                C("du", human_readable=True),
                C("du"),
                # Python-level failures
                R("cat()"),
                R("ls(b=True)"),
                R("cat('report.txt', file_name='report.txt')"),
                C("tail", file_name="report.txt", lines="2"),
                C("mkdir", dir_name=5),
                R("foo(x=1)"),
                R("remove(file_name='report.txt')"),
                R("add(a=1, b=2)"),
            ],
        ),
        (
            "multi_turn_base_15",
            [
                C("pwd"),
                C("ls"),
                C("du"),
                C("du", human_readable=True),
                C("mkdir", dir_name="d"),
                C("cat", file_name="d"),
                C("wc", file_name="d"),
                C("sort", file_name="d"),
                C("grep", file_name="d", pattern="x"),
                C("tail", file_name="d"),
                C("diff", file_name1="d", file_name2="d"),
                C("find", name="d"),
                C("cd", folder="."),
                C("cd", folder="/"),
                C("cd", folder="d"),
                C("pwd"),
                C("touch", file_name=".hidden"),
                C("ls"),
                C("ls", a=True),
                C("find", path="/"),
                C("cd", folder=".."),
                C("rm", file_name="d"),
                C("ls"),
            ],
        ),
        # Long-context mode (the config id names a long_context item): loaded
        # files get BFCL's filler text appended (except the FILES_TAIL_USED
        # names), directories without subdirectories get the image files.
        (
            "multi_turn_long_context_0",
            [
                C("ls"),
                C("du"),
                C("du", human_readable=True),
                C("find", path="archive"),
                C("cd", folder="document"),
                C("ls"),
                C("cat", file_name="final_report.pdf"),
                C("wc", file_name="final_report.pdf", mode="c"),
                C("wc", file_name="final_report.pdf", mode="w"),
                C("grep", file_name="final_report.pdf", pattern="budget"),
                C("sort", file_name="previous_report.pdf"),
                C("tail", file_name="previous_report.pdf", lines=1),
                C("diff", file_name1="final_report.pdf", file_name2="previous_report.pdf"),
                C("rm", file_name="image_344822349461074042.jpg"),
                C("cat", file_name="image_8219547643081662353.jpg"),
                C("touch", file_name="image_344822349461074042.jpg"),
                C("echo", content="short", file_name="final_report.pdf"),
                C("wc", file_name="final_report.pdf", mode="c"),
                C("cd", folder=".."),
                C("cd", folder="archive"),
                C("ls", a=True),
            ],
        ),
        (
            "multi_turn_long_context_11",
            [
                C("ls"),
                C("cat", file_name="file1.txt"),
                C("cat", file_name="file2.txt"),
                C("diff", file_name1="file1.txt", file_name2="file2.txt"),
                C("find", name="file"),
                C("mkdir", dir_name="new"),
                C("cp", source="file2.txt", destination="new"),
                C("cd", folder="new"),
                C("ls"),
                C("wc", file_name="file2.txt", mode="c"),
            ],
        ),
    ],
    "MathAPI": [
        (
            "multi_turn_base_15",
            [
                C("add", a=1, b=2),
                C("add", a=0.1, b=0.2),
                C("add", a="x", b=1),
                C("add", a="x", b="y"),
                R("add(a=1)"),
                R("add(a=1, b=2, c=3)"),
                R("add(1, 2)"),
                C("subtract", a=10, b=2.5),
                C("subtract", a="a", b=1),
                C("multiply", a=3, b=4),
                C("multiply", a=1.5, b=2),
                C("multiply", a="3", b=4),
                C("divide", a=1, b=3),
                C("divide", a=6, b=3),
                C("divide", a=1, b=0),
                C("divide", a=1, b=0.0),
                C("divide", a="1", b=2),
                C("power", base=2, exponent=10),
                C("power", base=2, exponent=0.5),
                C("power", base=2.0, exponent=-1),
                C("power", base=2, exponent=-2),
                C("power", base="a", exponent=2),
                C("power", base=10.0, exponent=400),
                C("square_root", number=2, precision=10),
                C("square_root", number=16, precision=3),
                C("square_root", number=2.0, precision=5),
                C("square_root", number=-4, precision=5),
                C("square_root", number="x", precision=5),
                C("absolute_value", number=-5.5),
                C("absolute_value", number=-3),
                C("absolute_value", number="a"),
                C("round_number", number=3.14159, decimal_places=2),
                C("round_number", number=2.5),
                C("round_number", number=2.675, decimal_places=2),
                C("round_number", number=1234, decimal_places=-2),
                C("round_number", number="x"),
                C("percentage", part=25, whole=200),
                C("percentage", part=1, whole=3),
                C("percentage", part=1, whole=0),
                C("min_value", numbers=[3, 1.5, 2]),
                C("min_value", numbers=[]),
                C("min_value", numbers=[1, "a"]),
                C("max_value", numbers=[3, 1, 2]),
                C("max_value", numbers=[]),
                C("max_value", numbers=[1, "a"]),
                C("sum_values", numbers=[0.1, 0.2, 0.3]),
                C("sum_values", numbers=[1, 2, 3]),
                C("sum_values", numbers=[]),
                C("sum_values", numbers=[1, "a"]),
            ],
        ),
        (
            "multi_turn_base_35",
            [
                C("mean", numbers=[1, 2, 3, 4]),
                C("mean", numbers=[1.5, 2.5]),
                C("mean", numbers=[]),
                C("mean", numbers=[1, "a"]),
                C("standard_deviation", numbers=[2, 4, 4, 4, 5, 5, 7, 9]),
                C("standard_deviation", numbers=[1, 2, 3]),
                C("standard_deviation", numbers=[]),
                C("standard_deviation", numbers=["a"]),
                C("logarithm", value=100, base=10, precision=10),
                C("logarithm", value=8, base=2, precision=5),
                C("logarithm", value=1000, base=10, precision=20),
                C("logarithm", value=0, base=10, precision=10),
                C("logarithm", value=10, base=1, precision=10),
                C("logarithm", value="abc", base=10, precision=10),
                C("logarithm", value=-1, base=10, precision=10),
                C("si_unit_conversion", value=5, unit_in="km", unit_out="m"),
                C("si_unit_conversion", value=1, unit_in="nm", unit_out="km"),
                C("si_unit_conversion", value=250, unit_in="cm", unit_out="mm"),
                C("si_unit_conversion", value="5", unit_in="km", unit_out="m"),
                C("si_unit_conversion", value=5, unit_in="mile", unit_out="m"),
                C("imperial_si_conversion", value=100, unit_in="celsius", unit_out="fahrenheit"),
                C("imperial_si_conversion", value=212, unit_in="fahrenheit", unit_out="celsius"),
                C("imperial_si_conversion", value=3, unit_in="m", unit_out="m"),
                C("imperial_si_conversion", value=10, unit_in="kg", unit_out="lb"),
                C("imperial_si_conversion", value=5, unit_in="miles", unit_out="km"),
                C("imperial_si_conversion", value=1, unit_in="kg", unit_out="oz"),
                C("imperial_si_conversion", value="x", unit_in="kg", unit_out="lb"),
                R("mean()"),
                R("mean(numbers=[1], weights=[1])"),
                R("kill(pid=1)"),
                R("ls()"),
            ],
        ),
    ],
    "MessageAPI": [
        (
            "default",
            [
                C("message_get_login_status"),
                C("send_message", receiver_id="USR002", message="hi"),
                C("view_messages_sent"),
                C("search_messages", keyword="file"),
                C("get_message_stats"),
                C("delete_message", receiver_id="USR002"),
                C("list_users"),
                C("get_user_id", user="Bob"),
                C("get_user_id", user="Zed"),
                C("message_login", user_id="USR999"),
                C("message_login", user_id="USR001"),
                C("message_get_login_status"),
                C("send_message", receiver_id="USR002", message="Hello Bob"),
                C("send_message", receiver_id="USR009", message="nobody"),
                C("send_message", receiver_id="USR003", message="Report attached"),
                C("send_message", receiver_id="USR004", message="Lunch?"),
                C("send_message", receiver_id="USR002", message="Second one"),
                C("view_messages_sent"),
                C("search_messages", keyword="FILE"),
                C("search_messages", keyword="zzz"),
                C("get_message_stats"),
                C("delete_message", receiver_id="USR002"),
                C("delete_message", receiver_id="USR999"),
                C("add_contact", user_name="Eve"),
                C("add_contact", user_name="Alice"),
                C("send_message", receiver_id="USR005", message="Welcome Eve"),
                C("list_users"),
                R("send_message(receiver_id='USR002')"),
                R("list_users(all=True)"),
                C("search_messages", keyword=5),
            ],
        ),
        (
            "multi_turn_base_33",
            [
                C("message_get_login_status"),
                C("view_messages_sent"),
                C("search_messages", keyword="thanks"),
                C("get_message_stats"),
                C("add_contact", user_name="Frank"),
                C("send_message", receiver_id="USR006", message="Hi Frank"),
                C("delete_message", receiver_id="USR003"),
                C("view_messages_sent"),
            ],
        ),
        (
            "multi_turn_base_62",
            [
                C("message_get_login_status"),
                C("send_message", receiver_id="USR003", message="From Jack"),
                C("get_message_stats"),
                C("message_login", user_id="USR002"),
                C("send_message", receiver_id="USR001", message="From Bob"),
            ],
        ),
    ],
    "TwitterAPI": [
        (
            "multi_turn_base_0",
            [
                C("posting_get_login_status"),
                C("post_tweet", content="x"),
                C("retweet", tweet_id=0),
                C("comment", tweet_id=0, comment_content="x"),
                C("follow_user", username_to_follow="alice"),
                C("list_all_following"),
                C("unfollow_user", username_to_unfollow="alice"),
                C("mention", tweet_id=0, mentioned_usernames=["@early"]),
                C("authenticate_twitter", username="analyst_pro", password="wrong"),
                C("authenticate_twitter", username="analyst_pro", password="Kj8#mP9$vL2"),
                C("posting_get_login_status"),
                C("post_tweet", content="Report done", tags=["#done"], mentions=["@bob"]),
                C("retweet", tweet_id=1),
                C("retweet", tweet_id=1),
                C("retweet", tweet_id=99),
                C("comment", tweet_id=1, comment_content="Great insights"),
                C("comment", tweet_id=1, comment_content="Second comment"),
                C("comment", tweet_id=99, comment_content="x"),
                C("mention", tweet_id=3, mentioned_usernames=["@carol", "@dave"]),
                C("mention", tweet_id=99, mentioned_usernames=["@x"]),
                C("get_tweet", tweet_id=0),
                C("get_tweet", tweet_id="0"),
                C("get_tweet", tweet_id=99),
                C("get_user_tweets", username="analyst_pro"),
                C("get_user_tweets", username="nobody"),
                C("search_tweets", keyword="#BUDGET"),
                C("search_tweets", keyword="updates"),
                C("search_tweets", keyword="nothing matches"),
                C("get_tweet_comments", tweet_id=1),
                C("get_tweet_comments", tweet_id=2),
                C("get_tweet_comments", tweet_id=99),
                C("follow_user", username_to_follow="alice"),
                C("follow_user", username_to_follow="carol"),
                C("list_all_following"),
                C("unfollow_user", username_to_unfollow="bob"),
                C("unfollow_user", username_to_unfollow="zed"),
                C("get_user_stats", username="analyst_pro"),
                C("get_user_stats", username="other"),
                R("comment(tweet_id=1)"),
                R("post_tweet(content='x', hashtags=['#a'])"),
            ],
        ),
        (
            "multi_turn_base_20",
            [
                C("authenticate_twitter", username="john", password="john123"),
                C("post_tweet", content="First"),
                # post_tweet's defaults (tags=[], mentions=[]) are shared lists:
                # mention() on a tweet posted without mentions extends the
                # default, which every later default-posted tweet then shares.
                C("mention", tweet_id=0, mentioned_usernames=["@x"]),
                C("post_tweet", content="Second"),
                C("get_tweet", tweet_id=1),
                C("get_user_tweets", username="john"),
                C("get_user_stats", username="john"),
                C("retweet", tweet_id=0),
                C("get_user_stats", username="john"),
            ],
        ),
    ],
    "TicketAPI": [
        (
            "multi_turn_base_110",
            [
                C("ticket_get_login_status"),
                C("create_ticket", title="x"),
                C("get_user_tickets"),
                C("logout"),
                C("ticket_login", username="alice", password=""),
                C("ticket_login", username="alice", password="pw"),
                C("ticket_get_login_status"),
                C("create_ticket", title="Printer broken", description="3rd floor", priority=3),
                C("create_ticket", title="x", priority=6),
                C("create_ticket", title="Low priority"),
                C("get_ticket", ticket_id=0),
                C("get_ticket", ticket_id=42),
                C("close_ticket", ticket_id=0),
                C("close_ticket", ticket_id=0),
                C("close_ticket", ticket_id=42),
                C("resolve_ticket", ticket_id=1, resolution="Fixed"),
                C("resolve_ticket", ticket_id=1, resolution="Again"),
                C("resolve_ticket", ticket_id=42, resolution="x"),
                C("edit_ticket", ticket_id=1, updates={"title": "New title", "priority": None, "status": "Open"}),
                C("edit_ticket", ticket_id=1, updates={"owner": "bob"}),
                C("edit_ticket", ticket_id=42, updates={}),
                C("get_ticket", ticket_id=1),
                C("get_user_tickets", status="open"),
                C("get_user_tickets", status="CLOSED"),
                C("get_user_tickets"),
                C("logout"),
                C("ticket_get_login_status"),
                R("resolve_ticket(ticket_id=1)"),
                R("get_ticket(ticket_id=0, verbose=True)"),
            ],
        ),
        (
            "multi_turn_base_102",
            [
                C("ticket_get_login_status"),
                C("create_ticket", title="Server down", description="Prod", priority=5),
                C("create_ticket", title="x", priority=0),
                C("get_user_tickets"),
                C("ticket_login", username="Mary", password="secret"),
                C("get_user_tickets"),
                C("create_ticket", title="Mary's ticket", priority=2),
                C("edit_ticket", ticket_id=0, updates={"description": "Prod cluster", "priority": 4}),
                C("get_ticket", ticket_id=0),
                C("create_ticket", title="x", priority="high"),
            ],
        ),
    ],
    "TradingBot": [
        (
            "default",
            [
                C("trading_get_login_status"),
                C("get_account_info"),
                C("get_watchlist"),
                C("get_order_history"),
                C("get_transaction_history"),
                C("place_order", order_type="Buy", symbol="AAPL", price=227.16, amount=1),
                C("fund_account", amount=100),
                C("withdraw_funds", amount=100),
                C("remove_stock_from_watchlist", symbol="NVDA"),
                C("trading_logout"),
                C("trading_login", username="user", password="pass"),
                C("trading_login", username="user", password="pass"),
                C("trading_get_login_status"),
                C("get_current_time"),
                C("get_symbol_by_name", name="Apple"),
                C("get_symbol_by_name", name="Unknown Co"),
                C("get_stock_info", symbol="AAPL"),
                C("get_stock_info", symbol="XXXX"),
                C("get_order_details", order_id=12345),
                C("get_order_details", order_id=1),
                C("cancel_order", order_id=12345),
                C("cancel_order", order_id=12446),
                C("cancel_order", order_id=1),
                # order_counter starts at 12446, an existing order id: overwritten
                C("place_order", order_type="Buy", symbol="AAPL", price=227.16, amount=10),
                C("place_order", order_type="Buy", symbol="GOOG", price=2840.34, amount=100),
                C("place_order", order_type="Buy", symbol="ZZZ", price=10, amount=1),
                C("place_order", order_type="Buy", symbol="AAPL", price=0, amount=1),
                C("place_order", order_type="Sell", symbol="TSLA", price=600, amount=5),
                C("get_order_details", order_id=12446),
                C("withdraw_funds", amount=100),
                C("fund_account", amount=500.5),
                C("fund_account", amount=-1),
                C("fund_account", amount=250),
                C("get_account_info"),
                C("get_transaction_history"),
                C("get_transaction_history", start_date="2024-09-01", end_date="2024-09-01"),
                C("get_transaction_history", start_date="2024-09-02"),
                C("get_transaction_history", start_date="09/01/2024"),
                C("get_watchlist"),
                C("add_to_watchlist", stock="AAPL"),
                C("add_to_watchlist", stock="AAPL"),
                C("add_to_watchlist", stock="FAKE"),
                C("remove_stock_from_watchlist", symbol="NVDA"),
                C("remove_stock_from_watchlist", symbol="NVDA"),
                C("get_order_history"),
                C("get_available_stocks", sector="Technology"),
                C("get_available_stocks", sector="Energy"),
                C("filter_stocks_by_price", stocks=["AAPL", "GOOG", "F"], min_price=0, max_price=500),
                C("filter_stocks_by_price", stocks=["AAPL", "GOOG"], min_price=1000, max_price=5000),
                C("notify_price_change", stocks=["AAPL", "TSLA", "NVDA"], threshold=0.15),
                C("notify_price_change", stocks=["MSFT"], threshold=1.0),
                C("trading_logout"),
                R("place_order(order_type='Buy', symbol='AAPL', price=1)"),
                R("get_stock_info(symbol='AAPL', exchange='NASDAQ')"),
            ],
        ),
        (
            "multi_turn_base_126",
            [
                C("get_order_history"),
                C("get_order_details", order_id="order_type"),
                C("cancel_order", order_id="order_type"),
                C("withdraw_funds", amount=500),
                C("withdraw_funds", amount=1000000000),
                C("withdraw_funds", amount=0),
                C("withdraw_funds", amount="100"),
                C("fund_account", amount=1000),
                C("get_account_info"),
                C("get_transaction_history"),
                C("place_order", order_type="Buy", symbol="XYZ", price=150.0, amount=20),
                C("get_order_details", order_id=12446),
                C("get_stock_info", symbol="XYZ"),
                C("get_watchlist"),
                C("remove_stock_from_watchlist", symbol="XYZ"),
                C("filter_stocks_by_price", stocks=["XYZ", "AAPL", "NVDA"], min_price=200, max_price=300),
            ],
        ),
        (
            "multi_turn_base_132",
            [
                C("trading_get_login_status"),
                C("get_order_history"),
                C("get_watchlist"),
                C("fund_account", amount=10),
                C("get_transaction_history"),
            ],
        ),
        # long_context=True: answers padded from long_context.py
        (
            "multi_turn_long_context_103",
            [
                C("get_stock_info", symbol="AAPL"),
                C("get_stock_info", symbol="XXXX"),
                C("get_order_details", order_id=12345),
                C("get_order_details", order_id="order_type"),
                C("get_order_details", order_id=1),
                C("place_order", order_type="Buy", symbol="TSLA", price=700, amount=10),
                C("get_order_details", order_id=12446),
                C("get_watchlist"),
                C("add_to_watchlist", stock="OMEG"),
                C("fund_account", amount=100),
                C("get_transaction_history", start_date="2024-09-01"),
                C("get_available_stocks", sector="Technology"),
                C("get_available_stocks", sector="Automobile"),
                C("get_available_stocks", sector="Energy"),
                C("trading_logout"),
                C("get_watchlist"),
            ],
            {"long_context": True},
        ),
    ],
    "TravelAPI": [
        (
            "default",
            [
                C("travel_get_login_status"),
                C("register_credit_card", access_token="x", card_number="4111111111111111",
                  expiration_date="12/30", cardholder_name="Ada Lovelace", card_verification_number=123),
                C("get_credit_card_balance", access_token="x", card_id="1"),
                C("authenticate_travel", _save={"token": "access_token"}, client_id="c", client_secret="s",
                  refresh_token="r", grant_type="read_write", user_first_name="Ada", user_last_name="Lovelace"),
                C("travel_get_login_status"),
                C("register_credit_card", _save={"card": "card_id"}, access_token=TOK,
                  card_number="4111111111111111", expiration_date="12/30", cardholder_name="Ada Lovelace",
                  card_verification_number=123),
                C("register_credit_card", access_token=TOK, card_number="4111111111111111",
                  expiration_date="12/30", cardholder_name="Ada Lovelace", card_verification_number=123),
                C("register_credit_card", access_token="wrong", card_number="5500000000000004",
                  expiration_date="01/29", cardholder_name="Ada Lovelace", card_verification_number=456),
                C("get_credit_card_balance", access_token=TOK, card_id=CARD),
                C("get_credit_card_balance", access_token=TOK, card_id="nope"),
                C("get_all_credit_cards"),
                C("get_flight_cost", travel_from="SFO", travel_to="LAX", travel_date="2024-11-15", travel_class="economy"),
                C("get_flight_cost", travel_from="SFO", travel_to="LAX", travel_date="2024-11-14", travel_class="business"),
                C("get_flight_cost", travel_from="JFK", travel_to="PEK", travel_date="2024-11-15", travel_class="first"),
                C("get_flight_cost", travel_from="LAX", travel_to="XXX", travel_date="2024-11-15", travel_class="economy"),
                C("get_flight_cost", travel_from="SFO", travel_to="LAX", travel_date="2024-11-15", travel_class="premium"),
                C("book_flight", _save={"booking": "booking_id"}, access_token=TOK, card_id=CARD,
                  travel_date="2024-11-15", travel_from="SFO", travel_to="LAX", travel_class="economy"),
                C("book_flight", access_token=TOK, card_id=CARD, travel_date="15/11/2024",
                  travel_from="SFO", travel_to="LAX", travel_class="economy"),
                C("book_flight", access_token=TOK, card_id=CARD, travel_date="2024-11-15",
                  travel_from="ZZZ", travel_to="LAX", travel_class="economy"),
                C("book_flight", access_token=TOK, card_id=CARD, travel_date="2024-11-15",
                  travel_from="SFO", travel_to="ZZZ", travel_class="economy"),
                C("book_flight", access_token=TOK, card_id=CARD, travel_date="2024-11-15",
                  travel_from="HND", travel_to="SFO", travel_class="economy"),
                C("book_flight", access_token=TOK, card_id="nope", travel_date="2024-11-15",
                  travel_from="SFO", travel_to="LAX", travel_class="economy"),
                C("book_flight", access_token="wrong", card_id=CARD, travel_date="2024-11-15",
                  travel_from="SFO", travel_to="LAX", travel_class="economy"),
                C("retrieve_invoice", access_token=TOK, booking_id=BOOK),
                C("retrieve_invoice", access_token=TOK, booking_id="0000000"),
                C("retrieve_invoice", access_token="wrong", booking_id=BOOK),
                C("get_booking_history", access_token=TOK),
                C("get_booking_history", access_token="wrong"),
                C("purchase_insurance", access_token=TOK, insurance_type="comprehensive", booking_id=BOOK,
                  insurance_cost=50.0, card_id=CARD),
                C("purchase_insurance", access_token=TOK, insurance_type="basic", booking_id="0000000",
                  insurance_cost=10.0, card_id=CARD),
                C("purchase_insurance", access_token=TOK, insurance_type="basic", booking_id=BOOK,
                  insurance_cost=10.0, card_id="nope"),
                C("contact_customer_support", booking_id=BOOK, message="Seat change please"),
                C("contact_customer_support", booking_id="0000000", message="x"),
                C("get_credit_card_balance", access_token=TOK, card_id=CARD),
                C("cancel_booking", access_token=TOK, booking_id=BOOK),
                C("cancel_booking", access_token=TOK, booking_id=BOOK),
                C("cancel_booking", access_token="wrong", booking_id=BOOK),
                C("get_credit_card_balance", access_token=TOK, card_id=CARD),
                C("set_budget_limit", access_token=TOK, budget_limit=1000000),
                C("book_flight", access_token=TOK, card_id=CARD, travel_date="2024-11-15",
                  travel_from="SFO", travel_to="LAX", travel_class="economy"),
                C("set_budget_limit", access_token=TOK, budget_limit=10),
                C("purchase_insurance", access_token=TOK, insurance_type="basic", booking_id="0000000",
                  insurance_cost=50.0, card_id=CARD),
                C("set_budget_limit", access_token="wrong", budget_limit=1),
                C("set_budget_limit", access_token=TOK, budget_limit="abc"),
                C("compute_exchange_rate", base_currency="USD", target_currency="EUR", value=100),
                C("compute_exchange_rate", base_currency="EUR", target_currency="USD", value=100),
                C("compute_exchange_rate", base_currency="JPY", target_currency="USD", value=1000),
                C("compute_exchange_rate", base_currency="USD", target_currency="RMB", value=3),
                C("compute_exchange_rate", base_currency="EUR", target_currency="GBP", value=10),
                C("verify_traveler_information", first_name="Ada", last_name="Lovelace",
                  date_of_birth="1990-01-01", passport_number="US1234567"),
                C("verify_traveler_information", first_name="Bob", last_name="Lovelace",
                  date_of_birth="1990-01-01", passport_number="US1234567"),
                C("verify_traveler_information", first_name="Ada", last_name="Lovelace",
                  date_of_birth="2020-01-01", passport_number="US1234567"),
                C("verify_traveler_information", first_name="Ada", last_name="Lovelace",
                  date_of_birth="01/01/1990", passport_number="US1234567"),
                C("verify_traveler_information", first_name="Ada", last_name="Lovelace",
                  date_of_birth="1990-01-01", passport_number="UK1234567"),
                C("get_nearest_airport_by_city", location="Rivermist"),
                C("get_nearest_airport_by_city", location="Atlantis"),
                C("list_all_airports"),
                C("get_budget_fiscal_year"),
                C("get_budget_fiscal_year", lastModifiedAfter="2020-01-01", includeRemoved="yes"),
                R("book_flight(access_token='x', card_id='y')"),
                R("list_all_airports(country='US')"),
            ],
        ),
        (
            "multi_turn_base_150",
            [
                C("travel_get_login_status"),
                C("get_credit_card_balance", access_token="abc123token", card_id="1234-5678-9012-3456"),
                C("book_flight", access_token="abc123token", card_id="1234-5678-9012-3456",
                  travel_date="2024-11-15", travel_from="SFO", travel_to="LAX", travel_class="economy"),
                C("book_flight", access_token="abc123token", card_id="1234-5678-9012-3456",
                  travel_date="2024-11-15", travel_from="JFK", travel_to="PEK", travel_class="first"),
                C("set_budget_limit", access_token="abc123token", budget_limit=100),
                C("book_flight", _save={"booking": "booking_id"}, access_token="abc123token",
                  card_id="1234-5678-9012-3456", travel_date="2024-11-15", travel_from="SFO",
                  travel_to="LAX", travel_class="economy"),
                C("purchase_insurance", access_token="abc123token", insurance_type="comprehensive",
                  booking_id=BOOK, insurance_cost=150.0, card_id="1234-5678-9012-3456"),
                C("purchase_insurance", access_token="abc123token", insurance_type="comprehensive",
                  booking_id=BOOK, insurance_cost=99.5, card_id="1234-5678-9012-3456"),
                C("get_all_credit_cards"),
                C("retrieve_invoice", access_token="abc123token", booking_id=BOOK),
                C("authenticate_travel", client_id="c", client_secret="s", refresh_token="r",
                  grant_type="read", user_first_name="Evelyn", user_last_name="Montgomery"),
                C("get_credit_card_balance", access_token="abc123token", card_id="1234-5678-9012-3456"),
                C("travel_get_login_status"),
            ],
        ),
        (
            "synthetic:token_expired",
            [
                C("travel_get_login_status"),
                C("get_credit_card_balance", access_token="t0", card_id="c1"),
                C("register_credit_card", access_token="t0", card_number="4111", expiration_date="12/30",
                  cardholder_name="A B", card_verification_number=1),
                C("book_flight", access_token="t0", card_id="c1", travel_date="2024-11-15",
                  travel_from="SFO", travel_to="LAX", travel_class="economy"),
                C("retrieve_invoice", access_token="t0", booking_id="b1"),
                C("get_booking_history", access_token="t0"),
                C("cancel_booking", access_token="t0", booking_id="b1"),
                C("set_budget_limit", access_token="t0", budget_limit=1),
                C("purchase_insurance", access_token="t0", insurance_type="basic", booking_id="b1",
                  insurance_cost=1.0, card_id="c1"),
            ],
        ),
        (
            # A long_context item: loaded with long_context=True (extra cards and
            # bookings, every route priced, booking_history shown).
            "multi_turn_long_context_151",
            [
                C("get_flight_cost", travel_from="SFO", travel_to="LAX", travel_date="2024-11-16",
                  travel_class="business"),
                C("get_flight_cost", travel_from="SFO", travel_to="XXX", travel_date="2024-11-16",
                  travel_class="business"),
                C("book_flight", _save={"booking": "booking_id"}, access_token="abc123xyz",
                  card_id="144756014165", travel_date="2024-11-15", travel_from="SFO",
                  travel_to="LAX", travel_class="economy"),
                C("cancel_booking", access_token="abc123xyz", booking_id="booking_901"),
                C("retrieve_invoice", access_token="abc123xyz", booking_id="booking_902"),
                C("get_credit_card_balance", access_token="abc123xyz", card_id="1234567812345678"),
                C("get_booking_history", access_token="abc123xyz"),
            ],
        ),
    ],
    "VehicleControlAPI": [
        (
            "default",
            [
                C("startEngine", ignitionMode="START"),
                C("setCruiseControl", speed=60, activate=True, distanceToNextVehicle=100),
                C("lockDoors", unlock=False, door=["driver", "passenger", "rear_left", "rear_right"]),
                C("lockDoors", unlock=False, door=["trunk"]),
                C("startEngine", ignitionMode="START"),
                C("pressBrakePedal", pedalPosition=0.5),
                C("startEngine", ignitionMode="START"),
                C("pressBrakePedal", pedalPosition=1.5),
                C("pressBrakePedal", pedalPosition=1),
                C("startEngine", ignitionMode="START"),
                C("startEngine", ignitionMode="STOP"),
                C("startEngine", ignitionMode="START"),
                C("fillFuelTank", fuelAmount=20),
                C("fillFuelTank", fuelAmount=-1),
                C("fillFuelTank", fuelAmount=40),
                C("displayCarStatus", option="fuel"),
                C("displayCarStatus", option="battery"),
                C("displayCarStatus", option="doors"),
                C("displayCarStatus", option="climate"),
                C("displayCarStatus", option="headlights"),
                C("displayCarStatus", option="parkingBrake"),
                C("displayCarStatus", option="brakePedal"),
                C("displayCarStatus", option="engine"),
                C("displayCarStatus", option="bogus"),
                C("adjustClimateControl", temperature=72, unit="fahrenheit", fanSpeed=30, mode="cool"),
                C("adjustClimateControl", temperature=20, fanSpeed=150),
                C("adjustClimateControl", temperature=21.5),
                C("get_outside_temperature_from_google"),
                C("get_outside_temperature_from_google"),
                C("get_outside_temperature_from_weather_com"),
                C("setHeadlights", mode="on"),
                C("setHeadlights", mode="auto"),
                C("setHeadlights", mode="blink"),
                C("activateParkingBrake", mode="engage"),
                C("activateParkingBrake", mode="release"),
                C("activateParkingBrake", mode="hold"),
                C("releaseBrakePedal"),
                C("pressBrakePedal", pedalPosition=0),
                C("setCruiseControl", speed=63, activate=True, distanceToNextVehicle=80),
                C("setCruiseControl", speed=60, activate=True, distanceToNextVehicle=100),
                C("setCruiseControl", speed=0, activate=False, distanceToNextVehicle=50),
                C("get_current_speed"),
                C("display_log", messages=["a", "b"]),
                C("estimate_drive_feasibility_by_mileage", distance=300),
                C("estimate_drive_feasibility_by_mileage", distance=1000),
                C("liter_to_gallon", liter=10),
                C("gallon_to_liter", gallon=5),
                C("estimate_distance", cityA="83214", cityB="74532"),
                C("estimate_distance", cityA="74532", cityB="94016"),
                C("estimate_distance", cityA="00000", cityB="11111"),
                C("get_zipcode_based_on_city", city="Rivermist"),
                C("get_zipcode_based_on_city", city="Atlantis"),
                C("set_navigation", destination="123 Main St, Rivermist"),
                C("check_tire_pressure"),
                C("find_nearest_tire_shop"),
                R("setCruiseControl(speed=60)"),
                R("lockDoors(unlock=True, door=['driver'], force=True)"),
                C("lockDoors", unlock=True, door=["driver"]),
                C("fillFuelTank", fuelAmount="5"),
            ],
        ),
        (
            "multi_turn_base_78",
            [
                C("displayCarStatus", option="engine"),
                C("check_tire_pressure"),
                C("startEngine", ignitionMode="START"),
                C("setCruiseControl", speed=70, activate=True, distanceToNextVehicle=120.5),
                C("get_current_speed"),
                C("estimate_drive_feasibility_by_mileage", distance=310),
                C("estimate_drive_feasibility_by_mileage", distance=311),
                C("fillFuelTank", fuelAmount=34.5),
                C("fillFuelTank", fuelAmount=0.5),
                C("lockDoors", unlock=True, door=["driver", "driver"]),
                C("displayCarStatus", option="doors"),
            ],
        ),
        (
            "multi_turn_base_50",
            [
                C("displayCarStatus", option="doors"),
                C("check_tire_pressure"),
                C("get_outside_temperature_from_google"),
                C("setCruiseControl", speed=50, activate=True, distanceToNextVehicle=30),
            ],
        ),
        (
            # A long_context item: loaded with long_context=True (long extra texts).
            "multi_turn_long_context_51",
            [
                C("check_tire_pressure"),
                C("displayCarStatus", option="fuel"),
                C("displayCarStatus", option="bogus"),
                C("estimate_distance", cityA="83214", cityB="74532"),
                C("estimate_distance", cityA="00000", cityB="11111"),
                C("activateParkingBrake", mode="engage"),
                C("activateParkingBrake", mode="release"),
                C("activateParkingBrake", mode="hold"),
                C("get_outside_temperature_from_google"),
                C("get_outside_temperature_from_google"),
                C("get_outside_temperature_from_weather_com"),
            ],
        ),
    ],
}

SYNTHETIC_CONFIGS = {
    "synthetic:token_expired": {
        "TravelAPI": {
            "credit_card_list": {"c1": {"card_number": "4111", "balance": 100.0}},
            "booking_record": {},
            "access_token": "t0",
            "token_type": "Bearer",
            "token_expires_in": 0,
            "token_scope": "read",
            "user_first_name": "A",
            "user_last_name": "B",
            "budget_limit": None,
        }
    }
}


# ----------------------------------------------------------------- driver ---


def load_items():
    items = {}
    for path in sorted(DATA.glob("BFCL_v4_multi_turn_*.json")):
        with open(path, encoding="utf-8") as f:
            for line in f:
                if line.strip():
                    d = json.loads(line)
                    items[d["id"]] = d
    return items


def initial_config_for(config_id, items):
    if config_id == "default":
        return {}
    if config_id in SYNTHETIC_CONFIGS:
        return SYNTHETIC_CONFIGS[config_id]
    return items[config_id]["initial_config"]


def fresh_process_state(class_name):
    """What a new Python process would have: the backend module re-executed
    (so mutable default arguments are new), mpmath's and decimal's global
    precision at their defaults. long_context.py goes first: its dicts are
    shared with (and changed by) long_context instances."""
    importlib.reload(importlib.import_module(LONG_CONTEXT_MODULE))
    importlib.reload(importlib.import_module(CLASS_FILE_PATH_MAPPING[class_name]))
    mpmath.mp.dps = 15
    decimal.setcontext(decimal.Context())


LONG_CONTEXT_MODULE = "bfcl_eval.eval_checker.multi_turn_eval.func_source_code.long_context"


def is_long_context(config_id):
    """BFCL's rule: long-context mode for the items whose category names it."""
    return "long_context" in config_id


def execute(call, initial_config, class_name, entry_id, long_context=False):
    results, instances = multi_turn_utils.execute_multi_turn_func_call(
        func_call_list=[call] if call is not None else [],
        initial_config=initial_config,
        involved_classes=[class_name],
        model_name=MODEL_NAME,
        test_entry_id=entry_id,
        long_context=long_context,
        is_evaL_run=False,
    )
    return (results[0] if results else None), instances[class_name]


def run_class(class_name, items):
    records = []
    called = set()
    for seq_index, (config_id, calls, *options) in enumerate(PLANS[class_name]):
        # An optional third item holds options: {"long_context": True}.
        long_context = bool(options and options[0].get("long_context"))
        seq = f"{class_name}#{seq_index}"
        fresh_process_state(class_name)
        full_config = initial_config_for(config_id, items)
        entry_id = f"fixture_{class_name}_{seq_index}"
        seed = None
        if class_name in DEFAULT_SEEDS:
            seed = full_config.get(class_name, {}).get("random_seed", DEFAULT_SEEDS[class_name])
        # BFCL's rule for the config's item, or the sequence's own option.
        long_context = long_context or is_long_context(config_id)
        _, inst = execute(None, full_config, class_name, entry_id, long_context)
        if seed is not None:
            # Check that the recorded seed is the one the instance used.
            assert inst._random.getstate() == random.Random(seed).getstate(), class_name

        def record(step, call, func, args, kwargs, result, inst):
            rec = {
                "class": class_name,
                "seq": seq,
                "config_id": config_id,
                "step": step,
                "call": call,
                "func": func,
                "args": enc(args),
                "kwargs": enc(kwargs),
                "result": result,
                "state": public_state(inst),
            }
            if class_name == "GorillaFileSystem":
                rec["cwd"] = fs_cwd(inst)
            if seed is not None:
                rec["seed"] = seed
            if step == 0:
                rec["initial_config"] = (
                    full_config.get(class_name, {}) if class_name not in STATELESS_CLASSES else None
                )
                if long_context:
                    rec["long_context"] = True
            records.append(rec)

        record(0, None, None, [], {}, None, inst)
        saved = {}
        for step, spec in enumerate(calls, start=1):
            if "raw" in spec:
                call = spec["raw"]
                func, args, kwargs = parse_raw(call)
            else:
                func, args = spec["func"], []
                kwargs = resolve(spec["kwargs"], saved)
                call = call_string(func, kwargs)
            result, inst = execute(call, full_config, class_name, entry_id, long_context)
            for var, key in spec["save"].items():
                saved[var] = json.loads(result)[key]
            called.add(func)
            record(step, call, func, args, kwargs, result, inst)
    return records, called


def python_random_records():
    """Reference outputs of Python's random.Random for the seeds and ranges the
    backends use, so the Rust Mersenne Twister port can be checked alone."""
    recs = []
    seeds = [141053, 200191, 1053520, 0, 1, 42, 2**32 + 5, 2**64 + 123456789]
    ops = [
        ("randint", (10000, 99999)),
        ("randint", (100000, 999999)),
        ("randint", (1000000, 9999999)),
        ("randint", (10000000, 99999999)),
        ("randint", (100000000, 999999999)),
        ("randint", (100000000000, 999999999999)),
        ("randint", (1725186600, 1725273000)),
        ("randint", (0, 0)),
        ("randint", (1, 2**70)),
        ("uniform", (-10.0, 40.0)),
        ("uniform", (0.0, 120.0)),
        ("random", ()),
        ("getrandbits", (32,)),
        ("getrandbits", (64,)),
    ]
    for seed in seeds:
        for op, args in ops:
            r = random.Random(seed)
            out = [getattr(r, op)(*args) for _ in range(8)]
            recs.append(
                {
                    "seed": seed,
                    "op": op,
                    "args": list(args),
                    "outputs": [repr(x) for x in out],
                }
            )
        # A mixed sequence as a backend draws it (TravelAPI: card id, balance, booking, transaction)
        r = random.Random(seed)
        mixed = [
            ("randint", [100000, 999999]),
            ("randint", [100000000000, 999999999999]),
            ("randint", [10000, 99999]),
            ("randint", [1000000, 9999999]),
            ("randint", [10000000, 99999999]),
            ("uniform", [-10.0, 40.0]),
            ("randint", [100000000, 999999999]),
        ]
        recs.append(
            {
                "seed": seed,
                "op": "mixed",
                "args": [[op, a] for op, a in mixed],
                "outputs": [repr(getattr(r, op)(*a)) for op, a in mixed],
            }
        )
    return recs


def class_methods(class_name):
    module = importlib.import_module(CLASS_FILE_PATH_MAPPING[class_name])
    cls = getattr(module, class_name)
    return {n for n in vars(cls) if not n.startswith("_") and callable(getattr(cls, n))}


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--out", default=str(REPO / "fixtures" / "bfcl_worlds"))
    ap.add_argument("--check", action="store_true",
                    help="regenerate in memory and fail if any file differs")
    opts = ap.parse_args()
    out = Path(opts.out)
    items = load_items()

    files = {}
    summary = {}
    for class_name in PLANS:
        records, called = run_class(class_name, items)
        files[f"{class_name}.jsonl"] = "".join(
            json.dumps(r, ensure_ascii=False, sort_keys=False) + "\n" for r in records
        )
        summary[class_name] = {
            "lines": len(records),
            "calls": len(records) - len(PLANS[class_name]),
            "sequences": len(PLANS[class_name]),
            "methods_called": sorted(called & class_methods(class_name)),
            "other_names_called": sorted(called - class_methods(class_name)),
        }
    files["python_random.jsonl"] = "".join(
        json.dumps(r) + "\n" for r in python_random_records()
    )
    files["meta.json"] = json.dumps(
        {
            "bfcl_eval_version": BFCL_VERSION,
            "python_version": platform.python_version(),
            "mpmath_version": mpmath.__version__,
            "env": {"PYTHONHASHSEED": "0", "TZ": "UTC"},
            "classes": summary,
        },
        indent=2,
    ) + "\n"

    if opts.check:
        bad = [n for n, text in files.items()
               if not (out / n).exists() or (out / n).read_text(encoding="utf-8") != text]
        if bad:
            print("differs:", ", ".join(bad))
            return 1
        print("fixtures up to date")
        return 0

    out.mkdir(parents=True, exist_ok=True)
    for name, text in files.items():
        (out / name).write_text(text, encoding="utf-8")
    for c, s in summary.items():
        print(f"{c}: {s['calls']} calls in {s['sequences']} sequences, "
              f"{len(s['methods_called'])}/{len(class_methods(c))} methods")
    return 0


if __name__ == "__main__":
    sys.exit(main())
