//! "Same failure" for the payload analysis: a failure text is reduced to a
//! signature (its first significant line with run-specific tokens masked), and two
//! failures share a root cause when their signatures are equal.
//!
//! The masking is `citriage-patterns`' (`normalize::signature_line`); the
//! [`Signer`] trait lets a caller key modes differently without touching the analysis.

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

/// The built-in signer: the masked significant line of
/// [`citriage_patterns::normalize::signature_line`] (the one place that defines it).
#[derive(Debug, Clone, Copy, Default)]
pub struct MaskingSigner;

impl MaskingSigner {
    /// The line a signature is computed from.
    pub fn significant_line<'a>(&self, text: &'a str) -> Option<&'a str> {
        citriage_patterns::normalize::significant_line(text)
    }

    /// Masks run-specific tokens of one line.
    pub fn mask(&self, line: &str) -> String {
        citriage_patterns::normalize::mask_line(line)
    }
}

impl Signer for MaskingSigner {
    fn signature(&self, text: &str) -> Option<Signature> {
        citriage_patterns::normalize::signature_line(text).map(|masked| Signature::of_text(&masked))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn masks_run_specific_tokens() {
        let s = MaskingSigner;
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
