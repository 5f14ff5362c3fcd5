//! `fivezero-tools model`: model files a user can inspect. `info FILE` prints what the file says
//! about itself (preset, shape, parameters, feature version, step, board sizes) after loading it
//! in ONNX Runtime and running a probe position (outputs must be finite); `random` writes a
//! randomly initialised network of a preset with the project's own ONNX writer (`engine::net`);
//! `quantize` writes the int8 export of an fp32 file and `compare` measures how closely one model
//! follows another on this CPU; `claim` sets the rules and sizes a file plays;
//! `bench` measures every preset on this CPU (random weights: speed does not depend on them).
//!
//! Depends on `engine::net` and `engine::eval` (the ONNX backend and the input features), and for
//! `bench` and `quantize` on `engine::bench` (its positions) and `engine::mcts` (search speed).

use std::path::PathBuf;

use engine::bench::{CALIBRATION_POSITIONS, CALIBRATION_SEED, game_positions};
use engine::eval::features;
use engine::eval::onnx::{Device, OnnxModel, OnnxRuntime};
use engine::game::{Board, Rule};
use engine::net::quant::WeightBits;
use engine::net::{ModelMeta, NetConfig, NetWeights, Preset};

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
        /// tiny, cpu32, cpu48, small, medium, large or pattern.
        #[arg(long)]
        preset: Preset,
        #[arg(long)]
        out: PathBuf,
        #[arg(long, default_value_t = 1)]
        seed: u64,
    },
    /// The int8 export of an fp32 model (static QDQ, calibrated on positions of the classical
    /// engine's games), with its policy/value agreement with the fp32 model on other positions.
    Quantize {
        /// The fp32 .onnx file (as the trainer exports it).
        file: PathBuf,
        #[arg(long)]
        out: PathBuf,
        /// Calibration positions (and as many more for the agreement check).
        #[arg(long, default_value_t = CALIBRATION_POSITIONS)]
        positions: usize,
        /// Board size of the positions.
        #[arg(long, default_value_t = 15)]
        size: usize,
        /// Bits of the int8 weights: 7 follows the fp32 model more closely on CPUs without VNNI,
        /// where ONNX Runtime's integer convolution can saturate with 8; which plays better is
        /// measured per network (a tournament of the two files).
        #[arg(long, default_value = "7", value_parser = weight_bits)]
        weight_bits: WeightBits,
    },
    /// How closely model B follows model A on this CPU: the share of positions with the same best
    /// move and the mean |value difference|, on positions of classical games of A's rule (the
    /// held-out positions of `quantize` and as many more as asked). For an int8 file against its
    /// fp32 source, on the CPU that will run it.
    Compare {
        /// The reference .onnx file (an fp32 export).
        a: PathBuf,
        /// The .onnx file to compare with it.
        b: PathBuf,
        /// Positions to compare on.
        #[arg(long, default_value_t = 1024)]
        positions: usize,
        /// Board size of the positions.
        #[arg(long, default_value_t = 15)]
        size: usize,
    },
    /// Copies a model file with its claim set: the rules and board sizes it was trained for (or
    /// measured on). The engine plays the network only in games it claims, the classical
    /// evaluator elsewhere.
    Claim {
        /// The .onnx file.
        file: PathBuf,
        #[arg(long)]
        out: PathBuf,
        /// Comma-separated rules (freestyle, standard, renju, caro); empty: any.
        #[arg(long, value_delimiter = ',', default_value = "")]
        rules: Vec<String>,
        /// Comma-separated square board sizes (15,20); empty: any.
        #[arg(long, value_delimiter = ',', default_value = "")]
        sizes: Vec<String>,
    },
    /// Every preset on one core: ONNX Runtime positions/s at batch 1, 8 and 32 (15x15), fp32
    /// and int8 at batch 8 with their agreement, and the engine's MCTS visits/s over the fp32
    /// model (one thread, batch 8) on a 30-stone middle game.
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
        ModelCmd::Quantize {
            file,
            out,
            positions,
            size,
            weight_bits,
        } => quantize(&file, &out, positions, size, weight_bits),
        ModelCmd::Compare {
            a,
            b,
            positions,
            size,
        } => compare(&a, &b, positions, size),
        ModelCmd::Bench { search_ms, ort_ms } => bench(search_ms, ort_ms),
        ModelCmd::Claim {
            file,
            out,
            rules,
            sizes,
        } => claim(&file, &out, &rules, &sizes),
        ModelCmd::Random { preset, out, seed } => {
            let bytes = engine_random_model(preset, seed)?;
            engine::net::write_atomic(&out, &bytes)
                .map_err(|e| format!("writing {}: {e}", out.display()))?;
            println!(
                "wrote {} ({preset}, {} parameters, seed {seed})",
                out.display(),
                preset.param_count()
            );
            Ok(())
        }
    }
}

fn claim(
    file: &std::path::Path,
    out: &std::path::Path,
    rules: &[String],
    sizes: &[String],
) -> Result<(), String> {
    let items = |list: &[String]| -> Vec<String> {
        list.iter()
            .map(|s| s.trim().to_string())
            .filter(|s| !s.is_empty())
            .collect()
    };
    let rules: Vec<Rule> = items(rules)
        .iter()
        .map(|r| r.parse())
        .collect::<Result<_, String>>()?;
    let sizes: Vec<usize> = items(sizes)
        .iter()
        .map(|s| match s.parse::<usize>() {
            Ok(n) if (engine::game::MIN_SIZE..=engine::game::MAX_SIZE).contains(&n) => Ok(n),
            _ => Err(format!(
                "board size `{s}` is not a number in {}..={}",
                engine::game::MIN_SIZE,
                engine::game::MAX_SIZE
            )),
        })
        .collect::<Result<_, String>>()?;
    let bytes = std::fs::read(file).map_err(|e| format!("{}: {e}", file.display()))?;
    let claimed = engine::net::set_claim(&bytes, &rules, &sizes)
        .map_err(|e| format!("{}: {e}", file.display()))?;
    engine::net::write_atomic(out, &claimed).map_err(|e| format!("{}: {e}", out.display()))?;
    println!(
        "wrote {} (claims {})",
        out.display(),
        engine::net::describe_claim(&rules, &sizes)
    );
    Ok(())
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
    println!(
        "preset          {} ({} blocks x {} channels)",
        m.preset, m.blocks, m.channels
    );
    // A pattern file's (0 blocks, D channels) is no ResNet trunk.
    let params = if m.preset == engine::net::pattern::PATTERN_FORM {
        engine::net::pattern::param_count(m.channels)
    } else {
        config.param_count()
    };
    println!("parameters      {params} (network contract heads)");
    println!(
        "feature version {} (input planes {})",
        m.feature_version, m.input_planes
    );
    println!(
        "weights         {}",
        m.quantization.as_deref().unwrap_or("fp32")
    );
    println!("training step   {}", m.step);
    println!("plays           {}", m.claim());
    println!(
        "input sizes     {}..={} (boards the network accepts; the engine plays it where it claims)",
        m.min_board, m.max_board
    );
    println!(
        "probe           {size}x{size} empty board: value {:+.4}, outputs finite",
        value[0]
    );
    Ok(())
}

/// `--weight-bits`: 7 or 8.
fn weight_bits(text: &str) -> Result<WeightBits, String> {
    text.parse()
        .ok()
        .and_then(WeightBits::from_bits)
        .ok_or_else(|| format!("`{text}`: 7 or 8"))
}

/// How closely `b` follows `a` on `positions`: the share of positions with the same best move,
/// and the mean absolute value difference.
fn agreement(
    a: &mut OnnxModel,
    b: &mut OnnxModel,
    positions: &[Vec<f32>],
    size: usize,
) -> Result<(f64, f64), String> {
    let (mut same, mut dv) = (0usize, 0f64);
    let argmax = |v: &[f32]| (0..v.len()).fold(0, |best, i| if v[i] > v[best] { i } else { best });
    for x in positions {
        let (pa, va) = a.run(x, 1, size, size).map_err(|e| e.to_string())?;
        let (pb, vb) = b.run(x, 1, size, size).map_err(|e| e.to_string())?;
        same += usize::from(argmax(&pa) == argmax(&pb));
        dv += (va[0] - vb[0]).abs() as f64;
    }
    let n = positions.len().max(1) as f64;
    Ok((same as f64 / n, dv / n))
}

/// Seed of the positions of the agreement checks (`quantize` calibrates on
/// `engine::bench::CALIBRATION_SEED`'s).
const HELD_OUT_SEED: u64 = 2;

/// A model file's bytes and the model ONNX Runtime made of them.
fn load(file: &std::path::Path) -> Result<(Vec<u8>, OnnxModel), String> {
    let bytes = std::fs::read(file).map_err(|e| format!("{}: {e}", file.display()))?;
    let model = OnnxModel::from_bytes(&bytes, 1, Device::Cpu)
        .map_err(|e| format!("{}: {e}", file.display()))?;
    Ok((bytes, model))
}

/// The rule whose positions a model is measured on: the first it claims (freestyle for a model
/// that claims any).
fn model_rule(model: &OnnxModel) -> Rule {
    model
        .meta()
        .rules
        .first()
        .copied()
        .unwrap_or(Rule::Freestyle)
}

fn compare(
    a: &std::path::Path,
    b: &std::path::Path,
    positions: usize,
    size: usize,
) -> Result<(), String> {
    OnnxRuntime::init().map_err(|e| e.to_string())?;
    let (mut ma, mut mb) = (load(a)?.1, load(b)?.1);
    let rule = model_rule(&ma);
    let held_out = game_positions(positions.max(1), size, rule, HELD_OUT_SEED)?;
    let (top1, dv) = agreement(&mut ma, &mut mb, &held_out, size)?;
    println!(
        "{} against {} on {} {rule} {size}x{size} positions: same best move {:.1}%, \
         mean |value difference| {dv:.4}",
        b.display(),
        a.display(),
        held_out.len(),
        100.0 * top1
    );
    Ok(())
}

fn quantize(
    file: &std::path::Path,
    out: &std::path::Path,
    positions: usize,
    size: usize,
    bits: WeightBits,
) -> Result<(), String> {
    OnnxRuntime::init().map_err(|e| e.to_string())?;
    let (fp32, mut model) = load(file)?;
    // The positions of the rule the model plays: its rule plane is on there, and renju adds the
    // forbidden-point plane, so freestyle positions would calibrate other activations.
    let rule = model_rule(&model);
    let calibration = game_positions(positions.max(1), size, rule, CALIBRATION_SEED)?;
    let int8 = engine::net::quant::quantize_model_bytes(&fp32, &calibration, size, size, bits)
        .map_err(|e| format!("{}: {e}", file.display()))?;
    let mut q = OnnxModel::from_bytes(&int8, 1, Device::Cpu)
        .map_err(|e| format!("ONNX Runtime refuses the int8 export: {e}"))?;
    let held_out = game_positions(positions.max(1), size, rule, HELD_OUT_SEED)?;
    let (top1, dv) = agreement(&mut model, &mut q, &held_out, size)?;
    engine::net::write_atomic(out, &int8).map_err(|e| format!("{}: {e}", out.display()))?;
    println!(
        "wrote {} ({} bytes, int8 QDQ ({}), calibrated on {} {rule} positions); against the fp32 model on {} other positions: \
         same best move {:.1}%, mean |value difference| {dv:.4}",
        out.display(),
        int8.len(),
        bits.tag(),
        calibration.len(),
        held_out.len(),
        100.0 * top1
    );
    Ok(())
}

/// Positions/s of `model` at `batch` copies of `one`, measured for about `ms`.
fn ort_rate(
    model: &mut OnnxModel,
    one: &[f32],
    batch: usize,
    size: usize,
    ms: u64,
) -> Result<f64, String> {
    use std::time::{Duration, Instant};
    let planes: Vec<f32> = one
        .iter()
        .copied()
        .cycle()
        .take(one.len() * batch)
        .collect();
    model
        .run(&planes, batch, size, size)
        .map_err(|e| e.to_string())?; // warm-up
    let (start, mut n) = (Instant::now(), 0usize);
    while start.elapsed() < Duration::from_millis(ms) {
        model
            .run(&planes, batch, size, size)
            .map_err(|e| e.to_string())?;
        n += batch;
    }
    Ok(n as f64 / start.elapsed().as_secs_f64())
}

fn bench(search_ms: u64, ort_ms: u64) -> Result<(), String> {
    use engine::eval::network::LoadConfig;
    use engine::eval::onnx_evaluator::OnnxEvaluator;
    use engine::mcts::{MctsConfig, Search, SearchLimits};
    use std::sync::Arc;
    use std::time::Duration;
    OnnxRuntime::init().map_err(|e| e.to_string())?;
    let board = engine::bench::position(Rule::Freestyle, 30);
    let size = board.width();
    let mut one = vec![0f32; features::input_len(&board)];
    features::encode(&board, &mut one);
    let calibration = game_positions(4, size, Rule::Freestyle, 1)?;
    let held_out = game_positions(64, size, Rule::Freestyle, 2)?;
    println!(
        "preset  blocks x ch  parameters  ORT fp32 pos/s b1  b8  b32  int8 b8  (x fp32)  \
         int8 same move / |dv|  engine visits/s (1 thread, {search_ms} ms)"
    );
    // The columns (int8, ORT batches) are the ResNets': the pattern network runs natively.
    for preset in Preset::RESNETS {
        let w = NetWeights::random(preset.config(), 1).map_err(|e| e.to_string())?;
        let bytes = engine::net::onnx_bytes(&w, &ModelMeta::for_config(&w.config, 0))
            .map_err(|e| e.to_string())?;
        let mut model = OnnxModel::from_bytes(&bytes, 1, Device::Cpu).map_err(|e| e.to_string())?;
        let mut rates = Vec::new();
        for batch in [1usize, 8, 32] {
            rates.push(ort_rate(&mut model, &one, batch, size, ort_ms)?);
        }
        let ranges = engine::net::quant::calibrate(&w, &calibration, size, size)
            .map_err(|e| e.to_string())?;
        let int8 = engine::net::quantized_onnx_bytes(
            &w,
            &ModelMeta::for_config(&w.config, 0),
            &ranges,
            WeightBits::default(),
        )
        .map_err(|e| e.to_string())?;
        let mut q = OnnxModel::from_bytes(&int8, 1, Device::Cpu).map_err(|e| e.to_string())?;
        let int8_rate = ort_rate(&mut q, &one, 8, size, ort_ms)?;
        let (top1, dv) = agreement(&mut model, &mut q, &held_out, size)?;
        // As the engine plays: its cache of recent positions included.
        let config = LoadConfig {
            batch: 8,
            cache_entries: engine::brain::DEFAULT_EVAL_CACHE_ENTRIES,
            ..LoadConfig::default()
        };
        let eval = OnnxEvaluator::from_bytes(&bytes, config).map_err(|e| e.to_string())?;
        let mut search = Search::new(MctsConfig::default(), Arc::new(eval));
        search.set_position(&board);
        let r = search.run(&SearchLimits::time(Duration::from_millis(search_ms)));
        let visits = r.playouts as f64 / r.elapsed.as_secs_f64().max(1e-9);
        let (b, c) = preset.dims();
        println!(
            "{:<7} {:>3} x {:<5} {:>10}  {:>14.0} {:>6.0} {:>6.0}  {:>7.0}  {:>7.2}x  {:>13.1}% / {:.3}  {:>12.0}",
            preset.name(),
            b,
            c,
            w.param_count(),
            rates[0],
            rates[1],
            rates[2],
            int8_rate,
            int8_rate / rates[1],
            100.0 * top1,
            dv,
            visits
        );
    }
    Ok(())
}

/// Seeded random weights of `preset` as an fp32 model file's bytes (either network form).
fn engine_random_model(preset: Preset, seed: u64) -> Result<Vec<u8>, String> {
    match preset.try_config() {
        Ok(config) => {
            let w = NetWeights::random(config, seed).map_err(|e| e.to_string())?;
            engine::net::onnx_bytes(&w, &ModelMeta::for_config(&w.config, 0))
        }
        Err(_) => {
            let w = engine::net::PatternWeights::random(Preset::Pattern.dims().1, seed)
                .map_err(|e| e.to_string())?;
            engine::net::pattern_onnx_bytes(&w, &w.meta(0))
        }
    }
    .map_err(|e| e.to_string())
}
