//! The integration tests of `trainer`, in one test binary (each binary links
//! LibTorch); each module is the tests of one subject.

#[path = "../../tests/common/s3.rs"]
mod s3_server;

mod lineage;
mod s3;
mod train;
