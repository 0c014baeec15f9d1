//! A window needs a display: without one (no `DISPLAY` or
//! `WAYLAND_DISPLAY`, or a display GTK cannot open) the app says so in one
//! line, with the CLI that works without one, and exits non-zero, instead
//! of the windowing library's panic and backtrace.

/// The one line the app prints when it cannot open a window, and the exit
/// status it leaves with.
pub const NO_DISPLAY_EXIT: i32 = 2;

/// What to do instead, the same in every case.
const USE_THE_CLI: &str = "run the app in a desktop session, or use the CLI without one: \
`loupe query PATH \"QUESTION\"`, `loupe mcp` (`loupe --help`)";

/// Why no window can open here, or `None` when one can. On Linux this
/// starts GTK on the calling thread (the main thread, as the event loop
/// that later starts it again requires: a second start is a no-op).
pub fn unavailable() -> Option<String> {
    if cfg!(target_os = "linux") {
        let set = |name: &str| std::env::var_os(name).is_some_and(|v| !v.is_empty());
        if !set("DISPLAY") && !set("WAYLAND_DISPLAY") {
            return Some(format!(
                "loupe-app: no display to open a window on (neither DISPLAY nor \
                 WAYLAND_DISPLAY is set); {USE_THE_CLI}"
            ));
        }
        return gtk_starts().err();
    }
    None
}

#[cfg(target_os = "linux")]
fn gtk_starts() -> Result<(), String> {
    gtk::init().map_err(|e| {
        let shown = std::env::var("WAYLAND_DISPLAY")
            .ok()
            .filter(|v| !v.is_empty())
            .or_else(|| std::env::var("DISPLAY").ok())
            .unwrap_or_default();
        format!("loupe-app: cannot open a window on display {shown:?} ({e}); {USE_THE_CLI}")
    })
}

#[cfg(not(target_os = "linux"))]
fn gtk_starts() -> Result<(), String> {
    Ok(())
}
