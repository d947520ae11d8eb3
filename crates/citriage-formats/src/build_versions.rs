//! What a build ran with, as its Prow documents say: the container images of the
//! ProwJob's pod spec (`spec.pod_spec.containers[NAME].image`) and their version or
//! image flags (`--*version*=V`, `--*image*=V`), and the version-like entries of
//! `started.json` and `finished.json` (`job-version`, `revision`, `version` at the top
//! level; `metadata.KEY` whose key names a version, image, tag, release or commit, or
//! whose value looks like an image reference or a version number). The tested
//! repositories' own commits (`repo-commit`, `repos`) are left out: they are the
//! window, not what exposed it.
//!
//! Anyone writes these documents, so the reading is bounded: at most [`MAX_FACTS`]
//! entries per document, keys of at most [`MAX_KEY`] bytes, values of at most
//! [`MAX_VALUE`] bytes, and an entry with a control character is refused; each refusal
//! is a problem naming the document and the key.

use serde_json::{Map, Value};

/// At most this many entries are read from one document.
pub const MAX_FACTS: usize = 32;
/// Longer keys are refused.
pub const MAX_KEY: usize = 128;
/// Longer values are refused.
pub const MAX_VALUE: usize = 512;

/// The version-like entries of a document: `(key, value)` in the document's order, and
/// the problems met (each naming `what` and the key).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Versions {
    pub facts: Vec<(String, String)>,
    pub problems: Vec<String>,
}

impl Versions {
    fn offer(&mut self, what: &str, key: String, value: &str) {
        if self.facts.iter().any(|(k, _)| *k == key) {
            return;
        }
        if self.facts.len() >= MAX_FACTS {
            if self.facts.len() == MAX_FACTS {
                self.problems
                    .push(format!("{what}: more than {MAX_FACTS} version entries; {key:?} and the rest ignored"));
                // One problem is enough: a marker past the cap stops the next ones.
                self.facts.push((String::new(), String::new()));
            }
            return;
        }
        let value = value.trim();
        if value.is_empty() {
            return;
        }
        if key.len() > MAX_KEY || key.chars().any(char::is_control) {
            let shown: String = key.chars().take(40).filter(|c| !c.is_control()).collect();
            self.problems.push(format!(
                "{what}: key {shown:?}…: longer than {MAX_KEY} bytes or with a control character; ignored"
            ));
            return;
        }
        if value.len() > MAX_VALUE {
            self.problems.push(format!("{what}: field {key:?}: longer than {MAX_VALUE} bytes; ignored"));
            return;
        }
        if value.chars().any(char::is_control) {
            self.problems.push(format!("{what}: field {key:?}: a control character in the value; ignored"));
            return;
        }
        self.facts.push((key, value.to_string()));
    }

    fn done(mut self) -> Versions {
        self.facts.retain(|(k, _)| !k.is_empty());
        self
    }
}

/// Whether a `metadata` key names what a build runs with.
fn versionish_key(key: &str) -> bool {
    let k = key.to_ascii_lowercase();
    if matches!(k.as_str(), "repo-commit" | "repo_commit" | "repos" | "repo" | "repo-version" | "repo_version") {
        return false;
    }
    ["version", "image", "tag", "release", "commit", "revision", "digest"].iter().any(|w| k.contains(w))
}

/// Whether a value looks like an image reference (`host/path:tag`, `name@sha256:…`) or a
/// version number (`v1.2`, `1.2.3-rc.1`).
pub fn versionish_value(v: &str) -> bool {
    if v.contains(char::is_whitespace) {
        return false;
    }
    if v.contains("@sha256:") {
        return true;
    }
    if let Some((name, tag)) = v.rsplit_once(':') {
        if name.contains('/') && !tag.is_empty() && !tag.contains('/') && !name.contains("://") {
            return true;
        }
    }
    let v = v.strip_prefix('v').unwrap_or(v);
    let mut parts = v.splitn(3, '.');
    let num = |p: Option<&str>| p.is_some_and(|p| !p.is_empty() && p.bytes().all(|b| b.is_ascii_digit()));
    num(parts.next()) && parts.next().is_some_and(|p| p.bytes().next().is_some_and(|b| b.is_ascii_digit()))
}

fn text(v: &Value) -> Option<String> {
    match v {
        Value::String(s) => Some(s.clone()),
        Value::Number(n) => Some(n.to_string()),
        _ => None,
    }
}

/// The version-like entries of a `started.json` or `finished.json` object.
pub fn of_started_or_finished(o: &Map<String, Value>, what: &str) -> Versions {
    let mut out = Versions::default();
    for key in ["job-version", "revision", "version"] {
        if let Some(v) = o.get(key).and_then(text) {
            out.offer(what, key.to_string(), &v);
        }
    }
    if let Some(meta) = o.get("metadata").and_then(Value::as_object) {
        for (k, v) in meta {
            let Some(v) = text(v) else { continue };
            if versionish_key(k) || (versionish_value(&v) && !k.to_ascii_lowercase().starts_with("repo")) {
                out.offer(what, format!("metadata.{k}"), &v);
            }
        }
    }
    out.done()
}

/// The images of a ProwJob's pod spec and their version or image flags.
pub fn of_prowjob(o: &Map<String, Value>, what: &str) -> Versions {
    let mut out = Versions::default();
    let containers =
        o.get("spec").and_then(|s| s.get("pod_spec")).and_then(|p| p.get("containers")).and_then(Value::as_array);
    for (i, c) in containers.into_iter().flatten().enumerate() {
        let name =
            c.get("name").and_then(Value::as_str).filter(|n| !n.is_empty()).map_or(i.to_string(), str::to_string);
        let at = format!("spec.pod_spec.containers[{name}]");
        if let Some(image) = c.get("image").and_then(Value::as_str) {
            out.offer(what, format!("{at}.image"), image);
        }
        for arg in c.get("args").and_then(Value::as_array).into_iter().flatten().filter_map(Value::as_str) {
            let Some((flag, value)) = arg.strip_prefix("--").and_then(|a| a.split_once('=')) else { continue };
            let f = flag.to_ascii_lowercase();
            if f.contains("version") || f.contains("image") {
                out.offer(what, format!("{at}.args --{flag}"), value);
            }
        }
    }
    out.done()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn obj(s: &str) -> Map<String, Value> {
        serde_json::from_str::<Value>(s).unwrap().as_object().unwrap().clone()
    }

    #[test]
    fn finished_json_keeps_versions_and_leaves_the_tested_commit_out() {
        let o = obj(r#"{"timestamp": 1, "revision": "v1.30.0", "metadata": {"repo-commit": "abc", "pod": "4f1c-22",
            "infra-commit": "9ab8c7d6e5", "kubetest-version": "v20261101-1", "node-image": "gcr.io/x/node:1.2",
            "repos": {"a/b": "main"}, "note": "all fine"}}"#);
        let v = of_started_or_finished(&o, "finished.json");
        assert_eq!(
            v.facts,
            vec![
                ("revision".into(), "v1.30.0".into()),
                ("metadata.infra-commit".into(), "9ab8c7d6e5".into()),
                ("metadata.kubetest-version".into(), "v20261101-1".into()),
                ("metadata.node-image".into(), "gcr.io/x/node:1.2".into()),
            ]
        );
        assert!(v.problems.is_empty());
    }

    #[test]
    fn images_and_version_flags_of_the_pod_spec() {
        let o = obj(r#"{"spec": {"pod_spec": {"containers": [{"name": "test", "image": "gcr.io/k8s/kubekins-e2e:v2",
            "args": ["--job=x", "--kubernetes-version=v1.31.0", "--timeout=2h", "plain"]}, {"image": "busybox:1.36"}]}}}"#);
        let v = of_prowjob(&o, "prowjob.json");
        assert_eq!(
            v.facts,
            vec![
                ("spec.pod_spec.containers[test].image".into(), "gcr.io/k8s/kubekins-e2e:v2".into()),
                ("spec.pod_spec.containers[test].args --kubernetes-version".into(), "v1.31.0".into()),
                ("spec.pod_spec.containers[1].image".into(), "busybox:1.36".into()),
            ]
        );
    }

    #[test]
    fn hostile_entries_are_refused_by_name_and_the_count_is_bounded() {
        let mut meta = Map::new();
        meta.insert("image-a".into(), Value::from("x:\u{1b}[31m"));
        meta.insert("image-b".into(), Value::from("y".repeat(MAX_VALUE + 1)));
        for i in 0..100 {
            meta.insert(format!("tool{i:03}-version"), Value::from(format!("v1.{i}")));
        }
        let mut o = Map::new();
        o.insert("metadata".into(), Value::Object(meta));
        let v = of_started_or_finished(&o, "logs/j/1/finished.json");
        assert_eq!(v.facts.len(), MAX_FACTS);
        assert!(v.problems.iter().any(|p| p.contains("logs/j/1/finished.json") && p.contains("image-a")));
        assert!(v.problems.iter().any(|p| p.contains("image-b") && p.contains("longer than")));
        assert!(v.problems.iter().any(|p| p.contains("more than 32")));
        assert_eq!(v.problems.len(), 3);
    }

    #[test]
    fn version_like_values() {
        for v in ["v1.30.0", "1.2.3-rc.1", "gcr.io/a/b:v1", "a/b@sha256:00ff", "registry.k8s.io/pause:3.10"] {
            assert!(versionish_value(v), "{v}");
        }
        for v in ["all fine", "main", "abc", "https://example.com/x", "v1", "12"] {
            assert!(!versionish_value(v), "{v}");
        }
    }
}
