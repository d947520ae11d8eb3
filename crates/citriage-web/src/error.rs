//! Why a request could not be answered, and the HTTP status that says so.

use axum::http::StatusCode;

/// A request that could not be answered: a bad parameter (400), an unknown job (404)
/// or a store failure (500). The message is shown to the user, escaped.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum WebError {
    BadRequest(String),
    NotFound(String),
    Internal(String),
}

impl WebError {
    pub(crate) fn status(&self) -> StatusCode {
        match self {
            WebError::BadRequest(_) => StatusCode::BAD_REQUEST,
            WebError::NotFound(_) => StatusCode::NOT_FOUND,
            WebError::Internal(_) => StatusCode::INTERNAL_SERVER_ERROR,
        }
    }

    /// The message shown to the user (escaped where it is shown).
    pub fn message(&self) -> &str {
        match self {
            WebError::BadRequest(m) | WebError::NotFound(m) | WebError::Internal(m) => m,
        }
    }
}

impl std::fmt::Display for WebError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.message())
    }
}

impl From<citriage_store::StoreError> for WebError {
    fn from(e: citriage_store::StoreError) -> Self {
        WebError::Internal(e.to_string())
    }
}
