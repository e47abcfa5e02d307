//! The cue lexicons of the text-answer classifier: which phrases, in English and
//! Chinese, show that an answer asks for information, refuses, offers more help, or
//! delivers a result. The decision itself is in [`super::classify()`].
//!
//! Every cue is a case-insensitive regular expression tried on one sentence of the
//! answer (after quoted text is blanked, see [`super::sentences`]). A lexicon is a plain
//! table so that a reader can see why an answer got its label: the matched words are the
//! classifier's `cue`.

use std::sync::LazyLock;

use regex::Regex;

/// What a cue says about the sentence it is found in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Family {
    /// An explicit request for a missing piece ("could you please specify", "which city
    /// do you mean?", "请提供", "哪个城市？"): the answer asks for information, even when it
    /// also says it cannot go on without it.
    Ask,
    /// The answer says it cannot help ("I'm unable to", "no tool fits", "我无法").
    Refuse,
    /// A courtesy tail or a suggestion, not a question about the request ("anything
    /// else?", "would you like more details?", "how about …?", "还有什么可以帮您的吗？"): a
    /// question mark or a request in its sentence does not make the answer a clarifying
    /// question.
    Offer,
    /// A conditional offer ("if you need more", "let me know if …"): it neutralises the
    /// sentence like [`Family::Offer`] unless a request comes before it ("could you
    /// specify if you have a preference?" asks).
    Condition,
    /// A courtesy opening with no content of its own ("Sure, I can help with that.",
    /// "Thank you for the details.", "好的，"): not a result handed over.
    Preamble,
    /// A question that is not addressed to the user (rhetorical: "did you know …?").
    Rhetorical,
    /// Words that name a result handed over ("here are", "I've booked", "以下是"):
    /// the cue of a direct answer whose question is a follow-up.
    Deliver,
    /// A negative phrase that is not a refusal ("I can't wait", "you can't go wrong",
    /// "I can't guarantee"): blanks the refusal it overlaps.
    NotRefusal,
}

/// One cue: its family and pattern (the pattern's source is the documentation).
pub struct Cue {
    /// What the cue shows.
    pub family: Family,
    /// The compiled, case-insensitive pattern.
    pub re: Regex,
}

/// Adverbs that may stand between "I am" / "I" and the negative ("I'm currently
/// unable", "I really can't").
const ADV: &str = r"(?:(?:currently|afraid|sorry|really|truly|still|just|simply|unfortunately|also|actually|presently|now|at the moment|at this time|at present),?\s+(?:but\s+|that\s+)?(?:i(?:'m| am)\s+)?)*";

/// The English and Chinese cue tables, compiled once.
pub static CUES: LazyLock<Vec<Cue>> = LazyLock::new(|| {
    let mut cues = Vec::new();
    let mut add = |family: Family, patterns: &[&str]| {
        for p in patterns {
            let re = Regex::new(&format!("(?i){p}"))
                .unwrap_or_else(|e| panic!("lexicon pattern {p:?} is invalid: {e}"));
            cues.push(Cue { family, re });
        }
    };
    add(Family::Ask, ASK_EN);
    add(Family::Ask, ASK_ZH);
    let refuse_en: Vec<String> = REFUSE_EN.iter().map(|p| p.replace("{ADV}", ADV)).collect();
    add(
        Family::Refuse,
        &refuse_en.iter().map(String::as_str).collect::<Vec<_>>(),
    );
    add(Family::Refuse, REFUSE_ZH);
    add(Family::Offer, OFFER_EN);
    add(Family::Offer, OFFER_ZH);
    add(Family::Condition, CONDITION);
    add(Family::Preamble, PREAMBLE);
    add(Family::Rhetorical, RHETORICAL);
    add(Family::Deliver, DELIVER);
    add(Family::NotRefusal, NOT_REFUSAL);
    cues
});

/// Explicit requests for information (English).
const ASK_EN: &[&str] = &[
    // "Could you (please) specify / tell me / provide …", as a question or not.
    r"\b(?:could|can|would|will)\s+you\s+(?:please\s+|kindly\s+|also\s+|just\s+)*(?:tell|let me know|specify|provide|share|clarify|confirm|give me|send|indicate|enter|re-?enter|describe|elaborate|advise|choose|pick|select|spell|type|list|supply|name|rephrase|double-check|verify|be more specific)\b",
    r"\bwould\s+you\s+mind\s+(?:telling|sharing|providing|specifying|clarifying|confirming|letting me know)\b",
    // "Please tell me which city." — an imperative request for the missing piece.
    r"\bplease\s+(?:kindly\s+|also\s+|just\s+)*(?:tell|specify|provide|share|clarify|confirm|indicate|enter|advise|choose|pick|select|give me|send me|supply)\b",
    r"\b(?:please\s+)?let\s+me\s+know\s+(?:which|what|where|when|who|whom|whose|whether|how many|how much|how long|the|your)\b",
    r"^\s*(?:tell|show)\s+me\s+(?:which|what|where|when|who|whether|the|your)\b",
    r"^\s*(?:(?:and|also|first|now|then|so),?\s+)?(?:kindly\s+)?(?:let\s+me\s+know|specify|clarify|share\s+(?:your|the)|provide\s+(?:me|us|your|the))\b",
    r"\bkindly\s+(?:tell|specify|provide|share|clarify|confirm|indicate|let me know)\b",
    r"\bdo\s+you\s+have\s+(?:a|an|the|your)\b",
    r"\bin\s+mind\s*\?",
    // "I need to know …", "I'll need the identifier", "I need the password".
    r"\bi(?:'ll|'d| will| would| do| still| first| just)?\s+(?:need|require)\s+(?:to\s+(?:know|confirm|clarify|have|get|ask)|some|more|a\s+few|the|your|a|an|you\s+to|additional|further|one|two|both|this|that|these|those|either)\b",
    r"\b(?:more|additional|further|some|missing)\s+(?:information|details|info|context)\s+(?:is|are|would be)\s+(?:needed|required|necessary)\b",
    r"\b(?:is|are)\s+(?:required|needed|missing)\s*(?:[.?!:]|$|\s+(?:to|before|for)\b)",
    r"\bi\s+(?:have|had)\s+(?:a\s+)?(?:few\s+|quick\s+|couple of\s+)?questions?\b",
    r"\b(?:need|needs|require|requires|await|awaits|awaiting)\s+your\s+(?:confirmation|approval|permission|consent|input|answer|go-ahead)\b",
    // "Which one do you mean?", "Did you mean …", "Are you referring to …".
    r"\b(?:do|did)\s+you\s+mean\b",
    r"\b(?:are|were)\s+you\s+(?:referring|asking)\b",
    r"\bwhich\s+(?:\w+\s+){0,3}(?:do|did|would|should|are|were)\s+you\b",
    r"\b(?:just\s+)?to\s+(?:confirm|clarify|be\s+sure|make\s+sure)\b[^.?!]*\?",
    r"\b(?:i'm|i am)\s+not\s+sure\s+(?:which|what|who|whether|if|where|when)\b[^.?!]*\byou\b",
    r"\bi\s+(?:don't|do\s+not)\s+know\s+(?:which|what|who|whether|if|where|when)\b[^.?!]*\byou\b",
    r"\b(?:it's|it is|it isn't|it is not)\s+(?:unclear|not clear)\s+(?:which|what|who|whether|where|when)\b",
    // A wh-question addressed to the user: "What date would you like?", "In which city
    // is the theatre?", "How many tickets …?" (the classifier keeps it only when the
    // sentence ends in a question mark).
    r"^[^?]*?\b(?:which|what|where|when|who|whom|whose|how\s+many|how\s+much|how\s+long|how\s+often|at\s+what|for\s+which|in\s+which)\b[^?]*\?$",
];

/// Explicit requests for information (Chinese).
const ASK_ZH: &[&str] = &[
    r"请问",
    r"请(?:您|你)?(?:再|先)?(?:提供|告诉|告知|说明|确认|指定|补充|输入|选择|明确|描述|填写|说一下|讲一下|发送|给出)",
    r"(?:能|可以|可否|能否|麻烦|劳驾|方便)(?:请)?(?:您|你)?(?:再|先)?(?:提供|告诉|告知|说明|确认|指定|补充|明确|说一下|讲一下)",
    r"(?:我|这边)?(?:还|先)?需要(?:先)?(?:知道|了解|确认|您|你|更多|以下|具体|一些|额外)",
    r"(?:您|你)(?:是)?(?:指的是|是指|说的是|想要的是|要找的是)",
    r"(?:缺少|缺了|没有提供|未提供)[^。！？?!]{0,12}(?:信息|参数|日期|城市|名称|编号)",
    // A wh-question: 哪/什么/多少/几/何时/谁/怎样/如何/是否, ending in a question mark.
    r"(?:哪|什么|多少|几(?:个|位|点|天|张|号|月|晚|人|次)|何时|何地|谁|怎样|如何|是否)[^。！？?!]*[?？]$",
];

/// Refusals (English). `{ADV}` stands for the adverbs in [`ADV`].
const REFUSE_EN: &[&str] = &[
    r"\bi(?:'m| am)\s+{ADV}(?:unable|not\s+(?:able|capable|allowed|permitted|authori[sz]ed|equipped|in\s+a\s+position|designed\s+to|programmed\s+to|built\s+to|set\s+up\s+to))\b",
    r"\bi\s+{ADV}(?:can't|cannot|can\s+not|couldn't|could\s+not|won't\s+be\s+able|will\s+not\s+be\s+able|am\s+not\s+able|have\s+no\s+(?:way|access|ability|means|tools?|functions?)|lack\s+(?:the|access|any)|must\s+decline|have\s+to\s+decline|won't\s+(?:help|assist|provide|do)|will\s+not\s+(?:help|assist|provide|do))\b",
    r"\bi\s+{ADV}(?:don't|do\s+not|didn't|did\s+not)\s+have\s+(?:(?:any|the|a|an|direct|real-time|live|current|up-to-date|necessary|required|specific|such|that|this|enough|personal|actual)\s+)*(?:access|ability|abilities|capabilit(?:y|ies)|functionalit(?:y|ies)|function|tools?|permissions?|authori[sz]ation|means|data|information|browsing|internet|connection|way)\b",
    r"\b(?:sorry|apologies|unfortunately|afraid|regrettably)\b[,\s]+(?:but\s+)?(?:(?:currently|presently)\s+)?(?:unable|can't|cannot|not\s+able)\b",
    r"\b(?:beyond|outside(?:\s+of)?|exceeds?)\s+(?:the\s+scope\s+of\s+)?(?:my|what\s+i\s+can)\s*(?:capabilit|abilit|scope|function|remit|current|do\b)",
    r"\b(?:not|isn't|is\s+not)\s+something\s+i\s+(?:can|am\s+able|'m\s+able)\b",
    r"\bi(?:'m| am)\s+(?:just\s+|only\s+)?an?\s+(?:ai|language\s+model|text-based|virtual\s+assistant\s+without)\b",
    r"\b(?:there\s+(?:is|are)\s+no|there's\s+no|there\s+(?:isn't|aren't|is\s+not|are\s+not)\s+(?:a|an|any)|i\s+have\s+no|none\s+of\s+(?:the|my)|no)\s+(?:available\s+|suitable\s+|appropriate\s+|relevant\s+|matching\s+|provided\s+|given\s+|such\s+)?(?:tools?|functions?|apis?|plugins?)\s+(?:available\s+)?(?:(?:that|which)\s+)?(?:can|could|to|for|that|fits?|matches|would|is\s+able|are\s+able|lets?|allows?|i\s+(?:have|can))\b",
    r"\b(?:my|the)\s+(?:available\s+|provided\s+|current\s+)?(?:tools?|functions?)\s+(?:(?:i\s+have|available)\s+)?(?:don't|do\s+not|can't|cannot|aren't\s+able|are\s+not\s+able|doesn't|does\s+not)\b",
    r"\b(?:is|isn't|not)\s+(?:possible|supported)\s+(?:for\s+me|with\s+(?:the|my)\s+(?:available\s+)?(?:tools?|functions?))\b",
    r"\bi(?:'m| am)\s+not\s+going\s+to\s+be\s+able\b",
    r"^\s*(?:but\s+)?(?:unable|not\s+able)\s+to\b",
    r"\b(?:sorry|unfortunately|afraid|apologies)\b[^.!?]{0,40}\bi\s+(?:can|am\s+able\s+to)\s+only\b",
    r"\bi\s+can\s+only\s+(?:help|assist|answer)\s+with\b",
    r"\bi\s+(?:currently\s+)?(?:do\s+not|don't)\s+support\b",
    // "I don't know.", "Sorry, I really don't know the answer.", "I have no idea.": no
    // answer, said as such. Only where the clause ends there (or an apology follows):
    // "I don't know which city you mean" asks, and "I don't know if it rains, but it is
    // 18°C" answers.
    r"\bi\s+{ADV}(?:don't|do\s+not|honestly\s+don't)\s+know(?:\s+(?:the\s+answer(?:\s+to\s+(?:that|this|your\s+question))?|that|this|it|for\s+sure|offhand))?\s*(?:[.!;]|$|,\s*(?:sorry|unfortunately|i'm\s+afraid))",
    r"\bi\s+(?:have|'ve\s+got)\s+no\s+idea\s*(?:[.!;]|$)",
    r"^\s*(?:(?:sorry|unfortunately),?\s+)?(?:no\s+idea|(?:i\s+)?dunno)\s*(?:[.!;]|$)",
];

/// Refusals (Chinese). The subject is often dropped ("抱歉，无法查询"), so a bare 无法 counts
/// only after an apology, a first person, or before 为您/帮您 ("无法为您查询"); a bare
/// 无法 inside content ("无法登录系统" as an item of a list) is not a refusal.
const REFUSE_ZH: &[&str] = &[
    r"我(?:们)?(?:目前|暂时|现在|还|并|确实|实在|恐怕|可能)?(?:无法|不能|没法|没有办法|没办法|做不到|不可以|不会|不支持|无权|未能)",
    r"(?:抱歉|对不起|很遗憾|遗憾的是|不好意思|非常抱歉|十分抱歉|不幸的是)[^。！？?!]{0,10}?(?:无法|不能|没法|没有办法|没办法|做不到|不支持|未能)",
    r"(?:无法|不能|没法|没办法|没有办法)(?:为|帮|替|给|代)(?:您|你)",
    r"(?:没有|并无|缺少|不具备|没|无)(?:可以|能够|可用|合适|相关|对应|匹配|适合|这样|此类|这类)?(?:的)?[^。！？?!，,]{0,12}?工具",
    r"我(?:们)?(?:目前|暂时|现在|并)?(?:没有|不具备|缺少|无|缺乏)[^。！？?!，,]{0,12}?(?:功能|接口|权限|能力|工具|途径|办法|渠道)",
    r"(?:帮|做|办|查|订|处理|完成|回答)不(?:了|到|上)",
    r"(?:目前|暂时|现在)(?:还)?(?:无法|不能|没法|不支持)|暂不支持",
    r"(?:超出|超过|不在)[^。！？?!，,]{0,8}?(?:范围|之外)",
    r"爱莫能助|无能为力|无法提供帮助|无法协助|无法完成",
    // "我只能查询天气，无法提供航班信息": a stated limit, then the refusal further on.
    r"(?:我|抱歉|对不起)[^。！？?!]{0,4}?只能[^。！？?!]{0,30}?(?:无法|不能|没法|不支持)",
    r"工具(?:中|里|当中)?[^。！？?!]{0,6}?(?:都)?(?:没有|无法|不能|不支持)",
    r"(?:我)?(?:只是|仅仅是|作为)(?:一个)?(?:ai|人工智能|语言模型)",
    // "我不知道。", "抱歉，不清楚。": no answer, said as such; only where the clause ends
    // there ("我不知道您指的是哪个城市" asks).
    r"(?:^|[，,]|我(?:也|真的|确实|实在|并|还)?)\s*(?:并)?不(?:太)?(?:知道|清楚)(?:答案|这个)?(?:呢|哦|啊)?\s*(?:[。！!.…]|[，,]\s*(?:抱歉|对不起|不好意思)|$)",
];

/// Courtesy tails and suggestions (English): a question here is not a request for
/// missing information.
const OFFER_EN: &[&str] = &[
    r"\banything\s+else\b",
    r"\bsomething\s+else\s+(?:i|you)\b",
    r"\b(?:how|what)\s+(?:else\s+)?(?:can|may|could)\s+i\s+(?:help|assist|do\s+for\s+you)\b",
    r"\bwhat\s+else\s+(?:can|could|may|would|do|should)\b",
    r"\bis\s+there\s+(?:anything|something)\b",
    r"\b(?:any|other|more|further)\s+questions\b",
    r"\bfeel\s+free\s+to\b",
    r"\bdon't\s+hesitate\b",
    r"\bhope\s+(?:this|that|it)\s+helps\b",
    r"\b(?:does|did)\s+(?:this|that|it)\s+(?:help|answer|make\s+sense|work)\b",
    r"\b(?:sounds?\s+good|works?\s+for\s+you)\s*\?",
    r"\b(?:would\s+you\s+like|do\s+you\s+want|want)\s+(?:me\s+to\s+)?[^.!?]*\b(?:more|else)\b",
    r"\b(?:can|may|shall)\s+i\s+(?:help|assist)\s+(?:you\s+)?with\s+(?:anything|something)\b",
    r"\b(?:need|want)\s+(?:any\s+)?(?:more|further|additional|other)\s+(?:help|assistance|information|details|info)\b",
    r"\bdo\s+you\s+need\s+(?:any|anything|help|more)\b",
    r"\bwould\s+you\s+like\s+(?:some\s+|any\s+)?(?:more|further|additional|other|extra)\b",
    r"\bwould\s+you\s+like\s+(?:me\s+)?to\s+(?:know|learn|hear|see|get|have)\s+more\b",
    r"\binstead\b[^.!?]*\?",
    r"^\s*(?:how|what)\s+about\b",
    r"\bwhy\s+not\b[^.!?]*\?",
    r"\bwhat\s+do\s+you\s+think\b",
];

/// Courtesy tails and suggestions (Chinese).
const OFFER_ZH: &[&str] = &[
    r"还(?:有|需要)(?:什么|其他|别的|其它|任何)",
    r"(?:其他|别的|其它)(?:的)?(?:问题|需要|需求)",
    r"有什么(?:可以|能|需要)(?:我)?(?:帮|为|协助)",
    r"(?:如果|如|若|要是)(?:您|你)?(?:还)?(?:有|需要|想)[^。！？?!]{0,16}(?:请|随时|欢迎|告诉|联系)",
    r"(?:随时|欢迎)(?:告诉|联系|提问|询问)",
    r"需要(?:更多|进一步|其他)(?:的)?(?:帮助|信息|详情)",
    r"希望(?:这|以上|对您)",
    r"(?:要不要|不如|何不)[^。！？?!]*[?？]$",
    // "你还想知道什么吗？", "您还想了解哪些方面？" (as "What else would you like to
    // know?"), "还能帮您做什么？", "需要我再帮您查点别的吗？", "想了解更多吗？".
    r"还想(?:要)?(?:知道|了解|问|查|看|聊|咨询)(?:点|些|一下)?(?:什么|哪些|别的|其他|其它)",
    r"还(?:能|可以)(?:再)?(?:为|帮|替)(?:您|你)(?:做|办|查)?(?:些|点)?(?:什么|别的|其他|其它)",
    r"(?:为|帮|替)(?:您|你)[^。！？?!]{0,4}(?:别的|其他|其它)(?:的)?(?:事|事情)?(?:吗|呢)?\s*[?？]?$",
    r"(?:想|要|需要)(?:再)?(?:了解|知道|查看|看看?)(?:更多|更详细)",
];

/// Conditional offers (English and Chinese).
const CONDITION: &[&str] = &[
    r"\blet\s+me\s+know\s+if\b",
    r"\bif\s+you\s+(?:need|have|want|would\s+like|'d\s+like|require|are\s+interested|prefer)\b",
    r"(?:如果|如|若|要是)(?:您|你)(?:还)?(?:需要|有|想)",
    r"如需|若需|如有(?:需要|疑问|问题|其他)",
];

/// Courtesy openings: removed before judging whether a sentence carries content.
const PREAMBLE: &[&str] = &[
    r"\b(?:sure|of\s+course|certainly|absolutely|okay|ok|alright|all\s+right|great|perfect|got\s+it|understood|no\s+problem|yes|hello|hi|hey|thanks|i\s+see|i\s+understand|excellent|wonderful)\b",
    r"\bthank\s+you\b[^.!?]*",
    r"\b(?:i\s+can|i'd\s+be\s+(?:happy|glad)\s+to|i\s+would\s+be\s+(?:happy|glad)\s+to|i'm\s+(?:happy|glad|here)\s+to|happy\s+to|glad\s+to|let\s+me|i'll|i\s+will)\s+(?:help|assist)(?:\s+(?:you|with\s+(?:that|this|it|your\s+request)))*",
    r"\bthat(?:'s|\s+is|\s+sounds)\s+(?:like\s+)?(?:a\s+|an\s+)?(?:great|good|wonderful|fantastic|nice|excellent|helpful|lovely|interesting)(?:\s+(?:plan|choice|idea|question|request))?",
    r"\b(?:to|in\s+order\s+to)\s+(?:help|assist)\s+you(?:\s+(?:better|further|with\s+that))?",
    r"好的|当然(?:可以)?|没问题|可以的|明白(?:了)?|收到|谢谢[^，。！？]*|我(?:可以|很乐意|来)(?:帮|为)(?:您|你)[^，。！？]*",
];

/// Questions not addressed to the user (English and Chinese).
const RHETORICAL: &[&str] = &[
    r"\bdid\s+you\s+know\b",
    r"\bever\s+wonder(?:ed)?\b",
    r"\b(?:wondering|curious)\s+(?:what|which|why|how|where|when|who|if|whether)\b",
    r"\bguess\s+what\b",
    r"\bwho\s+(?:doesn't|does\s+not)\b",
    r"\bwho\s+knew\b",
    r"^\s*(?:so|but|and)?\s*(?:what|why|how)\s+does\s+this\s+mean\b",
    r"你知道吗|为什么(?:呢)?[?？]$|难道",
];

/// Results handed over (English and Chinese).
const DELIVER: &[&str] = &[
    r"\bhere\s+(?:is|are)\b",
    r"\bhere's\b",
    r"\bi(?:'ve| have)\s+(?:\w+\s+)?(?:found|set|booked|arranged|requested|retrieved|added|created|scheduled|completed|sent|updated|made|renamed|adjusted|placed|located|checked|reserved|ordered|started|cancelled|canceled|changed|saved|submitted)\b",
    r"\bi\s+(?:found|located|booked|reserved)\b",
    r"\b(?:is|are)\s+currently\b",
    r"\bthere\s+(?:is|are)\s+(?:a\s+few|several|many|some|\d+)\b",
    r"\b(?:has|have)\s+been\s+(?:successfully\s+)?(?:set|booked|sent|scheduled|created|updated|added|placed|reserved|initiated|processed)\b",
    r"以下是|如下|我(?:已经|已)(?:为您|帮您|替您)?|为您找到|查询结果|结果(?:是|为)",
];

/// Negative phrases that are not refusals.
const NOT_REFUSAL: &[&str] = &[
    r"\bi\s+(?:really\s+)?(?:can't|cannot)\s+wait\b",
    r"\bi\s+(?:can't|cannot)\s+(?:stress|recommend|thank|emphasi[sz]e|praise)\b[^.!?]*\benough\b",
    r"\bi\s+(?:can't|cannot)\s+(?:guarantee|promise|be\s+(?:sure|certain))\b",
    r"\bif\s+i\s+(?:can't|cannot|am\s+unable|'m\s+unable|don't\s+have)\b",
    r"\bwhether\s+i\s+(?:can|am\s+able)\b",
    r"\bi\s+(?:can't|cannot|couldn't)\s+(?:help\s+but|agree\s+more|be\s+happier|imagine)\b",
    r"(?:如果|若|要是)我(?:无法|不能)",
];
