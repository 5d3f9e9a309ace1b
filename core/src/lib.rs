//! The GIPF core without LibTorch, a file system or a clock, so that it also
//! builds for the web (`wasm32-unknown-unknown`): settings checked against
//! their ranges, the rules with their notation and setup JSON, the
//! network's input and action encoding, the stored game and the training
//! samples built from it, Monte Carlo tree search over any
//! [`search::Evaluator`], the baseline players, and a game of self-play.
//! Modules in dependency order (each uses only those before it;
//! `tests/layers.rs` checks it): `bounds`, `rules` ← `encoding`, `games`, `network` ←
//! `samples`, `search` ← `players`, `selfplay` ← `cli`.

pub mod bounds;
pub mod rules;

pub mod encoding;
pub mod games;
pub mod network;

pub mod samples;
pub mod search;

pub mod players;
pub mod selfplay;

#[cfg(feature = "cli")]
pub mod cli;
