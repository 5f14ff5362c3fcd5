//! `fivezero-tools model`: model files a user can inspect. `info FILE` prints what the file says
//! about itself (preset, shape, parameters, feature version, step, board sizes) after loading it
//! in ONNX Runtime and running a probe position (outputs must be finite); `random` writes a
//! randomly initialised network of a preset with the project's own ONNX writer (`engine::net`).
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
        /// tiny, small, medium or large.
        #[arg(long)]
        preset: Preset,
        #[arg(long)]
        out: PathBuf,
        #[arg(long, default_value_t = 1)]
        seed: u64,
    },
}

pub fn run(args: Args) -> Result<(), String> {
    match args.cmd {
        ModelCmd::Info { file } => info(&file),
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
