//! Snapshots of every output format on the same small project.

use loupe_assemble::render::{Format, Toggles};
use loupe_assemble::{AssembleRequest, Knobs, assemble};

use crate::support::project;

fn prompt(format: Format, toggles: Toggles) -> String {
    let request = AssembleRequest {
        question: "How does packing work?".into(),
        notes: vec!["Packing must stay pure.".into()],
        knobs: Knobs {
            format,
            toggles,
            ..Knobs::default()
        },
        ..Default::default()
    };
    assemble(&project(), &request).prompt
}

#[test]
fn xml() {
    insta::assert_snapshot!(prompt(Format::Xml, Toggles::default()));
}

#[test]
fn xml_with_scores_lost_in_middle() {
    insta::assert_snapshot!(prompt(
        Format::Xml,
        Toggles {
            scores: true,
            lost_in_middle: true,
            ..Toggles::default()
        }
    ));
}

#[test]
fn markdown() {
    insta::assert_snapshot!(prompt(Format::Markdown, Toggles::default()));
}

#[test]
fn markdown_without_sources() {
    insta::assert_snapshot!(prompt(
        Format::Markdown,
        Toggles {
            sources: false,
            ..Toggles::default()
        }
    ));
}

#[test]
fn json() {
    insta::assert_snapshot!(prompt(
        Format::Json,
        Toggles {
            scores: true,
            ..Toggles::default()
        }
    ));
}

#[test]
fn structured_toggle_is_json() {
    assert_eq!(
        prompt(
            Format::Markdown,
            Toggles {
                structured: true,
                ..Toggles::default()
            }
        ),
        prompt(Format::Json, Toggles::default())
    );
}

#[test]
fn report_of_a_tight_budget() {
    let request = AssembleRequest {
        question: "How does packing work?".into(),
        knobs: Knobs {
            budget: Some(loupe_assemble::Budget::Tokens(250)),
            answer_reserve: 0,
            ..Knobs::default()
        },
        ..Default::default()
    };
    let a = assemble(&project(), &request);
    let rows: Vec<String> = a
        .items
        .iter()
        .map(|r| {
            format!(
                "{:<20} {:?} score {:.3} lod {:?}/{} size {} {:?}",
                r.path, r.section, r.score.score, r.lod, r.wanted_lod, r.size, r.status
            )
        })
        .collect();
    insta::assert_snapshot!(format!(
        "used {} of {} (budget {})\nsections {:?}\ntruncated {} dropped {} needing {}\n{}\n---\n{}",
        a.report.used,
        a.report.usable,
        a.report.budget,
        a.report.sections,
        a.report.was_truncated,
        a.report.dropped_count,
        a.report.dropped_size,
        rows.join("\n"),
        a.prompt
    ));
}
