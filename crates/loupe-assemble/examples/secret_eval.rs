//! Secret-detection evaluation against a public corpus another project
//! wrote: secretlint's rule fixtures (`ng.*` cases must be caught, `ok.*`
//! cases must pass untouched).
//!
//! The corpus is read from a git mirror at run time — nothing of it is
//! committed here:
//! `cargo run --release -p loupe-assemble --example secret_eval -- MIRROR_GIT_DIR [REV]`
//! (MIRROR_GIT_DIR: a bare clone of github.com/secretlint/secretlint).
//! Rules that are not about credentials (home directories, dotenv file
//! names, comment filters, the example rule, custom patterns, Kubernetes
//! manifests) are left out; binary fixtures (PKCS#12) too, and `ok.allows*`
//! cases (real-looking keys that pass only through a test's allow-list).

use loupe_assemble::guard::{GuardConfig, guard_text};
use loupe_assemble::report::RedactionKind;
use std::collections::BTreeMap;
use std::process::Command;

/// secretlint rules whose fixtures are not secrets in the sense of our guard.
const NOT_SECRETS: &[&str] = &[
    "filter-comments",
    "no-homedir",
    "no-dotenv",
    "example",
    "pattern",
    "no-k8s-kind-secret",
];

fn git(dir: &str, args: &[&str]) -> Option<Vec<u8>> {
    let out = Command::new("git")
        .arg("--git-dir")
        .arg(dir)
        .args(args)
        .output()
        .ok()?;
    out.status.success().then_some(out.stdout)
}

fn main() {
    let mut args = std::env::args().skip(1);
    let Some(dir) = args.next() else {
        eprintln!("usage: secret_eval MIRROR_GIT_DIR [REV]");
        std::process::exit(2);
    };
    let rev = args.next().unwrap_or_else(|| "HEAD".into());
    let Some(list) = git(&dir, &["ls-tree", "-r", "--name-only", &rev]) else {
        eprintln!("cannot list {rev} in {dir}");
        std::process::exit(2);
    };
    let list = String::from_utf8_lossy(&list);
    let config = GuardConfig {
        sanitize: true,
        injections: false,
        secrets: true,
    };
    // rule → (positives, caught, negatives, false alarms)
    let mut per_rule: BTreeMap<String, [u32; 4]> = BTreeMap::new();
    let mut missed = Vec::new();
    let mut alarms = Vec::new();
    for path in list.lines() {
        let parts: Vec<&str> = path.split('/').collect();
        // packages/@secretlint/secretlint-rule-X/test/snapshots/CASE/input.EXT
        let [_, _, pkg, "test", "snapshots", case, file] = parts.as_slice() else {
            continue;
        };
        let Some(rule) = pkg.strip_prefix("secretlint-rule-") else {
            continue;
        };
        if !file.starts_with("input.") || rule.starts_with("preset") || NOT_SECRETS.contains(&rule)
        {
            continue;
        }
        let positive = case.starts_with("ng.");
        // `ok.allows*` cases are real-looking keys that pass only because
        // that test configures an allow-list; they are not negatives.
        if !positive && (!case.starts_with("ok.") || case.starts_with("ok.allows")) {
            continue;
        }
        let Some(bytes) = git(&dir, &["show", &format!("{rev}:{path}")]) else {
            continue;
        };
        let Ok(text) = String::from_utf8(bytes) else {
            continue;
        };
        let mut out = Vec::new();
        let _ = guard_text(&text, config, path, 1, &mut out);
        let hit = out.iter().any(|r| r.kind == RedactionKind::Secret);
        let row = per_rule.entry(rule.to_owned()).or_default();
        if positive {
            row[0] += 1;
            row[1] += u32::from(hit);
            if !hit {
                missed.push(format!("{rule}/{case}"));
            }
        } else {
            row[2] += 1;
            row[3] += u32::from(hit);
            if hit {
                let rules: Vec<&str> = out.iter().map(|r| r.rule.as_str()).collect();
                alarms.push(format!("{rule}/{case} ({})", rules.join(", ")));
            }
        }
    }
    let total = per_rule.values().fold([0u32; 4], |mut a, r| {
        (0..4).for_each(|i| a[i] += r[i]);
        a
    });
    println!("{:<30} {:>9} {:>12}", "rule", "detected", "false alarm");
    for (rule, r) in &per_rule {
        println!("{rule:<30} {:>4}/{:<4} {:>6}/{:<4}", r[1], r[0], r[3], r[2]);
    }
    let pct = |a: u32, b: u32| {
        if b == 0 {
            0.0
        } else {
            100.0 * f64::from(a) / f64::from(b)
        }
    };
    println!(
        "TOTAL: detection {}/{} = {:.1}%, false alarms {}/{} = {:.1}%",
        total[1],
        total[0],
        pct(total[1], total[0]),
        total[3],
        total[2],
        pct(total[3], total[2])
    );
    println!("missed: {}", missed.join(", "));
    println!("false alarms: {}", alarms.join(", "));
}
