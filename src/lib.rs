//! GIPF: the rules core, and the parts of an AlphaZero-style training system
//! built on it.

pub mod bench;
pub mod encoding;
pub mod net;
pub mod rules;
pub mod search;
