//! ONNX Runtime backend (being written).
