//! Equal-time evaluation of a run's saved networks (`trainer equal-time RUN...`): each chosen
//! epoch's export (`models/model-NNNNNN.onnx`) plays in the engine (`pbrain-fivezero --model F`)
//! against the same engine on its classical evaluator (`--model none`) under the project's
//! tournament manager (`fivezero-tools tournament`: real engine processes, a clock per move and
//! per game, each opening twice with colours swapped), on the run's rule and board size. Each
//! result is appended to the run's `equal-time.jsonl`, which `trainer curve` draws next to the
//! run's equal-visit evaluations.
//!
//! Why a second measure: the training run's own evaluations give both sides the same visits, which
//! measures what the network knows; a user gets what it knows per second, and a network is far
//! slower per evaluation than the classical evaluator. The manager and engine are the ones the
//! tournament figures of docs/results.md come from, so the points compare with them.
//!
//! Depends on `config::RunFolder` (each run's `settings.toml` and numbered exports),
//! `support::metrics` (the records), `stats` and `arena` (the result in words), and on the
//! `pbrain-fivezero` and `fivezero-tools` binaries (by default next to this one).

use std::path::{Path, PathBuf};
use std::process::Command;

use anyhow::{Context, bail};

use crate::config::commands::EqualTimeOptions;
use crate::config::{RunFolder, Settings};

/// The file of a run folder that holds its equal-time results.
pub const FILE: &str = "equal-time.jsonl";

/// One epoch's result, a line of `equal-time.jsonl` (with `kind`, `time_s` from `metrics`).
#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct Record {
    pub epoch: u64,
    pub model: String,
    pub turn_ms: u64,
    pub match_ms: u64,
    pub wins: u32,
    pub draws: u32,
    pub losses: u32,
    /// Games the network's engine lost by forfeit (time, memory, illegal move, crash).
    pub forfeits: u64,
    pub openings: String,
}

impl Record {
    /// Whether this is the result `options` would play for `epoch` (its clock, game count and
    /// openings): another count or other openings play again, and `trainer curve` adds the games.
    fn played_as(&self, epoch: u64, options: &EqualTimeOptions, match_ms: u64) -> bool {
        self.epoch == epoch
            && self.turn_ms == options.turn_ms
            && self.match_ms == match_ms
            && self.wins + self.draws + self.losses == options.games
            && self.openings == options.openings.display().to_string()
    }
}

/// The results already in `dir`'s `equal-time.jsonl` (none when it is missing); a line that is
/// not a record is skipped, as `trainer curve` skips it.
pub fn read(dir: &Path) -> Vec<Record> {
    let text = std::fs::read_to_string(dir.join(FILE)).unwrap_or_default();
    text.lines()
        .filter_map(|l| serde_json::from_str(l).ok())
        .collect()
}

/// The epochs `options` picks out of the exports `available` (ascending).
fn pick(available: &[u64], options: &EqualTimeOptions) -> anyhow::Result<Vec<u64>> {
    if !options.epochs.is_empty() {
        for e in &options.epochs {
            if !available.contains(e) {
                bail!("no export of epoch {e} (models/model-{e:06}.onnx)");
            }
        }
        return Ok(options.epochs.clone());
    }
    let every = options.every.max(1);
    let mut picked: Vec<u64> = available
        .iter()
        .copied()
        .filter(|e| e % every == 0)
        .collect();
    if let Some(&last) = available.last()
        && picked.last() != Some(&last)
    {
        picked.push(last);
    }
    Ok(picked)
}

/// Plays the picked epochs of run folder `dir` that `equal-time.jsonl` does not have yet at these
/// settings, appending each result as soon as its match ends; returns the new records.
pub fn run(dir: &Path, options: &EqualTimeOptions) -> anyhow::Result<Vec<Record>> {
    let folder = RunFolder::new(dir);
    let settings = run_settings(&folder)?;
    let exports = folder
        .exports()
        .with_context(|| format!("cannot list {}", folder.models().display()))?;
    if exports.is_empty() {
        bail!(
            "{} holds no model-NNNNNN.onnx export",
            folder.models().display()
        );
    }
    let available: Vec<u64> = exports.iter().map(|(e, _)| *e).collect();
    let match_ms = options.match_ms.unwrap_or(options.turn_ms * 60);
    let done = read(dir);
    let bins = binaries(options)?;
    let mut metrics = crate::support::metrics::Metrics::open(&dir.join(FILE))
        .with_context(|| format!("cannot open {}", dir.join(FILE).display()))?;
    let mut new = Vec::new();
    for epoch in pick(&available, options)? {
        if done.iter().any(|r| r.played_as(epoch, options, match_ms)) {
            eprintln!(
                "equal-time: {} epoch {epoch}: already played ({} games at {} ms/move from {})",
                dir.display(),
                options.games,
                options.turn_ms,
                options.openings.display()
            );
            continue;
        }
        let model = &exports[available.binary_search(&epoch).expect("picked")].1;
        refuse_unclaimed(model, &settings)?;
        let name = format!("epoch-{epoch}");
        let json = play_tournament(&bins, model, epoch, &name, &settings, options, dir)?;
        let record = record_of(&json, &name, epoch, model, options, match_ms)?;
        metrics
            .log(
                "equal_time",
                serde_json::to_value(&record).expect("a record serializes"),
            )
            .with_context(|| format!("cannot append to {}", dir.join(FILE).display()))?;
        eprintln!("{}", result_line(dir, epoch, &record));
        new.push(record);
    }
    Ok(new)
}

/// The settings the run folder was started with: its rule and board size are the matches'.
fn run_settings(folder: &RunFolder) -> anyhow::Result<Settings> {
    let path = folder.settings_path();
    folder
        .settings()
        .with_context(|| format!("{} is not a run's settings", path.display()))?
        .with_context(|| format!("cannot read {}: the run folder has none", path.display()))
}

/// The programs an equal-time match runs.
struct Binaries {
    /// `fivezero-tools`, whose tournament manager plays the games.
    tools: PathBuf,
    /// `pbrain-fivezero`, on both sides.
    engine: PathBuf,
}

/// The tournament manager and the engine: `--bin-dir`, else this program's folder.
fn binaries(options: &EqualTimeOptions) -> anyhow::Result<Binaries> {
    let bin_dir = match &options.bin_dir {
        Some(d) => d.clone(),
        None => std::env::current_exe()
            .context("cannot locate this program")?
            .parent()
            .map(PathBuf::from)
            .unwrap_or_default(),
    };
    let tools = bin_dir.join("fivezero-tools");
    let engine = bin_dir.join("pbrain-fivezero");
    for bin in [&tools, &engine] {
        if !bin.is_file() {
            bail!(
                "{} not found: build it (`make build`) or give --bin-dir",
                bin.display()
            );
        }
    }
    Ok(Binaries { tools, engine })
}

/// A model that does not claim the run's game would be played by the classical evaluator (the
/// engine says so per game, after the START message this checks): refused here.
fn refuse_unclaimed(model: &Path, settings: &Settings) -> anyhow::Result<()> {
    let bytes = std::fs::read(model).with_context(|| format!("cannot read {}", model.display()))?;
    let meta =
        engine::net::model_meta(&bytes).map_err(|e| anyhow::anyhow!("{}: {e}", model.display()))?;
    let size = settings.board_size;
    if let Some(why) = meta.refuses(settings.rule, size, size) {
        bail!(
            "{}: {why}: the engine would not play it here",
            model.display()
        );
    }
    Ok(())
}

/// Plays `model` (epoch `epoch`, named `name`) against the classical evaluator under the
/// tournament manager; returns the manager's JSON summary.
fn play_tournament(
    bins: &Binaries,
    model: &Path,
    epoch: u64,
    name: &str,
    settings: &Settings,
    options: &EqualTimeOptions,
    dir: &Path,
) -> anyhow::Result<String> {
    let Binaries { tools, engine } = bins;
    let match_ms = options.match_ms.unwrap_or(options.turn_ms * 60);
    let summary = dir.join("equal-time.partial.json");
    let network = engine_spec(engine, model, name)?;
    let classical = engine_spec(engine, Path::new("none"), "classical")?;
    let status = Command::new(tools)
        .arg("tournament")
        .args(["--engine", &network, "--engine", &classical])
        .args(["--games", &options.games.to_string(), "--repeat"])
        .args(["--concurrency", &options.concurrency.max(1).to_string()])
        .args(["--rule", &settings.rule.to_string()])
        .args(["--size", &settings.board_size.to_string()])
        .args(["--turn-ms", &options.turn_ms.to_string()])
        .args(["--match-ms", &match_ms.to_string()])
        .args(["--max-memory", &options.max_memory, "--suspend"])
        .arg("--openings")
        .arg(&options.openings)
        .arg("--json")
        .arg(&summary)
        .status()
        .with_context(|| format!("cannot start {}", tools.display()))?;
    if !status.success() {
        bail!("the tournament of epoch {epoch} failed ({status})");
    }
    let json = std::fs::read_to_string(&summary)
        .with_context(|| format!("cannot read {}", summary.display()))?;
    let _ = std::fs::remove_file(&summary);
    Ok(json)
}

/// One epoch's result in words.
fn result_line(dir: &Path, epoch: u64, r: &Record) -> String {
    let (elo, elo_error) = stats::capped_elo(&(r.wins, r.draws, r.losses).into());
    let result = crate::matches::arena::MatchResult {
        wins: r.wins,
        draws: r.draws,
        losses: r.losses,
        elo,
        elo_error,
        ..Default::default()
    };
    format!(
        "equal-time: {} epoch {epoch}: {}-{}-{} at {} ms/move, {}, {} forfeits",
        dir.display(),
        r.wins,
        r.draws,
        r.losses,
        r.turn_ms,
        result.elo_text(),
        r.forfeits
    )
}

/// A `--engine` spec: the engine on `model` ("none": the classical evaluator).
fn engine_spec(engine: &Path, model: &Path, name: &str) -> anyhow::Result<String> {
    // The manager splits a spec at its commas, and a spec has no way to quote one.
    for path in [engine, model] {
        if path.to_string_lossy().contains(',') {
            bail!(
                "{}: the tournament's --engine spec cannot hold a path with a comma; \
                 move or link the run folder (or the binaries) to a path without one",
                path.display()
            );
        }
    }
    Ok(format!(
        "cmd={},arg=--model,arg={},name={name}",
        engine.display(),
        model.display()
    ))
}

/// The record of a tournament summary (`fivezero-tools tournament --json`), checking that the
/// network's engine really played on the network.
fn record_of(
    json: &str,
    name: &str,
    epoch: u64,
    model: &Path,
    options: &EqualTimeOptions,
    match_ms: u64,
) -> anyhow::Result<Record> {
    let v: serde_json::Value =
        serde_json::from_str(json).context("the tournament summary is not JSON")?;
    if v["interrupted"].as_bool() == Some(true) {
        bail!("the tournament of epoch {epoch} was interrupted");
    }
    let engines = v["engines"].as_array().map(Vec::as_slice).unwrap_or(&[]);
    let Some(me) = engines.iter().find(|e| e["name"] == name) else {
        bail!("the tournament summary has no engine {name}");
    };
    // The engine falls back to the classical evaluator when it cannot load a model, or when the
    // model does not claim this rule and size; such a match would measure nothing.
    let said = me["start_message"].as_str().unwrap_or("");
    if !said.contains("loaded") {
        bail!(
            "epoch {epoch}: the engine did not play on {} (it said: {said:?})",
            model.display()
        );
    }
    let count = |k: &str| me[k].as_u64().unwrap_or(0) as u32;
    let forfeits = me["forfeits"]
        .as_object()
        .map_or(0, |f| f.values().filter_map(|n| n.as_u64()).sum());
    Ok(Record {
        epoch,
        model: model.display().to_string(),
        turn_ms: options.turn_ms,
        match_ms,
        wins: count("wins"),
        draws: count("draws"),
        losses: count("losses"),
        forfeits,
        openings: options.openings.display().to_string(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn options(epochs: &[u64], every: u64) -> EqualTimeOptions {
        EqualTimeOptions {
            epochs: epochs.to_vec(),
            every,
            games: 2,
            turn_ms: 100,
            match_ms: None,
            concurrency: 1,
            openings: PathBuf::from("o.txt"),
            bin_dir: None,
            max_memory: "350M".into(),
        }
    }

    #[test]
    fn a_path_with_a_comma_is_refused_before_the_manager_splits_it() {
        let engine = Path::new("/bin/pbrain-fivezero");
        let spec = engine_spec(engine, Path::new("run/models/model-000007.onnx"), "e7").unwrap();
        assert_eq!(
            spec,
            "cmd=/bin/pbrain-fivezero,arg=--model,arg=run/models/model-000007.onnx,name=e7"
        );
        let e = engine_spec(engine, Path::new("a,b/models/model-000007.onnx"), "e7").unwrap_err();
        assert!(e.to_string().contains("a,b/models"), "{e}");
        assert!(engine_spec(Path::new("/x,y/pbrain"), Path::new("none"), "c").is_err());
    }

    #[test]
    fn every_nth_export_and_the_last_or_the_epochs_named() {
        let available = [1, 2, 3, 4, 5, 10, 11];
        assert_eq!(pick(&available, &options(&[], 5)).unwrap(), [5, 10, 11]);
        assert_eq!(pick(&available, &options(&[], 1)).unwrap(), available);
        assert_eq!(pick(&available, &options(&[11, 2], 5)).unwrap(), [11, 2]);
        let e = pick(&available, &options(&[6], 5)).unwrap_err();
        assert!(e.to_string().contains("model-000006.onnx"), "{e}");
    }

    #[test]
    fn a_summary_becomes_a_record_only_when_the_network_played() {
        let o = options(&[], 1);
        let summary = |said: &str| {
            format!(
                r#"{{"interrupted":false,"engines":[
                {{"name":"epoch-7","wins":3,"draws":1,"losses":6,"forfeits":{{"time":1,"crash":1}},
                  "start_message":"{said}"}},
                {{"name":"classical","wins":6,"draws":1,"losses":3,"forfeits":{{}}}}]}}"#
            )
        };
        let m = Path::new("run/models/model-000007.onnx");
        let r = record_of(
            &summary("model m loaded (onnx:cpu32)"),
            "epoch-7",
            7,
            m,
            &o,
            6000,
        )
        .unwrap();
        assert_eq!((r.wins, r.draws, r.losses, r.forfeits), (3, 1, 6, 2));
        assert_eq!((r.epoch, r.turn_ms, r.match_ms), (7, 100, 6000));
        // Played as asked only with the same count of games (10 here, 2 asked), openings, clock.
        assert!(!r.played_as(7, &o, 6000));
        let ten = EqualTimeOptions {
            games: 10,
            ..o.clone()
        };
        assert!(r.played_as(7, &ten, 6000));
        assert!(!r.played_as(8, &ten, 6000));
        assert!(!r.played_as(7, &ten, 9000));
        let other = EqualTimeOptions {
            openings: PathBuf::from("other.txt"),
            ..ten.clone()
        };
        assert!(!r.played_as(7, &other, 6000));
        let e = record_of(
            &summary("the classical evaluator: the model claims renju only"),
            "epoch-7",
            7,
            m,
            &o,
            6000,
        )
        .unwrap_err();
        assert!(e.to_string().contains("did not play on"), "{e}");
        assert!(record_of("{", "epoch-7", 7, m, &o, 6000).is_err());
        let interrupted = summary("loaded").replace("false", "true");
        assert!(record_of(&interrupted, "epoch-7", 7, m, &o, 6000).is_err());
    }
}
