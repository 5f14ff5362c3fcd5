//! Classical pattern evaluator (being written).
