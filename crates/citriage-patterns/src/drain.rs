//! Log template mining: token classes, a Drain-style similarity grouping, and a split of
//! word positions by how many distinct words they hold.
//!
//! 1. **Mask.** Each line is tokenized on whitespace and its values are masked to `<*>` by
//!    generic token classes ([`crate::tokens`]: numbers and ids with digits, addresses,
//!    UUIDs, paths, URLs, quoted identifiers, date names, number + unit; `key=` keys kept;
//!    adjacent values collapsed). Lines with the same masked form share one *shape*; a shape
//!    seen before costs one hash lookup.
//! 2. **Group.** A new shape joins the most similar group of the same token count when the
//!    share of positions where the group's template and the shape agree reaches
//!    [`DrainConfig::sim_threshold`]; the positions that differ become `<*>`. Unlike the
//!    original Drain there is no prefix tree over the first tokens: a value in first
//!    position (a program or host name) does not split a template.
//! 3. **Split.** When mining is finished, each group is split at word positions that hold
//!    few distinct words, each repeated: a position with `k` distinct words over `n` lines
//!    is a constant of `k` different templates when `2 <= k <= split_max_words` and
//!    `k * split_min_repeat <= n` (`VM Paused` / `VM Resumed`, `from NEW to RUNNING`);
//!    otherwise its words are values (user, host or program names). Positions are taken in
//!    order of fewest distinct words, recursively. A position holding a dotted name (file,
//!    host, package, class or property names: `chrome.exe`, `org.example.Main`) is a value
//!    position whatever its counts. Groups that differ in one word position whose words
//!    would not split (many distinct words, or dotted names) are joined.
//!
//! Word positions are never decided by what the words are, only by how they are distributed
//! and by their token class.
//!
//! One [`DrainConfig::default`] serves every log source; its settings were chosen by
//! leave-one-system-out evaluation ([`crate::mining_eval`]). The miner does no I/O, and its
//! output depends only on the lines and their order (group ids follow first appearance).

use serde::{Deserialize, Serialize};

use crate::fxhash::FxHashMap;
use crate::tokens::Masker;

/// The wildcard token.
pub const WILDCARD: &str = crate::tokens::WILDCARD;
const WILD: u32 = 0;

/// Miner options. The defaults are the one global configuration used everywhere.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct DrainConfig {
    /// Minimum share of equal positions for a new line shape to join a group.
    pub sim_threshold: f32,
    /// A word position splits a group only when each distinct word covers at least this many
    /// lines on average.
    pub split_min_repeat: f32,
    /// A word position with more distinct words than this is a value, never a split.
    pub split_max_words: usize,
    /// Mask values by token class before grouping (off: raw tokens).
    pub mask: bool,
}

impl Default for DrainConfig {
    fn default() -> Self {
        DrainConfig { sim_threshold: 0.8, split_min_repeat: 2.0, split_max_words: 32, mask: true }
    }
}

/// One mined template.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct TemplateCluster {
    /// Template id (dense, in order of first appearance).
    pub id: u32,
    /// Template tokens joined with single spaces; values are `<*>`.
    pub template: String,
    /// Number of lines it covers.
    pub size: u64,
}

/// A template with one position wildcarded, and that position.
type Family = (Vec<u32>, usize);

struct Shape {
    toks: Box<[u32]>,
    count: u64,
}

struct Group {
    toks: Vec<u32>,
    shapes: Vec<u32>,
}

/// The template miner (see the module docs).
pub struct Drain {
    cfg: DrainConfig,
    masker: Masker,
    buf: String,
    shape_ids: FxHashMap<Box<str>, u32>,
    shapes: Vec<Shape>,
    tok_ids: FxHashMap<Box<str>, u32>,
    names: Vec<Box<str>>,
    /// Token holds a wildcard (a masked value, possibly with a kept key).
    has_wild: Vec<bool>,
    /// Token is a dotted name (`chrome.exe`, `org.example.Main`, `rpc.statd`).
    dotted: Vec<bool>,
    by_len: FxHashMap<usize, Vec<u32>>,
    groups: Vec<Group>,
    scratch: Vec<u32>,
}

impl Default for Drain {
    fn default() -> Self {
        Self::new(DrainConfig::default())
    }
}

/// The result of mining: each shape's template.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Templates {
    /// Template id of each shape (index: the id [`Drain::add`] returned).
    pub shape_template: Vec<u32>,
    /// The templates, by id.
    pub templates: Vec<TemplateCluster>,
}

impl Templates {
    /// Template of the line shape `shape` (an id returned by [`Drain::add`]).
    pub fn of(&self, shape: u32) -> &TemplateCluster {
        &self.templates[self.shape_template[shape as usize] as usize]
    }
}

impl Drain {
    /// Empty miner.
    pub fn new(cfg: DrainConfig) -> Self {
        Drain {
            cfg,
            masker: Masker::default(),
            buf: String::new(),
            shape_ids: FxHashMap::default(),
            shapes: Vec::new(),
            tok_ids: FxHashMap::default(),
            names: vec![WILDCARD.into()],
            has_wild: vec![true],
            dotted: vec![false],
            by_len: FxHashMap::default(),
            groups: Vec::new(),
            scratch: Vec::new(),
        }
    }

    /// The configuration.
    pub fn config(&self) -> &DrainConfig {
        &self.cfg
    }

    fn intern(&mut self, tok: &str) -> u32 {
        if tok == WILDCARD {
            return WILD;
        }
        if let Some(&id) = self.tok_ids.get(tok) {
            return id;
        }
        let id = self.names.len() as u32;
        self.names.push(tok.into());
        self.has_wild.push(tok.contains(WILDCARD));
        self.dotted.push(crate::tokens::is_dotted_name(tok));
        self.tok_ids.insert(tok.into(), id);
        id
    }

    /// Adds one line; returns its shape id (lines with the same masked form share one).
    /// [`Drain::finish`] maps shapes to templates.
    pub fn add(&mut self, line: &str) -> u32 {
        let mut buf = std::mem::take(&mut self.buf);
        if self.cfg.mask {
            self.masker.mask(line, &mut buf);
        } else {
            buf.clear();
            for (i, t) in line.split_ascii_whitespace().enumerate() {
                if i > 0 {
                    buf.push(' ');
                }
                buf.push_str(t);
            }
        }
        let id = match self.shape_ids.get(buf.as_str()) {
            Some(&id) => {
                self.shapes[id as usize].count += 1;
                id
            }
            None => self.new_shape(&buf),
        };
        self.buf = buf;
        id
    }

    fn new_shape(&mut self, masked: &str) -> u32 {
        let mut toks = std::mem::take(&mut self.scratch);
        toks.clear();
        for t in masked.split(' ').filter(|t| !t.is_empty()) {
            let id = self.intern(t);
            toks.push(id);
        }
        let sid = self.shapes.len() as u32;
        self.place(&toks, sid);
        self.shapes.push(Shape { toks: toks.as_slice().into(), count: 1 });
        self.shape_ids.insert(masked.into(), sid);
        self.scratch = toks;
        sid
    }

    /// The most similar group of the same length at or above the threshold, or a new one.
    fn place(&mut self, toks: &[u32], sid: u32) -> u32 {
        let n = toks.len();
        let ids = self.by_len.entry(n).or_default();
        // at most this many differing positions keep similarity >= threshold
        let max_diff = if n == 0 { 0 } else { n - ((self.cfg.sim_threshold * n as f32).ceil() as usize).min(n) };
        let mut best: Option<(u32, usize, usize)> = None; // (group, diffs, wildcards)
        for &gid in ids.iter() {
            let g = &self.groups[gid as usize].toks;
            let mut diff = 0usize;
            for (&a, &b) in g.iter().zip(toks) {
                if a != b {
                    diff += 1;
                    if diff > max_diff {
                        break;
                    }
                }
            }
            if diff > max_diff {
                continue;
            }
            let wild = g.iter().filter(|&&t| t == WILD).count();
            let better = match best {
                None => true,
                Some((_, bd, bw)) => diff < bd || (diff == bd && wild > bw),
            };
            if better {
                best = Some((gid, diff, wild));
            }
        }
        match best {
            Some((gid, _, _)) => {
                let g = &mut self.groups[gid as usize];
                for (t, &x) in g.toks.iter_mut().zip(toks) {
                    if *t != x {
                        *t = WILD;
                    }
                }
                g.shapes.push(sid);
                gid
            }
            None => {
                let gid = self.groups.len() as u32;
                self.groups.push(Group { toks: toks.to_vec(), shapes: vec![sid] });
                ids.push(gid);
                gid
            }
        }
    }

    /// Adds every line of a build log (split with the crate's line convention, ANSI and CI
    /// timestamp prefixes removed, blank lines skipped); returns `(line number, shape id)`.
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

    /// Number of distinct line shapes so far.
    pub fn shapes(&self) -> usize {
        self.shapes.len()
    }

    /// True when no line was added.
    pub fn is_empty(&self) -> bool {
        self.shapes.is_empty()
    }

    /// Lines added so far.
    pub fn lines(&self) -> u64 {
        self.shapes.iter().map(|s| s.count).sum()
    }

    /// Splits the groups at constant word positions, joins groups that differ only in one
    /// value position, and returns every shape's template. Does not change the miner: more
    /// lines may be added and `finish` called again.
    pub fn finish(&self) -> Templates {
        let mut finals: Vec<Vec<u32>> = Vec::new();
        for g in &self.groups {
            self.split(&g.shapes, g.toks.len(), &mut Vec::new(), &mut finals);
        }
        for _ in 0..3 {
            if !self.join(&mut finals) {
                break;
            }
        }
        finals.iter_mut().for_each(|f| f.sort_unstable());
        finals.sort_by_key(|f| f[0]);
        let mut shape_template = vec![0u32; self.shapes.len()];
        let mut templates = Vec::with_capacity(finals.len());
        for (id, members) in finals.iter().enumerate() {
            let toks = self.template_of(members);
            let mut size = 0u64;
            for &s in members {
                size += self.shapes[s as usize].count;
                shape_template[s as usize] = id as u32;
            }
            let template = toks.iter().map(|&t| &*self.names[t as usize]).collect::<Vec<_>>().join(" ");
            templates.push(TemplateCluster { id: id as u32, template, size });
        }
        Templates { shape_template, templates }
    }

    fn template_of(&self, members: &[u32]) -> Vec<u32> {
        let mut toks: Vec<u32> = self.shapes[members[0] as usize].toks.to_vec();
        for &s in &members[1..] {
            for (t, &x) in toks.iter_mut().zip(self.shapes[s as usize].toks.iter()) {
                if *t != x {
                    *t = WILD;
                }
            }
        }
        toks
    }

    /// Would a position holding these word counts be split (see the module docs)?
    fn splits(&self, k: usize, lines: u64) -> bool {
        k >= 2 && k <= self.cfg.split_max_words && (k as f64) * f64::from(self.cfg.split_min_repeat) <= lines as f64
    }

    /// Joins families of groups whose templates are equal except at one position holding a
    /// word in each, when that position would not be split (many distinct words, few lines
    /// each: a value). Returns whether anything was joined.
    fn join(&self, finals: &mut Vec<Vec<u32>>) -> bool {
        let templates: Vec<Vec<u32>> = finals.iter().map(|m| self.template_of(m)).collect();
        let sizes: Vec<u64> = finals.iter().map(|m| m.iter().map(|&s| self.shapes[s as usize].count).sum()).collect();
        // (template with position p wildcarded, p) -> groups
        let mut families: FxHashMap<Family, Vec<usize>> = FxHashMap::default();
        for (g, t) in templates.iter().enumerate() {
            for p in 0..t.len() {
                if self.has_wild[t[p] as usize] {
                    continue;
                }
                let mut key = t.clone();
                key[p] = WILD;
                families.entry((key, p)).or_default().push(g);
            }
        }
        let mut fams: Vec<(Family, Vec<usize>)> = families.into_iter().filter(|(_, v)| v.len() > 1).collect();
        fams.sort_unstable();
        let mut parent: Vec<usize> = (0..finals.len()).collect();
        fn root(parent: &mut [usize], mut x: usize) -> usize {
            while parent[x] != x {
                parent[x] = parent[parent[x]];
                x = parent[x];
            }
            x
        }
        let mut joined = false;
        for ((_, p), gs) in &fams {
            let mut words: FxHashMap<u32, u64> = FxHashMap::default();
            let mut lines = 0u64;
            let mut names = false;
            for &g in gs {
                let w = templates[g][*p];
                names |= self.dotted[w as usize];
                *words.entry(w).or_insert(0) += sizes[g];
                lines += sizes[g];
            }
            if words.len() > 1 && !names && self.splits(words.len(), lines) {
                continue;
            }
            let r0 = root(&mut parent, gs[0]);
            for &g in &gs[1..] {
                let r = root(&mut parent, g);
                if r != r0 {
                    parent[r] = r0;
                    joined = true;
                }
            }
        }
        if !joined {
            return false;
        }
        let mut merged: FxHashMap<usize, Vec<u32>> = FxHashMap::default();
        let mut order = Vec::new();
        for (g, members) in finals.iter().enumerate() {
            let r = root(&mut parent, g);
            let e = merged.entry(r).or_insert_with(|| {
                order.push(r);
                Vec::new()
            });
            e.extend_from_slice(members);
        }
        *finals = order.into_iter().map(|r| merged.remove(&r).unwrap_or_default()).collect();
        true
    }

    /// Recursive split of `members` (shapes of one length `n`); `done` are positions
    /// already split on. Final member lists are sorted by shape id.
    fn split(&self, members: &[u32], n: usize, done: &mut Vec<usize>, out: &mut Vec<Vec<u32>>) {
        let mut best: Option<(usize, usize)> = None; // (distinct words, position)
        if members.len() > 1 {
            let mut counts: FxHashMap<u32, u64> = FxHashMap::default();
            for p in 0..n {
                if done.contains(&p) {
                    continue;
                }
                counts.clear();
                let mut total = 0u64;
                let mut usable = true;
                for &s in members {
                    let sh = &self.shapes[s as usize];
                    let t = sh.toks[p];
                    if self.has_wild[t as usize] || self.dotted[t as usize] {
                        usable = false;
                        break;
                    }
                    *counts.entry(t).or_insert(0) += sh.count;
                    total += sh.count;
                }
                let k = counts.len();
                if !usable || !self.splits(k, total) {
                    continue;
                }
                if best.is_none_or(|(bk, _)| k < bk) {
                    best = Some((k, p));
                }
            }
        }
        let Some((_, p)) = best else {
            let mut m = members.to_vec();
            m.sort_unstable();
            out.push(m);
            return;
        };
        // children in order of their first shape
        let mut children: Vec<(u32, Vec<u32>)> = Vec::new();
        let mut index: FxHashMap<u32, usize> = FxHashMap::default();
        for &s in members {
            let t = self.shapes[s as usize].toks[p];
            let i = *index.entry(t).or_insert_with(|| {
                children.push((t, Vec::new()));
                children.len() - 1
            });
            children[i].1.push(s);
        }
        done.push(p);
        for (_, c) in &children {
            self.split(c, n, done, out);
        }
        done.pop();
    }
}

/// Mines templates for `lines` with `cfg`; returns each line's template (final, after all
/// lines were seen) and the templates.
pub fn mine<S: AsRef<str>>(lines: &[S], cfg: &DrainConfig) -> (Vec<String>, Vec<TemplateCluster>) {
    let ids = mine_ids(lines, cfg);
    let per_line = ids.0.iter().map(|&i| ids.1[i as usize].template.clone()).collect();
    (per_line, ids.1)
}

/// Like [`mine`], with each line's template id instead of its text.
pub fn mine_ids<S: AsRef<str>>(lines: &[S], cfg: &DrainConfig) -> (Vec<u32>, Vec<TemplateCluster>) {
    let mut d = Drain::new(cfg.clone());
    let shapes: Vec<u32> = lines.iter().map(|l| d.add(l.as_ref())).collect();
    let t = d.finish();
    (shapes.iter().map(|&s| t.shape_template[s as usize]).collect(), t.templates)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn masks_and_merges() {
        let lines = [
            "Received block blk_123 of size 67108864 from /10.0.0.1",
            "Received block blk_456 of size 1024 from /10.0.0.2",
            "Changing view acls to: yarn,curi",
            "Changing view acls to: root,admin",
        ];
        let (t, c) = mine(&lines, &DrainConfig::default());
        assert_eq!(t[0], t[1]);
        assert_eq!(t[0], "Received block <*> of size <*> from <*>");
        assert_eq!(t[2], t[3]);
        assert_eq!(t[2], "Changing view acls to: <*>");
        assert_eq!(c.len(), 2);
        assert_eq!(c[0].size, 2);
    }

    #[test]
    fn few_repeated_words_split_many_words_are_values() {
        let mut lines = Vec::new();
        for i in 0..30 {
            lines.push(format!("[instance: {i}] VM Paused (Lifecycle Event)"));
            lines.push(format!("[instance: {i}] VM Resumed (Lifecycle Event)"));
        }
        // user names: many distinct words in one position
        for u in ["alice", "bob", "carol", "dave", "erin", "frank", "grace", "heidi", "ivan", "judy"] {
            lines.push(format!("Invalid user {u} from 10.0.0.1"));
        }
        let (t, c) = mine(&lines, &DrainConfig::default());
        assert_eq!(t[0], "[instance: <*>] VM Paused (Lifecycle Event)");
        assert_eq!(t[1], "[instance: <*>] VM Resumed (Lifecycle Event)");
        assert_eq!(t[60], "Invalid user <*> from <*>");
        assert_eq!(c.len(), 3);
    }

    #[test]
    fn variable_first_token_does_not_split() {
        let lines: Vec<String> = ["chrome", "firefox", "curl", "wget", "git", "ssh", "scp", "rsync"]
            .iter()
            .map(|p| format!("{p} - proxy.example.org:{} open through proxy HTTPS", 5000))
            .collect();
        let (t, c) = mine(&lines, &DrainConfig::default());
        assert_eq!(c.len(), 1, "{t:?}");
        assert_eq!(t[0], "<*> - <*> open through proxy HTTPS");
    }

    #[test]
    fn dotted_names_are_values_even_when_few_and_frequent() {
        let mut lines = Vec::new();
        for i in 0..40 {
            let prog = ["chrome.exe", "mail.exe", "sync.exe"][i % 3];
            lines.push(format!("{prog} - proxy.example.org:80 close, {i} bytes sent"));
        }
        let (t, c) = mine(&lines, &DrainConfig::default());
        assert_eq!(c.len(), 1, "{t:?}");
        assert_eq!(t[0], "<*> - <*> close, <*> sent");
    }

    #[test]
    fn order_of_first_appearance_and_finish_is_repeatable() {
        let mut d = Drain::default();
        let a = d.add("a 1");
        let b = d.add("b c d");
        let a2 = d.add("a 2");
        assert_eq!(a, a2, "same masked form, same shape");
        let t1 = d.finish();
        let t2 = d.finish();
        assert_eq!(t1, t2);
        assert_eq!(t1.of(a).id, 0);
        assert_eq!(t1.of(b).id, 1);
        assert_eq!(t1.of(a).size, 2);
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
