//! The comparison as GitHub-flavoured Markdown, for a pull request comment or a job
//! summary.

use std::fmt::Write as _;

use super::text::{
    fmt_p, interval, p_cell, p_header, pct, points, test_note, unpaired_notes, yes_no,
};
use super::{CellComparison, Comparison, Flip, FlipDirection, behaviour, metrics_view};

/// Pass → fail flips listed by [`render_markdown`] before "and N more".
const MAX_MARKDOWN_FLIPS: usize = 50;

/// `s` as inline text of a GitHub Markdown table cell or line: each character that can
/// start markup (emphasis, code, links, HTML, entities, math, strikethrough, and `|`, which
/// would end the cell) is backslash-escaped so it reads as itself, and a line break becomes
/// a space, since a table row and a list item are one line. Cell labels hold targets,
/// variants and tool names, which come from users' suites and matrices.
fn md_escape(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    let mut chars = s.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '\r' | '\n' => {
                if c == '\r' && chars.peek() == Some(&'\n') {
                    chars.next();
                }
                out.push(' ');
            }
            '\\' | '`' | '*' | '_' | '[' | ']' | '<' | '>' | '|' | '#' | '~' | '&' | '$' => {
                out.push('\\');
                out.push(c);
            }
            c => out.push(c),
        }
    }
    out
}

/// `s` as an inline code span on one line: fenced with one backtick more than its longest
/// run of backticks (backslashes do not escape inside a code span), and padded with a
/// space where a backtick or a space at its ends would otherwise be taken off.
fn md_code(s: &str) -> String {
    let s = s.replace("\r\n", " ").replace(['\r', '\n'], " ");
    let longest = s.split(|c| c != '`').map(str::len).max().unwrap_or(0);
    let fence = "`".repeat(longest + 1);
    let pad = s.starts_with('`')
        || s.ends_with('`')
        || (s.starts_with(' ') && s.ends_with(' ') && !s.trim().is_empty());
    let pad = if pad { " " } else { "" };
    format!("{fence}{pad}{s}{pad}{fence}")
}

/// A GitHub-flavoured Markdown report: a table with regressions first (significant ones
/// first, then the largest drops), the pooled result, notes on unpaired trials, and the
/// pass → fail flips.
pub fn render_markdown(c: &Comparison) -> String {
    let order = cell_order(c);
    let mut out = String::new();
    let _ = writeln!(
        out,
        "| cell | n paired | baseline | candidate | Δ points | {} | significant \
         | pass→fail | fail→pass | 95% CI (points) |",
        p_header(c)
    );
    out.push_str("|---|---:|---:|---:|---:|---:|:---:|---:|---:|---:|\n");
    for cell in &order {
        let p = &cell.paired;
        let mark = if p.is_regression() && p.significant {
            " ⚠️"
        } else {
            ""
        };
        let _ = writeln!(
            out,
            "| {}{mark} | {} | {} | {} | {} | {} | {} | {} | {} | {} |",
            md_escape(&cell.cell),
            p.n,
            pct(p.baseline_accuracy),
            pct(p.candidate_accuracy),
            points(p.delta_points),
            p_cell(p),
            yes_no(p),
            p.n10,
            p.n01,
            interval(p)
        );
    }
    let o = &c.overall;
    if o.n == 0 {
        out.push_str("\n**Overall**: 0 pairs: nothing was compared, p undefined.\n");
    } else {
        let _ = writeln!(
            out,
            "\n**Overall**: {} pairs from {} cases, {} → {} ({} points, 95% CI {}), {} p {}.",
            o.n,
            o.cases,
            pct(o.baseline_accuracy),
            pct(o.candidate_accuracy),
            points(o.delta_points),
            interval(o),
            o.test.short(),
            fmt_p(o.p_value)
        );
    }
    let _ = writeln!(out, "\n{}", test_note(c));
    let notes = unpaired_notes(c);
    if !notes.is_empty() {
        out.push('\n');
        for note in notes {
            let _ = writeln!(out, "- {note}");
        }
    }
    out.push_str(&behaviour::markdown(c, md_escape));
    out.push_str(&metrics_view::markdown(c, md_escape));
    let repeats = c.overall.max_pairs_per_case > 1;
    write_flips(&mut out, &order, repeats);
    out
}

/// The cells in the table's order, stable: significant regressions, other regressions
/// (largest drop first), the rest in their original order.
fn cell_order(c: &Comparison) -> Vec<&CellComparison> {
    let mut order: Vec<&CellComparison> = c.cells.iter().collect();
    let rank = |x: &CellComparison| match (x.paired.is_regression(), x.paired.significant) {
        (true, true) => 0,
        (true, false) => 1,
        _ => 2,
    };
    order.sort_by(|x, y| {
        rank(x).cmp(&rank(y)).then_with(|| {
            if rank(x) < 2 {
                let d = |c: &CellComparison| c.paired.delta_points.unwrap_or(0.0);
                d(x).total_cmp(&d(y))
            } else {
                std::cmp::Ordering::Equal
            }
        })
    });
    order
}

/// Characters of a failure message shown in a flip line before it is cut with `…`.
const MAX_REASON_CHARS: usize = 200;

/// The pass → fail flips of the cells in `order`, the first [`MAX_MARKDOWN_FLIPS`] listed,
/// each with the candidate's failure reason (its code and message). The cell label
/// already names the tool_choice mode; the repeat is named when cases have several.
fn write_flips(out: &mut String, order: &[&CellComparison], repeats: bool) {
    let flips: Vec<(&CellComparison, &Flip)> = order
        .iter()
        .flat_map(|cell| {
            cell.flips(FlipDirection::PassToFail)
                .map(move |f| (*cell, f))
        })
        .collect();
    if !flips.is_empty() {
        let _ = writeln!(out, "\n### Pass → fail ({})\n", flips.len());
        for (cell, f) in flips.iter().take(MAX_MARKDOWN_FLIPS) {
            let repeat = if repeats || f.repeat > 0 {
                format!(" (repeat {})", f.repeat)
            } else {
                String::new()
            };
            let reason = match &f.reason {
                Some(r) => {
                    let mut message: String = r.message.chars().take(MAX_REASON_CHARS).collect();
                    if r.message.chars().count() > MAX_REASON_CHARS {
                        message.push('…');
                    }
                    format!(": {} {}", md_code(&r.code), md_escape(&message))
                }
                None => String::new(),
            };
            let _ = writeln!(
                out,
                "- {}{repeat} in {}{reason}",
                md_code(&f.case_id),
                md_escape(&cell.cell)
            );
        }
        if flips.len() > MAX_MARKDOWN_FLIPS {
            let _ = writeln!(out, "- and {} more", flips.len() - MAX_MARKDOWN_FLIPS);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::compare::compare_runs;
    use crate::compare::tests::runs;

    #[test]
    fn markdown_puts_the_regression_first() {
        // First cell in input order improves; the second regresses significantly.
        let (mut b, mut c) = runs("better", 26, 0, 10, 4);
        let (b2, c2) = runs("worse", 26, 10, 0, 4);
        b.extend(b2);
        c.extend(c2);
        let cmp = compare_runs(&b, &c);
        assert!(cmp.cells[0].cell.contains("better"));
        let md = render_markdown(&cmp);
        let rows: Vec<&str> = md.lines().filter(|l| l.starts_with("| ")).collect();
        assert!(rows[0].starts_with("| cell |"), "{md}");
        assert!(rows[1].contains("worse"), "{md}");
        assert!(rows[1].contains("⚠️"), "{md}");
        assert!(rows[1].contains("| 40 | 90.0% | 65.0% | -25.0 | 0.002 | yes | 10 | 0 |"));
        assert!(rows[2].contains("better"), "{md}");
        assert!(rows[2].contains("+25.0"), "{md}");
        // The flips list has the ten pass → fail flips of `worse` only.
        assert!(md.contains("### Pass → fail (10)"), "{md}");
        // The cell label names the mode; one repeat needs no number.
        assert!(
            md.contains("- `worse-case26` in openai:gpt-4o-mini × worse × auto\n"),
            "{md}"
        );
        assert!(!md.contains("`better-case"), "{md}");
        assert!(md.contains("**Overall**: 80 pairs"), "{md}");
    }

    #[test]
    fn escaping_keeps_text_as_text() {
        assert_eq!(
            md_escape("plain text: a-b.c (d) × e → f"),
            "plain text: a-b.c (d) × e → f"
        );
        assert_eq!(
            md_escape("a|b \\ `c` *d* _e_ [f](g) <h> #i ~j~ &amp; $k$"),
            "a\\|b \\\\ \\`c\\` \\*d\\* \\_e\\_ \\[f\\](g) \\<h\\> \\#i \\~j\\~ \\&amp; \\$k\\$"
        );
        assert_eq!(md_escape("one\ntwo\r\nthree\rfour"), "one two three four");
        assert_eq!(md_code("case_1"), "`case_1`");
        assert_eq!(md_code("a`b``c"), "```a`b``c```");
        assert_eq!(md_code("`a"), "`` `a ``");
        assert_eq!(md_code(" a "), "`  a  `");
        assert_eq!(md_code("a\nb\r\nc"), "`a b c`");
    }

    #[test]
    fn model_text_cannot_break_the_table_or_the_flips_list() {
        // A variant (part of the cell label and of every case id here) with Markdown
        // punctuation, a backtick run, a line break and HTML.
        let variant = "v|*a*_b_`c``\n<img src=x>#1";
        let (b, c) = runs(variant, 0, 2, 0, 0);
        let md = render_markdown(&compare_runs(&b, &c));
        let lines: Vec<&str> = md.lines().collect();
        // The table is header, rule and one row, each a line of ten cells.
        let row = lines[2];
        assert_eq!(
            row,
            "| openai:gpt-4o-mini × v\\|\\*a\\*\\_b\\_\\`c\\`\\` \\<img src=x\\>\\#1 × auto \
             | 2 | 100.0% | 0.0% | -100.0 | 0.500 | no | 2 | 0 | [-100.0, +100.0] |",
            "{md}"
        );
        assert!(lines[3].is_empty(), "{md}");
        // A case id goes in a code span fenced longer than its backtick runs, on one line.
        assert!(
            md.contains(
                "- ```v|*a*_b_`c`` <img src=x>#1-case00``` in \
                 openai:gpt-4o-mini × v\\|\\*a\\*\\_b\\_\\`c\\`\\` \\<img src=x\\>\\#1 × auto\n"
            ),
            "{md}"
        );
        assert!(!md.lines().any(|l| l.starts_with("<img")), "{md}");
    }

    #[test]
    fn markdown_orders_regressions_by_size_and_escapes_pipes() {
        let (mut b, mut c) = runs("small|drop", 36, 2, 0, 2);
        let (b2, c2) = runs("big", 30, 6, 0, 4);
        let (b3, c3) = runs("flat", 40, 0, 0, 0);
        for (x, y) in [(b2, c2), (b3, c3)] {
            b.extend(x);
            c.extend(y);
        }
        let md = render_markdown(&compare_runs(&b, &c));
        let rows: Vec<&str> = md
            .lines()
            .filter(|l| l.starts_with("| ") && !l.starts_with("| cell"))
            .collect();
        // big (6 vs 0, p = 0.03125) is significant; small|drop is not.
        assert!(rows[0].contains("big"), "{md}");
        assert!(rows[1].contains("small\\|drop"), "{md}");
        assert!(rows[2].contains("flat"), "{md}");
    }
}
