//! End-to-end behaviour of the index: building, deduplication, posting lists against a
//! brute-force count, searches against a brute-force scan, edge cases and budgets.

use citriage_search::{plan_pattern, trigrams_of, IndexBuilder, Query, SearchBudget, TextId, TextIndex, Trigram};
use regex::Regex;
use std::collections::{BTreeMap, BTreeSet};
use std::ops::ControlFlow;
use std::time::{Duration, Instant};

fn index(texts: &[&str]) -> TextIndex {
    let mut b = IndexBuilder::new();
    for t in texts {
        b.add(t);
    }
    b.finish()
}

/// (id, match start, match end) of every match, via the index.
fn indexed(ix: &TextIndex, pattern: &str) -> (Vec<(u32, usize, usize)>, citriage_search::SearchStats) {
    let re = Regex::new(pattern).unwrap();
    let mut out = Vec::new();
    let stats = ix.search(&re, SearchBudget::unlimited(), |id, _, m| {
        out.push((id.as_u32(), m.start(), m.end()));
        ControlFlow::Continue(())
    });
    (out, stats)
}

/// The same, by running the regex over every text.
fn scanned(ix: &TextIndex, pattern: &str) -> Vec<(u32, usize, usize)> {
    let re = Regex::new(pattern).unwrap();
    let mut out = Vec::new();
    ix.for_each_text(|id, t| out.extend(re.find(t).map(|m| (id.as_u32(), m.start(), m.end()))));
    out
}

fn assert_same(ix: &TextIndex, pattern: &str) -> citriage_search::SearchStats {
    let (got, stats) = indexed(ix, pattern);
    assert_eq!(got, scanned(ix, pattern), "pattern {pattern:?}, plan {}", plan_pattern(pattern));
    assert_eq!(stats.matched, got.len());
    assert!(!stats.stopped_early);
    assert_eq!(stats.verified, stats.candidates);
    stats
}

/// A deterministic corpus of `n` varied texts (xorshift, fixed seed).
fn corpus(n: usize, seed: u64) -> Vec<String> {
    let mut x = seed;
    let mut next = move || {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        x
    };
    let words = [
        "dial",
        "tcp",
        "10.0.0.1:6443",
        "i/o",
        "timeout",
        "Connection",
        "refused",
        "pod",
        "pods",
        "\"web-1\"",
        "not",
        "found",
        "context",
        "deadline",
        "exceeded",
        "Größe",
        "ÉTÉ",
        "\u{212A}elvin",
        "ſtop",
        "\n",
        "\t",
        "x",
    ];
    (0..n)
        .map(|_| {
            let len = (next() % 60) as usize;
            let mut s = String::new();
            for _ in 0..len {
                s.push_str(words[(next() % words.len() as u64) as usize]);
                s.push(if next() % 3 == 0 { ':' } else { ' ' });
            }
            s
        })
        .collect()
}

#[test]
fn duplicates_are_stored_once_and_found_once() {
    let mut b = IndexBuilder::new();
    let a = b.add("dial tcp: i/o timeout");
    let c = b.add("connection refused");
    assert_eq!(b.add("dial tcp: i/o timeout"), a);
    let ix = b.finish();
    assert_eq!(ix.len(), 2);
    assert_eq!(ix.get(a).as_deref(), Some("dial tcp: i/o timeout"));
    assert_eq!(ix.get(c).as_deref(), Some("connection refused"));
    assert_eq!(ix.get(TextId::from_u32(2)), None);
    // Debug output gives sizes, not the (possibly huge) texts.
    let debug = format!("{ix:?}");
    assert!(debug.contains("texts: 2") && !debug.contains("timeout"), "{debug}");
    let (got, stats) = indexed(&ix, "i/o timeout");
    assert_eq!(got, vec![(0, 10, 21)]);
    assert!(stats.used_index);
    assert_eq!(stats.candidates, 1);
}

#[test]
fn posting_lists_equal_a_brute_force_count() {
    // A varied corpus of over a megabyte (ids whose deltas take several bytes), then
    // texts with a trigram repeated within them, mixed case, fewer than three bytes and
    // bytes above ASCII.
    let mut texts = corpus(6000, 0x5eed);
    let total: usize = texts.iter().map(String::len).sum();
    assert!(total > 1 << 20, "corpus too small: {total} bytes");
    for t in ["aaaaaa", "AbCabc", "", "ab", "dial TCP: i/o timeout; dial tcp: i/o timeout", "naïve Ünïcode ✓ abc"]
    {
        texts.push(t.to_string());
    }
    let mut expected: BTreeMap<Trigram, BTreeSet<u32>> = BTreeMap::new();
    let mut distinct = BTreeMap::new();
    for t in &texts {
        let next = distinct.len() as u32;
        let id = *distinct.entry(t.clone()).or_insert(next);
        for tri in trigrams_of(t.as_bytes()) {
            expected.entry(tri).or_default().insert(id);
        }
    }
    let build = || {
        let mut b = IndexBuilder::new();
        for t in &texts {
            b.add(t);
        }
        b.finish()
    };
    let ix = build();
    assert_eq!(ix.len(), distinct.len());
    assert_eq!(ix.trigram_count(), expected.len());
    let mut postings = 0u64;
    for (tri, ids) in &expected {
        let got: Vec<u32> = ix.postings(*tri).map(TextId::as_u32).collect();
        let want: Vec<u32> = ids.iter().copied().collect();
        assert_eq!(got, want, "trigram {:?}", String::from_utf8_lossy(tri));
        assert_eq!(ix.trigram_frequency(*tri) as usize, want.len());
        postings += want.len() as u64;
    }
    assert_eq!(ix.posting_count(), postings);
    // Upper case finds the same list; a text's repeats are one posting.
    assert_eq!(ix.postings(*b"TCP").count(), expected[b"tcp"].len());
    assert_eq!(ix.postings(*b"aaa").count(), expected[b"aaa"].len());
    assert!(ix.heap_bytes() >= ix.packed_text_bytes() + ix.posting_bytes());
    // The texts are held compressed: this corpus repeats its phrases.
    assert!(ix.packed_text_bytes() * 2 < ix.text_bytes(), "{} of {}", ix.packed_text_bytes(), ix.text_bytes());
    // The same texts in the same order give the same lists.
    let again = build();
    for tri in expected.keys() {
        assert!(ix.postings(*tri).eq(again.postings(*tri)), "trigram {:?}", String::from_utf8_lossy(tri));
    }
}

#[test]
fn searches_equal_a_scan_on_a_varied_corpus() {
    let texts = corpus(3000, 42);
    let refs: Vec<&str> = texts.iter().map(String::as_str).collect();
    let ix = index(&refs);
    for p in [
        "i/o timeout",
        "(?i)connection refused",
        "context deadline exceeded",
        r#"pods? ".*" not found"#,
        r"\d+\.\d+\.\d+\.\d+:6443",
        ".",
        "(?i)KELVIN",
        "(?i)stop",
        "(?i)grösse|(?i)größe",
        "(?i)été",
        r"dial\s+tcp",
        "timeout$",
        "^dial",
        "(?m)^x",
        "refused(?: x)+",
        "(?:found|deadline){2}",
        "nomatchanywhere",
    ] {
        let stats = assert_same(&ix, p);
        if plan_pattern(p) != Query::All {
            assert!(stats.used_index, "{p}");
            assert!(stats.candidates <= ix.len());
        }
    }
    // A literal that is present narrows the candidates.
    let (_, stats) = indexed(&ix, "context deadline exceeded");
    assert!(stats.used_index && stats.candidates < ix.len() && stats.matched > 0, "{stats:?}");
}

#[test]
fn repetitions_and_alternations_inside_concatenations_equal_a_scan() {
    let ix = index(&[
        "abcd",
        "abccccd",
        "abd",
        "xabcabcy",
        "xabcy",
        "aXd",
        "foo1bar",
        "foobar",
        "fooXbar",
        "pods \"a\" not found",
        "pod \"b\" not found",
        "po \"c\" not found",
        "ſtop",
        "STOP",
        "abcabcabcabc",
    ]);
    for p in [
        "ab(?:c)+d",
        "ab(?:c)*d",
        "ab(?:c){2,}d",
        "x(?:abc){1,2}y",
        "x(?:abc)+y",
        "foo(?:1|X)?bar",
        "foo(?:1|X|)bar",
        "a(?:b|X)(?:c|d)",
        r#"pods? ".*" not found"#,
        "(?i)(?:s|x)top",
        "(?:abc){3}",
        "(?:abc){3,}",
        "(?:abc){4}",
        "(?:ab|abc)+d",
        "((a)(b))(c)+",
    ] {
        assert_same(&ix, p);
    }
    assert_eq!(assert_same(&ix, "ab(?:c)+d").matched, 2);
    assert_eq!(assert_same(&ix, "(?i)(?:s|x)top").matched, 2);
}

#[test]
fn empty_index() {
    let ix = IndexBuilder::new().finish();
    assert!(ix.is_empty());
    assert_eq!(ix.trigram_count(), 0);
    for p in ["abc", "", "."] {
        let (got, stats) = indexed(&ix, p);
        assert!(got.is_empty());
        assert_eq!((stats.candidates, stats.verified, stats.matched, stats.stopped_early), (0, 0, 0, false));
    }
}

#[test]
fn empty_pattern_matches_every_text_by_scan() {
    let ix = index(&["", "a", "abcdef"]);
    let (got, stats) = indexed(&ix, "");
    assert_eq!(got, vec![(0, 0, 0), (1, 0, 0), (2, 0, 0)]);
    assert!(!stats.used_index);
    assert_eq!(stats.candidates, 3);
}

#[test]
fn texts_shorter_than_three_bytes() {
    let ix = index(&["", "a", "ab", "AB", "abc"]);
    assert_eq!(ix.trigram_count(), 1);
    assert_eq!(assert_same(&ix, "ab").matched, 2);
    assert_eq!(assert_same(&ix, "(?i)ab").matched, 3);
    assert_eq!(assert_same(&ix, "abc").matched, 1);
    assert_eq!(assert_same(&ix, "^a$").matched, 1);
}

#[test]
fn non_ascii_text_and_unicode_case_folding() {
    let ix = index(&[
        "Größe überschritten",
        "GRÖSSE",
        "\u{212A}ELVIN timeout",
        "kelvin",
        "ÉTÉ",
        "été",
        "naïve café ☕ 日本語",
        "mi\u{17F}\u{17F}ing",
    ]);
    assert_eq!(assert_same(&ix, "(?i)kelvin").matched, 2);
    assert_eq!(assert_same(&ix, "(?i)été").matched, 2);
    assert_eq!(assert_same(&ix, "été").matched, 1);
    assert_eq!(assert_same(&ix, "(?i)größe").matched, 1);
    assert_eq!(assert_same(&ix, "(?i)missing").matched, 1);
    assert_eq!(assert_same(&ix, "日本").matched, 1);
    assert_eq!(assert_same(&ix, "☕ 日").matched, 1);
    assert_eq!(assert_same(&ix, "caf.").matched, 1);
}

#[test]
fn very_long_texts() {
    let mut long = "x".repeat(5 << 20);
    long.push_str(" needle in the haystack");
    let mut long2 = String::from("Start: ");
    for i in 0..200_000 {
        long2.push_str(&format!("line {i} ok\n"));
    }
    let ix = index(&[&long, "short needle", &long2]);
    let (got, stats) = indexed(&ix, "needle in the");
    assert_eq!(got, vec![(0, (5 << 20) + 1, (5 << 20) + 14)]);
    assert!(stats.used_index);
    assert_eq!(stats.candidates, 1);
    assert_same(&ix, "line 199999 ok");
    assert_same(&ix, "needle");
    assert_same(&ix, "(?i)START");
}

#[test]
fn matches_are_visited_in_ascending_id_order_with_their_text() {
    let ix = index(&["zzz timeout", "aaa", "timeout first", "timeout again"]);
    let re = Regex::new("timeout").unwrap();
    let mut seen = Vec::new();
    ix.search(&re, SearchBudget::unlimited(), |id, text, m| {
        assert_eq!(&text[m.range()], "timeout");
        assert_eq!(ix.get(id).as_deref(), Some(text));
        seen.push(id.as_u32());
        ControlFlow::Continue(())
    });
    assert_eq!(seen, vec![0, 2, 3]);
}

#[test]
fn budget_max_candidates_stops_deterministically() {
    let texts: Vec<String> = (0..100).map(|i| format!("error {i}: i/o timeout")).collect();
    let refs: Vec<&str> = texts.iter().map(String::as_str).collect();
    let ix = index(&refs);
    let re = Regex::new("i/o timeout").unwrap();
    let mut ids = Vec::new();
    let stats = ix.search(&re, SearchBudget::max_candidates(10), |id, _, _| {
        ids.push(id.as_u32());
        ControlFlow::Continue(())
    });
    assert_eq!(ids, (0..10).collect::<Vec<u32>>());
    assert_eq!((stats.candidates, stats.verified, stats.matched), (10, 10, 10));
    assert!(stats.stopped_early && stats.used_index);
    // A budget as large as the candidates is not stopping early.
    let stats = ix.search(&re, SearchBudget::max_candidates(100), |_, _, _| ControlFlow::Continue(()));
    assert_eq!((stats.candidates, stats.verified, stats.matched, stats.stopped_early), (100, 100, 100, false));
}

#[test]
fn visitor_break_stops_the_search() {
    let ix = index(&["a timeout", "b timeout", "c timeout"]);
    let re = Regex::new("timeout").unwrap();
    let mut n = 0;
    let stats = ix.search(&re, SearchBudget::unlimited(), |_, _, _| {
        n += 1;
        if n == 2 {
            ControlFlow::Break(())
        } else {
            ControlFlow::Continue(())
        }
    });
    assert_eq!((stats.verified, stats.matched, stats.stopped_early), (2, 2, true));
    // Breaking on the last candidate is not stopping early.
    let stats = ix.search(&re, SearchBudget::unlimited(), |id, _, _| {
        if id.as_u32() == 2 {
            ControlFlow::Break(())
        } else {
            ControlFlow::Continue(())
        }
    });
    assert_eq!((stats.matched, stats.stopped_early), (3, false));
}

#[test]
fn a_passed_deadline_verifies_nothing_and_a_distant_one_everything() {
    let ix = index(&["a timeout", "b timeout"]);
    let re = Regex::new("timeout").unwrap();
    let past = Instant::now();
    let stats = ix.search(&re, SearchBudget::unlimited().with_deadline(past), |_, _, _| ControlFlow::Continue(()));
    assert_eq!((stats.candidates, stats.verified, stats.stopped_early), (0, 0, true));
    let later = Instant::now() + Duration::from_secs(3600);
    let stats = ix.search(&re, SearchBudget::unlimited().with_deadline(later), |_, _, _| ControlFlow::Continue(()));
    assert_eq!((stats.verified, stats.matched, stats.stopped_early), (2, 2, false));
}

#[test]
fn candidates_are_a_superset_of_the_matches() {
    let ix = index(&["connection refused", "refused connection", "Connection Refused!", "none"]);
    let plan = plan_pattern("(?i)connection refused");
    let cands: Vec<u32> = ix.candidates(&plan).unwrap().into_iter().map(TextId::as_u32).collect();
    // "refused connection" has every trigram of the two words but not the one across
    // the space, so the plan excludes it.
    assert_eq!(cands, vec![0, 2]);
    assert_eq!(ix.candidates(&Query::All), None);
    assert_eq!(assert_same(&ix, "(?i)connection refused").matched, 2);
}

#[test]
fn the_same_texts_build_the_same_index() {
    let texts = corpus(2000, 7);
    let build = || {
        let mut b = IndexBuilder::new();
        for t in &texts {
            b.add(t);
        }
        b.finish()
    };
    let (a, b) = (build(), build());
    assert_eq!((a.len(), a.trigram_count(), a.posting_count()), (b.len(), b.trigram_count(), b.posting_count()));
    assert_eq!(a.posting_bytes(), b.posting_bytes());
    for p in ["timeout", "(?i)refused", "x"] {
        assert_eq!(indexed(&a, p).0, indexed(&b, p).0);
    }
}
