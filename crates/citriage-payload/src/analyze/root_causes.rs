//! Stage 4: root causes. Failure modes sharing a signature are one root cause,
//! classified by the majority of its modes; a failure that names a component
//! whose own failure in the same jobs is infrastructure is its consequence; the
//! same signatures in failed informing / async jobs (and on retried blocking
//! jobs) are the broader context.

use std::collections::{BTreeMap, BTreeSet};
use std::sync::OnceLock;

use citriage_model::time;
use regex::Regex;

use super::failure_modes::{platform_of, FailureModes};
use super::onset;
use super::reader::RunReader;
use crate::classify::{Classification, FailureClass, ModeFacts};
use crate::components;
use crate::evidence::LogLine;
use crate::history::Chain;
use crate::release::{JobState, ReleaseInfo};
use crate::result::{Attempt, InformingFailure, RetriedJob, RootCause, Symptom, SystemicHit};
use citriage_suspects::failure::ComponentRef;

/// A failure mode: its job and its index among the job's modes.
pub(crate) type ModeKey = (String, usize);

/// The root causes and how the modes map to them.
pub(crate) struct RootCauses {
    /// `RC1`, `RC2`... by number of modes, then signature text.
    pub list: Vec<RootCause>,
    /// Each root cause's modes, by id.
    pub members: BTreeMap<String, Vec<ModeKey>>,
    /// Mode → its root cause's id.
    pub of_mode: BTreeMap<ModeKey, String>,
    /// Mode → its classification (the root cause's).
    pub mode_class: BTreeMap<ModeKey, Classification>,
}

/// A signature's modes with their classes.
struct SignatureGroup {
    members: Vec<ModeKey>,
    class: Classification,
    mode_classes: Vec<(ModeKey, Classification)>,
}

/// Groups the modes by signature, classifies each group, then makes one root
/// cause of the groups that share a cause: the same jobs, the same onset, the
/// same class and the same message shape (many tests of an area failing the
/// same way since the same payload are one cause with many symptoms).
pub(crate) fn group(reader: &RunReader, chain: &Chain, failures: &FailureModes) -> RootCauses {
    let classified: Vec<SignatureGroup> = signature_groups(failures)
        .into_iter()
        .map(|(signature, members)| {
            let (class, mode_classes) = classify_group(reader, chain, failures, &signature, &members);
            SignatureGroup { members, class, mode_classes }
        })
        .collect();
    let mut roots = RootCauses {
        list: Vec::new(),
        members: BTreeMap::new(),
        of_mode: BTreeMap::new(),
        mode_class: BTreeMap::new(),
    };
    for (n, groups) in merge_by_cause(failures, classified).into_iter().enumerate() {
        let id = format!("RC{}", n + 1);
        let members: Vec<ModeKey> = groups.iter().flat_map(|g| g.members.iter().cloned()).collect();
        for (key, class) in groups.iter().flat_map(|g| g.mode_classes.iter()) {
            roots.of_mode.insert(key.clone(), id.clone());
            roots.mode_class.insert(key.clone(), class.clone());
        }
        let mut root = root_cause(failures, &id, groups[0].class.clone(), &members);
        if groups.len() > 1 {
            root.symptoms = groups.iter().map(|g| symptom(failures, &g.members)).collect();
        }
        roots.list.push(root);
        roots.members.insert(id, members);
    }
    mark_consequences(failures, &mut roots);
    if roots.list.len() > failures.failed_jobs.len() {
        mark_apart(failures, &mut roots);
    }
    roots
}

/// The text of each root cause (its modes' lines and tests, bounded): the
/// failures of the window, whose shared words are about none of them.
pub(crate) fn texts(failures: &FailureModes, roots: &RootCauses) -> Vec<String> {
    roots
        .list
        .iter()
        .map(|r| {
            let members = roots.members.get(&r.id).map(Vec::as_slice).unwrap_or(&[]);
            let mut text = String::new();
            for (j, i) in members.iter().take(40) {
                let d = &failures.mode(j, *i).draft;
                for l in d.lines.iter().take(12) {
                    text.push_str(&l.text);
                    text.push('\n');
                }
                for t in d.tests.iter().take(12) {
                    text.push_str(t);
                    text.push('\n');
                }
            }
            text
        })
        .collect()
}

/// The modes grouped by signature: most modes first, then by signature text and id.
fn signature_groups(failures: &FailureModes) -> Vec<(String, Vec<ModeKey>)> {
    let mut by_signature: BTreeMap<String, Vec<ModeKey>> = BTreeMap::new();
    for (job, modes) in &failures.modes_by_job {
        for (i, m) in modes.iter().enumerate() {
            by_signature.entry(m.draft.sig.id.clone()).or_default().push((job.clone(), i));
        }
    }
    let mut groups: Vec<(String, Vec<ModeKey>)> = by_signature.into_iter().collect();
    groups.sort_by(|a, b| {
        let text_a = &failures.mode(&a.1[0].0, a.1[0].1).draft.sig.text;
        let text_b = &failures.mode(&b.1[0].0, b.1[0].1).draft.sig.text;
        b.1.len().cmp(&a.1.len()).then(text_a.cmp(text_b)).then(a.0.cmp(&b.0))
    });
    groups
}

/// What makes signature groups one cause: their class, their jobs, their onset
/// and the shape of their message.
fn cause_key(failures: &FailureModes, g: &SignatureGroup) -> (String, Vec<String>, String, String) {
    let mut jobs: Vec<String> = g.members.iter().map(|(j, _)| j.clone()).collect();
    jobs.sort();
    jobs.dedup();
    let onset = g
        .members
        .iter()
        .map(|(j, i)| failures.mode(j, *i).onset.first.clone())
        .min_by_key(|t| (time::tag_timestamp(t), t.clone()))
        .unwrap_or_default();
    let draft = &failures.mode(&g.members[0].0, g.members[0].1).draft;
    (g.class.class.key().to_string(), jobs, onset, message_shape(&draft.summary, &draft.tests))
}

/// A failure line's shape: without the tests it names, its quoted strings and
/// every token that names one object (a number, a path, a `kind/name`, a
/// hyphenated or dotted name, a camel-case identifier) masked, spaces collapsed:
/// "annotation missing from pod 'dns-default-4s6sl' (owners: daemonset/dns-default)"
/// and the same line of another pod have one shape.
pub(crate) fn message_shape(line: &str, tests: &[String]) -> String {
    static QUOTED: OnceLock<Regex> = OnceLock::new();
    let quoted = QUOTED.get_or_init(|| Regex::new(r#""[^"]*"|'[^']*'|`[^`]*`"#).expect("built-in pattern"));
    let mut text = line.to_string();
    for t in tests.iter().filter(|t| !t.is_empty()) {
        text = text.replace(t.as_str(), " ");
    }
    let text = quoted.replace_all(&text, " … ");
    let names_one = |w: &str| {
        let b = w.as_bytes();
        w.chars().any(|c| c.is_ascii_digit() || "-_./:=@{}".contains(c))
            || b.windows(2).any(|p| p[0].is_ascii_lowercase() && p[1].is_ascii_uppercase())
    };
    text.split_whitespace().map(|w| if names_one(w) { "…" } else { w }).collect::<Vec<_>>().join(" ")
}

/// Merges the signature groups that share a cause, in order: most modes first,
/// then the order of their first group.
fn merge_by_cause(failures: &FailureModes, groups: Vec<SignatureGroup>) -> Vec<Vec<SignatureGroup>> {
    let keys: Vec<_> = groups.iter().map(|g| cause_key(failures, g)).collect();
    let mut causes: Vec<(usize, Vec<SignatureGroup>)> = Vec::new();
    let mut cause_of: BTreeMap<&(String, Vec<String>, String, String), usize> = BTreeMap::new();
    for (position, (g, key)) in groups.into_iter().zip(&keys).enumerate() {
        // Groups without evidence say nothing of their cause: each stays alone.
        let alone = g.class.class == FailureClass::Unknown;
        match cause_of.get(key).filter(|_| !alone) {
            Some(&c) => causes[c].1.push(g),
            None => {
                if !alone {
                    cause_of.insert(key, causes.len());
                }
                causes.push((position, vec![g]));
            }
        }
    }
    causes.sort_by_key(|(position, gs)| {
        (std::cmp::Reverse(gs.iter().map(|g| g.members.len()).sum::<usize>()), *position)
    });
    causes.into_iter().map(|(_, gs)| gs).collect()
}

/// One symptom of a root cause that groups several signatures.
fn symptom(failures: &FailureModes, members: &[ModeKey]) -> Symptom {
    let draft = &failures.mode(&members[0].0, members[0].1).draft;
    let mut jobs: Vec<String> = members.iter().map(|(j, _)| j.clone()).collect();
    jobs.dedup();
    let mut tests: Vec<String> = members.iter().flat_map(|(j, i)| failures.mode(j, *i).draft.tests.clone()).collect();
    tests.sort();
    tests.dedup();
    Symptom { signature: draft.sig.clone(), line: draft.summary.clone(), tests, jobs }
}

/// Classifies each mode of a group, then the group by majority (ties by
/// precedence: infrastructure first); the modes take the group's class.
fn classify_group(
    reader: &RunReader,
    chain: &Chain,
    failures: &FailureModes,
    signature: &str,
    members: &[ModeKey],
) -> (Classification, Vec<(ModeKey, Classification)>) {
    let mut classes: Vec<Classification> = Vec::new();
    for (job, i) in members {
        let mode = failures.mode(job, *i);
        let draft = &mode.draft;
        let flake =
            if draft.no_evidence { None } else { onset::flake_scan(reader, chain, job, signature, &mode.onset.first) };
        let facts = ModeFacts {
            lines: &draft.lines,
            has_gating_tests: draft.has_gating_tests,
            in_ci_step: draft.in_ci_step,
            informing_only: draft.informing_only,
            no_evidence: draft.no_evidence,
            flake_evidence: flake,
            hint: draft.hint.as_ref(),
            run_level: draft.run_level.clone(),
            test_binary: draft.test_binary,
            product_error: draft.product_error,
        };
        classes.push(reader.classifier.classify(&facts));
    }
    let mut counts: BTreeMap<(usize, std::cmp::Reverse<u8>), Classification> = BTreeMap::new();
    for c in &classes {
        let k = classes.iter().filter(|x| x.class == c.class).count();
        counts.entry((k, std::cmp::Reverse(class_rank(c.class)))).or_insert_with(|| c.clone());
    }
    let class = counts.into_iter().next_back().map(|(_, c)| c).unwrap_or_else(|| classes[0].clone());
    let per_mode = members
        .iter()
        .zip(classes)
        .map(|(key, c)| (key.clone(), if c.class != class.class { class.clone() } else { c }))
        .collect();
    (class, per_mode)
}

/// Precedence of classes when a root cause's modes are split evenly.
fn class_rank(c: FailureClass) -> u8 {
    match c {
        FailureClass::Infrastructure => 0,
        FailureClass::CiConfiguration => 1,
        FailureClass::ProductRegression => 2,
        FailureClass::Flake => 3,
        FailureClass::InformingOnly => 4,
        FailureClass::Unknown => 5,
    }
}

/// The root cause of a group of modes.
fn root_cause(failures: &FailureModes, id: &str, class: Classification, members: &[ModeKey]) -> RootCause {
    let mode = |key: &ModeKey| failures.mode(&key.0, key.1);
    let first = members
        .iter()
        .map(|k| mode(k).onset.first.clone())
        .min_by_key(|t| (time::tag_timestamp(t), t.clone()))
        .unwrap_or_default();
    let representative = &mode(&members[0]).draft;
    let mut jobs: Vec<String> = members.iter().map(|(j, _)| j.clone()).collect();
    jobs.sort();
    jobs.dedup();
    let mut evidence: Vec<(String, LogLine)> = Vec::new();
    for k in members {
        if !evidence.iter().any(|(j, _)| *j == k.0) {
            evidence.extend(mode(k).draft.lines.first().map(|l| (k.0.clone(), l.clone())));
        }
    }
    let platforms: BTreeSet<String> =
        jobs.iter().filter_map(|j| failures.job(j).and_then(|f| f.platform.clone())).collect();
    let all_lines: Vec<LogLine> = members.iter().flat_map(|k| mode(k).draft.lines.clone()).collect();
    let look_at = ci_look_at(failures, members, class.class);
    RootCause {
        id: id.to_string(),
        signature: representative.sig.clone(),
        title: representative.summary.clone(),
        class,
        jobs,
        evidence,
        first_failed_in: first,
        platforms: platforms.into_iter().collect(),
        systemic: Vec::new(),
        is_systemic: false,
        kubelet_skew: kubelet_skew(&all_lines),
        no_candidate_reason: None,
        ci_look_at: look_at,
        symptoms: Vec::new(),
        apart: None,
        ties: Vec::new(),
    }
}

/// The CI-configuration paths to look at for a root cause's CI-step failures.
fn ci_look_at(failures: &FailureModes, members: &[ModeKey], class: FailureClass) -> Vec<String> {
    let mut look_at: Vec<String> = Vec::new();
    let mut add = |p: String| {
        if !look_at.contains(&p) {
            look_at.push(p);
        }
    };
    for (job, i) in members {
        let draft = &failures.mode(job, *i).draft;
        if !(draft.in_ci_step || class == FailureClass::CiConfiguration) {
            continue;
        }
        for r in &draft.step_refs {
            add(format!("ci-operator/step-registry/**/{r}-ref.yaml and {r}-commands.sh"));
        }
        for p in &draft.ci_paths {
            add(p.clone());
        }
        if draft.step_refs.is_empty() {
            if let Some(step) = &draft.failed_step {
                add(format!("ci-operator/step-registry/**/*-commands.sh run by step {step}"));
            }
        }
    }
    look_at
}

fn kubelet_skew(lines: &[LogLine]) -> bool {
    let re = Regex::new(r"(?i)(kubelet.*version skew|version skew.*kubelet|kubelet version .* (older|behind|does not match)|skew.*kubelet)").unwrap();
    lines.iter().any(|l| re.is_match(&l.text))
}

/// The components a root cause's modes name.
fn components_of(failures: &FailureModes, members: &[ModeKey]) -> Vec<ComponentRef> {
    let mut out = Vec::new();
    for (job, i) in members {
        let draft = &failures.mode(job, *i).draft;
        let texts: Vec<String> = draft.lines.iter().map(|l| l.text.clone()).collect();
        out.extend(components::failure_components(&draft.tests, &texts, &draft.binaries, draft.test_binary));
    }
    out
}

/// An infrastructure root cause: its id, whether temporary, its jobs, the components it is about.
struct InfraCause {
    id: String,
    temporary: bool,
    jobs: Vec<String>,
    subjects: BTreeSet<String>,
}

/// A product failure that names a component whose own failure in the same jobs
/// is infrastructure is its consequence (an upgrade that did not complete
/// because clusteroperator/insights stayed unavailable, which an external
/// service caused): it takes the infrastructure class.
fn mark_consequences(failures: &FailureModes, roots: &mut RootCauses) {
    let members = |id: &str| roots.members.get(id).cloned().unwrap_or_default();
    let infra: Vec<InfraCause> = roots
        .list
        .iter()
        .filter(|r| r.class.class == FailureClass::Infrastructure)
        .map(|r| InfraCause {
            id: r.id.clone(),
            temporary: r.class.temporary,
            jobs: r.jobs.clone(),
            subjects: components_of(failures, &members(&r.id))
                .into_iter()
                .filter(|c| c.subject)
                .map(|c| c.key)
                .collect(),
        })
        .collect();
    let mut changed: Vec<(String, Classification)> = Vec::new();
    for r in roots.list.iter().filter(|r| r.class.class == FailureClass::ProductRegression) {
        for named in components_of(failures, &members(&r.id)).iter().filter(|c| !c.subject) {
            let causes: Vec<&InfraCause> = infra.iter().filter(|c| c.subjects.contains(&named.key)).collect();
            let covered = !causes.is_empty() && r.jobs.iter().all(|j| causes.iter().any(|c| c.jobs.contains(j)));
            if covered {
                let ids: Vec<&str> = causes.iter().map(|c| c.id.as_str()).collect();
                changed.push((
                    r.id.clone(),
                    Classification {
                        class: FailureClass::Infrastructure,
                        reason: format!(
                            "a consequence of {}: {}, and {} failed in the same job(s) for an infrastructure reason",
                            ids.join(", "),
                            named.how,
                            named.key
                        ),
                        evidence: r.class.evidence.clone(),
                        temporary: causes.iter().all(|c| c.temporary),
                    },
                ));
                break;
            }
        }
    }
    for (id, class) in changed {
        if let Some(r) = roots.list.iter_mut().find(|r| r.id == id) {
            r.class = class.clone();
        }
        for (key, root) in roots.of_mode.iter() {
            if *root == id {
                roots.mode_class.insert(key.clone(), class.clone());
            }
        }
    }
}

/// When there are more root causes than failed jobs, each says why it stands
/// apart from the root causes of the same jobs: another class, another onset or
/// a message of another shape (and a root cause whose jobs no other has, that).
fn mark_apart(failures: &FailureModes, roots: &mut RootCauses) {
    let shape_of = |id: &str| {
        let members = roots.members.get(id).map(Vec::as_slice).unwrap_or(&[]);
        members
            .first()
            .map(|(j, i)| {
                let d = &failures.mode(j, *i).draft;
                message_shape(&d.summary, &d.tests)
            })
            .unwrap_or_default()
    };
    let facts: Vec<(String, String, Vec<String>, String, String)> = roots
        .list
        .iter()
        .map(|r| {
            (
                r.id.clone(),
                r.class.class.as_str().to_string(),
                r.jobs.clone(),
                r.first_failed_in.clone(),
                shape_of(&r.id),
            )
        })
        .collect();
    for r in roots.list.iter_mut() {
        let me = facts.iter().find(|f| f.0 == r.id).expect("every root cause has facts");
        let alike: Vec<&(String, String, Vec<String>, String, String)> =
            facts.iter().filter(|o| o.0 != me.0 && o.2 == me.2).collect();
        r.apart = Some(if alike.is_empty() {
            format!("no other root cause failed exactly these jobs ({})", me.2.join(", "))
        } else {
            let reasons: Vec<String> = alike
                .iter()
                .take(3)
                .map(|o| {
                    if o.1 != me.1 {
                        format!("{} is {}, this is {}", o.0, o.1, me.1)
                    } else if o.3 != me.3 {
                        format!("{} began in {}, this in {}", o.0, o.3, me.3)
                    } else {
                        format!("{} fails with another message", o.0)
                    }
                })
                .collect();
            let more = if alike.len() > 3 { format!(" (and {} more)", alike.len() - 3) } else { String::new() };
            format!(
                "the same jobs as {} other root cause(s){more}, apart by class, onset or message: {}",
                alike.len(),
                reasons.join("; ")
            )
        });
    }
}

/// The broader context of the root causes.
pub(crate) struct BroaderContext {
    pub informing_failures: Vec<InformingFailure>,
    pub passed_on_retry: Vec<RetriedJob>,
}

/// The same signatures in failed informing / async jobs (read when
/// `systemic_context`), blocking jobs that passed on a retry, and which root
/// causes are systemic.
pub(crate) fn broader_context(
    reader: &RunReader,
    target: &ReleaseInfo,
    roots: &mut [RootCause],
    systemic_context: bool,
) -> BroaderContext {
    let by_signature: BTreeMap<String, String> = roots.iter().map(|r| (r.signature.id.clone(), r.id.clone())).collect();
    let mut informing_failures = Vec::new();
    for (lifecycle, jobs) in [("informing", &target.results.informing), ("async", &target.results.async_jobs)] {
        for (name, result) in jobs.iter().filter(|(_, r)| r.state == JobState::Failed) {
            let modes = if systemic_context { result.url.as_deref().and_then(|u| reader.modes(u, name)) } else { None };
            let hit = modes
                .as_ref()
                .and_then(|ms| ms.iter().find(|m| !m.no_evidence && by_signature.contains_key(&m.sig.id)).cloned());
            let first_signature =
                modes.as_ref().and_then(|m| m.first()).filter(|d| !d.no_evidence).map(|d| d.sig.clone());
            let root = hit.as_ref().map(|m| by_signature[&m.sig.id].clone());
            if let (Some(m), Some(id)) = (&hit, &root) {
                let prow = result.prow_job().unwrap_or_else(|| name.clone());
                if let Some(r) = roots.iter_mut().find(|r| r.id == *id) {
                    r.systemic.push(SystemicHit {
                        job: name.clone(),
                        lifecycle: lifecycle.into(),
                        url: result.url.clone(),
                        platform: platform_of(&prow),
                        line: m.lines.first().cloned(),
                    });
                }
            }
            informing_failures.push(InformingFailure {
                name: name.clone(),
                lifecycle: lifecycle.into(),
                url: result.url.clone(),
                signature: hit.map(|m| m.sig).or(first_signature),
                root_cause: root,
            });
        }
    }
    let passed_on_retry = retried_jobs(reader, target, &by_signature);
    for r in roots.iter_mut() {
        let mut platforms: BTreeSet<String> = r.platforms.iter().cloned().collect();
        platforms.extend(r.systemic.iter().filter_map(|h| h.platform.clone()));
        r.is_systemic = r.class.class != FailureClass::Unknown && (!r.systemic.is_empty() || platforms.len() >= 2);
    }
    BroaderContext { informing_failures, passed_on_retry }
}

/// Blocking jobs that passed only on a retry, with their failed attempts' signatures.
fn retried_jobs(reader: &RunReader, target: &ReleaseInfo, by_signature: &BTreeMap<String, String>) -> Vec<RetriedJob> {
    let mut out = Vec::new();
    for (name, result) in &target.results.blocking {
        if result.state != JobState::Succeeded || result.previous_attempt_urls.is_empty() {
            continue;
        }
        let failed_attempts = result
            .previous_attempt_urls
            .iter()
            .map(|url| {
                let signature = reader
                    .modes(url, name)
                    .and_then(|m| m.into_iter().next())
                    .filter(|d| !d.no_evidence)
                    .map(|d| d.sig);
                let same = signature.as_ref().map(|s| by_signature.contains_key(&s.id));
                Attempt { url: url.clone(), signature, same_failure: same }
            })
            .collect();
        out.push(RetriedJob { name: name.clone(), url: result.url.clone(), retries: result.retries, failed_attempts });
    }
    out
}
