//! The integration tests of the `gipf` crate, in one test binary (each
//! binary links LibTorch, so one link instead of one a file); each module is
//! the tests of one subject.

mod common;
mod reference;

mod against_reference;
mod cli;
mod docs;
mod engine_load;
mod faults;
mod formats;
mod front_ends;
mod layers;
mod perft;
mod properties;
mod python;
mod s3;
mod seeds;
mod serve;
mod web;
