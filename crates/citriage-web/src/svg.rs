//! Server-side SVG charts (no scripts, no external resources): a job's daily pass
//! rate, failures per day as sparklines and bar charts with a scale, and payload
//! acceptance per day. Each bar carries a `<title>` tooltip with its figures.

use crate::data::PhaseDay;
use crate::html::esc;
use crate::summary::DayRate;
use citriage_model::Day;
use std::fmt::Write;

const WIDTH: usize = 600;
const HEIGHT: usize = 120;
const AXIS: usize = 16;

fn open(class: &str, w: usize, h: usize, label: &str) -> String {
    format!(
        "<svg class=\"{class}\" xmlns=\"http://www.w3.org/2000/svg\" width=\"{w}\" height=\"{h}\" \
         viewBox=\"0 0 {w} {h}\" role=\"img\" aria-label=\"{}\">",
        esc(label)
    )
}

fn empty(mut out: String, w: usize, h: usize, text: &str) -> String {
    let _ = write!(
        out,
        "<text x=\"{}\" y=\"{}\" text-anchor=\"middle\" font-size=\"12\" fill=\"#555\">{}</text></svg>",
        w / 2,
        h / 2,
        esc(text)
    );
    out
}

fn axis_labels(out: &mut String, first: &str, last: &str, w: usize, h: usize) {
    let _ = write!(
        out,
        "<text x=\"0\" y=\"{h}\" font-size=\"11\" fill=\"#555\">{}</text>\
         <text x=\"{w}\" y=\"{h}\" text-anchor=\"end\" font-size=\"11\" fill=\"#555\">{}</text>",
        esc(first),
        esc(last)
    );
}

/// Daily pass-rate bars, oldest day left. Empty input gives a labelled empty chart.
pub fn pass_rate_chart(days: &[DayRate]) -> String {
    let plot_h = HEIGHT - AXIS;
    let mut out = open("chart", WIDTH, HEIGHT, "daily pass rate");
    let _ = write!(out, "<rect x=\"0\" y=\"0\" width=\"{WIDTH}\" height=\"{plot_h}\" fill=\"#f4f5f7\"/>");
    if days.is_empty() {
        return empty(out, WIDTH, plot_h, "no finished builds");
    }
    let slot = WIDTH as f64 / days.len() as f64;
    let bar = (slot * 0.8).max(1.0);
    for (i, d) in days.iter().enumerate() {
        let rate = if d.finished == 0 { 0.0 } else { d.passed as f64 / d.finished as f64 };
        let h = (rate * plot_h as f64).round();
        let x = i as f64 * slot + (slot - bar) / 2.0;
        // A full-height red bar (failed share) with the passed share in green over its foot.
        let _ = write!(
            out,
            "<g><title>{}: {}/{} passed</title>\
             <rect x=\"{x:.1}\" y=\"0\" width=\"{bar:.1}\" height=\"{plot_h}\" fill=\"#c62828\"/>\
             <rect x=\"{x:.1}\" y=\"{:.1}\" width=\"{bar:.1}\" height=\"{h:.1}\" fill=\"#2e7d32\"/></g>",
            esc(&d.day.to_string()),
            d.passed,
            d.finished,
            plot_h as f64 - h,
        );
    }
    axis_labels(&mut out, &days[0].day.to_string(), &days[days.len() - 1].day.to_string(), WIDTH, HEIGHT);
    out.push_str("</svg>");
    out
}

/// A small bar sparkline of counts per day (oldest left), the last day darker; one
/// path per colour and one tooltip with the whole series keep it small.
pub fn sparkline(per_day: &[u32], first_day: Day) -> String {
    let (w, h) = (per_day.len().max(1) * 5, 20usize);
    let mut out = open("spark", w, h, "failures per day");
    let max = per_day.iter().copied().max().unwrap_or(0).max(1);
    let last = first_day.plus(per_day.len() as i64 - 1);
    let series: Vec<String> = per_day.iter().map(u32::to_string).collect();
    let _ = write!(out, "<title>{first_day} to {last}: {}</title>", series.join(" "));
    let (mut body, mut today) = (String::new(), String::new());
    for (i, &n) in per_day.iter().enumerate() {
        if n == 0 {
            continue;
        }
        let bh = ((f64::from(n) / f64::from(max)) * (h as f64 - 1.0)).ceil().max(1.0) as usize;
        let d = if i + 1 == per_day.len() { &mut today } else { &mut body };
        let _ = write!(d, "M{} {}h4v{bh}h-4z", i * 5, h - bh);
    }
    for (d, fill) in [(body, "#d9534f"), (today, "#8e1b1b")] {
        if !d.is_empty() {
            let _ = write!(out, "<path d=\"{d}\" fill=\"{fill}\"/>");
        }
    }
    out.push_str("</svg>");
    out
}

/// Failures per day as bars with the maximum marked, oldest day left.
pub fn failures_chart(per_day: &[u32], first_day: Day) -> String {
    let plot_h = HEIGHT - AXIS;
    let mut out = open("chart", WIDTH, HEIGHT, "failures per day");
    let _ = write!(out, "<rect x=\"0\" y=\"0\" width=\"{WIDTH}\" height=\"{plot_h}\" fill=\"#f4f5f7\"/>");
    if per_day.is_empty() {
        return empty(out, WIDTH, plot_h, "no failures");
    }
    let max = per_day.iter().copied().max().unwrap_or(0).max(1);
    let slot = WIDTH as f64 / per_day.len() as f64;
    let bar = (slot * 0.8).max(1.0);
    for (i, &n) in per_day.iter().enumerate() {
        let bh = (f64::from(n) / f64::from(max) * (plot_h as f64 - 12.0)).round();
        let x = i as f64 * slot + (slot - bar) / 2.0;
        let _ = write!(
            out,
            "<g><title>{}: {n} failures</title><rect x=\"{x:.1}\" y=\"{:.1}\" width=\"{bar:.1}\" height=\"{bh:.1}\" fill=\"#c62828\"/></g>",
            first_day.plus(i as i64),
            plot_h as f64 - bh
        );
    }
    let _ = write!(out, "<text x=\"4\" y=\"11\" font-size=\"11\" fill=\"#555\">max {max}/day</text>");
    let last = first_day.plus(per_day.len() as i64 - 1);
    axis_labels(&mut out, &first_day.to_string(), &last.to_string(), WIDTH, HEIGHT);
    out.push_str("</svg>");
    out
}

/// Payloads created per day, stacked: accepted (green), rejected (red), other (grey).
pub fn acceptance_chart(days: &[PhaseDay]) -> String {
    let plot_h = HEIGHT - AXIS;
    let mut out = open("chart", WIDTH, HEIGHT, "payload acceptance per day");
    let _ = write!(out, "<rect x=\"0\" y=\"0\" width=\"{WIDTH}\" height=\"{plot_h}\" fill=\"#f4f5f7\"/>");
    if days.is_empty() {
        return empty(out, WIDTH, plot_h, "no payloads with a creation time");
    }
    let max = days.iter().map(|d| d.accepted + d.rejected + d.other).max().unwrap_or(0).max(1);
    let slot = WIDTH as f64 / days.len() as f64;
    let bar = (slot * 0.8).max(1.0);
    let unit = (plot_h as f64 - 12.0) / max as f64;
    for (i, d) in days.iter().enumerate() {
        let x = i as f64 * slot + (slot - bar) / 2.0;
        let mut y = plot_h as f64;
        let _ = write!(
            out,
            "<g><title>{}: {} accepted, {} rejected, {} other</title>",
            d.day, d.accepted, d.rejected, d.other
        );
        for (n, fill) in [(d.accepted, "#2e7d32"), (d.rejected, "#c62828"), (d.other, "#9e9e9e")] {
            if n == 0 {
                continue;
            }
            let bh = n as f64 * unit;
            y -= bh;
            let _ =
                write!(out, "<rect x=\"{x:.1}\" y=\"{y:.1}\" width=\"{bar:.1}\" height=\"{bh:.1}\" fill=\"{fill}\"/>");
        }
        out.push_str("</g>");
    }
    let _ = write!(out, "<text x=\"4\" y=\"11\" font-size=\"11\" fill=\"#555\">max {max}/day</text>");
    axis_labels(&mut out, &days[0].day.to_string(), &days[days.len() - 1].day.to_string(), WIDTH, HEIGHT);
    out.push_str("</svg>");
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_bar_per_day_with_tooltips() {
        let days = vec![
            DayRate { day: Day(20_000), passed: 3, finished: 4 },
            DayRate { day: Day(20_001), passed: 0, finished: 2 },
        ];
        let svg = pass_rate_chart(&days);
        assert_eq!(svg.matches("<title>").count(), 2);
        assert!(svg.contains("3/4 passed"));
        assert!(svg.ends_with("</svg>"));
        assert!(pass_rate_chart(&[]).contains("no finished builds"));
    }

    #[test]
    fn sparklines_draw_nonzero_days_only() {
        let svg = sparkline(&[0, 2, 0, 4], Day(20_000));
        // Two bars: day 1 (half height) in the body path, the last day (full height) darker.
        assert!(svg.contains("<path d=\"M5 10h4v10h-4z\" fill=\"#d9534f\"/>"), "{svg}");
        assert!(svg.contains("<path d=\"M15 1h4v19h-4z\" fill=\"#8e1b1b\"/>"), "{svg}");
        assert!(svg.contains(&format!("<title>{} to {}: 0 2 0 4</title>", Day(20_000), Day(20_003))));
        assert!(!sparkline(&[0, 0], Day(0)).contains("<path"));
    }

    #[test]
    fn acceptance_stacks_phases() {
        let svg = acceptance_chart(&[PhaseDay { day: Day(20_000), accepted: 2, rejected: 1, other: 0 }]);
        assert!(svg.contains("2 accepted, 1 rejected, 0 other"));
        assert_eq!(svg.matches("fill=\"#2e7d32\"").count(), 1);
        assert_eq!(svg.matches("fill=\"#c62828\"").count(), 1);
        assert!(failures_chart(&[], Day(0)).contains("no failures"));
    }
}
