//! `gipf-rules`: the rules command of the core, without LibTorch.

use std::process::Command;

#[test]
fn gipf_rules_answers_without_libtorch() {
    let out = Command::new(env!("CARGO_BIN_EXE_gipf-rules"))
        .args(["--variant", "standard", "--moves", "b1-b2 b6-b5", "--json"])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let state: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(state["board"]["b2"], "w");
    assert_eq!(state["legal"].as_array().unwrap().len(), 40);

    let out = Command::new(env!("CARGO_BIN_EXE_gipf-rules")).args(["--moves", "b1-b9"]).output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success() && stderr.starts_with("gipf-rules: ") && !stderr.contains("panicked"), "{stderr}");

    // The binary's shared libraries, as the dynamic loader resolves them.
    let ldd = Command::new("ldd").arg(env!("CARGO_BIN_EXE_gipf-rules")).output().expect("ldd runs");
    let libraries = String::from_utf8_lossy(&ldd.stdout);
    assert!(ldd.status.success() && libraries.contains("libc.so"), "{libraries}");
    assert!(!libraries.contains("torch") && !libraries.contains("c10"), "{libraries}");
}
