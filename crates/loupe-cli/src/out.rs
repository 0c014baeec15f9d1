//! Writing the answer to stdout. A reader that stops early (`loupe query …
//! | head`) ends the process quietly, with the status a shell gives a
//! process killed by SIGPIPE, as `cat` would end: `println!` would panic
//! with a backtrace instead (Rust ignores SIGPIPE, and restoring it takes
//! `unsafe`, which this workspace forbids).

use std::io::Write;

/// `println!` to stdout, ending quietly when the reader has gone.
macro_rules! outln {
    () => {
        $crate::out::write(format_args!("\n"))
    };
    ($($arg:tt)*) => {
        $crate::out::write(format_args!("{}\n", format_args!($($arg)*)))
    };
}

/// `print!` to stdout, ending quietly when the reader has gone.
macro_rules! out {
    ($($arg:tt)*) => {
        $crate::out::write(format_args!($($arg)*))
    };
}

/// The status of a process ended by SIGPIPE (128 + 13).
const CLOSED_PIPE_STATUS: i32 = 141;

/// Writes `args` to stdout; exits when stdout cannot be written.
pub(crate) fn write(args: std::fmt::Arguments<'_>) {
    let mut stdout = std::io::stdout().lock();
    if let Err(e) = stdout.write_fmt(args) {
        if e.kind() == std::io::ErrorKind::BrokenPipe {
            std::process::exit(CLOSED_PIPE_STATUS);
        }
        eprintln!("error: writing the answer to stdout: {e}");
        std::process::exit(1);
    }
}
