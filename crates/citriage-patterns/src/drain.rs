//! Log template mining: a Drain-style fixed-depth parse tree with token masking.
//!
//! Each line is tokenized on whitespace; tokens that look variable (numbers, hex ids, IPs,
//! paths with digits, `key=value` with a variable value, ...) are masked to `<*>` first,
//! which moves accuracy more than the tree does. The tree routes a line by token count, then
//! by its first `depth - 2` tokens (masked tokens and overflow beyond `max_children` go to a
//! wildcard child), then picks the most similar cluster in the leaf: similarity is the share
//! of positions where the template token equals the line token. A line joins the best cluster
//! at or above `sim_threshold` and the differing positions become `<*>`; otherwise it starts
//! a new cluster.
//!
//! Tokens are interned to `u32`, so comparisons are integer compares; the miner does no I/O
//! and is deterministic for a given input order. One [`DrainConfig::default`] is used for
//! every log source (no per-source tuning).

use std::collections::HashMap;

use serde::{Deserialize, Serialize};

/// The wildcard token.
pub const WILDCARD: &str = "<*>";
const WILD: u32 = 0;

/// Miner options. The defaults are the one global configuration used everywhere.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct DrainConfig {
    /// Tree depth including the root and the length level (Drain's `depth`).
    pub depth: usize,
    /// Minimum similarity to join a cluster.
    pub sim_threshold: f32,
    /// Children per internal node before tokens go to the wildcard child.
    pub max_children: usize,
    /// Mask variable-looking tokens before routing.
    pub mask: bool,
    /// Two different plain words (letters only) at one position never merge: such words
    /// are almost always part of the message (`VM Paused` vs `VM Resumed`), not variables.
    pub words_are_constant: bool,
}

impl Default for DrainConfig {
    fn default() -> Self {
        DrainConfig { depth: 4, sim_threshold: 0.5, max_children: 100, mask: true, words_are_constant: true }
    }
}

/// One template cluster.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct TemplateCluster {
    /// Cluster id (dense, in creation order).
    pub id: u32,
    /// Template tokens joined with single spaces; variables are `<*>`.
    pub template: String,
    /// Number of lines that joined.
    pub size: u64,
}

#[derive(Default)]
struct Node {
    children: HashMap<u32, Node>,
    clusters: Vec<u32>,
}

struct Cluster {
    tokens: Vec<u32>,
    size: u64,
}

/// Per-token flags kept beside the interned text.
const FLAG_WORD: u8 = 1;

/// The template miner.
pub struct Drain {
    cfg: DrainConfig,
    ids: HashMap<Box<str>, u32>,
    names: Vec<Box<str>>,
    flags: Vec<u8>,
    roots: HashMap<usize, Node>,
    clusters: Vec<Cluster>,
    scratch: Vec<u32>,
}

impl Default for Drain {
    fn default() -> Self {
        Self::new(DrainConfig::default())
    }
}

impl Drain {
    /// Empty miner.
    pub fn new(cfg: DrainConfig) -> Self {
        Drain {
            cfg,
            ids: HashMap::new(),
            names: vec![WILDCARD.into()],
            flags: vec![0],
            roots: HashMap::new(),
            clusters: Vec::new(),
            scratch: Vec::new(),
        }
    }

    fn intern(&mut self, tok: &str) -> u32 {
        if let Some(&id) = self.ids.get(tok) {
            return id;
        }
        let id = self.names.len() as u32;
        self.names.push(tok.into());
        let word = tok.len() >= 2 && tok.bytes().all(|b| b.is_ascii_alphabetic());
        self.flags.push(if word { FLAG_WORD } else { 0 });
        self.ids.insert(tok.into(), id);
        id
    }

    fn tokenize(&mut self, line: &str) -> Vec<u32> {
        let mut out = std::mem::take(&mut self.scratch);
        out.clear();
        let mask = self.cfg.mask;
        for tok in line.split_ascii_whitespace() {
            if mask && is_variable(tok) {
                out.push(WILD);
            } else {
                let id = self.intern(tok);
                out.push(id);
            }
        }
        out
    }

    /// Add one line; returns its cluster id.
    pub fn add(&mut self, line: &str) -> u32 {
        let toks = self.tokenize(line);
        let id = self.add_tokens(&toks);
        self.scratch = toks;
        id
    }

    fn add_tokens(&mut self, toks: &[u32]) -> u32 {
        let depth = self.cfg.depth.max(3) - 2;
        let max_children = self.cfg.max_children;
        let n = toks.len();
        // route
        let mut node = self.roots.entry(n).or_default();
        for &t in toks.iter().take(depth) {
            let key = if node.children.contains_key(&t) {
                t
            } else if t == WILD || node.children.len() + 1 >= max_children {
                WILD
            } else {
                t
            };
            node = node.children.entry(key).or_default();
        }
        // best cluster in the leaf
        let mut best: Option<(usize, f32, usize)> = None; // (slot, sim, params)
        for (slot, &cid) in node.clusters.iter().enumerate() {
            let c = &self.clusters[cid as usize];
            let (sim, params) = if self.cfg.words_are_constant {
                similarity_words(&c.tokens, toks, &self.flags)
            } else {
                similarity(&c.tokens, toks)
            };
            let better = match best {
                None => true,
                Some((_, bs, bp)) => sim > bs || (sim == bs && params > bp),
            };
            if better {
                best = Some((slot, sim, params));
            }
        }
        if let Some((slot, sim, _)) = best {
            if sim >= self.cfg.sim_threshold {
                let cid = node.clusters[slot];
                let c = &mut self.clusters[cid as usize];
                for (t, &x) in c.tokens.iter_mut().zip(toks) {
                    if *t != x {
                        *t = WILD;
                    }
                }
                c.size += 1;
                return cid;
            }
        }
        let cid = self.clusters.len() as u32;
        self.clusters.push(Cluster { tokens: toks.to_vec(), size: 1 });
        node.clusters.push(cid);
        cid
    }

    /// Add every line of a build log (split with the crate's line convention, ANSI and CI
    /// timestamp prefixes removed, blank lines skipped); returns `(line number, cluster id)`.
    pub fn add_log(&mut self, data: &[u8]) -> Vec<(usize, u32)> {
        let mut out = Vec::new();
        for l in crate::lines::lines(data) {
            let t = crate::extract::clean(l.bytes(data), crate::lines::DEFAULT_MATCH_CAP);
            if t.trim().is_empty() {
                continue;
            }
            out.push((l.number, self.add(&t)));
        }
        out
    }

    /// Template of cluster `id`.
    pub fn template(&self, id: u32) -> String {
        match self.clusters.get(id as usize) {
            Some(c) => c.tokens.iter().map(|&t| &*self.names[t as usize]).collect::<Vec<_>>().join(" "),
            None => String::new(),
        }
    }

    /// Number of clusters.
    pub fn len(&self) -> usize {
        self.clusters.len()
    }

    /// True when no line was added.
    pub fn is_empty(&self) -> bool {
        self.clusters.is_empty()
    }

    /// All clusters, by id.
    pub fn clusters(&self) -> Vec<TemplateCluster> {
        (0..self.clusters.len() as u32)
            .map(|id| TemplateCluster { id, template: self.template(id), size: self.clusters[id as usize].size })
            .collect()
    }
}

/// Share of positions where template and line agree (wildcards count as agreement but are
/// also counted as parameters for tie-breaking, like Drain).
fn similarity(template: &[u32], toks: &[u32]) -> (f32, usize) {
    if template.is_empty() {
        return (1.0, 0);
    }
    let mut same = 0usize;
    let mut params = 0usize;
    for (&t, &x) in template.iter().zip(toks) {
        if t == WILD {
            params += 1;
            if x == WILD {
                same += 1;
            }
            continue;
        }
        if t == x {
            same += 1;
        }
    }
    (same as f32 / template.len() as f32, params)
}

/// [`similarity`], but a position where template and line hold two different plain words
/// makes the pair incompatible (similarity 0).
fn similarity_words(template: &[u32], toks: &[u32], flags: &[u8]) -> (f32, usize) {
    for (&t, &x) in template.iter().zip(toks) {
        if t != x && t != WILD && x != WILD && flags[t as usize] & FLAG_WORD != 0 && flags[x as usize] & FLAG_WORD != 0
        {
            return (0.0, 0);
        }
    }
    similarity(template, toks)
}

/// Does `tok` look like a variable (to be masked before routing)?
pub fn is_variable(tok: &str) -> bool {
    let b = tok.as_bytes();
    if b.iter().any(u8::is_ascii_digit) {
        return true;
    }
    // paths: a slash between two name characters
    b.windows(3).any(|w| w[1] == b'/' && w[0].is_ascii_alphanumeric() && w[2].is_ascii_alphanumeric())
}

/// Mine templates for `lines` with `cfg`; returns the template of every line (after all lines
/// were added, so templates are final) and the clusters.
pub fn mine<S: AsRef<str>>(lines: &[S], cfg: &DrainConfig) -> (Vec<String>, Vec<TemplateCluster>) {
    let mut d = Drain::new(cfg.clone());
    let ids: Vec<u32> = lines.iter().map(|l| d.add(l.as_ref())).collect();
    let templates: Vec<String> = (0..d.len() as u32).map(|i| d.template(i)).collect();
    (ids.iter().map(|&i| templates[i as usize].clone()).collect(), d.clusters())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn masks_and_merges() {
        let mut d = Drain::default();
        let a = d.add("Received block blk_123 of size 67108864 from /10.0.0.1");
        let b = d.add("Received block blk_456 of size 1024 from /10.0.0.2");
        let c = d.add("VM Resumed (Lifecycle Event)");
        let e = d.add("VM Paused (Lifecycle Event)");
        assert_eq!(a, b);
        assert_ne!(c, e, "different words are different templates");
        assert_eq!(d.template(a), "Received block <*> of size <*> from <*>");
        let f = d.add("Changing view acls to: yarn,curi");
        let g = d.add("Changing view acls to: root,admin");
        assert_eq!(f, g);
        assert_eq!(d.template(f), "Changing view acls to: <*>");
    }

    #[test]
    fn build_log_lines() {
        let mut d = Drain::default();
        let log = b"\x1b[32mok\x1b[0m pkg/a 0.1s\r\nok pkg/b 0.2s\n\nFAIL pkg/c 1.0s\n";
        let ids = d.add_log(log);
        assert_eq!(ids.len(), 3);
        assert_eq!(ids[0].1, ids[1].1);
        assert_eq!(ids[2].0, 4);
    }
}
