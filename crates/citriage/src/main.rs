//! The `citriage` command: parses arguments and hands off to the library.

fn main() {
    std::process::exit(citriage::cli::main_with_args(std::env::args_os()));
}
