//! The integration tests of `selfplay`, in one test binary (each binary links
//! LibTorch); each module is the tests of one subject.

#[path = "../../tests/common/s3.rs"]
mod s3_server;

mod s3;
mod selfplay;
