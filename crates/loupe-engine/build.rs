//! The deriver fingerprint: a hash of the code that turns a file's bytes
//! into chunks, outlines, token counts, symbols and references (this
//! crate's `src/indexing/`, loupe-assemble's token counter, and the locked
//! versions of the grammars and the tokenizer). The shared store keys a
//! file's parse by it (`indexing/derived.rs`), so two builds of Loupe that
//! chunk differently never read each other's rows, whatever their version
//! numbers say.

use std::path::{Path, PathBuf};

/// FNV-1a, 64 bits: a version tag, not a security boundary, and the same
/// on every machine and toolchain (std's hasher promises neither).
fn fnv(hash: &mut u64, bytes: &[u8]) {
    for b in bytes {
        *hash ^= u64::from(*b);
        *hash = hash.wrapping_mul(0x0000_0100_0000_01b3);
    }
}

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for entry in entries.flatten() {
        let path = entry.path();
        if path.is_dir() {
            rust_files(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

fn main() {
    let here = PathBuf::from(std::env::var("CARGO_MANIFEST_DIR").unwrap_or_else(|_| ".".into()));
    let assemble = here.join("../loupe-assemble/src");
    let mut files = Vec::new();
    rust_files(&here.join("src/indexing"), &mut files);
    files.push(assemble.join("tokens.rs"));
    rust_files(&assemble.join("tokens"), &mut files);
    files.sort();
    let mut hash = 0xcbf2_9ce4_8422_2325_u64;
    for file in &files {
        println!("cargo:rerun-if-changed={}", file.display());
        // Named relative to the crates folder, not this machine's path.
        let rel = file
            .strip_prefix(&here)
            .or_else(|_| file.strip_prefix(here.join("..")))
            .unwrap_or(file);
        fnv(&mut hash, rel.to_string_lossy().as_bytes());
        // Without carriage returns: a Windows checkout chunks the same.
        let mut text = std::fs::read(file).unwrap_or_default();
        text.retain(|b| *b != b'\r');
        fnv(&mut hash, &text);
    }
    // The grammars' and the tokenizer's locked versions.
    let lock = here.join("../../Cargo.lock");
    println!("cargo:rerun-if-changed={}", lock.display());
    if let Ok(text) = std::fs::read_to_string(&lock) {
        for package in text.split("[[package]]") {
            let name = package
                .lines()
                .find_map(|l| l.strip_prefix("name = "))
                .unwrap_or("");
            if name.starts_with("\"tree-sitter") || name == "\"tiktoken-rs\"" {
                fnv(&mut hash, package.trim().as_bytes());
            }
        }
    }
    println!("cargo:rustc-env=LOUPE_DERIVER_FINGERPRINT={hash:016x}");
}
