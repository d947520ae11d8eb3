//! "Same failure" for the payload analysis: a failure text is reduced to a
//! signature (its first significant line with run-specific tokens masked), and two
//! failures share a root cause when their signatures are equal.
//!
//! The [`Signer`] trait lets the workspace's shared clustering / known-signature
//! code replace [`MaskingSigner`] without touching the analysis.

use regex::Regex;
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

/// A failure signature.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub struct Signature {
    /// Stable id (content hash of `text`, 12 hex digits) unless supplied by a hint.
    pub id: String,
    /// The normalized line the id was computed from.
    pub text: String,
}

impl Signature {
    /// A signature whose id is the hash of its text.
    pub fn of_text(text: &str) -> Signature {
        let h = Sha256::digest(text.as_bytes());
        let id: String = h.iter().take(6).map(|b| format!("{b:02x}")).collect();
        Signature { id, text: text.to_string() }
    }
}

/// Maps failure text to a signature.
pub trait Signer {
    /// The signature of a failure text, `None` for empty text.
    fn signature(&self, text: &str) -> Option<Signature>;
}

/// The built-in signer: first significant line, masked.
///
/// - The first line containing an error marker (`error`, `fail`, `forbidden`,
///   `panic`, `timed out`, `exceeded`, `unable`, `refused`, `denied`, `invalid`,
///   `not found`, `unsupported`, `missing`) is chosen, else the first non-empty line;
/// - klog / logrus prefixes, time stamps, UUIDs, IPv4 addresses, hex strings of 7+
///   digits and every token that mixes letters and digits or is a number become `*`;
/// - whitespace is collapsed; the result is cut at 240 characters.
pub struct MaskingSigner {
    marker: Regex,
    klog: Regex,
    stamp: Regex,
    uuid: Regex,
    ip: Regex,
    hex: Regex,
    mixed: Regex,
}

impl Default for MaskingSigner {
    fn default() -> Self {
        MaskingSigner {
            marker: Regex::new(r"(?i)error|fail|forbidden|panic|timed out|timeout|exceeded|unable|refused|denied|invalid|not found|unsupported|missing|cannot|could not").unwrap(),
            klog: Regex::new(r"^[IWEF]\d{4} \d\d:\d\d:\d\d(\.\d+)?\s+\d+\s+[\w./-]+:\d+\]\s*").unwrap(),
            stamp: Regex::new(r"\d{4}-\d\d-\d\d[T ]\d\d:\d\d:\d\d(\.\d+)?(Z|[+-]\d\d:?\d\d)?").unwrap(),
            uuid: Regex::new(r"(?i)\b[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}\b").unwrap(),
            ip: Regex::new(r"\b\d{1,3}(\.\d{1,3}){3}(:\d+)?\b").unwrap(),
            hex: Regex::new(r"(?i)\b(0x)?[0-9a-f]{7,}\b").unwrap(),
            mixed: Regex::new(r"\b[A-Za-z_-]*\d[A-Za-z0-9_]*\b").unwrap(),
        }
    }
}

impl MaskingSigner {
    /// The line a signature is computed from.
    pub fn significant_line<'a>(&self, text: &'a str) -> Option<&'a str> {
        let mut first = None;
        for l in text.lines() {
            let t = l.trim();
            if t.is_empty() {
                continue;
            }
            if first.is_none() {
                first = Some(t);
            }
            if self.marker.is_match(t) {
                return Some(t);
            }
        }
        first
    }

    /// Masks run-specific tokens of one line.
    pub fn mask(&self, line: &str) -> String {
        let s = self.klog.replace(line, "");
        let s = self.stamp.replace_all(&s, "*");
        let s = self.uuid.replace_all(&s, "*");
        let s = self.ip.replace_all(&s, "*");
        let s = self.hex.replace_all(&s, "*");
        let s = self.mixed.replace_all(&s, "*");
        let s: String = s.split_whitespace().collect::<Vec<_>>().join(" ");
        s.chars().take(240).collect()
    }
}

impl Signer for MaskingSigner {
    fn signature(&self, text: &str) -> Option<Signature> {
        let line = self.significant_line(text)?;
        let masked = self.mask(line);
        (!masked.is_empty()).then(|| Signature::of_text(&masked))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn masks_run_specific_tokens() {
        let s = MaskingSigner::default();
        let a = s.signature("bootstrap did not complete: pods \"cvo-7d9f8b6c5-x2k4p\" is forbidden: the cluster does not have any nodes").unwrap();
        let b = s.signature("bootstrap did not complete: pods \"cvo-5b4c9d8f7-q9z1m\" is forbidden: the cluster does not have any nodes").unwrap();
        assert_eq!(a, b);
        let c = s.signature("E0510 12:34:56.789012 1 quota.go:12] VcpuLimitExceeded: limit of 64 reached").unwrap();
        assert_eq!(c.text, "VcpuLimitExceeded: limit of * reached");
        assert!(s.signature("  \n ").is_none());
        let d = s.signature("Ginkgo header\n[FAILED] Expected success, got 500").unwrap();
        assert_eq!(d.text, "[FAILED] Expected success, got *");
    }
}
