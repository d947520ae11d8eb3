//! The embedded stylesheet, its version (a content hash pages link with, so it can be
//! cached for long), and the FNV-1a hash used for it and for ETags.

/// The embedded stylesheet (the report renderer's, shared with `report.html`).
pub(crate) const STYLE_CSS: &str = citriage_report::html::STYLE_CSS;

/// FNV-1a, 64 bits: content hashes for the stylesheet version and ETags.
pub(crate) fn fnv64(bytes: &[u8]) -> u64 {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for &b in bytes {
        h ^= u64::from(b);
        h = h.wrapping_mul(0x0000_0100_0000_01b3);
    }
    h
}

/// A short content hash of the stylesheet: pages link `/static/style.css?v=HASH`, so
/// the stylesheet can be cached for long and a new build's is fetched at once.
pub(crate) fn style_version() -> &'static str {
    static V: std::sync::OnceLock<String> = std::sync::OnceLock::new();
    V.get_or_init(|| format!("{:016x}", fnv64(STYLE_CSS.as_bytes())))
}
