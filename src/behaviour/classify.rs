//! The built-in classifier of a text answer into `direct`, `request_for_info` or
//! `cannot_answer`, in English and Chinese.
//!
//! It is a decision list over the cue lexicons of [`super::lexicon`], read sentence by
//! sentence (see [`super::sentences`]):
//!
//! 1. An explicit request for the missing piece ("could you please specify the city",
//!    "Please tell me which city.", "I need to know the date", "请提供…", "哪个城市？")
//!    makes it `request_for_info`, even next to a refusal ("I can't book it without the
//!    date. Which date?").
//! 2. Otherwise a refusal ("I'm sorry, but I can't", "I don't have access", "none of
//!    the tools can", "抱歉，我无法", "没有…的工具") makes it `cannot_answer`, also when it
//!    offers an alternative or ends with "Is there anything else I can help you with?".
//! 3. Otherwise a plain question to the user ("Do you prefer a window seat?") makes it
//!    `request_for_info`, unless the answer hands over a result next to it ("I found a
//!    flight at 5 PM. Shall I book it?").
//! 4. Otherwise it is `direct`.
//!
//! A question mark alone is not a request: a question in a courtesy tail or suggestion
//! ("anything else?", "how about …?", "would you like more details?"), a rhetorical one
//! ("did you know …?", a question that the answer goes on to answer) and a question
//! inside quotes or code are not asked of the user. An empty answer is `direct` (it
//! neither asks nor refuses) with the cue `empty answer`.

use super::Behaviour;
use super::lexicon::{CUES, Family};
use super::sentences::{Sentence, sentences};

/// A classified text answer: the behaviour and the cue it rests on.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Classified {
    /// One of [`Behaviour::TEXT`].
    pub behaviour: Behaviour,
    /// The words of the answer the decision keyed on, if any.
    pub cue: Option<String>,
}

/// The longest cue kept, in characters (a question sentence can be long).
const CUE_CHARS: usize = 60;

/// What the sentences of an answer show, first cue of each kind.
#[derive(Default)]
struct Evidence {
    ask: Option<String>,
    refuse: Option<String>,
    question: Option<String>,
    deliver: Option<String>,
    offer: Option<String>,
    /// A statement with content of its own (not a courtesy opening).
    content: Option<String>,
}

/// Classify a text answer (never [`Behaviour::ToolCall`]).
pub fn classify(text: &str) -> Classified {
    let sents = sentences(text);
    if sents.is_empty() {
        return Classified {
            behaviour: Behaviour::Direct,
            cue: Some("empty answer".to_string()),
        };
    }
    let mut ev = Evidence::default();
    for (i, s) in sents.iter().enumerate() {
        read_sentence(s, i + 1 == sents.len(), &sents[i + 1..], &mut ev);
    }
    let (behaviour, cue) = if let Some(c) = ev.ask {
        (Behaviour::RequestForInfo, Some(c))
    } else if let Some(c) = ev.refuse {
        (Behaviour::CannotAnswer, Some(c))
    } else if let (Some(q), None) = (&ev.question, &ev.content) {
        (Behaviour::RequestForInfo, Some(q.clone()))
    } else if ev.question.is_some() {
        // A follow-up question after a result: the cue names the result.
        (Behaviour::Direct, ev.deliver.or(ev.content))
    } else {
        // Why a question mark did not count, else nothing: a direct answer needs no cue.
        (Behaviour::Direct, ev.offer)
    };
    Classified {
        behaviour,
        cue: cue.map(|c| short(&c)),
    }
}

/// Add what sentence `s` shows to `ev`; `last` when nothing follows it, `rest` the
/// sentences after it.
fn read_sentence(s: &Sentence, last: bool, rest: &[Sentence], ev: &mut Evidence) {
    let t = s.text.as_str();
    let hits = |f: Family| {
        CUES.iter()
            .filter(move |c| c.family == f)
            .filter_map(move |c| c.re.find(t))
    };
    let offer = hits(Family::Offer).min_by_key(|m| m.start());
    let condition = hits(Family::Condition).min_by_key(|m| m.start());
    let ask = hits(Family::Ask).min_by_key(|m| m.start());
    let rhetorical = hits(Family::Rhetorical).next().is_some()
        // A question the answer goes on to answer, not put to the user ("Why is the
        // sky blue? Because …").
        || (s.question && !s.second_person && !last && rest.iter().any(|r| !r.question));
    match (ask, offer, condition) {
        // A courtesy tail neutralises its sentence ("Please tell me if there is
        // anything else I can do.").
        (_, Some(o), _) => {
            ev.offer.get_or_insert_with(|| o.as_str().to_string());
        }
        // A request whose object is conditional ("could you specify if you have a
        // preference?") asks; a condition that comes first ("if you need more, let me
        // know") does not.
        (Some(a), None, c) if !rhetorical && c.is_none_or(|c| a.start() < c.start()) => {
            ev.ask.get_or_insert_with(|| a.as_str().to_string());
        }
        (_, None, Some(c)) => {
            ev.offer.get_or_insert_with(|| c.as_str().to_string());
        }
        _ if s.question && !rhetorical => {
            ev.question.get_or_insert_with(|| t.to_string());
        }
        _ if !s.question && substantive(t) => {
            ev.content.get_or_insert_with(|| t.to_string());
        }
        _ => {}
    }
    let not_refusal: Vec<_> = hits(Family::NotRefusal).map(|m| m.range()).collect();
    if let Some(r) = hits(Family::Refuse).find(|m| {
        !not_refusal
            .iter()
            .any(|n| n.start < m.end() && m.start() < n.end)
    }) {
        ev.refuse.get_or_insert_with(|| r.as_str().to_string());
    }
    if let Some(d) = hits(Family::Deliver).next() {
        ev.deliver.get_or_insert_with(|| d.as_str().to_string());
    }
}

/// Whether a statement carries content once its courtesy openings are
/// removed: three words, or four CJK characters.
fn substantive(t: &str) -> bool {
    let mut preamble: Vec<(usize, usize)> = CUES
        .iter()
        .filter(|c| c.family == Family::Preamble)
        .flat_map(|c| c.re.find_iter(t).map(|m| (m.start(), m.end())))
        .collect();
    preamble.sort_unstable();
    let mut rest = String::new();
    let mut at = 0;
    for (start, end) in preamble {
        if start >= at {
            rest.push_str(&t[at..start]);
            rest.push(' ');
            at = end;
        }
    }
    rest.push_str(&t[at..]);
    let words = rest
        .split(|c: char| !(c.is_alphanumeric() || c == '\''))
        .filter(|w| w.chars().any(|c| c.is_ascii_alphanumeric()))
        .count();
    let cjk = rest.chars().filter(|c| is_cjk(*c)).count();
    words >= 3 || cjk >= 4 || (words >= 1 && cjk >= 2)
}

/// A CJK ideograph.
fn is_cjk(c: char) -> bool {
    matches!(c as u32, 0x3400..=0x4DBF | 0x4E00..=0x9FFF | 0xF900..=0xFAFF | 0x20000..=0x2FFFF)
}

/// `cue` trimmed to [`CUE_CHARS`] characters.
fn short(cue: &str) -> String {
    let cue = cue.trim();
    if cue.chars().count() <= CUE_CHARS {
        cue.to_string()
    } else {
        let mut s: String = cue.chars().take(CUE_CHARS - 1).collect();
        s.push('…');
        s
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn b(text: &str) -> Behaviour {
        classify(text).behaviour
    }

    const R: Behaviour = Behaviour::RequestForInfo;
    const C: Behaviour = Behaviour::CannotAnswer;
    const D: Behaviour = Behaviour::Direct;

    #[test]
    fn a_polite_refusal_ending_with_anything_else_is_cannot_answer() {
        for t in [
            "I'm sorry, but I can't check flight prices. Is there anything else I can help you with?",
            "Unfortunately I don't have a tool for booking hotels. Anything else?",
            "抱歉，我无法查询航班信息。还有什么可以帮您的吗？",
        ] {
            let c = classify(t);
            assert_eq!(c.behaviour, C, "{t}: {c:?}");
        }
        assert_eq!(
            classify("I'm sorry, but I can't check flight prices. Anything else?").cue,
            Some("I can't".to_string())
        );
    }

    #[test]
    fn please_tell_me_which_city_without_a_question_mark_asks() {
        let c = classify("Please tell me which city.");
        assert_eq!(c.behaviour, R);
        assert_eq!(c.cue.as_deref(), Some("Please tell"));
        assert_eq!(b("I need to know the departure date to search flights."), R);
        assert_eq!(b("请告诉我具体日期。"), R);
    }

    #[test]
    fn a_direct_answer_with_a_rhetorical_question_or_an_offer_stays_direct() {
        for t in [
            "Why is the sky blue? Because air scatters short wavelengths more than long ones.",
            "Did you know Paris has 2.1 million inhabitants? It is the capital of France.",
            "The weather in Paris is 18°C and sunny. Let me know if you need more.",
            "It is 18°C in Paris. Would you like more details?",
            "Everything was completed successfully. Anything else I can help with?",
            "I found a flight for 5 PM on June 20th. Would you like me to proceed with the booking?",
            "How about 'Eternal Sunshine of the Spotless Mind'? It's a thoughtful film.",
            "The French translation for 'What is your name?' is 'Comment vous appelez-vous ?'",
            "Hello! How can I assist you today?",
            "I can answer that without a tool.",
        ] {
            assert_eq!(b(t), D, "{t}: {:?}", classify(t));
        }
    }

    #[test]
    fn asking_for_the_missing_piece_beats_the_refusal() {
        let c = classify("I can't book the table without knowing the time. Which time?");
        assert_eq!(c.behaviour, R);
        assert_eq!(c.cue.as_deref(), Some("Which time?"));
        assert_eq!(
            b(
                "I'm sorry, I need the product ID to check its availability. Could you please provide it?"
            ),
            R
        );
        assert_eq!(
            b("抱歉，我无法查询天气，因为缺少城市信息。请问您要查询哪个城市？"),
            R
        );
    }

    #[test]
    fn a_refusal_offering_an_alternative_is_cannot_answer() {
        for t in [
            "I'm unable to book flights. However, I can help you find a travel website. Would you like that instead?",
            "Apologies, but I'm unable to perform calculations. However, you can subtract 40 from 100.",
            "None of the available tools can send email, so I cannot do that for you.",
            "很抱歉，目前没有可以预订酒店的工具。您可以尝试使用携程。",
            "I can't.",
        ] {
            assert_eq!(b(t), C, "{t}: {:?}", classify(t));
        }
    }

    #[test]
    fn negatives_that_are_not_refusals_stay_direct() {
        for t in [
            "I can't recommend this album enough: it is Sabaton's best.",
            "I can't guarantee availability, but the hotel listed 3 rooms at $120.",
            "I'm sorry, but The French Laundry does not take reservations online. Call them at 9 AM.",
            "工单如下：1. 网络连接问题，2. 无法访问网站，3. 无法登录系统。",
        ] {
            assert_eq!(b(t), D, "{t}: {:?}", classify(t));
        }
    }

    #[test]
    fn full_width_question_marks_and_plain_questions_ask() {
        assert_eq!(b("您想查询哪个城市的天气？"), R);
        assert_eq!(b("您是要预订明天的吗？"), R);
        assert_eq!(b("Do you prefer a window seat?"), R);
        assert_eq!(b("Which one do you mean ？"), R);
    }

    /// Phrasings written for these tests (not taken from any data set).
    #[test]
    fn common_phrasings_of_each_behaviour() {
        for t in [
            "What city are you in?",
            "Sure — what's the destination?",
            "Could you clarify what you mean by 'best'?",
            "I'd be happy to help! Can you share the order number?",
            "Before I search, I need a few details: your departure city and dates.",
            "Provide your account ID, please.",
            "Kindly share the invoice number.",
            "The date?",
            "For which date?",
            "I'd need to know your location first.",
            "Sure, I can help with that. Do you have the order number?",
            "I can look that up for you. Do you have a booking reference?",
            "您想去哪里？",
            "您的订单号是多少？",
            "需要您提供出发日期。",
            "好的，请问具体是几号？",
            "麻烦告诉我您的位置。",
            "您能说得具体一点吗？",
            "I'm not sure what you mean. Could you rephrase?",
            "Hmm, I'm not able to find that order. Can you double-check the order number?",
            "It seems you haven't specified the date. What date would you like?",
            "**Which city?**",
            "我不太确定您指的是哪一个，能具体说一下吗？",
        ] {
            assert_eq!(b(t), R, "{t}: {:?}", classify(t));
        }
        for t in [
            "I'm afraid I can't help with that.",
            "Unfortunately, that's not something I can do.",
            "I do not have the ability to browse the internet.",
            "Sorry, I can only help with weather questions.",
            "That request falls outside what I can do.",
            "The available tools don't support currency conversion.",
            "There's no tool for that.",
            "Unable to help with that.",
            "I'm unable to do that. Please tell me if there's something else I can help with.",
            "I can't help you with that, but I can tell you a joke. Want to hear one?",
            "I'm unable to book flights. Could you please contact the airline directly?",
            "这个我帮不了你。",
            "我没有访问实时数据的权限。",
            "对不起，这超出了我的能力范围。",
            "Sorry, 这个我无法处理。",
            "抱歉，我只能查询天气，无法提供航班信息。",
            "我只能查天气，不能帮您订机票。",
        ] {
            assert_eq!(b(t), C, "{t}: {:?}", classify(t));
        }
        for t in [
            "The capital of France is Paris.",
            "2 + 2 = 4. Is there anything else you'd like to know?",
            "Paris is lovely in spring. What else would you like to know?",
            "The answer is 42. Does that help?",
            "Paris is the capital of France. Would you like me to tell you more about it?",
            "It's 18°C and sunny in Paris today. Are you planning to go out?",
            "I found three flights to Paris: 8 AM, 1 PM and 6 PM. Do you prefer the morning one?",
            "北京今天晴，气温25度。还需要其他帮助吗？",
            "As an AI, I don't have personal opinions, but here are two views: cost and speed.",
            "**Note:** I can't guarantee accuracy; the museum opens at 9 AM.",
            "您好！请问有什么可以帮您？",
            "北京今天晴，最高气温25度。您要出门吗？",
        ] {
            assert_eq!(b(t), D, "{t}: {:?}", classify(t));
        }
    }

    /// Issue 31: courtesy closers read the same in Chinese as in English (`direct`: the
    /// answer asks nothing of the request), alone, after content and after a refusal.
    #[test]
    fn courtesy_closers_classify_alike_in_english_and_chinese() {
        let en = [
            "What else would you like to know?",
            "Is there anything else I can help you with?",
            "Do you have any other questions?",
            "What else can I do for you?",
            "Would you like to know more?",
            "Can I help you with anything else?",
        ];
        let zh = [
            "你还想知道什么吗？",
            "您还想了解什么？",
            "还想知道哪些方面？",
            "还有什么需要帮忙的吗？",
            "有其他问题吗？",
            "还能帮您做什么？",
            "需要我再帮您查点别的吗？",
            "想了解更多吗？",
            "还有别的想知道的吗？",
        ];
        for t in en.iter().chain(&zh) {
            assert_eq!(b(t), D, "{t}: {:?}", classify(t));
            let after = format!("The capital of France is Paris. {t}");
            assert_eq!(b(&after), D, "{after}: {:?}", classify(&after));
            let after = format!("法国的首都是巴黎。{t}");
            assert_eq!(b(&after), D, "{after}: {:?}", classify(&after));
            let refused = format!("抱歉，我无法查询航班信息。{t}");
            assert_eq!(b(&refused), C, "{refused}: {:?}", classify(&refused));
        }
        // A question about the request itself still asks, in both languages.
        assert_eq!(b("需要我帮您查其他城市吗？"), R);
        assert_eq!(b("Which other city should I check?"), R);
    }

    /// Issue 31: "I don't know." is no answer, said as such: `cannot_answer`, in both
    /// languages; not when the sentence goes on to ask or to answer.
    #[test]
    fn i_dont_know_is_cannot_answer_in_english_and_chinese() {
        for t in [
            "I don't know.",
            "I do not know.",
            "Sorry, I don't know.",
            "I really don't know the answer.",
            "I don't know, sorry.",
            "I have no idea.",
            "No idea.",
            "我不知道。",
            "不知道。",
            "我不清楚。",
            "抱歉，我不知道。",
            "我也不知道答案。",
            "这个问题我不太清楚。",
        ] {
            assert_eq!(b(t), C, "{t}: {:?}", classify(t));
        }
        for (t, want) in [
            ("I don't know which city you mean.", R),
            ("I don't know what you mean. Could you rephrase?", R),
            ("我不知道您说的是哪个城市。", R),
            ("I don't know if it will rain, but it is 18°C now.", D),
            ("I don't know, but it is probably Paris.", D),
            ("我不知道，但北京今天25度。", D),
            ("I don't know about you, but I love Paris in spring.", D),
        ] {
            assert_eq!(b(t), want, "{t}: {:?}", classify(t));
        }
    }

    proptest::proptest! {
        /// Any text, however hostile, gets a text behaviour and a short cue, never a panic.
        #[test]
        fn any_text_gets_a_text_behaviour_and_a_short_cue(t in "\\PC{0,300}") {
            let c = classify(&t);
            proptest::prop_assert!(Behaviour::TEXT.contains(&c.behaviour));
            proptest::prop_assert!(c.cue.is_none_or(|c| c.chars().count() <= CUE_CHARS));
        }
    }

    #[test]
    fn a_long_answer_is_classified_by_its_cues() {
        let body = "The forecast is 18°C with light wind. ".repeat(500);
        assert_eq!(b(&body), D);
        assert_eq!(b(&format!("{body} Which city do you mean?")), R);
        assert_eq!(b(&format!("I can't do that. {body}")), C);
    }

    #[test]
    fn the_empty_answer_is_direct_with_a_cue_saying_so() {
        for t in ["", "   \n ", "…"] {
            assert_eq!(
                classify(t),
                Classified {
                    behaviour: D,
                    cue: Some("empty answer".to_string())
                }
            );
        }
    }

    /// The texts toolgauge's own scripted and oracle models write (src/provider/).
    #[test]
    fn the_scripted_and_oracle_texts_classify_as_intended() {
        for (t, want) in [
            ("Which one do you mean?", R),
            ("Could you tell me which one you mean?", R),
            ("Paris Which one do you mean?", R),
            ("Could you tell me a little more about what you need?", R),
            (
                "`cancel_order` needs your confirmation before it can be done. Shall I go ahead with {\"order_id\":\"A123\"}?",
                R,
            ),
            (
                "Before I call `cancel_order` with {\"order_id\":\"A123\"}, please confirm: shall I go ahead?",
                R,
            ),
            ("Here is the answer.", D),
            ("I can answer that without a tool.", D),
            ("OK.", D),
            (
                "Everything was completed successfully. Anything else I can help with?",
                D,
            ),
        ] {
            assert_eq!(b(t), want, "{t}: {:?}", classify(t));
        }
    }

    #[test]
    fn long_cues_are_cut_to_sixty_characters() {
        let c = classify(
            "Is it the quarterly report from the finance team, the one from the sales team, or the annual summary?",
        );
        assert_eq!(c.behaviour, R);
        let cue = c.cue.unwrap();
        assert_eq!(cue.chars().count(), CUE_CHARS);
        assert!(cue.ends_with('…'));
    }
}
