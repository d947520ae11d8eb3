//! The write gate. The server is read-only by default: the one tool that writes
//! (`apply_action`, which posts a draft through the GitHub API) is neither listed nor
//! callable. It is offered when the program that starts the server says who may
//! write:
//!
//! - [`WritePolicy::Local`] (`citriage mcp --allow-writes`): the local user who started
//!   the stdio server, who already holds the store and the token;
//! - [`WritePolicy::Http`] (`citriage serve --mcp-writes`): an HTTP request may write
//!   when it carries `Authorization: Bearer <token>` equal to the token the server
//!   read from its environment (`CITRIAGE_MCP_TOKEN`), or a non-empty header that a
//!   trusted reverse proxy sets after authenticating the user (`--trusted-user-header
//!   X-Forwarded-User`). Use the header only when the server is reachable through
//!   that proxy alone, and the proxy overwrites the header on every request.
//!
//! This is the hook team authentication replaces: [`WritePolicy::allows`] gets the
//! HTTP request's parts and answers who is writing or why not. The token is never
//! printed (its `Debug` is redacted) and is compared in constant time.

use std::fmt;

/// A secret compared in constant time, never printed.
#[derive(Clone, PartialEq, Eq)]
pub struct Secret(String);

impl Secret {
    /// A secret from the environment's value; `None` when empty.
    pub fn new(s: impl Into<String>) -> Option<Secret> {
        let s = s.into().trim().to_string();
        (!s.is_empty()).then_some(Secret(s))
    }

    fn matches(&self, given: &str) -> bool {
        let (a, b) = (self.0.as_bytes(), given.as_bytes());
        let mut diff = a.len() ^ b.len();
        for i in 0..a.len().max(b.len()) {
            diff |= usize::from(a.get(i).copied().unwrap_or(0) ^ b.get(i).copied().unwrap_or(0xff));
        }
        diff == 0
    }
}

impl fmt::Debug for Secret {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("Secret(redacted)")
    }
}

/// Who may use the write tool.
#[derive(Debug, Clone, Default)]
pub enum WritePolicy {
    /// Nobody: the write tool is not offered (the default).
    #[default]
    ReadOnly,
    /// The local user of a stdio server.
    Local,
    /// HTTP requests carrying the bearer token or the trusted proxy's header.
    Http {
        token: Option<Secret>,
        /// A header name (lower case) a trusted reverse proxy sets to the authenticated user.
        trusted_header: Option<String>,
    },
}

impl WritePolicy {
    /// True when the write tool is offered at all.
    pub fn offers_writes(&self) -> bool {
        !matches!(self, WritePolicy::ReadOnly)
    }

    /// Whether a call may write: `Ok(who)` or `Err(why not)`. `parts` are the HTTP
    /// request's (none on stdio).
    pub fn allows(&self, parts: Option<&http::request::Parts>) -> Result<String, String> {
        match self {
            WritePolicy::ReadOnly => {
                Err("this server is read-only: no tool writes (start it with writes allowed)".into())
            }
            WritePolicy::Local => match parts {
                None => Ok("the local user".into()),
                Some(_) => Err("writes are allowed on the local stdio server only".into()),
            },
            WritePolicy::Http { token, trusted_header } => {
                let Some(parts) = parts else {
                    return Err("writes over HTTP need the HTTP request's credentials".into());
                };
                if let Some(h) = trusted_header {
                    if let Some(user) = parts.headers.get(h.as_str()).and_then(|v| v.to_str().ok()) {
                        let user = user.trim();
                        if !user.is_empty() {
                            return Ok(format!("{user} (header {h} set by the trusted proxy)"));
                        }
                    }
                }
                if let Some(t) = token {
                    let given = parts
                        .headers
                        .get(http::header::AUTHORIZATION)
                        .and_then(|v| v.to_str().ok())
                        .and_then(|v| v.strip_prefix("Bearer "))
                        .map(str::trim);
                    return match given {
                        Some(g) if t.matches(g) => Ok("the holder of the write token".into()),
                        Some(_) => Err("the bearer token does not match".into()),
                        None => Err("writes need `Authorization: Bearer <token>`".into()),
                    };
                }
                Err(match trusted_header {
                    Some(h) => format!("writes need the header {h} from the trusted proxy"),
                    None => "no write credential is configured".into(),
                })
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parts(headers: &[(&str, &str)]) -> http::request::Parts {
        let mut b = http::Request::builder().uri("/mcp");
        for (k, v) in headers {
            b = b.header(*k, *v);
        }
        b.body(()).expect("request").into_parts().0
    }

    #[test]
    fn read_only_by_default() {
        let p = WritePolicy::default();
        assert!(!p.offers_writes());
        assert!(p.allows(None).is_err());
    }

    #[test]
    fn tokens_and_proxy_headers() {
        let p = WritePolicy::Http { token: Secret::new("s3cret"), trusted_header: Some("x-forwarded-user".into()) };
        assert!(p.allows(Some(&parts(&[("authorization", "Bearer s3cret")]))).is_ok());
        assert!(p.allows(Some(&parts(&[("authorization", "Bearer s3cre")]))).is_err());
        assert!(p.allows(Some(&parts(&[("authorization", "Bearer s3cret2")]))).is_err());
        assert!(p.allows(Some(&parts(&[]))).is_err());
        assert!(p.allows(Some(&parts(&[("x-forwarded-user", "alice")]))).expect("proxy").contains("alice"));
        assert!(p.allows(Some(&parts(&[("x-forwarded-user", " ")]))).is_err());
        assert!(p.allows(None).is_err(), "no HTTP request, no HTTP credential");
        assert!(WritePolicy::Local.allows(Some(&parts(&[]))).is_err());
        assert!(!format!("{p:?}").contains("s3cret"), "the token is never printed");
    }
}
