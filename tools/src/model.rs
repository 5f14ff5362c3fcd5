//! `fivezero-tools model`: model files a user can inspect. `info FILE` prints what the file says
//! about itself (preset, shape, parameters, feature version, step, board sizes) after loading it
//! in ONNX Runtime and running a probe position (outputs must be finite); `random` writes a
//! randomly initialised network of a preset with the project's own ONNX writer (`engine::net`);
//! `bench` measures every preset on this CPU (random weights: speed does not depend on them).
//!
//! Depends on `engine::net` and `engine::eval` (the ONNX backend and the input features).

use std::path::PathBuf;

use engine::eval::features;
use engine::eval::onnx::{Device, OnnxModel, OnnxRuntime};
use engine::game::{Board, Rule};
use engine::net::{ModelMeta, NetConfig, NetWeights, Preset, write_model_file};

#[derive(Debug, clap::Args)]
pub struct Args {
    #[command(subcommand)]
    pub cmd: ModelCmd,
}

#[derive(Debug, clap::Subcommand)]
pub enum ModelCmd {
    /// Metadata, sizes and parameters of a model file, after checking it loads and its probe
    /// forward is finite.
    Info {
        /// The .onnx file.
        file: PathBuf,
    },
    /// Write a randomly initialised network of a preset (deterministic for a seed).
    Random {
        /// tiny, cpu32, cpu48, small, medium or large.
        #[arg(long)]
        preset: Preset,
        #[arg(long)]
        out: PathBuf,
        #[arg(long, default_value_t = 1)]
        seed: u64,
    },
    /// Every preset on one core: ONNX Runtime positions/s at batch 1, 8 and 32 (15x15), and the
    /// engine's MCTS visits/s over it (one thread, batch 8) on a 30-stone middle game.
    Bench {
        /// Engine search time per preset.
        #[arg(long, default_value_t = 1000)]
        search_ms: u64,
        /// Time per ORT batch-size measurement.
        #[arg(long, default_value_t = 500)]
        ort_ms: u64,
    },
}

pub fn run(args: Args) -> Result<(), String> {
    match args.cmd {
        ModelCmd::Info { file } => info(&file),
        ModelCmd::Bench { search_ms, ort_ms } => bench(search_ms, ort_ms),
        ModelCmd::Random { preset, out, seed } => {
            let w = NetWeights::random(preset.config(), seed).map_err(|e| e.to_string())?;
            write_model_file(&out, &w, &ModelMeta::for_config(&w.config, 0))
                .map_err(|e| e.to_string())?;
            println!(
                "wrote {} ({preset}, {} parameters, seed {seed})",
                out.display(),
                w.param_count()
            );
            Ok(())
        }
    }
}

fn info(file: &std::path::Path) -> Result<(), String> {
    OnnxRuntime::init().map_err(|e| e.to_string())?;
    let bytes = std::fs::metadata(file)
        .map_err(|e| format!("{}: {e}", file.display()))?
        .len();
    let mut model = OnnxModel::load(file, 1, Device::Cpu).map_err(|e| e.to_string())?;
    let m = model.meta().clone();
    let config = NetConfig {
        blocks: m.blocks,
        channels: m.channels,
        input_planes: m.input_planes,
        ..NetConfig::default()
    };
    // The probe: the empty board of the largest standard size the file accepts.
    let size = 15.clamp(m.min_board, m.max_board);
    let board = Board::new(size, size, Rule::Freestyle).map_err(|e| e.to_string())?;
    let mut planes = vec![0f32; features::input_len(&board)];
    features::encode(&board, &mut planes);
    let (_, value) = model
        .run(&planes, 1, size, size)
        .map_err(|e| format!("probe forward: {e}"))?;
    println!("file            {} ({bytes} bytes)", file.display());
    println!("preset          {} ({} blocks x {} channels)", m.preset, m.blocks, m.channels);
    println!("parameters      {} (network contract heads)", config.param_count());
    println!("feature version {} (input planes {})", m.feature_version, m.input_planes);
    println!("training step   {}", m.step);
    println!("board sizes     {}..={} (any rule: the rule is an input plane)", m.min_board, m.max_board);
    println!("probe           {size}x{size} empty board: value {:+.4}, outputs finite", value[0]);
    Ok(())
}

fn bench(search_ms: u64, ort_ms: u64) -> Result<(), String> {
    use engine::eval::onnx_evaluator::{OnnxEvaluator, OnnxEvaluatorConfig};
    use engine::mcts::{MctsConfig, Search, SearchLimits};
    use std::sync::Arc;
    use std::time::{Duration, Instant};
    OnnxRuntime::init().map_err(|e| e.to_string())?;
    let board = engine::bench::position(Rule::Freestyle, 30);
    let size = board.width();
    let mut one = vec![0f32; features::input_len(&board)];
    features::encode(&board, &mut one);
    println!("preset  blocks x ch  parameters  ORT pos/s b1  b8  b32 (1 core, 15x15)  engine visits/s (1 thread, {search_ms} ms)");
    for preset in Preset::ALL {
        let w = NetWeights::random(preset.config(), 1).map_err(|e| e.to_string())?;
        let bytes = engine::net::onnx_bytes(&w, &ModelMeta::for_config(&w.config, 0))
            .map_err(|e| e.to_string())?;
        let mut model = OnnxModel::from_bytes(&bytes, 1, Device::Cpu).map_err(|e| e.to_string())?;
        let mut rates = Vec::new();
        for batch in [1usize, 8, 32] {
            let planes: Vec<f32> = one.iter().copied().cycle().take(one.len() * batch).collect();
            model.run(&planes, batch, size, size).map_err(|e| e.to_string())?; // warm-up
            let (start, mut n) = (Instant::now(), 0usize);
            while start.elapsed() < Duration::from_millis(ort_ms) {
                model.run(&planes, batch, size, size).map_err(|e| e.to_string())?;
                n += batch;
            }
            rates.push(n as f64 / start.elapsed().as_secs_f64());
        }
        let config = OnnxEvaluatorConfig { batch: 8, ..OnnxEvaluatorConfig::default() };
        let eval = OnnxEvaluator::from_bytes(&bytes, config).map_err(|e| e.to_string())?;
        let mut search = Search::new(MctsConfig::default(), Arc::new(eval));
        search.set_position(&board);
        let r = search.run(&SearchLimits::time(Duration::from_millis(search_ms)));
        let visits = r.playouts as f64 / r.elapsed.as_secs_f64().max(1e-9);
        let (b, c) = preset.dims();
        println!(
            "{:<7} {:>3} x {:<5} {:>10}  {:>9.0} {:>6.0} {:>6.0}  {:>12.0}",
            preset.name(),
            b,
            c,
            w.param_count(),
            rates[0],
            rates[1],
            rates[2],
            visits
        );
    }
    Ok(())
}
