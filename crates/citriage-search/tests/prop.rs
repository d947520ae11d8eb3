//! Property: for random texts over a small alphabet (ASCII, accented letters and the
//! characters Unicode case folding relates to ASCII ones) and random regexes from a
//! grammar (literals, classes, alternation, repetition, `(?i)`, anchors, `.`), the
//! indexed search returns exactly the matches of a brute-force scan, and every matching
//! text satisfies the plan.

use citriage_search::{plan_pattern, trigrams_of, IndexBuilder, SearchBudget};
use proptest::prelude::*;
use regex::Regex;
use std::collections::BTreeSet;
use std::ops::ControlFlow;

const ALPHABET: &[char] =
    &['a', 'b', 'c', 'A', 'B', 'k', 'K', 's', 'S', ' ', '1', '\n', 'é', 'É', '\u{212A}', '\u{17F}'];

/// Pieces texts are made of, so that multi-character literals occur often.
const PIECES: &[&str] = &["ab", "abc", "bca", "sK", "éa", "ss", "KS", "a b", "\u{212A}bs", "\u{17F}a", "c1", "\n", "É"];

fn piece() -> impl Strategy<Value = String> {
    prop_oneof![
        2 => prop::sample::select(PIECES).prop_map(String::from),
        1 => prop::sample::select(ALPHABET).prop_map(String::from),
    ]
}

fn text() -> impl Strategy<Value = String> {
    prop::collection::vec(piece(), 0..20).prop_map(|v| v.concat())
}

/// A literal leaf: mostly a substring of one of the texts (so searches find something),
/// sometimes random pieces.
fn literal(texts: &[String]) -> BoxedStrategy<String> {
    let mut subs = BTreeSet::new();
    for t in texts {
        let chars: Vec<char> = t.chars().collect();
        for i in 0..chars.len() {
            for n in 1..=6.min(chars.len() - i) {
                subs.insert(chars[i..i + n].iter().collect::<String>());
            }
        }
    }
    let random = prop::collection::vec(piece(), 1..3).prop_map(|v| v.concat());
    let lit = if subs.is_empty() {
        random.boxed()
    } else {
        prop_oneof![3 => prop::sample::select(subs.into_iter().collect::<Vec<_>>()), 1 => random].boxed()
    };
    lit.prop_map(|s| regex::escape(&s)).boxed()
}

fn regex_source(texts: &[String]) -> impl Strategy<Value = String> {
    let leaf = prop_oneof![
        4 => literal(texts),
        1 => prop::sample::select(vec![
            "[ab]", "[^a]", "[a-c]", "[sk]", "[Kk]", "[éa]", ".", r"\d", r"\w", r"\s", r"\S", "^", "$", r"\b", r"\B",
            "(?i:a)", "(?i:s)", "(?i:k)", "(?i:é)", "(?-u:a)", "",
        ])
        .prop_map(String::from),
    ];
    leaf.prop_recursive(3, 16, 3, |inner| {
        prop_oneof![
            3 => prop::collection::vec(inner.clone(), 2..4).prop_map(|v| v.concat()),
            2 => prop::collection::vec(inner.clone(), 2..4).prop_map(|v| format!("(?:{})", v.join("|"))),
            2 => (inner.clone(), prop::sample::select(vec!["*", "+", "?", "{1,3}", "{2}", "{0,2}", "{2,}", "+?"]))
                .prop_map(|(r, op)| format!("(?:{r}){op}")),
            2 => inner.clone().prop_map(|r| format!("(?i:{r})")),
            1 => inner.clone().prop_map(|r| format!("({r})")),
            1 => inner.clone().prop_map(|r| format!("(?s:{r})")),
            1 => inner.prop_map(|r| format!("(?m:{r})")),
        ]
    })
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 2048, ..ProptestConfig::default() })]

    #[test]
    fn indexed_search_equals_a_scan(
        (texts, src) in prop::collection::vec(text(), 0..24).prop_flat_map(|texts| {
            let src = regex_source(&texts);
            (Just(texts), src)
        })
    ) {
        let re = Regex::new(&src).expect("the grammar builds valid regexes");
        let mut b = IndexBuilder::new();
        for t in &texts {
            b.add(t);
        }
        // Duplicates too.
        for t in texts.iter().take(3) {
            b.add(t);
        }
        let ix = b.finish();
        let mut got = Vec::new();
        let stats = ix.search(&re, SearchBudget::unlimited(), |id, _, m| {
            got.push((id.as_u32(), m.start(), m.end()));
            ControlFlow::Continue(())
        });
        let mut want: Vec<(u32, usize, usize)> = Vec::new();
        ix.for_each_text(|id, t| want.extend(re.find(t).map(|m| (id.as_u32(), m.start(), m.end()))));
        let plan = plan_pattern(&src);
        prop_assert_eq!(&got, &want, "pattern {:?}, plan {}", src, plan);
        prop_assert_eq!(stats.matched, want.len());
        prop_assert!(!stats.stopped_early);
        // The plan admits every text that has a match.
        for (id, _, _) in &want {
            let t = ix.get(citriage_search::TextId::from_u32(*id)).unwrap_or_default();
            let set: BTreeSet<[u8; 3]> = trigrams_of(t.as_bytes()).into_iter().collect();
            prop_assert!(plan.eval(&|tri| set.contains(&tri)), "pattern {:?}, plan {}, text {:?}", src, plan, t);
        }
    }
}
