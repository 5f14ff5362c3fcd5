//! `fivezero-tools`: the manager side of fivezero (tournaments, tactics, benchmarks, models).

fn main() {
    eprintln!("fivezero-tools: no subcommands yet");
    std::process::exit(2);
}
