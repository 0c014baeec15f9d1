//! The window's page coming back when its WebKit process dies.
//!
//! WebKitGTK draws the page in a process of its own. When that process
//! ends on its own (a crash, or past WebKit's memory limit) the window
//! stays, blank, and answers nothing; wry leaves the event unhandled. One
//! cause was seen here for real: on a machine without a GPU (Mesa's
//! software GL, as under Xvfb), WebKit's threaded compositor now and then
//! faults inside `swrast_dri.so`. So on Linux the app listens for
//! `web-process-terminated`, logs why, turns compositing off (the page
//! then paints on the CPU, which such a machine does anyway) and reloads
//! the page. The engine and the open projects live in the app's own
//! process and lose nothing; the page starts over from its first screen.
//! After [`MAX_RELOADS`] deaths it stops trying and says so in the log,
//! rather than loop.
//!
//! The page is not composited at all where there is no GPU device
//! ([`composite_on_gpu`]): there WebKit's compositor draws every frame with
//! Mesa's software rasterizer, and a frame is the whole window. While the
//! vendor corpus indexed, the page's process took 35-70 % of a core that
//! way (its `llvmpipe` threads), 1.5 % painting on the CPU, which redraws
//! only what changed; the index took longer by as much.

/// Page deaths the app reloads after; past this the window stays as it is.
pub const MAX_RELOADS: u32 = 3;

/// What to do when the page's process ends, given how many times it has
/// ended so far (this one included) and whether it was asked to end (the
/// window closing) rather than dying.
#[derive(Debug, PartialEq, Eq)]
pub enum OnPageDeath {
    /// Asked for: nothing to mend.
    Nothing,
    /// Reload, with compositing off.
    Reload,
    /// Too many deaths: leave the window as it is.
    GiveUp,
}

/// [`OnPageDeath`] for the `deaths`-th end of the page's process.
pub fn on_page_death(asked: bool, deaths: u32) -> OnPageDeath {
    if asked {
        OnPageDeath::Nothing
    } else if deaths <= MAX_RELOADS {
        OnPageDeath::Reload
    } else {
        OnPageDeath::GiveUp
    }
}

/// Whether the page is composited (drawn through GL): as `setting` says
/// (`LOUPE_COMPOSITING`: `on` or `off`), else only when the machine has a
/// GPU device (`gpu`). Without one, GL is Mesa's software rasterizer.
pub fn composite_on_gpu(setting: Option<&str>, gpu: bool) -> bool {
    match setting.map(str::trim) {
        Some(s) if s.eq_ignore_ascii_case("on") => true,
        Some(s) if s.eq_ignore_ascii_case("off") => false,
        _ => gpu,
    }
}

/// Whether this machine has a GPU device the webview's GL could use: a DRM
/// node (`/dev/dri/card*`, `/dev/dri/renderD*`) or NVIDIA's own device.
#[cfg(target_os = "linux")]
fn has_gpu_device() -> bool {
    let drm = std::fs::read_dir("/dev/dri").is_ok_and(|entries| {
        entries.flatten().any(|e| {
            let name = e.file_name();
            let name = name.to_string_lossy();
            name.starts_with("card") || name.starts_with("renderD")
        })
    });
    drm || std::path::Path::new("/dev/nvidia0").exists()
}

/// Paint `window`'s page on the CPU unless [`composite_on_gpu`] says to
/// composite it (see the module's doc).
#[cfg(target_os = "linux")]
pub fn choose_compositing<R: tauri::Runtime>(window: &tauri::WebviewWindow<R>) {
    let setting = std::env::var("LOUPE_COMPOSITING").ok();
    if composite_on_gpu(setting.as_deref(), has_gpu_device()) {
        return;
    }
    tracing::info!(
        "no GPU device: the page paints on the CPU, not composited in software \
         (LOUPE_COMPOSITING=on composites it anyway)"
    );
    let set = window.with_webview(|platform| {
        use webkit2gtk::{HardwareAccelerationPolicy, SettingsExt, WebViewExt};
        if let Some(settings) = WebViewExt::settings(&platform.inner()) {
            settings.set_hardware_acceleration_policy(HardwareAccelerationPolicy::Never);
        }
    });
    if let Err(e) = set {
        tracing::warn!("cannot turn the page's compositing off: {e}");
    }
}

/// Other platforms' webviews composite on their own terms.
#[cfg(not(target_os = "linux"))]
pub fn choose_compositing<R: tauri::Runtime>(_window: &tauri::WebviewWindow<R>) {}

/// Reload `window`'s page when its process dies (see the module's doc).
#[cfg(target_os = "linux")]
pub fn reload_when_it_dies<R: tauri::Runtime>(window: &tauri::WebviewWindow<R>) {
    let hooked = window.with_webview(|platform| {
        use webkit2gtk::{
            HardwareAccelerationPolicy, SettingsExt, WebProcessTerminationReason, WebViewExt,
        };
        let deaths = std::cell::Cell::new(0u32);
        platform
            .inner()
            .connect_web_process_terminated(move |view, reason| {
                let asked = matches!(reason, WebProcessTerminationReason::TerminatedByApi);
                if !asked {
                    deaths.set(deaths.get() + 1);
                }
                match on_page_death(asked, deaths.get()) {
                    OnPageDeath::Nothing => {}
                    OnPageDeath::Reload => {
                        tracing::error!(
                            "the page's process ended ({reason:?}, {} of {MAX_RELOADS} reloads): \
                             reloading it with compositing off",
                            deaths.get()
                        );
                        if let Some(settings) = WebViewExt::settings(view) {
                            settings.set_hardware_acceleration_policy(
                                HardwareAccelerationPolicy::Never,
                            );
                        }
                        view.reload();
                    }
                    OnPageDeath::GiveUp => tracing::error!(
                        "the page's process ended ({reason:?}) after {MAX_RELOADS} reloads: \
                         not reloading it again; restart the app"
                    ),
                }
            });
    });
    if let Err(e) = hooked {
        tracing::warn!("cannot watch the page's process; a crash of it will not be mended: {e}");
    }
}

/// Not watched on other platforms yet (WebView2 and WKWebView each have an
/// event of their own for it).
#[cfg(not(target_os = "linux"))]
pub fn reload_when_it_dies<R: tauri::Runtime>(_window: &tauri::WebviewWindow<R>) {}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_dying_page_is_reloaded_a_few_times_and_a_closing_one_never() {
        assert_eq!(on_page_death(true, 0), OnPageDeath::Nothing);
        for deaths in 1..=MAX_RELOADS {
            assert_eq!(on_page_death(false, deaths), OnPageDeath::Reload);
        }
        assert_eq!(on_page_death(false, MAX_RELOADS + 1), OnPageDeath::GiveUp);
    }

    #[test]
    fn the_page_is_composited_only_with_a_gpu_unless_told() {
        assert!(composite_on_gpu(None, true));
        assert!(!composite_on_gpu(None, false));
        assert!(composite_on_gpu(Some(" ON "), false));
        assert!(!composite_on_gpu(Some("off"), true));
        // Anything else is no setting.
        assert!(composite_on_gpu(Some("maybe"), true));
        assert!(!composite_on_gpu(Some(""), false));
    }
}
