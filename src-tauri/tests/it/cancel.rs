//! `cancel_question` reaches both asks of a question that can hold the
//! next one back: the panel's answer and the token map's.

use loupe_app::AppState;
use loupe_engine::ProjectConfig;

#[test]
fn a_cancel_stops_the_panels_and_the_maps_answers_to_that_question_only() {
    let data = tempfile::tempdir().unwrap();
    let project = tempfile::tempdir().unwrap();
    std::fs::write(project.path().join("lib.rs"), "pub fn one() -> u8 { 1 }\n").unwrap();
    let state = AppState::new(ProjectConfig::new(data.path()));
    let open = tauri::async_runtime::block_on(state.open(project.path())).unwrap();

    let panel = open.begin_question("why is it slow?");
    let map = open.begin_map_question("why is it slow?");
    // Another question's cancel stops neither.
    assert!(!open.cancel_question("where is it?"));
    assert!(!panel.is_cancelled() && !map.is_cancelled());
    assert!(open.cancel_question("why is it slow?"));
    assert!(panel.is_cancelled() && map.is_cancelled());

    // The panel moved on while the map still asks the old question: a late
    // cancel of the old one stops the map's ask and not the panel's new one.
    let panel = open.begin_question("where is it?");
    let map = open.begin_map_question("why is it slow?");
    assert!(open.cancel_question("why is it slow?"));
    assert!(map.is_cancelled());
    assert!(!panel.is_cancelled());
}
