//! The known-signature catalogue (`signatures`): the built-in one, optionally extended
//! by a user file, narrowed to a scope and a class; and which of its signatures match a
//! log file, line by line.

use crate::error::{Error, Result};
use citriage_patterns::signatures::{Catalogue, FailureClass, SignatureMatch};
use std::io::Read;
use std::path::{Path, PathBuf};

/// Where signatures apply.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Scope {
    /// Test failures and build logs of CI jobs.
    Jobs,
    /// The failed steps of release payloads' jobs.
    Payload,
    /// Every signature.
    #[default]
    All,
}

/// Which catalogue.
#[derive(Debug, Clone, Default)]
pub struct CatalogueRequest {
    /// Extra signatures (TOML) merged over the built-in catalogue.
    pub signatures: Option<PathBuf>,
    pub scope: Scope,
    /// Only signatures of this class (infra, product, test, ci-config, by-design).
    pub class: Option<String>,
}

/// The largest log [`match_file`] reads.
pub const MATCH_LIMIT: u64 = 64 << 20;

/// The catalogue asked for.
pub fn catalogue(req: &CatalogueRequest) -> Result<Catalogue> {
    let mut catalogue = Catalogue::builtin_all();
    if let Some(p) = &req.signatures {
        let text = crate::files::read_input(p)?;
        let user = Catalogue::from_toml(&text).map_err(|e| Error::input(format!("{}: {e}", p.display())))?;
        catalogue.merge(user).map_err(|e| Error::input(format!("{}: {e}", p.display())))?;
    }
    let class = match &req.class {
        None => None,
        Some(c) => Some(parse_class(c)?),
    };
    let scope = req.scope;
    Ok(catalogue.only(|s| {
        let in_scope = match scope {
            Scope::Jobs => s.scope.jobs(),
            Scope::Payload => s.scope.payload(),
            Scope::All => true,
        };
        in_scope && class.is_none_or(|c| s.class == c)
    }))
}

fn parse_class(text: &str) -> Result<FailureClass> {
    serde_json::from_value(serde_json::Value::String(text.to_string())).map_err(|_| {
        Error::input(format!("--class {text:?}: expected one of infra, product, test, ci-config, by-design"))
    })
}

/// The signatures of `catalogue` that match lines of the log at `path` (read up to
/// [`MATCH_LIMIT`]; a larger file is bad input).
pub fn match_file(catalogue: &Catalogue, path: &Path) -> Result<Vec<SignatureMatch>> {
    let file = std::fs::File::open(path).map_err(|e| Error::input(format!("{}: cannot read: {e}", path.display())))?;
    let mut bytes = Vec::new();
    file.take(MATCH_LIMIT + 1)
        .read_to_end(&mut bytes)
        .map_err(|e| Error::input(format!("{}: cannot read: {e}", path.display())))?;
    if bytes.len() as u64 > MATCH_LIMIT {
        return Err(Error::input(format!(
            "{}: larger than {} MiB; match a tail of it (e.g. `tail -c 8M`)",
            path.display(),
            MATCH_LIMIT >> 20
        )));
    }
    let text = String::from_utf8_lossy(&bytes);
    Ok(catalogue.match_lines(text.lines().enumerate().map(|(i, l)| (i + 1, l))))
}
