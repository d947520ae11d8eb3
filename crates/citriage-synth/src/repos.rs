//! Source repositories of the synthetic world: merge timelines per branch
//! (which commit a periodic run checks out) and pull-request streams (which
//! PR heads presubmits test). Everything is a pure function of the seed, the
//! repository and the day, so every job sees the same history.

use crate::rng::{fake_sha, hash_parts, Rng};
use citriage_model::time::{DAY, HOUR};

/// Static facts about a repository.
#[derive(Debug)]
pub struct RepoInfo {
    pub org: &'static str,
    pub repo: &'static str,
    pub default_branch: &'static str,
    /// Pull requests opened per weekday.
    pub prs_per_day: u32,
    /// Merges into the default branch per weekday.
    pub merges_per_day: u32,
    /// First PR number of the world (numbers grow with time).
    pub pr_base: u32,
}

pub const REPOS: &[RepoInfo] = &[
    RepoInfo {
        org: "kubernetes",
        repo: "kubernetes",
        default_branch: "master",
        prs_per_day: 40,
        merges_per_day: 30,
        pr_base: 137_100,
    },
    RepoInfo {
        org: "kubernetes",
        repo: "kops",
        default_branch: "master",
        prs_per_day: 6,
        merges_per_day: 7,
        pr_base: 17_900,
    },
    RepoInfo {
        org: "kubernetes",
        repo: "test-infra",
        default_branch: "master",
        prs_per_day: 14,
        merges_per_day: 18,
        pr_base: 36_400,
    },
    RepoInfo {
        org: "kubernetes",
        repo: "minikube",
        default_branch: "master",
        prs_per_day: 5,
        merges_per_day: 4,
        pr_base: 21_400,
    },
    RepoInfo {
        org: "kubernetes",
        repo: "release",
        default_branch: "master",
        prs_per_day: 2,
        merges_per_day: 2,
        pr_base: 4_050,
    },
    RepoInfo {
        org: "kubernetes",
        repo: "perf-tests",
        default_branch: "master",
        prs_per_day: 1,
        merges_per_day: 1,
        pr_base: 3_950,
    },
    RepoInfo {
        org: "kubernetes-sigs",
        repo: "cluster-api-provider-aws",
        default_branch: "main",
        prs_per_day: 3,
        merges_per_day: 3,
        pr_base: 5_800,
    },
    RepoInfo {
        org: "kubernetes-sigs",
        repo: "cluster-api-provider-azure",
        default_branch: "main",
        prs_per_day: 5,
        merges_per_day: 5,
        pr_base: 5_900,
    },
    RepoInfo {
        org: "kubernetes-sigs",
        repo: "cluster-api-provider-vsphere",
        default_branch: "main",
        prs_per_day: 2,
        merges_per_day: 2,
        pr_base: 3_450,
    },
    RepoInfo {
        org: "kubernetes-sigs",
        repo: "cluster-api-provider-gcp",
        default_branch: "main",
        prs_per_day: 1,
        merges_per_day: 1,
        pr_base: 1_400,
    },
    RepoInfo {
        org: "kubernetes-sigs",
        repo: "cluster-api-provider-digitalocean",
        default_branch: "main",
        prs_per_day: 1,
        merges_per_day: 1,
        pr_base: 690,
    },
    RepoInfo {
        org: "kubernetes-sigs",
        repo: "cluster-api-addon-provider-helm",
        default_branch: "main",
        prs_per_day: 1,
        merges_per_day: 1,
        pr_base: 470,
    },
    RepoInfo {
        org: "kubernetes-sigs",
        repo: "gcp-compute-persistent-disk-csi-driver",
        default_branch: "master",
        prs_per_day: 2,
        merges_per_day: 2,
        pr_base: 2_200,
    },
    RepoInfo {
        org: "kubernetes-sigs",
        repo: "azuredisk-csi-driver",
        default_branch: "master",
        prs_per_day: 2,
        merges_per_day: 2,
        pr_base: 3_150,
    },
    RepoInfo {
        org: "kubernetes-sigs",
        repo: "kueue",
        default_branch: "main",
        prs_per_day: 6,
        merges_per_day: 6,
        pr_base: 7_100,
    },
    RepoInfo {
        org: "kubernetes-sigs",
        repo: "descheduler",
        default_branch: "master",
        prs_per_day: 1,
        merges_per_day: 1,
        pr_base: 1_830,
    },
    RepoInfo {
        org: "kubernetes-sigs",
        repo: "cloud-provider-azure",
        default_branch: "master",
        prs_per_day: 3,
        merges_per_day: 3,
        pr_base: 9_200,
    },
    RepoInfo {
        org: "kubernetes-sigs",
        repo: "cloud-provider-kind",
        default_branch: "main",
        prs_per_day: 1,
        merges_per_day: 1,
        pr_base: 390,
    },
    RepoInfo {
        org: "kubernetes-sigs",
        repo: "apiserver-network-proxy",
        default_branch: "master",
        prs_per_day: 1,
        merges_per_day: 1,
        pr_base: 820,
    },
    RepoInfo {
        org: "kubernetes-csi",
        repo: "csi-driver-host-path",
        default_branch: "master",
        prs_per_day: 1,
        merges_per_day: 1,
        pr_base: 590,
    },
    RepoInfo {
        org: "kubernetes-csi",
        repo: "external-snapshotter",
        default_branch: "master",
        prs_per_day: 1,
        merges_per_day: 1,
        pr_base: 1_290,
    },
    RepoInfo {
        org: "etcd-io",
        repo: "etcd",
        default_branch: "main",
        prs_per_day: 6,
        merges_per_day: 6,
        pr_base: 20_700,
    },
];

/// Looks up a repository by `org/repo`.
pub fn repo_info(full: &str) -> &'static RepoInfo {
    REPOS.iter().find(|r| full.split_once('/') == Some((r.org, r.repo))).unwrap_or(&REPOS[0])
}

fn weekday_factor(day: i64) -> u32 {
    // 1970-01-01 was a Thursday; 0 = Monday.
    let wd = (day + 3).rem_euclid(7);
    if wd >= 5 {
        2
    } else {
        10
    }
}

/// Merge times (ascending) of a branch on one day.
pub fn merges_on(seed: u64, full: &str, branch: &str, day: i64) -> Vec<i64> {
    let info = repo_info(full);
    let per_day = if branch == info.default_branch {
        info.merges_per_day
    } else {
        // Release branches: a cherry-pick every few days.
        1
    };
    let mut r = Rng::for_key(seed, &["merges", full, branch, &day.to_string()]);
    let mean10 = per_day * weekday_factor(day); // in tenths
    let n = if branch == info.default_branch {
        (r.range(0, u64::from(mean10) * 2) / 10) as usize
    } else if r.below(30) < u64::from(weekday_factor(day)) {
        1
    } else {
        0
    };
    let mut ts: Vec<i64> = (0..n).map(|_| day * DAY + r.below(DAY as u64) as i64).collect();
    ts.sort_unstable();
    ts.dedup();
    ts
}

/// Walks a branch's history forward in time, answering "which commit is
/// HEAD at time t" for non-decreasing `t` cheaply.
pub struct BranchCursor {
    seed: u64,
    full: String,
    branch: String,
    day: i64,
    merges: Vec<i64>,
    /// HEAD before the first merge of `day`.
    carried: (String, i64),
}

impl BranchCursor {
    pub fn new(seed: u64, full: &str, branch: &str) -> Self {
        BranchCursor {
            seed,
            full: full.to_string(),
            branch: branch.to_string(),
            day: i64::MIN,
            merges: Vec::new(),
            carried: (String::new(), 0),
        }
    }

    fn sha(&self, day: i64, idx: usize) -> String {
        fake_sha(self.seed, &["commit", &self.full, &self.branch, &day.to_string(), &idx.to_string()])
    }

    /// Finds the last merge at or before the end of `day - 1`, scanning back
    /// at most 60 days (then a fixed "base" commit).
    fn head_before_day(&self, day: i64) -> (String, i64) {
        for d in (day - 60..day).rev() {
            let m = merges_on(self.seed, &self.full, &self.branch, d);
            if let Some(&t) = m.last() {
                return (self.sha(d, m.len() - 1), t);
            }
        }
        (fake_sha(self.seed, &["commit", &self.full, &self.branch, "base"]), (day - 61) * DAY)
    }

    /// `(sha, merge time)` of HEAD at `t`.
    pub fn head_at(&mut self, t: i64) -> (String, i64) {
        let day = t.div_euclid(DAY);
        if day != self.day {
            if day == self.day + 1 {
                // Carry forward from the day we already know.
                let prev = if let Some(&last) = self.merges.last() {
                    (self.sha(self.day, self.merges.len() - 1), last)
                } else {
                    self.carried.clone()
                };
                self.carried = prev;
            } else {
                self.carried = self.head_before_day(day);
            }
            self.day = day;
            self.merges = merges_on(self.seed, &self.full, &self.branch, day);
        }
        match self.merges.iter().rposition(|&m| m <= t) {
            Some(i) => (self.sha(day, i), self.merges[i]),
            None => self.carried.clone(),
        }
    }

    /// All merges in `[from, to)` (ascending), for postsubmit triggers.
    pub fn merges_between(&self, from: i64, to: i64) -> Vec<(i64, String)> {
        let mut out = Vec::new();
        let mut d = from.div_euclid(DAY);
        while d * DAY < to {
            for (i, &t) in merges_on(self.seed, &self.full, &self.branch, d).iter().enumerate() {
                if t >= from && t < to {
                    out.push((t, self.sha(d, i)));
                }
            }
            d += 1;
        }
        out
    }
}

/// A pull request and its pushes.
#[derive(Clone, Debug)]
pub struct PullRequest {
    pub number: u32,
    pub author: String,
    pub title: String,
    /// `(push time, head sha)` ascending.
    pub pushes: Vec<(i64, String)>,
}

const AUTHORS: &[&str] = &[
    "alice-k8s",
    "bwong",
    "carmen-dev",
    "dkumar",
    "eoyelaran",
    "fjmartin",
    "gchen42",
    "hsato",
    "ivanova-o",
    "jpark",
    "kmurphy",
    "lrossi",
    "mnakamura",
    "nsingh",
    "ovargas",
    "pmueller",
    "qliu",
    "rhughes",
    "sdubois",
    "tkaur",
    "dependabot[bot]",
];
const TITLE_VERBS: &[&str] =
    &["Fix", "Add", "Remove", "Refactor", "Bump", "Promote", "Deflake", "Update", "Clean up", "Validate", "Document"];
const TITLE_OBJS: &[&str] = &[
    "pod resize status handling",
    "endpoint slice mirroring",
    "kubelet cgroup driver detection",
    "CSI volume expansion retries",
    "scheduler queueing hints",
    "apiserver watch cache consistency",
    "kubectl apply server-side conflicts",
    "feature gate lifecycle docs",
    "golang.org/x/net to v0.47.0",
    "e2e framework timeouts",
    "DRA resource slice publishing",
    "node lease renewal",
];

fn prs_window(info: &RepoInfo) -> u32 {
    info.prs_per_day * 2 + 2
}

/// PRs opened on `day` in a repository (release-branch PRs included).
pub fn prs_opened_on(seed: u64, full: &str, day: i64, start_day: i64) -> Vec<PullRequest> {
    let info = repo_info(full);
    let mut r = Rng::for_key(seed, &["prs", full, &day.to_string()]);
    let mean10 = u64::from(info.prs_per_day * weekday_factor(day));
    let n = (r.range(0, mean10 * 2) / 10).min(u64::from(prs_window(info) - 1)) as u32;
    (0..n)
        .map(|i| {
            let number = info.pr_base + ((day - start_day).max(0) as u32) * prs_window(info) + i;
            pr_details(seed, full, number, day * DAY + r.below(DAY as u64) as i64)
        })
        .collect()
}

/// Deterministic details of PR `number` first pushed at `opened`.
pub fn pr_details(seed: u64, full: &str, number: u32, opened: i64) -> PullRequest {
    let mut r = Rng::for_key(seed, &["pr", full, &number.to_string()]);
    let author = r.pick_str(AUTHORS).to_string();
    let title = if author.starts_with("dependabot") {
        format!(
            "build(deps): bump {} in the go-modules group",
            r.pick_str(&["golang.org/x/net", "google.golang.org/grpc", "github.com/onsi/gomega", "sigs.k8s.io/yaml"])
        )
    } else {
        format!("{} {}", r.pick_str(TITLE_VERBS), r.pick_str(TITLE_OBJS))
    };
    let mut pushes = vec![(opened, r.hex(40))];
    let mut t = opened;
    while pushes.len() < 5 && r.chance(0.45) {
        t += (HOUR as u64 + r.below(3 * DAY as u64)) as i64;
        pushes.push((t, r.hex(40)));
    }
    PullRequest { number, author, title, pushes }
}

/// Stable 64-bit key for per-PR decisions.
pub fn pr_key(seed: u64, job: &str, number: u32, push: usize) -> u64 {
    hash_parts(seed, &["pr-run", job, &number.to_string(), &push.to_string()])
}
