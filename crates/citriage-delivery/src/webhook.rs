//! Posting a message to a webhook through the one HTTP layer: a `POST` of JSON that
//! carries the message's key in the `Idempotency-Key` header (and in the body), so
//! the layer may retry it (transport errors, 5xx, 429 and `Retry-After`) and the
//! receiver can drop a repeat. A 2xx is acceptance; 408, 425, 429 and 5xx are worth a
//! later try (not before a `Retry-After` too long to wait now); any other answer is
//! permanent. Errors never carry the URL (it may hold a secret): they name the
//! destination, the status and the receiver's message.

use crate::destination::url_problem;
use crate::Outcome;
use citriage_sources::http::{message_of, HttpClient, HttpError, Request};

/// What went wrong, without the URL.
fn describe(e: &HttpError) -> (String, Option<i64>) {
    match e {
        HttpError::Transport { detail, .. } => (format!("request failed: {detail}"), None),
        HttpError::GaveUp { status, attempts, message, .. } => {
            let m = if message.is_empty() { String::new() } else { format!(": {message}") };
            (format!("HTTP {status}, still after {attempts} attempts{m}"), None)
        }
        HttpError::WaitTooLong { wait_secs, .. } => {
            (format!("the receiver asks to wait {wait_secs}s before trying again"), Some(*wait_secs as i64))
        }
        HttpError::BudgetSpent { budget_secs, .. } => (format!("the retry budget ({budget_secs}s) is spent"), None),
        HttpError::DeadlinePassed { total_secs, .. } => (format!("no answer within {total_secs}s"), None),
        HttpError::TooLarge { limit, .. } => (format!("the answer is larger than {limit} bytes"), None),
        HttpError::OverBudget { budget, .. } => (format!("no memory for the answer (budget {budget} bytes)"), None),
        HttpError::CrossOrigin { status, .. } => (format!("HTTP {status}: redirected elsewhere (not followed)"), None),
        HttpError::TooManyRedirects { max, .. } => (format!("more than {max} redirects"), None),
        HttpError::ForeignOrigin { .. } => ("not an http(s) URL".to_string(), None),
        HttpError::RepeatedPage { .. } | HttpError::TooManyPages { .. } => ("unexpected paging".to_string(), None),
    }
}

/// `text` without the URL or its path (where a webhook's secret lives).
fn scrub(text: &str, url: &str) -> String {
    let mut out = text.replace(url, "<url>");
    if let Some(i) = url.find("://").and_then(|i| url[i + 3..].find('/').map(|j| i + 3 + j)) {
        let path = &url[i..];
        if path.len() > 1 {
            out = out.replace(path, "/<path>");
        }
    }
    out
}

/// Posts `body` (JSON) to `url` with the idempotency key `key`.
pub fn post(http: &HttpClient, url: &str, key: &str, body: Vec<u8>) -> Outcome {
    if let Some(p) = url_problem(url) {
        return Outcome::GiveUp { error: format!("its URL is {p}") };
    }
    let req = Request::write(false, url, body).header("Content-Type", "application/json").idempotent(key);
    match http.send(&req) {
        Ok(r) if (200..300).contains(&r.status) => Outcome::Accepted,
        Ok(r) => {
            let msg = message_of(&r.body);
            let m = if msg.is_empty() { String::new() } else { format!(": {}", scrub(&msg, url)) };
            let error = format!("HTTP {}{m}", r.status);
            let after = r.header("retry-after").and_then(|v| v.parse::<i64>().ok());
            if matches!(r.status, 408 | 425 | 429) || r.status >= 500 {
                Outcome::Retry { error, after }
            } else {
                Outcome::GiveUp { error }
            }
        }
        Err(e) => {
            let (text, after) = describe(&e);
            let error = scrub(&text, url);
            match e {
                HttpError::ForeignOrigin { .. }
                | HttpError::CrossOrigin { .. }
                | HttpError::TooManyRedirects { .. } => Outcome::GiveUp { error },
                _ => Outcome::Retry { error, after },
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn errors_never_carry_the_url_or_its_path() {
        let url = "https://hooks.example.org/services/T0/SECRET";
        let t = scrub(&format!("{url}: refused; GET /services/T0/SECRET"), url);
        assert!(!t.contains("SECRET"), "{t}");
        let (d, after) = describe(&HttpError::WaitTooLong {
            url: url.into(),
            status: Some(429),
            kind: citriage_sources::http::WaitKind::RetryAfter,
            wait_secs: 600,
            limit_secs: 30,
        });
        assert!(!d.contains("SECRET") && after == Some(600), "{d}");
    }
}
