//! pbrain-fivezero: the Gomocup brain (filled in by the foundation issue).
fn main() {}
