//! The tch network as a backend of the engine's network seam: `TchNet` holds a `Model` (either
//! form) in its own `VarStore` and runs eval-mode forwards without gradients. `TchEvaluator`, the engine's
//! `NetEvaluator` over it, serves self-play, the five-prior probe and evaluation matches.
//!
//! Self-play may instead search with the network's ONNX export on the engine's ONNX Runtime
//! evaluator (`selfplay_backend`): the same network, 1.45-1.65x the self-play speed on a 2-core
//! CPU, or its int8 export (`engine::net::quant`; `auto`'s choice on CPUs with VNNI).
//! `onnx_selfplay` makes that choice once per process (the single-machine run and the
//! distributed workers alike) and `OnnxSelfplay::evaluator` loads each new export; the run's
//! evaluation matches load both of their networks the same way. A pattern network's export is
//! never quantized (int8 is the ResNet's) nor run on ONNX Runtime: the engine's native runtime
//! (`engine::eval::native::pattern`) evaluates it, whole boards at a time (`SelfplayNet::Native`).
//!
//! Depends on tch, `form`, `model`, `config` (the setting), `selfplay` (`Leaves`),
//! `engine::eval` (network, onnx, native), `engine::net::quant` and `engine::bench` (int8
//! calibration positions).

use std::sync::Mutex;

use engine::bench::{CALIBRATION_POSITIONS, CALIBRATION_SEED, game_positions};
use engine::eval::features;
use engine::eval::native::pattern::{PatternEvaluator, PatternNet};
use engine::eval::network::LoadConfig;
use engine::eval::network::{Backend, BackendError, NetEvaluator, NetOutput};
use engine::eval::onnx::{Device as OrtDevice, OnnxRuntime};
use engine::eval::onnx_evaluator::OnnxEvaluator;
use engine::eval::{Evaluation, Evaluator};
use engine::game::Board;
use engine::net::quant::{WeightBits, quantize_model_bytes};
use tch::{Device, Kind, Tensor, nn};

use crate::config::{SelfplayBackend, Settings};
use crate::network::form::{Form, Model};
use crate::network::model::to_vec;
use crate::selfplay::Leaves;

/// How self-play runs on ONNX Runtime (`selfplay_backend` onnx or onnx-int8): the sessions, and
/// for int8 the calibration positions, made once per process.
#[derive(Clone, Debug)]
pub struct OnnxSelfplay {
    config: LoadConfig,
    int8: Option<Calibration>,
    /// The exports are pattern networks: the native runtime loads them.
    native_pattern: bool,
}

/// The positions every int8 export of this run is calibrated on (`engine::bench`'s, as
/// `fivezero-tools model quantize` takes them).
#[derive(Clone, Debug)]
struct Calibration {
    positions: Vec<Vec<f32>>,
    size: usize,
}

impl OnnxSelfplay {
    /// What the `selfplay` record calls this backend.
    pub fn name(&self) -> &'static str {
        match (self.native_pattern, &self.int8) {
            (true, _) => "native-pattern",
            (false, Some(_)) => "onnx-int8",
            (false, None) => "onnx",
        }
    }

    /// The network exported as `onnx` (an epoch's or a distributed version's) in ONNX Runtime
    /// sessions, quantized first when self-play runs int8; a pattern network on the native
    /// runtime.
    pub fn evaluator(&self, onnx: &[u8]) -> anyhow::Result<SelfplayNet> {
        if self.native_pattern {
            let net = PatternNet::from_bytes(onnx).map_err(|e| {
                anyhow::anyhow!("loading the pattern network's export natively: {e}")
            })?;
            return Ok(SelfplayNet::Native(Box::new(PatternEvaluator::new(net))));
        }
        let int8;
        let bytes = match &self.int8 {
            None => onnx,
            Some(c) => {
                int8 =
                    quantize_model_bytes(onnx, &c.positions, c.size, c.size, WeightBits::default())
                        .map_err(|e| {
                            anyhow::anyhow!("quantizing the network's export to int8: {e}")
                        })?;
                &int8
            }
        };
        let sessions = OnnxEvaluator::from_bytes(bytes, self.config)
            .map_err(|e| anyhow::anyhow!("loading the network's export into ONNX Runtime: {e}"))?;
        Ok(SelfplayNet::Batched(Box::new(sessions)))
    }
}

/// A network loaded from its export for self-play and evaluation matches.
pub enum SelfplayNet {
    /// Planes in batches through a backend (ONNX Runtime sessions, or a tch network).
    Batched(Box<NetEvaluator<dyn Backend>>),
    /// Boards through the engine's native pattern runtime.
    Native(Box<PatternEvaluator>),
}

impl SelfplayNet {
    /// How self-play hands it its leaves.
    pub fn leaves(&self) -> Leaves<'_> {
        match self {
            SelfplayNet::Batched(net) => Leaves::Batched(net),
            SelfplayNet::Native(ev) => Leaves::Boards(&**ev),
        }
    }
}

impl Evaluator for SelfplayNet {
    fn name(&self) -> String {
        match self {
            SelfplayNet::Batched(net) => net.name(),
            SelfplayNet::Native(ev) => ev.name(),
        }
    }

    fn evaluate(&self, boards: &[&Board], out: &mut Vec<Evaluation>) {
        match self {
            SelfplayNet::Batched(net) => net.evaluate(boards, out),
            SelfplayNet::Native(ev) => ev.evaluate(boards, out),
        }
    }

    fn preferred_batch(&self) -> usize {
        match self {
            SelfplayNet::Batched(net) => net.preferred_batch(),
            SelfplayNet::Native(ev) => ev.preferred_batch(),
        }
    }

    fn model_id(&self) -> u64 {
        match self {
            SelfplayNet::Batched(net) => net.model_id(),
            SelfplayNet::Native(ev) => ev.model_id(),
        }
    }

    fn refuses(&self, board: &Board) -> Option<String> {
        match self {
            SelfplayNet::Batched(net) => net.refuses(board),
            SelfplayNet::Native(ev) => ev.refuses(board),
        }
    }
}

/// The ONNX Runtime sessions self-play searches with (`selfplay_backend`), or `None` for the tch
/// network: `auto` takes them on a CPU when the runtime loads (and `warn`s why not otherwise),
/// int8 where the CPU has VNNI,
/// `onnx` and `onnx-int8` without a runtime are an error. One session per tree worker, the torch
/// threads shared among them: each step's batch is cut into one part per session and the parts
/// run at once (`NetEvaluator::forward_split`).
pub fn onnx_selfplay(
    s: &Settings,
    device: Device,
    warn: impl FnOnce(String),
) -> anyhow::Result<Option<OnnxSelfplay>> {
    let wanted = match s.selfplay_backend {
        SelfplayBackend::Tch => false,
        SelfplayBackend::Auto => device == Device::Cpu,
        SelfplayBackend::Onnx | SelfplayBackend::OnnxInt8 => true,
    };
    if !wanted {
        return Ok(None);
    }
    if s.model_preset.is_pattern() {
        return native_pattern_selfplay(s);
    }
    if let Err(e) = OnnxRuntime::init() {
        if s.selfplay_backend == SelfplayBackend::Auto {
            warn(format!(
                "self-play on libtorch: ONNX Runtime cannot run the network here ({e})"
            ));
            return Ok(None);
        }
        anyhow::bail!(
            "--selfplay-backend {}: ONNX Runtime cannot run the network ({e}); \
             --selfplay-backend tch plays on libtorch",
            s.selfplay_backend
        );
    }
    let wants_int8 = match s.selfplay_backend {
        SelfplayBackend::OnnxInt8 => true,
        SelfplayBackend::Auto => cpu_has_int8_dot_products(),
        SelfplayBackend::Tch | SelfplayBackend::Onnx => false,
    };
    let int8 = if wants_int8 {
        Some(Calibration::for_settings(s)?)
    } else {
        None
    };
    let sessions = s.parallel_workers.max(1);
    let config = LoadConfig {
        sessions,
        threads_intra: (s.torch_threads() / sessions).max(1),
        device: OrtDevice::Cpu,
        batch: s.onnx_batch,
        cache_entries: 0,
    };
    eprintln!(
        "trainer: self-play on ONNX Runtime{}: {sessions} session(s) of {} thread(s)",
        match (&int8, s.selfplay_backend) {
            (None, _) => "",
            (Some(_), SelfplayBackend::Auto) => " (int8: the CPU has integer dot products)",
            (Some(_), _) => " (int8)",
        },
        config.threads_intra
    );
    Ok(Some(OnnxSelfplay {
        config,
        int8,
        native_pattern: false,
    }))
}

impl Calibration {
    /// The calibration positions of `s`'s board and rule.
    fn for_settings(s: &Settings) -> anyhow::Result<Calibration> {
        let positions = game_positions(
            CALIBRATION_POSITIONS,
            s.board_size,
            s.rule,
            CALIBRATION_SEED,
        )
        .map_err(|e| anyhow::anyhow!("int8 calibration positions: {e}"))?;
        Ok(Calibration {
            positions,
            size: s.board_size,
        })
    }
}

/// Self-play of a pattern network on the engine's native runtime: int8 is refused (the
/// quantizer knows the ResNet only), any other backend but tch takes it.
fn native_pattern_selfplay(s: &Settings) -> anyhow::Result<Option<OnnxSelfplay>> {
    if s.selfplay_backend == SelfplayBackend::OnnxInt8 {
        anyhow::bail!(
            "--selfplay-backend onnx-int8: the pattern network has no int8 form (its export runs \
             on the engine's native runtime: --selfplay-backend auto or onnx)"
        );
    }
    eprintln!("trainer: self-play on the engine's native pattern runtime");
    Ok(Some(OnnxSelfplay {
        config: LoadConfig::default(),
        int8: None,
        native_pattern: true,
    }))
}

/// Whether this CPU multiplies int8 with dot-product instructions (AVX-512 VNNI or AVX-VNNI), where
/// ONNX Runtime's int8 kernels run fastest: `auto` self-plays int8 there. From random play on a
/// VNNI Xeon it learned per epoch as well as fp32 and reached each epoch in less CPU time (docs/networks.md).
fn cpu_has_int8_dot_products() -> bool {
    #[cfg(target_arch = "x86_64")]
    {
        std::arch::is_x86_feature_detected!("avx512vnni")
            || std::arch::is_x86_feature_detected!("avxvnni")
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        false
    }
}

/// The trainer's evaluator: encode, tch forward, masked softmax.
pub type TchEvaluator = NetEvaluator<TchNet>;

pub struct TchNet {
    inner: Mutex<(nn::VarStore, Model)>,
    device: Device,
    label: String,
    id: u64,
}

impl TchNet {
    /// A fresh (randomly initialised) network on `device`; `tch::manual_seed` decides the weights.
    pub fn new(form: impl Into<Form>, device: Device, label: &str, id: u64) -> TchNet {
        let vs = nn::VarStore::new(device);
        let net = Model::new(&vs.root(), form);
        TchNet {
            inner: Mutex::new((vs, net)),
            device,
            label: label.to_string(),
            id,
        }
    }

    /// `new`, wrapped in the evaluator.
    pub fn evaluator(form: impl Into<Form>, device: Device, label: &str, id: u64) -> TchEvaluator {
        NetEvaluator::new(TchNet::new(form, device, label, id))
    }

    /// Copies every variable (weights and BN statistics) from `src`.
    pub fn load_from(&self, src: &nn::VarStore) -> anyhow::Result<()> {
        let mut g = self
            .inner
            .lock()
            .map_err(|_| anyhow::anyhow!("network lock poisoned"))?;
        g.0.copy(src)
            .map_err(|e| anyhow::anyhow!("copying weights: {e}"))
    }

    pub fn with<R>(&self, f: impl FnOnce(&nn::VarStore, &Model) -> R) -> R {
        let g = self.inner.lock().unwrap_or_else(|e| e.into_inner());
        f(&g.0, &g.1)
    }
}

impl Backend for TchNet {
    fn name(&self) -> String {
        self.label.clone()
    }

    fn model_id(&self) -> u64 {
        self.id
    }

    fn preferred_batch(&self) -> usize {
        16
    }

    /// Eval-mode forward on host planes.
    fn forward(
        &self,
        planes: &[f32],
        n: usize,
        h: usize,
        w: usize,
    ) -> Result<NetOutput, BackendError> {
        let expected = n * features::PLANES * h * w;
        if planes.len() != expected || n == 0 {
            return Err(format!(
                "forward: {} values for n={n} x {} planes x {h}x{w}",
                planes.len(),
                features::PLANES
            )
            .into());
        }
        let g = self.inner.lock().unwrap_or_else(|e| e.into_inner());
        tch::no_grad(|| {
            let x = Tensor::from_slice(planes).view([
                n as i64,
                features::PLANES as i64,
                h as i64,
                w as i64,
            ]);
            let x = x.to_device(self.device).to_kind(Kind::Float);
            let (p, v) = g.1.forward(&x, false);
            Ok(NetOutput {
                logits: to_vec(&p),
                values: to_vec(&v),
            })
        })
    }
}
