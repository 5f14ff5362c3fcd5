//! `trainer`: AlphaZero-style self-play and training (grows in the trainer issue).

fn main() {
    eprintln!("trainer: not built yet; see the README's roadmap");
    std::process::exit(2);
}
