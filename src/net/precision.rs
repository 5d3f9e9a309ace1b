//! How forward passes run: the number format (`Precision`), the library
//! (`Backend`), both together (`Inference`), and what this CPU computes
//! natively.

use anyhow::{bail, Result};
use serde::{Deserialize, Serialize};
use tch::{Device, Kind};

use super::{onnxruntime, FORWARD};

/// The number format of forward passes (`play.precision`) or of training
/// steps (`train.precision`). Half precision runs two to
/// four times the positions per second where the hardware has it (GPUs;
/// CPUs with AVX512-BF16 or AMX) and is emulated, slowly, where it has not.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Precision {
    /// 32-bit floats.
    #[default]
    Fp32,
    /// bfloat16: fp32's range with three significant digits.
    Bf16,
    /// IEEE half precision: more digits than bf16 and a narrower range.
    Fp16,
    /// bf16 on CUDA devices and on CPUs whose flags show bf16 units, fp32
    /// elsewhere (fp16 is for GPUs older than bf16: say it by name).
    Auto,
}

impl Precision {
    /// The tensor kind of the forward passes on `device`.
    pub fn kind(self, device: Device) -> Kind {
        self.kind_where(device, cpu_has_bf16())
    }

    /// The kind on `device` of a machine whose CPU has bf16 units or not.
    fn kind_where(self, device: Device, cpu_bf16: bool) -> Kind {
        match self {
            Precision::Fp32 => Kind::Float,
            Precision::Bf16 => Kind::BFloat16,
            Precision::Fp16 => Kind::Half,
            Precision::Auto if device.is_cuda() || cpu_bf16 => Kind::BFloat16,
            Precision::Auto => Kind::Float,
        }
    }

    /// Its name in configs: `fp32`, `bf16`, `fp16` or `auto`.
    pub fn name(self) -> &'static str {
        match self {
            Precision::Fp32 => "fp32",
            Precision::Bf16 => "bf16",
            Precision::Fp16 => "fp16",
            Precision::Auto => "auto",
        }
    }

    /// The precision of that name.
    pub fn parse(name: &str) -> Option<Precision> {
        [Precision::Fp32, Precision::Bf16, Precision::Fp16, Precision::Auto].into_iter().find(|p| p.name() == name)
    }
}

/// The library that runs the forward passes at play (`play.backend`).
/// Training runs on LibTorch whatever it says.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Backend {
    /// ONNX Runtime for fp32 on a CPU where its library loads (the faster
    /// there), LibTorch for bf16, fp16 and GPUs.
    #[default]
    Auto,
    /// LibTorch, for any precision and device.
    Libtorch,
    /// fp32 on the CPU only.
    Onnxruntime,
}

impl Backend {
    /// Every backend.
    pub const ALL: [Backend; 3] = [Backend::Auto, Backend::Libtorch, Backend::Onnxruntime];

    /// Its name in configs: `auto`, `libtorch` or `onnxruntime`.
    pub fn name(self) -> &'static str {
        match self {
            Backend::Auto => "auto",
            Backend::Libtorch => "libtorch",
            Backend::Onnxruntime => "onnxruntime",
        }
    }

    /// The backend of that name.
    pub fn parse(name: &str) -> Option<Backend> {
        Backend::ALL.into_iter().find(|b| b.name() == name)
    }

    /// The backend that runs passes in `kind` on `device`: never `Auto`.
    /// ONNX Runtime asked for where it cannot run (not fp32 on the CPU, or
    /// its library missing) is an error; `Auto` then runs LibTorch.
    pub fn resolve(self, device: Device, kind: Kind) -> Result<Backend> {
        let fits = device == Device::Cpu && kind == Kind::Float;
        match self {
            Backend::Libtorch => Ok(Backend::Libtorch),
            Backend::Onnxruntime if !fits => {
                bail!("ONNX Runtime runs fp32 forward passes on the CPU, not {} on {device:?}", kind_name(kind))
            }
            Backend::Onnxruntime => onnxruntime::load_library().map(|()| Backend::Onnxruntime),
            Backend::Auto if !fits => Ok(Backend::Libtorch),
            Backend::Auto => match onnxruntime::load_library() {
                Ok(()) => Ok(Backend::Onnxruntime),
                Err(why) => {
                    static WARNED: std::sync::Once = std::sync::Once::new();
                    WARNED.call_once(|| tracing::warn!("{why}: forward passes on LibTorch"));
                    Ok(Backend::Libtorch)
                }
            },
        }
    }

    /// How a resolved backend's forward pass runs, as a match record names
    /// it: a faster one is a stronger player at a time per action.
    pub fn forward_name(self) -> &'static str {
        debug_assert!(self != Backend::Auto, "a resolved backend is named");
        match self {
            Backend::Onnxruntime => "onnxruntime, folded",
            Backend::Auto | Backend::Libtorch => FORWARD,
        }
    }
}

/// How a network's forward passes run at play: their number format and
/// the library that runs them (`play.precision`, `play.backend`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Inference {
    /// The number format (`play.precision`).
    pub precision: Precision,
    /// The library (`play.backend`).
    pub backend: Backend,
}

impl Inference {
    /// fp32 on LibTorch: the forward pass that training's matches.
    pub const FP32_LIBTORCH: Inference = Inference { precision: Precision::Fp32, backend: Backend::Libtorch };

    /// What runs on `device`: the kind and the backend resolved (see
    /// [`Backend::resolve`]). ONNX Runtime asked for in `auto` precision
    /// runs fp32, the one it runs.
    pub fn resolve(self, device: Device) -> Result<(Kind, Backend)> {
        let kind = match (self.backend, self.precision) {
            (Backend::Onnxruntime, Precision::Auto) => Kind::Float,
            _ => self.precision.kind(device),
        };
        Ok((kind, self.backend.resolve(device, kind)?))
    }
}

/// The name of a tensor kind of play: fp32, bf16 or fp16.
pub fn kind_name(kind: Kind) -> &'static str {
    match kind {
        Kind::BFloat16 => "bf16",
        Kind::Half => "fp16",
        _ => "fp32",
    }
}

/// Whether this CPU computes in bf16 natively (`avx512_bf16` or `amx_bf16`
/// among its flags).
pub fn cpu_has_bf16() -> bool {
    flags_show_bf16(&std::fs::read_to_string("/proc/cpuinfo").unwrap_or_default())
}

/// Whether the `flags` lines of a `/proc/cpuinfo` text name bf16 units.
fn flags_show_bf16(cpuinfo: &str) -> bool {
    cpuinfo
        .lines()
        .filter(|l| l.starts_with("flags"))
        .any(|l| l.split_whitespace().any(|flag| flag == "avx512_bf16" || flag == "amx_bf16"))
}

/// This machine in a few words, for a checkpoint's lineage: the CPU's model
/// name, its cores, and whether it has bf16 units.
pub fn machine_name() -> String {
    let info = std::fs::read_to_string("/proc/cpuinfo").unwrap_or_default();
    let model =
        info.lines().find_map(|l| l.strip_prefix("model name")).map(|rest| rest.trim_start_matches([' ', '\t', ':']));
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
    let bf16 = if cpu_has_bf16() { ", bf16 units" } else { "" };
    format!("{} ({cores} cores{bf16})", model.unwrap_or(std::env::consts::ARCH).trim())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `auto` is bf16 on CUDA and where the CPU's flags name bf16 units
    /// (AVX512-BF16 or AMX), fp32 elsewhere; a named precision is itself.
    #[test]
    fn auto_is_bf16_where_the_cpu_has_bf16_units_and_on_cuda() {
        let zen5 = "processor\t: 0\nflags\t\t: fpu avx2 avx512f avx512_bf16 avx512_vnni\nbugs\t\t: sysret_ss_attrs\n";
        let xeon = "flags\t\t: fpu avx2 amx_bf16 amx_tile\n";
        // The words on another line than the flags' name no unit.
        let zen3 = "flags\t\t: fpu avx2 fma\nmodel name\t: not avx512_bf16\n";
        assert!(flags_show_bf16(zen5) && flags_show_bf16(xeon));
        assert!(!flags_show_bf16(zen3) && !flags_show_bf16(""));
        assert_eq!(Precision::Auto.kind_where(Device::Cpu, true), Kind::BFloat16);
        assert_eq!(Precision::Auto.kind_where(Device::Cpu, false), Kind::Float);
        assert_eq!(Precision::Auto.kind_where(Device::Cuda(0), false), Kind::BFloat16);
        assert_eq!(Precision::Fp32.kind_where(Device::Cuda(0), true), Kind::Float);
        assert_eq!(Precision::Fp16.kind_where(Device::Cpu, true), Kind::Half);
    }
}
