//! `trainer`'s section of the reference page (`docs/reference.md`) is what
//! its help says (`tests/common/help_page.rs`).

use std::path::Path;

use crate::help_page::{check_section, command_section, page};

#[test]
fn reference_page_is_current() {
    let binary = Path::new(env!("CARGO_BIN_EXE_trainer"));
    check_section(&page(env!("CARGO_MANIFEST_DIR")), "trainer", &command_section(binary, "trainer"));
}
