//! Running the `citriage` binary in tests: without the user's store variable or
//! default store, without colour, on a given store.

#![allow(dead_code)]

use std::path::Path;
use std::process::{Command, Output};

/// The binary, with `CITRIAGE_DB` unset, the default store in a folder of this test
/// process (never the user's `~/.local/share/citriage`), and `NO_COLOR` set.
pub fn bin() -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_citriage"));
    let data_home = std::env::temp_dir().join(format!("citriage-test-data-{}", std::process::id()));
    c.env_remove("CITRIAGE_DB").env("XDG_DATA_HOME", data_home).env("NO_COLOR", "1");
    c
}

/// `citriage --db DB --quiet ARGS...`, whatever its exit.
pub fn run(db: &Path, args: &[&str]) -> Output {
    bin().arg("--db").arg(db).arg("--quiet").args(args).output().expect("runs")
}

pub fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}
