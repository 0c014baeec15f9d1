//! `count-tokens FILE...`: prints `TOKENS BYTES FILE` per file, o200k_base,
//! special tokens counted as ordinary text (as Loupe counts). Invalid UTF-8
//! is replaced (U+FFFD) before counting.
fn main() {
    let bpe = tiktoken_rs::o200k_base().expect("o200k_base table");
    let mut failed = false;
    for path in std::env::args().skip(1) {
        match std::fs::read(&path) {
            Ok(bytes) => {
                let text = String::from_utf8_lossy(&bytes);
                println!("{} {} {}", bpe.count_ordinary(&text), bytes.len(), path);
            }
            Err(e) => {
                eprintln!("{path}: {e}");
                failed = true;
            }
        }
    }
    std::process::exit(i32::from(failed));
}
