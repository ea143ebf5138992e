//! The `picajit` command-line tool (`src/cli` and each ISA's `cli` module).

fn main() -> std::process::ExitCode {
    picajit::cli::main()
}
