//! TestGrid's JSON answers as typed, validated data: a tab's table
//! (`/<dashboard>/table?tab=<tab>`: columns of runs × rows of tests, each row's
//! run-length-encoded `statuses`, its `messages` and `short_texts`, the tab's links and
//! alert fields) and a dashboard's summary (`/<dashboard>/summary`: one entry per tab).
//!
//! The status numbers and their meanings are TestGrid's own (`pb/test_status/
//! test_status.proto`, and which of them pass or fail from its `internal/result`
//! package); [`TestStatus::reading`] says how citriage counts each. Tables are read
//! as a stream of tokens into compact rows (a cell is one byte; messages are kept only
//! where they are not empty), with the memory they will take counted as they are
//! read: a table larger than the caller's limit is refused, naming the tab and where
//! it went over, before it is held. Every other problem is an error naming the tab and
//! the field.

mod summary;
mod table;

pub use summary::{parse_summary, DashboardSummary, FailingTest, TabSummary};
pub use table::{parse_table, read_table};

use serde::Serialize;
use std::collections::BTreeMap;

/// TestGrid's test status (`TestStatus` of `test_status.proto`), by its number.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[repr(u8)]
pub enum TestStatus {
    NoResult = 0,
    Pass = 1,
    PassWithErrors = 2,
    PassWithSkips = 3,
    Running = 4,
    CategorizedAbort = 5,
    Unknown = 6,
    Cancel = 7,
    Blocked = 8,
    TimedOut = 9,
    CategorizedFail = 10,
    BuildFail = 11,
    Fail = 12,
    Flaky = 13,
    ToolFail = 14,
    BuildPassed = 15,
}

/// How citriage counts a cell of a given status (see [`TestStatus::reading`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Reading {
    /// The test did not run in that column: nothing is stored.
    NotRun,
    /// A passing result.
    Passed,
    /// A failing result.
    Failed,
    /// Failed and passed in the same run: stored as a failed attempt and a passed one.
    Flaky,
    /// A skipped test: counted on the build, not stored (as JUnit's skipped cases).
    Skipped,
    /// Still running: no result yet.
    Running,
    /// Neither a pass nor a failure (TestGrid coalesces these to UNKNOWN): not counted
    /// as a result; recorded on the build as a problem naming the status.
    Unsettled,
}

impl TestStatus {
    /// Every status, in number order.
    pub const ALL: [TestStatus; 16] = [
        TestStatus::NoResult,
        TestStatus::Pass,
        TestStatus::PassWithErrors,
        TestStatus::PassWithSkips,
        TestStatus::Running,
        TestStatus::CategorizedAbort,
        TestStatus::Unknown,
        TestStatus::Cancel,
        TestStatus::Blocked,
        TestStatus::TimedOut,
        TestStatus::CategorizedFail,
        TestStatus::BuildFail,
        TestStatus::Fail,
        TestStatus::Flaky,
        TestStatus::ToolFail,
        TestStatus::BuildPassed,
    ];

    /// The status with this number, `None` for a number the enum does not have.
    pub fn from_number(n: u64) -> Option<TestStatus> {
        usize::try_from(n).ok().and_then(|i| TestStatus::ALL.get(i).copied())
    }

    /// The number TestGrid writes.
    pub fn number(self) -> u8 {
        self as u8
    }

    /// The name in `test_status.proto`.
    pub fn name(self) -> &'static str {
        match self {
            TestStatus::NoResult => "NO_RESULT",
            TestStatus::Pass => "PASS",
            TestStatus::PassWithErrors => "PASS_WITH_ERRORS",
            TestStatus::PassWithSkips => "PASS_WITH_SKIPS",
            TestStatus::Running => "RUNNING",
            TestStatus::CategorizedAbort => "CATEGORIZED_ABORT",
            TestStatus::Unknown => "UNKNOWN",
            TestStatus::Cancel => "CANCEL",
            TestStatus::Blocked => "BLOCKED",
            TestStatus::TimedOut => "TIMED_OUT",
            TestStatus::CategorizedFail => "CATEGORIZED_FAIL",
            TestStatus::BuildFail => "BUILD_FAIL",
            TestStatus::Fail => "FAIL",
            TestStatus::Flaky => "FLAKY",
            TestStatus::ToolFail => "TOOL_FAIL",
            TestStatus::BuildPassed => "BUILD_PASSED",
        }
    }

    /// Whether TestGrid counts it as passing (`result.Passing`: BUILD_PASSED, PASS,
    /// PASS_WITH_SKIPS, PASS_WITH_ERRORS).
    pub fn testgrid_passing(self) -> bool {
        matches!(
            self,
            TestStatus::BuildPassed | TestStatus::Pass | TestStatus::PassWithSkips | TestStatus::PassWithErrors
        )
    }

    /// Whether TestGrid counts it as failing (`result.Failing`: TOOL_FAIL, TIMED_OUT,
    /// CATEGORIZED_FAIL, BUILD_FAIL, FAIL).
    pub fn testgrid_failing(self) -> bool {
        matches!(
            self,
            TestStatus::ToolFail
                | TestStatus::TimedOut
                | TestStatus::CategorizedFail
                | TestStatus::BuildFail
                | TestStatus::Fail
        )
    }

    /// How citriage counts a cell of this status. TestGrid's own coalescing decides
    /// passes, failures and flakes; within its passes, PASS_WITH_SKIPS is what its GCS
    /// updater writes for a JUnit case skipped with a reason, so citriage counts it as
    /// JUnit's skipped cases are counted (on the build, not as a result); RUNNING is
    /// no result yet; the statuses TestGrid coalesces to UNKNOWN are neither.
    pub fn reading(self) -> Reading {
        match self {
            TestStatus::NoResult => Reading::NotRun,
            TestStatus::PassWithSkips => Reading::Skipped,
            TestStatus::Running => Reading::Running,
            TestStatus::Flaky => Reading::Flaky,
            s if s.testgrid_passing() => Reading::Passed,
            s if s.testgrid_failing() => Reading::Failed,
            _ => Reading::Unsettled,
        }
    }
}

impl std::fmt::Display for TestStatus {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

/// Why a TestGrid answer was refused: the tab (or dashboard), the field and what was
/// wrong.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("TestGrid {what}: {field}: {problem}")]
pub struct TestgridError {
    /// `tab "…"` or `dashboard "…" summary`.
    pub what: String,
    /// The field, with its row or column where it applies.
    pub field: String,
    pub problem: String,
}

/// What a table may cost in memory once read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TableLimits {
    /// Bytes the table may take once held (cells, names, messages, columns); the
    /// caller passes its memory budget.
    pub max_bytes: u64,
}

impl Default for TableLimits {
    fn default() -> Self {
        TableLimits { max_bytes: 512 << 20 }
    }
}

/// One column of a table: one run of the tab's job.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Column {
    /// The build id (`changelists`).
    pub build: String,
    /// When it started, milliseconds since the epoch (`timestamps`), `None` when the
    /// table gives no usable number.
    pub started_ms: Option<i64>,
    /// The values of the custom columns (`custom-columns`), one per
    /// [`TestgridTable::custom_headers`].
    pub custom: Vec<String>,
}

/// An alert TestGrid raised on a row (the row's `alert`).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct RowAlert {
    pub fail_count: Option<u64>,
    /// The build it first failed at (`fail-cl`) and when (`fail-time`, ms).
    pub fail_build: Option<String>,
    pub fail_time_ms: Option<i64>,
    /// The build it last passed at (`pass-cl`) and when (`pass-time`, ms).
    pub pass_build: Option<String>,
    pub pass_time_ms: Option<i64>,
    pub text: Option<String>,
    pub message: Option<String>,
}

/// One row: a test's results in every column.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Row {
    pub name: String,
    /// One status per column, expanded from the run-length encoding.
    pub cells: Vec<TestStatus>,
    /// Non-empty messages by column (`messages`, present for every column with a
    /// result), in column order.
    pub messages: Vec<(u32, String)>,
    /// Non-empty short texts (the cell's icon, `short_texts`) by column.
    pub short_texts: Vec<(u32, String)>,
    pub alert: Option<RowAlert>,
    /// Bugs TestGrid links to the row.
    pub linked_bugs: Vec<String>,
}

impl Row {
    /// The message of a column, if any.
    pub fn message(&self, column: usize) -> Option<&str> {
        let c = u32::try_from(column).ok()?;
        self.messages.binary_search_by_key(&c, |(i, _)| *i).ok().map(|i| self.messages[i].1.as_str())
    }
}

/// A link template of the tab (`url` with `<placeholders>`, and its options).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct LinkTemplate {
    pub url: String,
    pub options: BTreeMap<String, String>,
}

/// The tab's own settings and links, as the table answer carries them.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct TabMeta {
    /// The test group behind the tab (`test-group-name`).
    pub test_group: Option<String>,
    /// Where its results are read from (`query`: a GCS bucket and prefix).
    pub query: Option<String>,
    pub description: Option<String>,
    /// Link templates by their key (`open-test-template`, `file-bug-template`,
    /// `attach-bug-template`, `results-url-template`, `code-search-url-template`,
    /// `open-bug-template`), those with a URL only.
    pub templates: BTreeMap<String, LinkTemplate>,
    pub code_search_path: Option<String>,
    pub results_text: Option<String>,
    pub about_dashboard_url: Option<String>,
    pub bug_component: Option<u64>,
    /// Alert settings: runs after which a test with no result is stale
    /// (`stale-test-threshold`), how many tests are stale (`num-stale-tests`).
    pub stale_test_threshold: Option<u64>,
    pub num_stale_tests: Option<u64>,
    /// The tab's overall status number (`overall-status`) and latest green build.
    pub overall_status: Option<u64>,
    pub latest_green: Option<String>,
    /// The names of the header rows (`column-header-names`).
    pub header_names: Vec<String>,
    /// TestGrid's own failure clusters (`clusters`) in the answer.
    pub clusters: u64,
}

/// A tab's table, validated: every row has one status per column.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct TestgridTable {
    /// The tab, as the caller named it.
    pub tab: String,
    pub columns: Vec<Column>,
    /// The names of the custom columns, one per value in [`Column::custom`].
    pub custom_headers: Vec<String>,
    pub rows: Vec<Row>,
    pub meta: TabMeta,
    /// Non-fatal remarks (fields citriage does not read).
    pub warnings: Vec<String>,
}

impl TestgridTable {
    /// Cells per status over the whole table, every status of the enum listed.
    pub fn status_counts(&self) -> BTreeMap<TestStatus, u64> {
        let mut counts = [0u64; 16];
        for r in &self.rows {
            for c in &r.cells {
                counts[*c as usize] += 1;
            }
        }
        TestStatus::ALL.iter().map(|s| (*s, counts[*s as usize])).collect()
    }

    /// The values of the custom column of this name, if the table has one (the last
    /// of that name when several share it).
    pub fn custom_column(&self, name: &str) -> Option<usize> {
        self.custom_headers.iter().rposition(|h| h == name)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_status_has_one_reading_following_testgrids_coalescing() {
        for (i, s) in TestStatus::ALL.iter().enumerate() {
            assert_eq!(s.number() as usize, i);
            assert_eq!(TestStatus::from_number(i as u64), Some(*s));
            // Never both.
            assert!(!(s.testgrid_passing() && s.testgrid_failing()), "{s}");
            match s.reading() {
                Reading::Passed | Reading::Skipped => assert!(s.testgrid_passing(), "{s}"),
                Reading::Failed => assert!(s.testgrid_failing(), "{s}"),
                Reading::Flaky => assert_eq!(*s, TestStatus::Flaky),
                Reading::NotRun => assert_eq!(*s, TestStatus::NoResult),
                Reading::Running => assert_eq!(*s, TestStatus::Running),
                Reading::Unsettled => assert!(!s.testgrid_passing() && !s.testgrid_failing(), "{s}"),
            }
        }
        assert_eq!(TestStatus::from_number(16), None);
        let unsettled: Vec<&str> =
            TestStatus::ALL.iter().filter(|s| s.reading() == Reading::Unsettled).map(|s| s.name()).collect();
        assert_eq!(unsettled, ["CATEGORIZED_ABORT", "UNKNOWN", "CANCEL", "BLOCKED"]);
    }
}
