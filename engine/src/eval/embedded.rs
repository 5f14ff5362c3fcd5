//! The networks compiled into the engine: `models/default*.onnx` at the repository root, the
//! trained defaults that `pbrain-fivezero` plays without `--model`, one per rule, each in the
//! games whose rule and board size its metadata claims. `models/README.md` says which command
//! made each. The native runtime (`native`) plays them, so they are in every build.

/// (file, ONNX bytes) of each default network, in the order the engine asks them whether they
/// play a game.
pub const DEFAULT_MODELS: &[(&str, &[u8])] = &[
    (
        "models/default.onnx",
        include_bytes!("../../../models/default.onnx"),
    ),
    (
        "models/default-standard.onnx",
        include_bytes!("../../../models/default-standard.onnx"),
    ),
    (
        "models/default-renju.onnx",
        include_bytes!("../../../models/default-renju.onnx"),
    ),
    (
        "models/default-caro.onnx",
        include_bytes!("../../../models/default-caro.onnx"),
    ),
    // Freestyle on 20x20: the previous freestyle default (epoch 312), measured there; the
    // newer one in default.onnx is only level with it on 20x20 (models/README.md), so it
    // claims 15x15.
    (
        "models/default-freestyle-20x20.onnx",
        include_bytes!("../../../models/default-freestyle-20x20.onnx"),
    ),
];
