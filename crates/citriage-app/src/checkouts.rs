//! The one spelling of a local checkout the user names (`--checkout`, for `verify`,
//! `code` and `suspects`): `NAME=PATH[=OWNER/REPO]`. The name is how evidence names
//! the checkout; the repository defaults to the name (`kubernetes/kops=~/src/kops`).

use crate::error::{Error, Result};

/// A parsed `--checkout` value.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CheckoutSpec {
    pub name: String,
    pub path: String,
    /// `OWNER/REPO` when given, else the name.
    pub repo: String,
}

/// Parses `NAME=PATH[=OWNER/REPO]`; an empty name or path is bad input naming the value.
pub fn parse_checkout(spec: &str) -> Result<CheckoutSpec> {
    let mut parts = spec.splitn(3, '=');
    match (parts.next(), parts.next()) {
        (Some(name), Some(path)) if !name.is_empty() && !path.is_empty() => Ok(CheckoutSpec {
            name: name.to_string(),
            repo: parts.next().filter(|r| !r.is_empty()).unwrap_or(name).to_string(),
            path: path.to_string(),
        }),
        _ => Err(Error::input(format!("--checkout {spec:?}: expected name=path[=owner/repo]"))),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn name_path_and_repository() {
        let s = parse_checkout("kubernetes/kops=/src/kops").unwrap();
        assert_eq!(
            (s.name.as_str(), s.path.as_str(), s.repo.as_str()),
            ("kubernetes/kops", "/src/kops", "kubernetes/kops")
        );
        let s = parse_checkout("ti=/src/ti=kubernetes/test-infra").unwrap();
        assert_eq!((s.name.as_str(), s.repo.as_str()), ("ti", "kubernetes/test-infra"));
        for bad in ["", "kops", "=/src", "kops="] {
            let e = parse_checkout(bad).unwrap_err();
            assert!(e.is_bad_input() && e.to_string().contains("expected name=path"), "{bad}: {e}");
        }
    }
}
