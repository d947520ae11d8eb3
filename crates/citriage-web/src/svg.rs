//! Server-side SVG charts (no scripts, no external resources): a job's daily pass
//! rate as bars, the passed share green over the failed share red.

use crate::data::DayRate;
use crate::html::esc;

const WIDTH: usize = 600;
const HEIGHT: usize = 120;
const AXIS: usize = 16;

/// Daily pass-rate bars, oldest day left. Empty input gives a labelled empty chart.
pub fn pass_rate_chart(days: &[DayRate]) -> String {
    let plot_h = HEIGHT - AXIS;
    let mut out = format!(
        "<svg class=\"chart\" xmlns=\"http://www.w3.org/2000/svg\" width=\"{WIDTH}\" height=\"{HEIGHT}\" \
         viewBox=\"0 0 {WIDTH} {HEIGHT}\" role=\"img\" aria-label=\"daily pass rate\">\
         <rect x=\"0\" y=\"0\" width=\"{WIDTH}\" height=\"{plot_h}\" fill=\"#f4f5f7\"/>"
    );
    if days.is_empty() {
        out.push_str(&format!(
            "<text x=\"{}\" y=\"{}\" text-anchor=\"middle\" font-size=\"12\" fill=\"#555\">no finished builds</text></svg>",
            WIDTH / 2,
            plot_h / 2
        ));
        return out;
    }
    let slot = WIDTH as f64 / days.len() as f64;
    let bar = (slot * 0.8).max(1.0);
    for (i, d) in days.iter().enumerate() {
        let rate = if d.finished == 0 { 0.0 } else { d.passed as f64 / d.finished as f64 };
        let h = (rate * plot_h as f64).round();
        let x = i as f64 * slot + (slot - bar) / 2.0;
        // A full-height red bar (failed share) with the passed share in green over its foot.
        out.push_str(&format!(
            "<g><title>{}: {}/{} passed</title>\
             <rect x=\"{x:.1}\" y=\"0\" width=\"{bar:.1}\" height=\"{plot_h}\" fill=\"#c62828\"/>\
             <rect x=\"{x:.1}\" y=\"{:.1}\" width=\"{bar:.1}\" height=\"{h:.1}\" fill=\"#2e7d32\"/></g>",
            esc(&d.day.to_string()),
            d.passed,
            d.finished,
            plot_h as f64 - h,
        ));
    }
    let (first, last) = (&days[0], &days[days.len() - 1]);
    out.push_str(&format!(
        "<text x=\"0\" y=\"{HEIGHT}\" font-size=\"11\" fill=\"#555\">{}</text>\
         <text x=\"{WIDTH}\" y=\"{HEIGHT}\" text-anchor=\"end\" font-size=\"11\" fill=\"#555\">{}</text></svg>",
        esc(&first.day.to_string()),
        esc(&last.day.to_string())
    ));
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use citriage_model::Day;

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
}
