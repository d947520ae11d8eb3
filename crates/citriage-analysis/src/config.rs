//! Tunable knobs of the snapshot analysis, loadable from a TOML file
//! (`citriage triage --config FILE`); every field has a documented default.

use serde::{Deserialize, Serialize};

/// Analysis settings.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct AnalysisConfig {
    /// JUnit names that are harness steps, not tests (kubetest, CAPV, ...).
    pub harness_test_names: Vec<String>,
    /// Job-name substrings (lower-cased) of lanes that are flaky or failing by design.
    pub by_design_job_patterns: Vec<String>,
    /// Test-name substrings marking by-design flaky tests.
    pub by_design_test_patterns: Vec<String>,
    /// A family of at least this many jobs...
    pub brand_new_min_family: usize,
    /// ...all at or below this many failing days is reported as a brand-new lane.
    pub brand_new_max_days: u32,
    /// Flakes drift: report jobs whose consistency moved by more than this.
    pub consistency_drift_threshold: f64,
    /// Cluster selection: the minimum and maximum number of clusters picked.
    pub min_clusters: usize,
    pub max_clusters: usize,
    /// Architecture-tagged categories are always picked above this many jobs.
    pub arch_min_jobs: usize,
    /// How many rows `top30.txt` lists.
    pub top_n: usize,
}

impl Default for AnalysisConfig {
    fn default() -> Self {
        AnalysisConfig {
            harness_test_names: [
                "Up",
                "Down",
                "Node Tests",
                "diffResources",
                "DiffResources",
                "DumpClusterLogs",
                "DumpFederationLogs",
                "Extract",
                "TearDown",
                "Test",
                "Preparation hack_e2e_sh",
                "kubetest2 Up",
                "kubetest2 Down",
            ]
            .map(String::from)
            .to_vec(),
            by_design_job_patterns: ["-flaky", "alpha-enabled-default", "-canary"].map(String::from).to_vec(),
            by_design_test_patterns: ["[Flaky]"].map(String::from).to_vec(),
            brand_new_min_family: 3,
            brand_new_max_days: 3,
            consistency_drift_threshold: 0.1,
            min_clusters: 8,
            max_clusters: 12,
            arch_min_jobs: 3,
            top_n: 30,
        }
    }
}

impl AnalysisConfig {
    /// Parses a config file; unspecified fields keep their defaults.
    pub fn from_toml(text: &str) -> Result<AnalysisConfig, String> {
        let c: AnalysisConfig = toml::from_str(text).map_err(|e| e.to_string())?;
        if c.min_clusters == 0 || c.min_clusters > c.max_clusters {
            return Err(format!(
                "min_clusters ({}) must be at least 1 and at most max_clusters ({})",
                c.min_clusters, c.max_clusters
            ));
        }
        if !(0.0..=1.0).contains(&c.consistency_drift_threshold) {
            return Err("consistency_drift_threshold must be within 0..1".into());
        }
        Ok(c)
    }

    /// Whether a JUnit name is a harness step.
    pub fn is_harness(&self, test: &str) -> bool {
        self.harness_test_names.iter().any(|h| h == test)
    }
}
