//! `fivezero-tools elo`: Elo, 95% error bar, LOS and optionally SPRT for given W/D/L counts.
//!
//! A thin front end over `stats`; no I/O beyond stdout.

use stats::{SprtParams, Wdl};

#[derive(Debug, clap::Args)]
pub struct Args {
    /// Wins of the first player.
    #[arg(long, short)]
    pub wins: u64,
    #[arg(long, short)]
    pub draws: u64,
    #[arg(long, short)]
    pub losses: u64,
    /// Also report the SPRT, e.g. elo0=0,elo1=5,alpha=0.05,beta=0.05.
    #[arg(long, value_parser = SprtParams::parse)]
    pub sprt: Option<SprtParams>,
}

pub fn run(args: Args) -> Result<(), String> {
    let r = Wdl::new(args.wins, args.draws, args.losses);
    let e = stats::elo_estimate(&r).ok_or("no games")?;
    println!(
        "games {}  score {:.4}  elo {:+.2} ± {:.2} (95%: {:.2} .. {:.2})",
        r.games(),
        r.score().unwrap_or(0.5),
        e.elo,
        e.error95,
        e.lower95,
        e.upper95
    );
    if let Some(l) = stats::los(&r) {
        println!("LOS {:.2}%", l * 100.0);
    }
    if let Some(p) = args.sprt {
        let (lo, hi) = p.bounds();
        println!(
            "SPRT LLR {:.3} [{lo:.3}, {hi:.3}] -> {:?}",
            p.llr(&r),
            p.decide(&r)
        );
    }
    Ok(())
}
