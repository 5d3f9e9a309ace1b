//! Weights files, structure-aware: safetensors files with valid headers
//! whose tensors have the network's names or others, any number format and
//! any shape, and any values; some with their bytes damaged after. Each is
//! refused or read, and what is read is exactly what the network expects.
#![no_main]

use std::collections::BTreeMap;
use std::sync::OnceLock;

use libfuzzer_sys::arbitrary::{Result, Unstructured};
use libfuzzer_sys::fuzz_target;
use safetensors::tensor::TensorView;
use safetensors::Dtype;

/// The tiny test network's variables: shape by name.
fn expected() -> &'static BTreeMap<String, Vec<usize>> {
    static EXPECTED: OnceLock<BTreeMap<String, Vec<usize>>> = OnceLock::new();
    EXPECTED.get_or_init(|| {
        let config = gipf::net::NetConfig {
            blocks: 1,
            channels: 4,
            value_hidden: 4,
            value_pooling: false,
            aux_targets: false,
        };
        gipf::net::Network::new(&config, tch::Device::Cpu, 0).shapes()
    })
}

const DTYPES: [Dtype; 5] = [Dtype::F32, Dtype::F64, Dtype::F16, Dtype::BF16, Dtype::I64];

/// A safetensors file made from `u`: valid headers, tensors chosen from it.
fn file(u: &mut Unstructured) -> Result<Vec<u8>> {
    let names: Vec<&String> = expected().keys().collect();
    let mut tensors: Vec<(String, Dtype, Vec<usize>, Vec<u8>)> = Vec::new();
    for _ in 0..u.int_in_range(0..=names.len() + 2)? {
        let name = match u.int_in_range(0..=names.len())? {
            i if i < names.len() => names[i].clone(),
            _ => u.arbitrary::<String>()?,
        };
        let dtype = *u.choose(&DTYPES)?;
        let shape: Vec<usize> = match u.arbitrary::<bool>()? {
            true => expected().get(&name).cloned().unwrap_or_default(),
            false => (0..u.int_in_range(0..=4)?).map(|_| u.int_in_range(0..=9)).collect::<Result<_>>()?,
        };
        let len = shape.iter().product::<usize>() * dtype.size();
        let data: Vec<u8> = match u.arbitrary::<bool>()? {
            // Values that decode to finite floats, or any bytes.
            true => (0..len).map(|i| if i % 4 == 3 { 0x3f } else { 0 }).collect(),
            false => (0..len).map(|_| u.arbitrary::<u8>()).collect::<Result<_>>()?,
        };
        tensors.retain(|(n, ..)| *n != name);
        tensors.push((name, dtype, shape, data));
    }
    let views: Vec<(String, TensorView)> = tensors
        .iter()
        .map(|(name, dtype, shape, data)| (name.clone(), TensorView::new(*dtype, shape.clone(), data).unwrap()))
        .collect();
    let mut bytes = safetensors::serialize(views, &None).unwrap();
    if !bytes.is_empty() && u.arbitrary::<bool>()? {
        let at = u.int_in_range(0..=bytes.len() - 1)?;
        bytes[at] = u.arbitrary()?;
        bytes.truncate(u.int_in_range(0..=bytes.len())?);
    }
    Ok(bytes)
}

fuzz_target!(|data: &[u8]| {
    let mut u = Unstructured::new(data);
    let Ok(bytes) = file(&mut u) else { return };
    if let Ok(tensors) = gipf::weights::parse(&bytes, expected()) {
        for (name, (shape, values)) in &tensors {
            assert_eq!(Some(shape), expected().get(name), "{name}");
            assert_eq!(values.len(), shape.iter().product::<usize>(), "{name}");
            assert!(values.iter().all(|v| v.is_finite()), "{name}");
        }
    }
});
