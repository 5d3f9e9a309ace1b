//! The GIPF core without LibTorch, so that it also builds for the web
//! (`wasm32-unknown-unknown`, without the file system and the clock that
//! the `files` feature adds): settings checked against
//! their ranges, the rules with their notation and setup JSON, the
//! network's input and action encoding, the stored game and the training
//! samples built from it, Monte Carlo tree search over any
//! [`search::Evaluator`], the baseline players, a game of self-play, and
//! (feature `files`) files written durably and the games folder's shards.
//! Modules in dependency order (each uses only those before it;
//! `tests/layers.rs` checks it): `bounds`, `rules` ← `encoding`, `games`, `network` ←
//! `samples`, `search`, `durable` ← `players`, `selfplay`, `shards` ← `cli`.

#![warn(missing_docs)]

pub mod bounds;
pub mod rules;

pub mod encoding;
pub mod games;
pub mod network;

#[cfg(feature = "files")]
pub mod durable;
pub mod samples;
pub mod search;

pub mod players;
pub mod selfplay;
#[cfg(feature = "files")]
pub mod shards;

#[cfg(feature = "cli")]
pub mod cli;
