//! The engine's own inference for the pattern network (`net::pattern`: the contract), evaluated
//! incrementally: the table quantized to int16 (`table`), each search thread's accumulator
//! brought from its last board to the next by the moves between them (`accumulator`), the small
//! layers in fp32 on the vector width of the chosen kernels (`head`, its kernels in
//! `kernels`), and the `Evaluator` that keeps one accumulator per concurrent caller
//! (`evaluator`). `Simd` and `FIVEZERO_SIMD` choose the path as for the ResNet; every path gives
//! the same bits.
//!
//! A file is accepted only when its graph is node for node the one `net::pattern_model_proto`
//! writes (fixed tensors compared by value); a file that says it is a pattern network and is
//! not (shapes, a short table, NaN) is a `LoadError::Contract`. Names no inference runtime.

mod accumulator;
mod evaluator;
mod head;
mod kernels;
mod table;

use std::path::Path;
use std::sync::Arc;

pub use accumulator::{Accumulator, Reached};
pub use evaluator::PatternEvaluator;
use head::{Head, Scratch};
use table::QTable;

use super::LoadError;
use super::Simd;
use super::load::{Inits, decode, prop, same_structure};
use crate::game::{Board, Cell, Color};
use crate::net::pattern::{KEYS, PATTERN_FORM, PatternWeights, VALUE_HIDDEN};
use crate::net::{ModelMeta, meta_keys};

/// A pattern network loaded for the native runtime.
#[derive(Clone, Debug)]
pub struct PatternNet {
    /// Shared by clones: 12.6 MB at D = 32, and its rows stay aligned to cache lines.
    table: Arc<QTable>,
    head: Head,
    meta: ModelMeta,
    id: u64,
    simd: Simd,
}

/// What one search thread keeps between evaluations: the accumulator and the head's buffers.
#[derive(Clone, Debug, Default)]
pub struct PatternState {
    pub acc: Accumulator,
    scratch: Scratch,
    /// The empty points of the board evaluated (dense order).
    empty: Vec<bool>,
}

impl PatternNet {
    /// Loads a model from its bytes, with the kernels `Simd::chosen` picks.
    ///
    /// # Errors
    /// `Unsupported` for a model of another form (ONNX Runtime may run it); `Contract` for a
    /// pattern network file that does not hold one (shapes, a short table, non-finite numbers).
    pub fn from_bytes(bytes: &[u8]) -> Result<PatternNet, LoadError> {
        let (m, meta) = decode(bytes)?;
        match prop(&m, meta_keys::FORM) {
            Some(form) if form == PATTERN_FORM => {}
            other => {
                return Err(LoadError::Unsupported(format!(
                    "form `{}` is not the pattern network",
                    other.as_deref().unwrap_or("resnet")
                )));
            }
        }
        let graph = m
            .graph
            .as_ref()
            .ok_or_else(|| LoadError::Contract("the model has no graph".into()))?;
        let weights = read_weights(graph, &meta).map_err(|e| match e {
            LoadError::Unsupported(why) => LoadError::Contract(format!("pattern network: {why}")),
            e => e,
        })?;
        Ok(PatternNet::new(
            &weights,
            meta,
            super::super::network::model_id(bytes),
        ))
    }

    /// Loads a model file (at most `network::MAX_MODEL_BYTES`).
    ///
    /// # Errors
    /// As `from_bytes`, or the file cannot be read.
    pub fn load(path: &Path) -> Result<PatternNet, LoadError> {
        let bytes = super::super::network::read_model_file(path)
            .map_err(|e| LoadError::Read(format!("{}: {e}", path.display())))?;
        PatternNet::from_bytes(&bytes)
    }

    /// The network of `weights` (already checked), quantized.
    fn new(w: &PatternWeights, meta: ModelMeta, id: u64) -> PatternNet {
        let max = |v: &[f32]| v.iter().fold(0f32, |m, x| m.max(x.abs()));
        let scale = table::scale_for(max(&w.table), max(&w.black), max(&w.forbidden));
        let q = |v: &[f32]| v.iter().map(|&x| table::quantize(x, scale)).collect();
        let d = w.dim;
        let dw = transposed(&w.policy_dw, d, 9);
        let fc1_t = transposed(&w.value_fc1.weight, VALUE_HIDDEN, w.value_fc1.in_features);
        let head = Head {
            dim: d,
            scale,
            black: q(&w.black),
            forbidden: q(&w.forbidden),
            dw,
            dw_bias: w.policy_dw_bias.clone(),
            out: w.policy_out.clone(),
            out_bias: w.policy_out_bias,
            context_t: transposed(&w.policy_context, d, d),
            fc1_t,
            fc1_bias: w.value_fc1.bias.clone(),
            fc2: w.value_fc2.clone(),
        };
        PatternNet {
            table: Arc::new(QTable::new(&w.table, d, scale)),
            head,
            meta,
            id,
            simd: Simd::chosen(),
        }
    }

    /// The same network on other kernels (tests, measurements).
    ///
    /// # Panics
    /// If this CPU lacks `simd`.
    pub fn with_simd(mut self, simd: Simd) -> PatternNet {
        assert!(simd.supported(), "this CPU lacks {simd}");
        self.simd = simd;
        self
    }

    pub fn simd(&self) -> Simd {
        self.simd
    }

    pub fn meta(&self) -> &ModelMeta {
        &self.meta
    }

    /// FNV-1a of the model bytes, as the other runtimes report.
    pub fn id(&self) -> u64 {
        self.id
    }

    /// Accumulator width `D`.
    pub fn dim(&self) -> usize {
        self.head.dim
    }

    /// "pattern(D=32 step 7) avx512vnni".
    pub fn describe(&self) -> String {
        format!(
            "pattern(D={} step {}) {}",
            self.head.dim, self.meta.step, self.simd
        )
    }

    /// Brings `state`'s accumulator of the side to move's view (`view_of`) to `board`,
    /// incrementally from that view's last board when near.
    pub fn sync(&self, state: &mut PatternState, board: &Board) -> Reached {
        state
            .acc
            .sync(&self.table, board, self.simd, view_of(board))
    }

    /// A from-scratch accumulator of `board` (the reference the incremental one must equal).
    pub fn refreshed(&self, board: &Board) -> Accumulator {
        let mut acc = Accumulator::default();
        acc.refresh(&self.table, board, self.simd);
        acc
    }

    /// The logits (`y * w + x`, into `logits`) and value of `board` for the side to move;
    /// `forbidden` lists the dense indices of the points forbidden to it. Only the empty
    /// points' logits are computed (an occupied point's is the output bias: it is never a
    /// move, and its share of the work is saved).
    ///
    /// # Panics
    /// If `logits` is not one per point (a caller bug).
    pub fn evaluate(
        &self,
        state: &mut PatternState,
        board: &Board,
        forbidden: &[usize],
        logits: &mut [f32],
    ) -> f32 {
        assert_eq!(
            logits.len(),
            board.width() * board.height(),
            "one logit a point"
        );
        self.sync(state, board);
        let black = board.side_to_move() == Color::Black;
        let acc = state.acc.view(view_of(board));
        let size = (board.width(), board.height());
        state.empty.clear();
        for y in 0..board.height() {
            let row = board.row_cells(y).iter();
            state.empty.extend(row.map(|&c| c == Cell::Empty));
        }
        let (s, empty) = (&mut state.scratch, &state.empty);
        self.head
            .forward(self.simd, acc, empty, size, black, forbidden, s, logits)
    }

    /// Why the network should not play a `rule` game on a `w` x `h` board, or None.
    pub fn refuses(&self, rule: crate::game::Rule, w: usize, h: usize) -> Option<String> {
        let m = &self.meta;
        if w < m.min_board || h < m.min_board || w > m.max_board || h > m.max_board {
            return Some(format!(
                "board {w}x{h} is outside the model's range {}..={}",
                m.min_board, m.max_board
            ));
        }
        m.refuses(rule, w, h)
    }
}

/// The `cols` x `rows` transpose of the row-major `rows` x `cols` matrix `v`: the head's loops
/// run along what were its columns.
fn transposed(v: &[f32], rows: usize, cols: usize) -> Vec<f32> {
    (0..rows * cols)
        .map(|i| v[(i % rows) * cols + i / rows])
        .collect()
}

/// The accumulator view of the side to move: 0 when black is to move (black's stones own).
pub fn view_of(board: &Board) -> usize {
    usize::from(board.side_to_move() != Color::Black)
}

/// The weights of a graph that says it is a pattern network, after checking it is the writer's.
fn read_weights(
    graph: &crate::net::onnx_pb::GraphProto,
    meta: &ModelMeta,
) -> Result<PatternWeights, LoadError> {
    let inits = Inits::new(graph);
    let dims = inits.dims("pattern.table")?;
    let dim = match dims[..] {
        [KEYS, d] if d == meta.channels => d,
        _ => {
            return Err(LoadError::Contract(format!(
                "`pattern.table` is {dims:?}, the metadata says [{KEYS}, {}]",
                meta.channels
            )));
        }
    };
    let standin = PatternWeights::zeros(dim).map_err(|e| LoadError::Contract(e.to_string()))?;
    let expected = crate::net::pattern_model_proto(&standin, meta)
        .map_err(|e| LoadError::Contract(e.to_string()))?;
    same_structure(graph, &expected, "pattern network")?;
    fixed_tensors_match(&inits, &expected)?;
    let out_bias = inits.f32s("policy_out.bias")?;
    Ok(PatternWeights {
        dim,
        table: inits.f32s("pattern.table")?,
        black: inits.f32s("pattern.black")?,
        forbidden: inits.f32s("pattern.forbidden")?,
        policy_dw: inits.f32s("policy_dw.weight")?,
        policy_dw_bias: inits.f32s("policy_dw.bias")?,
        policy_out: inits.f32s("policy_out.weight")?,
        policy_out_bias: out_bias[0],
        policy_context: inits.f32s("policy_context.weight")?,
        value_fc1: inits.dense("value_fc1")?,
        value_fc2: inits.dense("value_fc2")?,
    })
}

/// The tensors the writer fixes (the code and key kernels, pads, axes, clamp bounds) hold the
/// writer's values: the native runtime computes those steps its own way.
fn fixed_tensors_match(
    inits: &Inits,
    expected: &crate::net::onnx_pb::ModelProto,
) -> Result<(), LoadError> {
    let learned = PatternWeights::LEARNED;
    let graph = expected.graph.as_ref().expect("the writer makes a graph");
    for t in &graph.initializer {
        let name = t.name.as_deref().unwrap_or("");
        if learned.contains(&name) {
            continue;
        }
        if inits.get(name)?.raw_data != t.raw_data {
            return Err(LoadError::Contract(format!(
                "fixed tensor `{name}` differs from the writer's"
            )));
        }
    }
    Ok(())
}
