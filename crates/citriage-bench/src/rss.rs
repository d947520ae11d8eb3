//! The process's memory as the OS tells it (Linux `/proc/self/status`).

/// Peak resident set size of this process in MiB (VmHWM), when the OS tells.
pub fn peak_rss_mib() -> Option<f64> {
    let s = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = s.lines().find(|l| l.starts_with("VmHWM:"))?;
    let kb: f64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kb / 1024.0)
}

/// This process's resident memory now: anonymous and file-backed (the store's
/// memory-mapped pages), in MiB.
pub fn rss_parts() -> (Option<f64>, Option<f64>) {
    let Ok(s) = std::fs::read_to_string("/proc/self/status") else { return (None, None) };
    let field = |name: &str| -> Option<f64> {
        let line = s.lines().find(|l| l.starts_with(name))?;
        Some(line.split_whitespace().nth(1)?.parse::<f64>().ok()? / 1024.0)
    };
    (field("RssAnon:"), field("RssFile:"))
}
