//! The integration tests of `trainer`, in one test binary (each binary links
//! LibTorch); each module is the tests of one subject.

#[path = "../../tests/common/help_page.rs"]
mod help_page;
#[path = "../../tests/common/s3.rs"]
mod s3_server;

mod lineage;
mod reference;
mod s3;
mod train;
