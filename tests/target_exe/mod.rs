//! Starting programs built for the test's target (the `picajit` binary, C programs linked
//! against the library).
//!
//! A cross-built test suite runs under a user-mode emulator (`scripts/test-aarch64.sh` runs
//! the AArch64 build under `qemu-aarch64`). The emulator runs the test process, but the kernel
//! cannot start a child of the target's architecture by itself (no binfmt handler in a
//! container), so `PICAJIT_TEST_RUNNER` names the emulator command (words separated by
//! spaces) to start such children through. Unset, they are started directly.

use std::ffi::OsStr;
use std::process::Command;

/// A command that runs `exe`, a program built for the architecture this test was built for.
pub fn target_command(exe: impl AsRef<OsStr>) -> Command {
    match runner() {
        Some(words) => {
            let mut cmd = Command::new(&words[0]);
            cmd.args(&words[1..]).arg(exe);
            cmd
        }
        None => Command::new(exe),
    }
}

/// The emulator command from `PICAJIT_TEST_RUNNER`, if one is set.
pub fn runner() -> Option<Vec<String>> {
    let words: Vec<String> = std::env::var("PICAJIT_TEST_RUNNER")
        .ok()?
        .split_whitespace()
        .map(str::to_string)
        .collect();
    (!words.is_empty()).then_some(words)
}
