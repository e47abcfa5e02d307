//! Number and text formatting shared by every report, so the terminal, Markdown, HTML and
//! CSV show one cost the same way.
//!
//! Costs are sums of per-trial products (tokens × price per million), so they carry
//! binary floating-point noise (`0.00007170000000000001`). People read [`usd`] (a few
//! significant digits, cents from one dollar up); machine formats keep numbers, rounded
//! by [`round_sig`] to [`MACHINE_DIGITS`] significant digits, which removes the noise and
//! keeps every digit a price table can give.

use unicode_width::{UnicodeWidthChar, UnicodeWidthStr};

use crate::score::metrics::Tokens;

/// Significant digits of the costs written to CSV and JSON.
pub const MACHINE_DIGITS: u32 = 10;

/// The smallest cost [`usd`] writes in digits; anything smaller and above zero is shown
/// as `<$0.0000001` (a single token of the cheapest model costs about this much).
const SMALLEST_USD: f64 = 1e-7;

/// `x` rounded to `digits` significant decimal digits (at least 1); non-finite values and
/// zero are returned as they are.
pub fn round_sig(x: f64, digits: u32) -> f64 {
    if !x.is_finite() || x == 0.0 {
        return x;
    }
    let digits = digits.clamp(1, 17) as usize;
    // Scientific notation rounds to exactly `digits` significant digits; parsing it
    // back gives the nearest double, which prints without the noise.
    format!("{:.*e}", digits - 1, x).parse().unwrap_or(x)
}

/// The detail counts of `t` for people, the nonzero ones only, e.g. `1700 cached, 100
/// cache write, 40 reasoning`; `None` when all are 0 (the reports then show the input
/// and output tokens as before).
pub fn token_details(t: &Tokens) -> Option<String> {
    let parts: Vec<String> = [
        (t.cached_input, "cached"),
        (t.cache_write, "cache write"),
        (t.reasoning, "reasoning"),
    ]
    .into_iter()
    .filter(|(n, _)| *n > 0)
    .map(|(n, what)| format!("{n} {what}"))
    .collect();
    (!parts.is_empty()).then(|| parts.join(", "))
}

/// A cost in US dollars for people: three significant digits below one dollar
/// (`$0.0000717`, `$0.0013`, `$0.123`), at least cents (`$0.50`), and dollars with cents
/// from one dollar up (`$12.35`). Non-finite values show as `n/a`.
pub fn usd(x: f64) -> String {
    if !x.is_finite() {
        return "n/a".to_string();
    }
    let sign = if x < 0.0 { "-" } else { "" };
    let a = x.abs();
    if a == 0.0 {
        return "$0.00".to_string();
    }
    if a < SMALLEST_USD {
        return format!("{sign}<$0.0000001");
    }
    // Three significant digits: the exponent of the leading digit sets the decimals.
    let lead = a.log10().floor() as i32;
    let decimals = (2 - lead).max(2) as usize;
    let mut s = format!("{a:.decimals$}");
    // Rounding may carry into a new leading digit (0.009996 -> 0.01000); trailing zeros
    // past the cents say nothing.
    if let Some(dot) = s.find('.') {
        let keep = (dot + 3).max(s.trim_end_matches('0').len());
        s.truncate(keep);
    }
    format!("{sign}${s}")
}

/// [`usd`] of a cost that may be unknown (no price), with `none` in its place.
pub fn usd_or(x: Option<f64>, none: &str) -> String {
    x.map_or_else(|| none.to_string(), usd)
}

/// A threshold's measured value for people: a cost as [`usd`], token counts and
/// latencies whole, rates with three decimals.
pub fn metric_value(metric: &str, v: f64) -> String {
    match metric {
        "cost_usd" => usd(v),
        "input_tokens" | "output_tokens" | "tool_definition_tokens" => format!("{v:.0}"),
        m if m.starts_with("latency_") => format!("{v:.0}"),
        _ => format!("{v:.3}"),
    }
}

/// Display width of `s` in terminal columns (wide CJK characters count two).
pub fn width(s: &str) -> usize {
    UnicodeWidthStr::width(s)
}

/// `s` cut to at most `max` columns, ending with `…` when cut.
pub fn cut_end(s: &str, max: usize) -> String {
    if width(s) <= max {
        return s.to_string();
    }
    let mut out = String::new();
    let mut w = 0;
    for c in s.chars() {
        let cw = c.width().unwrap_or(0);
        if w + cw + 1 > max {
            break;
        }
        out.push(c);
        w += cw;
    }
    if max > 0 {
        out.push('…');
    }
    out
}

/// `s` cut to at most `max` columns by replacing its middle with `…`, keeping its start
/// and end (where names differ: `openai:gpt-4o-mini` vs `openai:gpt-4o`).
pub fn cut_middle(s: &str, max: usize) -> String {
    if width(s) <= max {
        return s.to_string();
    }
    if max <= 1 {
        return cut_end(s, max);
    }
    let budget = max - 1;
    let head_budget = budget.div_ceil(2);
    let tail_budget = budget - head_budget;
    let mut head = String::new();
    let mut w = 0;
    for c in s.chars() {
        let cw = c.width().unwrap_or(0);
        if w + cw > head_budget {
            break;
        }
        head.push(c);
        w += cw;
    }
    let mut tail: Vec<char> = Vec::new();
    let mut w = 0;
    for c in s.chars().rev() {
        let cw = c.width().unwrap_or(0);
        if w + cw > tail_budget {
            break;
        }
        tail.push(c);
        w += cw;
    }
    let tail: String = tail.into_iter().rev().collect();
    format!("{head}…{tail}")
}

/// Each of `values` cut to at most `max` columns so that values which differ still
/// differ: what all values share at their start and end is cut first, and the part where
/// they differ is kept with as much context around it as fits (`…ke-1@http://…` and
/// `…ke-2@http://…` rather than two equal `openai-compatible:fa…`). A single value, or
/// one whose differing part is near its start, is cut like [`cut_middle`].
pub fn cut_distinct(values: &[&str], max: usize) -> Vec<String> {
    let distinct: Vec<Vec<char>> = {
        let mut seen: Vec<&str> = Vec::new();
        for v in values {
            if !seen.contains(v) {
                seen.push(v);
            }
        }
        seen.iter().map(|v| v.chars().collect()).collect()
    };
    let shortest = distinct.iter().map(Vec::len).min().unwrap_or(0);
    let prefix = if distinct.len() < 2 {
        0
    } else {
        (0..shortest)
            .take_while(|&i| distinct.iter().all(|d| d[i] == distinct[0][i]))
            .count()
    };
    let suffix = if distinct.len() < 2 {
        0
    } else {
        (0..shortest - prefix)
            .take_while(|&i| {
                let first = &distinct[0];
                distinct
                    .iter()
                    .all(|d| d[d.len() - 1 - i] == first[first.len() - 1 - i])
            })
            .count()
    };
    values
        .iter()
        .map(|v| {
            if width(v) <= max || distinct.len() < 2 {
                return cut_middle(v, max);
            }
            let c: Vec<char> = v.chars().collect();
            let w = |range: &[char]| range.iter().map(|c| c.width().unwrap_or(0)).sum::<usize>();
            // The shown part is c[a..b], with `…` before it when a > 0 and after it when
            // b < len.
            let shown =
                |a: usize, b: usize| w(&c[a..b]) + usize::from(a > 0) + usize::from(b < c.len());
            let (mut a, mut b) = (prefix, c.len() - suffix);
            if shown(0, b) <= max {
                // The difference is near the start: keep the start, cut the end.
                a = 0;
            }
            if shown(a, b) > max {
                // Even the differing part is too wide: keep its start.
                while b > a + 1 && shown(a, b) > max {
                    b -= 1;
                }
            } else {
                // Widen the window, left first, while it fits.
                loop {
                    let mut grew = false;
                    if a > 0 && shown(a - 1, b) <= max {
                        a -= 1;
                        grew = true;
                    }
                    if b < c.len() && shown(a, b + 1) <= max {
                        b += 1;
                        grew = true;
                    }
                    if !grew {
                        break;
                    }
                }
            }
            let mut out = String::new();
            if a > 0 {
                out.push('…');
            }
            out.extend(&c[a..b]);
            if b < c.len() {
                out.push('…');
            }
            out
        })
        .collect()
}

/// `text` broken at spaces into lines of at most `max` columns (kept whole when it fits),
/// its leading spaces kept on the first line and every later line indented by `indent`
/// spaces; a word wider than a line is cut with `…`.
pub fn wrap(text: &str, max: usize, indent: usize) -> Vec<String> {
    if width(text) <= max {
        return vec![text.to_string()];
    }
    let lead = text.len() - text.trim_start_matches(' ').len();
    let mut lines: Vec<String> = Vec::new();
    let mut line = String::new();
    for word in text.split(' ').filter(|w| !w.is_empty()) {
        let pad = if lines.is_empty() { lead } else { indent };
        if line.is_empty() {
            line = format!(
                "{}{}",
                " ".repeat(pad),
                cut_end(word, max.saturating_sub(pad))
            );
        } else if width(&line) + 1 + width(word) <= max {
            line.push(' ');
            line.push_str(word);
        } else {
            lines.push(std::mem::take(&mut line));
            line = format!(
                "{}{}",
                " ".repeat(indent),
                cut_end(word, max.saturating_sub(indent))
            );
        }
    }
    if !line.is_empty() || lines.is_empty() {
        lines.push(line);
    }
    lines
}

/// `s` cut to at most `max_bytes` bytes at a character boundary, and the bytes left out.
pub fn cut_bytes(s: &str, max_bytes: usize) -> (&str, usize) {
    if s.len() <= max_bytes {
        return (s, 0);
    }
    let mut end = max_bytes;
    while !s.is_char_boundary(end) {
        end -= 1;
    }
    (&s[..end], s.len() - end)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn costs_for_people_have_three_significant_digits_or_cents() {
        // The sum behind the issue's `$0.00007170000000000001`.
        assert_eq!(usd(0.000_071_700_000_000_000_01), "$0.0000717");
        assert_eq!(usd(0.0013), "$0.0013");
        assert_eq!(usd(0.001_349), "$0.00135");
        assert_eq!(usd(12.345_6), "$12.35");
        assert_eq!(usd(1234.5), "$1234.50");
        assert_eq!(usd(0.5), "$0.50");
        assert_eq!(usd(0.123_456), "$0.123");
        // Rounding that carries into the next digit keeps no spurious zeros.
        assert_eq!(usd(0.009_999_7), "$0.01");
        assert_eq!(usd(0.999_7), "$1.00");
        assert_eq!(usd(0.0), "$0.00");
        assert_eq!(usd(3e-9), "<$0.0000001");
        assert_eq!(usd(-0.25), "-$0.25");
        assert_eq!(usd(f64::NAN), "n/a");
        assert_eq!(usd_or(None, "-"), "-");
        assert_eq!(usd_or(Some(2.0), "-"), "$2.00");
        assert_eq!(metric_value("cost_usd", 0.000_071_7), "$0.0000717");
        assert_eq!(metric_value("accuracy", 0.75), "0.750");
        assert_eq!(metric_value("latency_p95_ms", 410.4), "410");
        assert_eq!(metric_value("input_tokens", 1558.0), "1558");
    }

    #[test]
    fn machine_costs_lose_the_noise_and_keep_ten_digits() {
        assert_eq!(
            round_sig(0.000_071_700_000_000_000_01, 10).to_string(),
            "0.0000717"
        );
        assert_eq!(round_sig(0.1 + 0.2, 10).to_string(), "0.3");
        assert_eq!(round_sig(1.234_567_890_123, 10).to_string(), "1.23456789");
        assert_eq!(round_sig(123_456_789_012.0, 10), 123_456_789_000.0);
        assert_eq!(round_sig(0.0, 10), 0.0);
        assert!(round_sig(f64::INFINITY, 10).is_infinite());
    }

    #[test]
    fn distinct_values_stay_distinct_when_cut() {
        let a = "openai-compatible:fake-1@http://127.0.0.1:8080";
        let b = "openai-compatible:fake-2@http://127.0.0.1:8080";
        let cut = cut_distinct(&[a, b, a], 20);
        assert_eq!(cut[0], cut[2]);
        assert_ne!(cut[0], cut[1]);
        assert!(cut.iter().all(|c| width(c) <= 20), "{cut:?}");
        assert!(
            cut[0].contains("fake-1") && cut[1].contains("fake-2"),
            "{cut:?}"
        );
        // A difference near the start keeps the start.
        let cut = cut_distinct(
            &[
                "openai:gpt-4o-mini-2024-07-18",
                "anthropic:claude-3-5-haiku",
            ],
            12,
        );
        assert_eq!(cut, ["openai:gpt-…", "anthropic:c…"]);
        // Values that fit are kept whole; a single long value is cut in the middle.
        assert_eq!(cut_distinct(&["a", "b"], 5), ["a", "b"]);
        assert_eq!(cut_distinct(&["abcdefghij"], 5), ["ab…ij"]);
        // Differing parts wider than the room keep their start.
        let cut = cut_distinct(&["x-aaaaaaaaaa-y", "x-bbbbbbbbbb-y"], 6);
        assert_eq!(cut, ["…aaaa…", "…bbbb…"]);
    }

    #[test]
    fn cuts_mark_what_was_left_out() {
        assert_eq!(cut_end("abcdef", 4), "abc…");
        assert_eq!(cut_end("abc", 3), "abc");
        // Wide characters count two columns.
        assert_eq!(cut_end("北京上海", 5), "北京…");
        assert_eq!(cut_middle("openai-compatible:fake-1", 11), "opena…ake-1");
        assert_eq!(cut_middle("short", 10), "short");
        assert_eq!(cut_bytes("aé", 2), ("a", 2));
        assert_eq!(
            wrap(
                "  tool definitions: vague 74 tokens, clear 85 tokens",
                24,
                4
            ),
            [
                "  tool definitions:",
                "    vague 74 tokens,",
                "    clear 85 tokens"
            ]
        );
        assert_eq!(wrap("  ok  fits", 24, 4), ["  ok  fits"]);
        assert_eq!(cut_bytes("abc", 5), ("abc", 0));
    }
}
