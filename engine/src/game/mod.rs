//! Rules core (being written).
