//! A tiny boolean expression language for categorization rules, with Python's
//! precedence (`not` > `and` > `or`) so a rule such as
//! `starts_with('a') or contains('b') or contains('c') and contains('d')` means what
//! the same Python expression means. Predicates test the lower-cased job name.

use regex::Regex;
use std::fmt;

/// A parsed rule condition.
#[derive(Debug, Clone)]
pub enum Expr {
    StartsWith(String),
    EndsWith(String),
    Contains(String),
    Equals(String),
    Matches(Regex),
    Not(Box<Expr>),
    And(Vec<Expr>),
    Or(Vec<Expr>),
}

impl Expr {
    /// Evaluates against an already lower-cased job name.
    pub fn eval(&self, j: &str) -> bool {
        match self {
            Expr::StartsWith(s) => j.starts_with(s.as_str()),
            Expr::EndsWith(s) => j.ends_with(s.as_str()),
            Expr::Contains(s) => j.contains(s.as_str()),
            Expr::Equals(s) => j == s,
            Expr::Matches(r) => r.is_match(j),
            Expr::Not(e) => !e.eval(j),
            Expr::And(es) => es.iter().all(|e| e.eval(j)),
            Expr::Or(es) => es.iter().any(|e| e.eval(j)),
        }
    }

    /// Parses an expression.
    pub fn parse(src: &str) -> Result<Expr, ExprError> {
        let tokens = lex(src)?;
        let mut p = Parser { tokens, pos: 0 };
        let e = p.or()?;
        if p.pos != p.tokens.len() {
            return Err(ExprError(format!("unexpected {} at the end", p.tokens[p.pos].1)));
        }
        Ok(e)
    }
}

/// A syntax error in a rule expression.
#[derive(Debug, Clone, PartialEq)]
pub struct ExprError(pub String);

impl fmt::Display for ExprError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

#[derive(Debug, Clone, PartialEq)]
enum Tok {
    Ident(String),
    Str(String),
    LParen,
    RParen,
}

impl fmt::Display for Tok {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Tok::Ident(s) => write!(f, "`{s}`"),
            Tok::Str(s) => write!(f, "string {s:?}"),
            Tok::LParen => f.write_str("`(`"),
            Tok::RParen => f.write_str("`)`"),
        }
    }
}

fn lex(src: &str) -> Result<Vec<(usize, Tok)>, ExprError> {
    let mut out = Vec::new();
    let chars: Vec<char> = src.chars().collect();
    let mut i = 0;
    while i < chars.len() {
        let c = chars[i];
        if c.is_whitespace() {
            i += 1;
        } else if c == '(' {
            out.push((i, Tok::LParen));
            i += 1;
        } else if c == ')' {
            out.push((i, Tok::RParen));
            i += 1;
        } else if c == '\'' || c == '"' {
            let quote = c;
            let start = i;
            i += 1;
            let mut s = String::new();
            loop {
                match chars.get(i) {
                    None => return Err(ExprError(format!("unterminated string starting at column {}", start + 1))),
                    Some('\\') => {
                        match chars.get(i + 1) {
                            Some(n) => s.push(*n),
                            None => return Err(ExprError("dangling backslash".into())),
                        }
                        i += 2;
                    }
                    Some(ch) if *ch == quote => {
                        i += 1;
                        break;
                    }
                    Some(ch) => {
                        s.push(*ch);
                        i += 1;
                    }
                }
            }
            out.push((start, Tok::Str(s)));
        } else if c.is_ascii_alphabetic() || c == '_' {
            let start = i;
            while i < chars.len() && (chars[i].is_ascii_alphanumeric() || chars[i] == '_') {
                i += 1;
            }
            out.push((start, Tok::Ident(chars[start..i].iter().collect())));
        } else {
            return Err(ExprError(format!("unexpected character {c:?} at column {}", i + 1)));
        }
    }
    Ok(out)
}

struct Parser {
    tokens: Vec<(usize, Tok)>,
    pos: usize,
}

impl Parser {
    fn peek_ident(&self, name: &str) -> bool {
        matches!(self.tokens.get(self.pos), Some((_, Tok::Ident(s))) if s == name)
    }

    fn or(&mut self) -> Result<Expr, ExprError> {
        let mut parts = vec![self.and()?];
        while self.peek_ident("or") {
            self.pos += 1;
            parts.push(self.and()?);
        }
        Ok(if parts.len() == 1 { parts.pop().unwrap_or(Expr::Or(vec![])) } else { Expr::Or(parts) })
    }

    fn and(&mut self) -> Result<Expr, ExprError> {
        let mut parts = vec![self.not()?];
        while self.peek_ident("and") {
            self.pos += 1;
            parts.push(self.not()?);
        }
        Ok(if parts.len() == 1 { parts.pop().unwrap_or(Expr::And(vec![])) } else { Expr::And(parts) })
    }

    fn not(&mut self) -> Result<Expr, ExprError> {
        if self.peek_ident("not") {
            self.pos += 1;
            return Ok(Expr::Not(Box::new(self.not()?)));
        }
        self.atom()
    }

    fn atom(&mut self) -> Result<Expr, ExprError> {
        let Some((_, tok)) = self.tokens.get(self.pos).cloned() else {
            return Err(ExprError("expression ends early".into()));
        };
        self.pos += 1;
        match tok {
            Tok::LParen => {
                let e = self.or()?;
                self.expect(Tok::RParen)?;
                Ok(e)
            }
            Tok::Ident(name) => {
                self.expect(Tok::LParen)?;
                let arg = match self.tokens.get(self.pos).cloned() {
                    Some((_, Tok::Str(s))) => s,
                    Some((_, t)) => return Err(ExprError(format!("{name}(...) takes a quoted string, found {t}"))),
                    None => return Err(ExprError("expression ends early".into())),
                };
                self.pos += 1;
                self.expect(Tok::RParen)?;
                match name.as_str() {
                    "starts_with" | "startswith" => Ok(Expr::StartsWith(arg)),
                    "ends_with" | "endswith" => Ok(Expr::EndsWith(arg)),
                    "contains" => Ok(Expr::Contains(arg)),
                    "equals" => Ok(Expr::Equals(arg)),
                    "matches" => Regex::new(&arg)
                        .map(Expr::Matches)
                        .map_err(|e| ExprError(format!("bad regex in matches({arg:?}): {e}"))),
                    other => Err(ExprError(format!(
                        "unknown predicate `{other}` (use starts_with, ends_with, contains, equals, matches)"
                    ))),
                }
            }
            t => Err(ExprError(format!("unexpected {t}"))),
        }
    }

    fn expect(&mut self, want: Tok) -> Result<(), ExprError> {
        match self.tokens.get(self.pos) {
            Some((_, t)) if *t == want => {
                self.pos += 1;
                Ok(())
            }
            Some((_, t)) => Err(ExprError(format!("expected {want}, found {t}"))),
            None => Err(ExprError(format!("expected {want}, found the end"))),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn python_precedence() {
        let e = Expr::parse("starts_with('a') or contains('b') or contains('c') and contains('d')").unwrap();
        assert!(e.eval("a-x"));
        assert!(e.eval("xbx"));
        assert!(!e.eval("xcx"), "c alone must not match: and binds tighter than or");
        assert!(e.eval("xcxd"));
        let e = Expr::parse("not contains('x') and (ends_with('z') or equals('q'))").unwrap();
        assert!(e.eval("az"));
        assert!(e.eval("q"));
        assert!(!e.eval("xz"));
    }

    #[test]
    fn errors_are_readable() {
        assert!(Expr::parse("contains('a'").unwrap_err().0.contains("expected `)`"));
        assert!(Expr::parse("foo('a')").unwrap_err().0.contains("unknown predicate"));
        assert!(Expr::parse("contains('a') x").unwrap_err().0.contains("unexpected `x`"));
        assert!(Expr::parse("matches('(')").unwrap_err().0.contains("bad regex"));
        assert!(Expr::parse("contains('a").unwrap_err().0.contains("unterminated"));
    }
}
