//! Properties of the parsers of outside data: they never panic on arbitrary bytes;
//! what citriage's own writers (or Prow's) produce reads back the same (parse →
//! serialize → parse); numbers are read exactly or refused naming the number as
//! written, never rounded.

use citriage_formats::junit::{read_junit, Status};
use citriage_formats::prow::{parse_finished, parse_prowjob, parse_started};
use citriage_formats::{parse_snapshot, strict_json};
use citriage_model::Dataset;
use proptest::prelude::*;

fn xml_escape(s: &str) -> String {
    s.replace('&', "&amp;").replace('<', "&lt;").replace('>', "&gt;").replace('"', "&quot;")
}

/// Text XML can carry: no control characters but tab and newline (XML 1.0), no `\r`
/// (a reader normalizes line ends).
fn xml_text() -> impl Strategy<Value = String> {
    proptest::collection::vec(
        prop_oneof![
            8 => proptest::char::range(' ', '~'),
            1 => Just('\n'),
            1 => Just('\t'),
            1 => proptest::char::range('\u{a0}', '\u{2fff}'),
        ],
        0..60,
    )
    .prop_map(|v| v.into_iter().collect())
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 256, ..ProptestConfig::default() })]

    #[test]
    fn no_parser_panics_on_arbitrary_bytes(bytes in proptest::collection::vec(any::<u8>(), 0..400)) {
        let _ = parse_snapshot(&bytes, "p", None);
        let _ = parse_snapshot(&bytes, "p", Some(Dataset::Flakes));
        let _ = parse_started(&bytes, "p");
        let _ = parse_finished(&bytes, "p");
        let _ = parse_prowjob(&bytes, "p");
        let _ = read_junit(&bytes[..], "p");
        let _ = strict_json::inexact_numbers(&bytes, usize::MAX);
        let _ = citriage_formats::testgrid::parse_table(&bytes, "p", &citriage_formats::testgrid::TableLimits::default());
        let _ = citriage_formats::testgrid::parse_summary(&bytes, "p");
    }

    #[test]
    fn testgrid_tables_read_back_what_was_encoded(rows in proptest::collection::vec(proptest::collection::vec(0u8..16, 1..6), 1..8), columns in 1usize..6) {
        // Each row: statuses cycled to the column count, run-length encoded as TestGrid does.
        let mut tests = Vec::new();
        let mut want = Vec::new();
        for (i, pattern) in rows.iter().enumerate() {
            let cells: Vec<u8> = (0..columns).map(|c| pattern[c % pattern.len()]).collect();
            let mut runs: Vec<serde_json::Value> = Vec::new();
            let mut k = 0;
            while k < cells.len() {
                let n = cells[k..].iter().take_while(|c| **c == cells[k]).count();
                runs.push(serde_json::json!({"count": n, "value": cells[k]}));
                k += n;
            }
            let filled = cells.iter().filter(|c| **c != 0).count();
            let messages: Vec<String> = (0..filled).map(|m| format!("m{m}")).collect();
            tests.push(serde_json::json!({"name": format!("t{i}"), "statuses": runs, "messages": messages}));
            want.push(cells);
        }
        let doc = serde_json::json!({
            "changelists": (0..columns).map(|c| c.to_string()).collect::<Vec<_>>(),
            "timestamps": (0..columns).map(|c| c as u64 * 1000).collect::<Vec<_>>(),
            "tests": tests,
        });
        let t = citriage_formats::testgrid::parse_table(doc.to_string().as_bytes(), "p", &citriage_formats::testgrid::TableLimits::default()).unwrap();
        for (row, cells) in t.rows.iter().zip(&want) {
            let got: Vec<u8> = row.cells.iter().map(|c| c.number()).collect();
            prop_assert_eq!(&got, cells);
            // Each message sits on its column with a result, in order.
            let cols: Vec<u32> = cells.iter().enumerate().filter(|(_, c)| **c != 0).map(|(i, _)| i as u32).collect();
            prop_assert_eq!(row.messages.iter().map(|(c, _)| *c).collect::<Vec<_>>(), cols);
        }
    }

    #[test]
    fn snapshots_round_trip(jobs in proptest::collection::btree_map("[a-z0-9_.-]{1,20}", any::<u32>(), 1..20)) {
        let doc: serde_json::Map<String, serde_json::Value> =
            jobs.iter().map(|(j, d)| (j.clone(), serde_json::json!({"failing_days": d}))).collect();
        let first = parse_snapshot(serde_json::Value::Object(doc).to_string().as_bytes(), "s", None).unwrap();
        let again: serde_json::Map<String, serde_json::Value> = first
            .jobs
            .iter()
            .map(|e| (e.job.clone(), serde_json::json!({"failing_days": e.stats.failing_days().unwrap()})))
            .collect();
        let second = parse_snapshot(serde_json::Value::Object(again).to_string().as_bytes(), "s", None).unwrap();
        prop_assert_eq!(&first, &second);
        let read: Vec<(String, u32)> = first.jobs.iter().map(|e| (e.job.clone(), e.stats.failing_days().unwrap())).collect();
        prop_assert_eq!(read, jobs.into_iter().collect::<Vec<_>>());
    }

    #[test]
    fn integers_are_exact_or_refused_as_written(t in any::<i64>(), u in any::<u64>(), digits in "[1-9][0-9]{20,40}") {
        let f = parse_finished(format!(r#"{{"timestamp": {t}, "passed": true}}"#).as_bytes(), "f").unwrap();
        prop_assert_eq!(f.timestamp, Some(t));
        let s = parse_snapshot(format!(r#"{{"a": {{"consistency": 0.5, "flakes": {u}}}}}"#).as_bytes(), "s", None).unwrap();
        prop_assert_eq!(s.jobs[0].stats.flake().unwrap().flakes, u);
        let e = parse_snapshot(format!(r#"{{"a": {{"failing_days": {digits}}}}}"#).as_bytes(), "s.json", None)
            .unwrap_err()
            .to_string();
        let expected = format!("the number {digits} is too large");
        prop_assert!(e.contains(&expected), "{}", e);
        let f = parse_finished(format!(r#"{{"timestamp": {digits}, "passed": false}}"#).as_bytes(), "f.json").unwrap();
        prop_assert_eq!(f.timestamp, None);
        prop_assert_eq!(f.result.as_deref(), Some("FAILURE"));
        prop_assert!(f.problems[0].contains(&expected), "{:?}", f.problems);
    }

    #[test]
    fn junit_round_trips(cases in proptest::collection::vec(("[a-zA-Z0-9 _.:/\\[\\]-]{1,30}", any::<bool>(), xml_text()), 1..12)) {
        let write = |cases: &[(String, bool, String)]| {
            let mut x = String::from("<?xml version=\"1.0\"?>\n<testsuite name=\"s\">\n");
            for (name, failed, text) in cases {
                if *failed {
                    x.push_str(&format!("<testcase name=\"{}\"><failure>{}</failure></testcase>\n", xml_escape(name), xml_escape(text)));
                } else {
                    x.push_str(&format!("<testcase name=\"{}\"/>\n", xml_escape(name)));
                }
            }
            x.push_str("</testsuite>\n");
            x
        };
        let first = read_junit(write(&cases).as_bytes(), "j");
        prop_assert_eq!(first.problem.as_deref(), None);
        let back: Vec<(String, bool, String)> = first
            .cases
            .iter()
            .map(|c| (c.name.clone(), c.status == Status::Failed, c.failure_text.clone().unwrap_or_default()))
            .collect();
        let second = read_junit(write(&back).as_bytes(), "j");
        // The same cases (their lines move when a text loses its edge newlines).
        let key = |f: &citriage_formats::junit::JunitFile| -> Vec<(String, Status, Option<String>, Option<String>)> {
            f.cases.iter().map(|c| (c.name.clone(), c.status, c.failure_text.clone(), c.kettle_name.clone())).collect()
        };
        prop_assert_eq!(key(&first), key(&second));
        for ((name, failed, text), c) in cases.iter().zip(&first.cases) {
            prop_assert_eq!(&c.name, name);
            prop_assert_eq!(c.status == Status::Failed, *failed);
            if *failed {
                // The body as the reader keeps it: edge newlines dropped, blank as none.
                let body = if text.trim().is_empty() { "" } else { text.trim_matches('\n') };
                prop_assert_eq!(c.failure_text.as_deref().unwrap_or_default(), body);
            }
        }
    }
}
