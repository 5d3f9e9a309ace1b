//! The device a network runs on, as the command line and the config name
//! it (`auto`, `cpu`, `cuda`, `cuda:N`), and what LibTorch sees of CUDA.

use anyhow::{bail, Result};
use tch::Device;

/// Reads `auto`, `cpu`, `cuda` or `cuda:N`; `auto` picks CUDA when present.
pub fn parse_device(text: &str) -> Result<Device> {
    parse_device_among(text, tch::Cuda::device_count().max(0) as usize)
}

/// [`parse_device`] on a machine where LibTorch sees `cuda_count` GPUs.
pub fn parse_device_among(text: &str, cuda_count: usize) -> Result<Device> {
    let device = match text {
        "auto" if cuda_count > 0 => Device::Cuda(0),
        "auto" => Device::Cpu,
        "cpu" => Device::Cpu,
        "cuda" => Device::Cuda(0),
        _ => match text.strip_prefix("cuda:").and_then(|n| n.parse().ok()) {
            Some(n) => Device::Cuda(n),
            None => bail!("unknown device '{text}': expected auto, cpu, cuda or cuda:N"),
        },
    };
    if let Device::Cuda(n) = device {
        anyhow::ensure!(
            n < cuda_count,
            "device {text}: LibTorch sees {cuda_count} CUDA devices (no driver, no GPU, or libtorch_cuda.so not loaded)"
        );
    }
    Ok(device)
}

/// What LibTorch sees of CUDA, in one line.
pub fn cuda_summary() -> String {
    let count = tch::Cuda::device_count();
    match count {
        0 => "CUDA: not available (CPU only)".to_string(),
        n => format!("CUDA: {n} device(s), cuDNN {}", if tch::Cuda::cudnn_is_available() { "yes" } else { "no" }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_cuda_device_libtorch_does_not_see_is_refused() {
        let missing = format!("cuda:{}", tch::Cuda::device_count());
        let err = format!("{:#}", parse_device(&missing).unwrap_err());
        assert!(err.contains(&format!("device {missing}: LibTorch sees")), "{err}");
        assert!(format!("{:#}", parse_device("gpu").unwrap_err()).contains("unknown device 'gpu'"));
        assert!(parse_device("cuda:x").is_err());
        assert_eq!(parse_device("cpu").unwrap(), Device::Cpu);
    }
}
