//! `loupe query --copy`: the prompt on the system clipboard, through arboard.
//!
//! On X11 (and Wayland through XWayland) a selection is not stored by the
//! server: the process that set it must answer every paste, and its
//! content vanishes when it exits. A CLI exits at once, so the copy is
//! served by a small helper: `loupe` re-runs itself as the hidden
//! `__serve-clipboard` subcommand in its own process group, hands it the
//! prompt on stdin, and the helper holds the selection with arboard's
//! [`SetExtLinux::wait`](arboard::SetExtLinux::wait) until someone copies something else (or the
//! display goes away). This is arboard's documented "daemonize" pattern;
//! `xclip` does the same by forking. The parent then reads the clipboard
//! back and only reports success when it holds the prompt.
//!
//! On macOS and Windows the system keeps the text, so it is set in-process.
//!
//! Not done: Wayland without XWayland (arboard's `wayland-data-control`
//! feature needs a compositor protocol GNOME lacks; XWayland is near
//! universal), and clipboard managers' history (we neither ask nor forbid).

use anyhow::{Result, bail};

/// The hidden subcommand that serves a copy.
pub const SERVE_COMMAND: &str = "__serve-clipboard";

/// Fails early, before any work, when there is no display to copy to.
pub fn check_available() -> Result<()> {
    if cfg!(all(
        unix,
        not(any(
            target_os = "macos",
            target_os = "android",
            target_os = "emscripten"
        ))
    )) {
        let set = |name: &str| std::env::var_os(name).is_some_and(|v| !v.is_empty());
        if !set("DISPLAY") && !set("WAYLAND_DISPLAY") {
            bail!(
                "--copy needs a graphical session: neither DISPLAY nor WAYLAND_DISPLAY is set (print the prompt and pipe it instead)"
            );
        }
    }
    Ok(())
}

/// X11 and Wayland (through XWayland): the selection is served by a helper process.
#[cfg(all(
    unix,
    not(any(target_os = "macos", target_os = "android", target_os = "emscripten"))
))]
mod imp {
    use super::{SERVE_COMMAND, check_available};
    use anyhow::{Context, Result, bail};

    /// How long the parent waits for the helper's copy to become readable. The
    /// helper answers in milliseconds; this only bounds a stuck display.
    const READ_BACK_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(5);
    /// Pause between read-back attempts.
    const READ_BACK_POLL: std::time::Duration = std::time::Duration::from_millis(20);
    /// How often the helper checks that its display is still there: arboard's
    /// wait does not return when the X connection dies, so without this check
    /// a helper would outlive its session.
    const DISPLAY_CHECK_INTERVAL: std::time::Duration = std::time::Duration::from_secs(1);

    /// Puts `text` on the clipboard; returns once it can be pasted.
    pub fn copy(text: &str) -> Result<()> {
        use std::io::{BufRead, BufReader, Write};
        use std::os::unix::process::CommandExt;
        use std::process::{Command, Stdio};

        check_available()?;
        let exe = std::env::current_exe().context("finding the loupe binary to serve the copy")?;
        let mut helper = Command::new(exe)
            .arg(SERVE_COMMAND)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            // Not the shell's cwd (it may be unmounted later) and not the
            // terminal's process group (Ctrl+C there must not clear the copy).
            .current_dir("/")
            .process_group(0)
            .spawn()
            .context("starting the clipboard helper")?;
        let sent = helper
            .stdin
            .take()
            .context("the clipboard helper has no stdin")
            .and_then(|mut stdin| {
                stdin
                    .write_all(text.as_bytes())
                    .context("handing the prompt to the clipboard helper")
            });
        let mut line = String::new();
        if sent.is_ok()
            && let Some(out) = helper.stdout.take()
        {
            // One line: "ready" or "error: ...". EOF means it died.
            let _ = BufReader::new(out).read_line(&mut line);
        }
        let outcome = match (sent, line.trim()) {
            (Err(e), _) => Err(e),
            (Ok(()), "ready") => read_back(text),
            (Ok(()), "") => Err(anyhow::anyhow!(
                "the clipboard helper exited without a word"
            )),
            (Ok(()), other) => Err(anyhow::anyhow!(
                "{}",
                other.strip_prefix("error: ").unwrap_or(other).to_owned()
            )),
        };
        if outcome.is_err() {
            // Our own child: do not leave it holding a half-made copy.
            let _ = helper.kill();
            let _ = helper.wait();
        }
        outcome.context("copying the prompt to the clipboard")
    }

    /// Waits until the clipboard holds `text` (the helper owns it by then).
    fn read_back(text: &str) -> Result<()> {
        let mut clipboard = arboard::Clipboard::new().context("opening the clipboard")?;
        let deadline = std::time::Instant::now() + READ_BACK_TIMEOUT;
        loop {
            if clipboard.get_text().is_ok_and(|t| t == text) {
                return Ok(());
            }
            if std::time::Instant::now() >= deadline {
                bail!(
                    "the clipboard did not take the prompt within {}s",
                    READ_BACK_TIMEOUT.as_secs()
                );
            }
            std::thread::sleep(READ_BACK_POLL);
        }
    }

    /// The helper: reads the text from stdin, says "ready" (or "error: ..."),
    /// then serves the selection until it is replaced or the display is gone.
    pub fn serve() -> std::process::ExitCode {
        use arboard::SetExtLinux;
        use std::io::{Read, Write};

        let say = |line: &str| {
            let mut out = std::io::stdout();
            let _ = writeln!(out, "{line}");
            let _ = out.flush();
        };
        let mut text = String::new();
        if let Err(e) = std::io::stdin().read_to_string(&mut text) {
            say(&format!("error: reading the prompt: {e}"));
            return std::process::ExitCode::FAILURE;
        }
        let mut clipboard = match arboard::Clipboard::new() {
            Ok(c) => c,
            Err(e) => {
                say(&format!("error: cannot reach the clipboard: {e}"));
                return std::process::ExitCode::FAILURE;
            }
        };
        std::thread::spawn(|| {
            loop {
                std::thread::sleep(DISPLAY_CHECK_INTERVAL);
                // While we own the selection this is one round trip to the
                // server; it fails once the connection is gone.
                let alive = arboard::Clipboard::new().is_ok_and(|mut c| c.get_text().is_ok());
                if !alive {
                    std::process::exit(0);
                }
            }
        });
        say("ready");
        match clipboard.set().wait().text(text) {
            Ok(()) => std::process::ExitCode::SUCCESS,
            Err(_) => std::process::ExitCode::FAILURE,
        }
    }
}

/// macOS and Windows: the system keeps the text.
#[cfg(not(all(
    unix,
    not(any(target_os = "macos", target_os = "android", target_os = "emscripten"))
)))]
mod imp {
    use anyhow::{Context, Result};

    /// Puts `text` on the clipboard (the system keeps it after we exit).
    pub fn copy(text: &str) -> Result<()> {
        arboard::Clipboard::new()
            .and_then(|mut c| c.set_text(text))
            .context("copying the prompt to the clipboard")
    }

    /// Nothing to serve where the system keeps the clipboard.
    pub fn serve() -> std::process::ExitCode {
        std::process::ExitCode::SUCCESS
    }
}

pub use imp::{copy, serve};
