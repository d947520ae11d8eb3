//! Every option of every command says what it does in `--help`, and every option that
//! takes a value names its default (clap's `[default: …]`, or "Default"/"default" in
//! its description, or "required"/"Repeatable" for values with no default).

use clap::CommandFactory;

fn walk(cmd: &clap::Command, path: &str, problems: &mut Vec<String>) {
    for arg in cmd.get_arguments() {
        let id = arg.get_id().as_str();
        if id == "help" || id == "version" {
            continue;
        }
        let name = arg.get_long().map(|l| format!("--{l}")).unwrap_or_else(|| id.to_uppercase());
        let help = arg.get_help().map(|h| h.to_string()).unwrap_or_default();
        if help.trim().is_empty() {
            problems.push(format!("{path} {name}: no description"));
            continue;
        }
        let takes_value = arg.get_num_args().is_some_and(|n| n.takes_values()) && !arg.is_positional();
        let flag =
            matches!(arg.get_action(), clap::ArgAction::SetTrue | clap::ArgAction::SetFalse | clap::ArgAction::Count);
        if takes_value && !flag {
            let has_default = !arg.get_default_values().is_empty();
            let says = help.contains("default") || help.contains("Default") || help.contains("Repeatable");
            if !has_default && !says && !arg.is_required_set() {
                problems.push(format!("{path} {name}: no default named"));
            }
        }
    }
    for sub in cmd.get_subcommands() {
        walk(sub, &format!("{path} {}", sub.get_name()), problems);
    }
}

#[test]
fn every_option_has_a_description_and_a_default() {
    let mut cmd = citriage::cli::Cli::command();
    cmd.build();
    let mut problems = Vec::new();
    walk(&cmd, "citriage", &mut problems);
    assert!(problems.is_empty(), "{} option(s) to document:\n{}", problems.len(), problems.join("\n"));
}
