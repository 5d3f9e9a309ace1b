//! Weights files (safetensors) as untrusted input: every tensor is checked
//! against the names, shapes and number format that a network implies, and
//! every value for finiteness, before any of it reaches a network. LibTorch's
//! own loader takes the file's number format and copies with broadcasting,
//! so a file of the wrong shapes would load and play as another network.

use std::collections::BTreeMap;
use std::path::Path;

use safetensors::{Dtype, SafeTensors};

use crate::error::LoadError;

/// Tensors by name: shape and fp32 values.
pub type Tensors = BTreeMap<String, (Vec<usize>, Vec<f32>)>;

/// The largest header a weights file may have (the safetensors format's own bound).
const MAX_HEADER: u64 = 100 << 20;

/// Reads the weights file `path` against `expected` (shape by name): each
/// tensor in it must be expected, fp32, of that shape and finite. Names
/// expected but absent are the caller's to judge. The file's size is
/// checked before it is read, so that a huge file is refused unread.
pub fn read(path: &Path, expected: &BTreeMap<String, Vec<usize>>) -> Result<Tensors, LoadError> {
    let damaged = |why: String| LoadError::Damaged { path: path.to_path_buf(), why };
    let unreadable = |source| LoadError::Unreadable { path: path.to_path_buf(), source };
    let len = match std::fs::metadata(path) {
        Ok(meta) => meta.len(),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Err(LoadError::Missing { path: path.into() }),
        Err(e) => return Err(unreadable(e)),
    };
    let most = 8 + MAX_HEADER + 4 * expected.values().map(|shape| shape.iter().product::<usize>() as u64).sum::<u64>();
    if len > most {
        return Err(damaged(format!("{len} bytes, more than a file of these tensors can hold ({most})")));
    }
    let bytes = std::fs::read(path).map_err(unreadable)?;
    parse(&bytes, expected).map_err(damaged)
}

/// [`read`] on the file's bytes; the error says what is wrong.
pub fn parse(bytes: &[u8], expected: &BTreeMap<String, Vec<usize>>) -> Result<Tensors, String> {
    let file = SafeTensors::deserialize(bytes).map_err(|e| format!("not a safetensors file ({e:?})"))?;
    let mut tensors = Tensors::new();
    for (name, view) in file.tensors() {
        let Some(shape) = expected.get(&name) else {
            return Err(format!("holds a tensor {name:?} that the network does not have"));
        };
        if view.dtype() != Dtype::F32 {
            return Err(format!("{name} is {:?}, not F32", view.dtype()));
        }
        if view.shape() != shape.as_slice() {
            return Err(format!("{name} has shape {:?}, not {shape:?}", view.shape()));
        }
        let values: Vec<f32> =
            view.data().chunks_exact(4).map(|b| f32::from_le_bytes([b[0], b[1], b[2], b[3]])).collect();
        if let Some(at) = values.iter().position(|v| !v.is_finite()) {
            return Err(format!("{name} holds a value that is not finite ({} at {at})", values[at]));
        }
        tensors.insert(name, (shape.clone(), values));
    }
    Ok(tensors)
}

/// A tensor read by [`read`], as a LibTorch tensor on the CPU.
pub fn tensor((shape, values): &(Vec<usize>, Vec<f32>)) -> tch::Tensor {
    let shape: Vec<i64> = shape.iter().map(|&n| n as i64).collect();
    tch::Tensor::from_slice(values).reshape(&shape)
}

/// An error naming the first of `names` absent from `tensors`.
pub fn require<'a>(
    tensors: &Tensors,
    mut names: impl Iterator<Item = &'a String>,
    path: &Path,
) -> Result<(), LoadError> {
    match names.find(|name| !tensors.contains_key(*name)) {
        Some(name) => Err(LoadError::Damaged { path: path.into(), why: format!("no tensor {name}") }),
        None => Ok(()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn file(tensors: &[(&str, Dtype, Vec<usize>, Vec<u8>)]) -> Vec<u8> {
        let views: Vec<(String, safetensors::tensor::TensorView)> = tensors
            .iter()
            .map(|(name, dtype, shape, data)| {
                (name.to_string(), safetensors::tensor::TensorView::new(*dtype, shape.clone(), data).unwrap())
            })
            .collect();
        safetensors::serialize(views, &None).unwrap()
    }

    fn floats(values: &[f32]) -> Vec<u8> {
        values.iter().flat_map(|v| v.to_le_bytes()).collect()
    }

    #[test]
    fn only_expected_finite_fp32_tensors_of_their_shape_are_read() {
        let expected = BTreeMap::from([("a".to_string(), vec![2, 2]), ("b".to_string(), vec![3])]);
        let good = file(&[("a", Dtype::F32, vec![2, 2], floats(&[1.0, 2.0, 3.0, 4.0]))]);
        let read = parse(&good, &expected).unwrap();
        assert_eq!(read["a"], (vec![2, 2], vec![1.0, 2.0, 3.0, 4.0]));
        let path = Path::new("w.safetensors");
        let err = require(&read, expected.keys(), path).unwrap_err();
        assert!(matches!(&err, LoadError::Damaged { why, .. } if why == "no tensor b"), "{err:?}");
        assert_eq!(err.to_string(), "w.safetensors: no tensor b");

        let cases = [
            (file(&[("a", Dtype::F32, vec![1], floats(&[1.0]))]), "a has shape [1], not [2, 2]"),
            (file(&[("a", Dtype::F64, vec![2, 2], vec![0; 32])]), "a is F64, not F32"),
            (file(&[("a", Dtype::F16, vec![2, 2], vec![0; 8])]), "a is F16, not F32"),
            (file(&[("c", Dtype::F32, vec![3], floats(&[0.0; 3]))]), "a tensor \"c\" that the network does not have"),
            (file(&[("b", Dtype::F32, vec![3], floats(&[0.0, f32::NAN, 0.0]))]), "b holds a value that is not finite"),
            (good[..good.len() - 1].to_vec(), "not a safetensors file"),
            (vec![0xff; 16], "not a safetensors file"),
        ];
        for (bytes, why) in cases {
            let err = parse(&bytes, &expected).unwrap_err();
            assert!(err.contains(why), "{why}: {err}");
        }
    }

    #[test]
    fn a_file_too_large_for_its_tensors_is_refused_unread_and_damage_is_told_from_other_errors() {
        let dir = tempfile::tempdir().unwrap();
        let expected = BTreeMap::from([("a".to_string(), vec![2])]);
        let path = dir.path().join("w.safetensors");
        std::fs::File::create(&path).unwrap().set_len(200 << 20).unwrap();
        let err = read(&path, &expected).unwrap_err();
        assert!(matches!(&err, LoadError::Damaged { why, .. } if why.contains("more than a file of these tensors")));
        let err = read(&dir.path().join("missing"), &expected).unwrap_err();
        assert!(matches!(err, LoadError::Missing { .. }) && err.is_damaged(), "{err:?}");
        // A folder where a file should be cannot be read: no damage to set aside.
        let err = read(dir.path(), &expected).unwrap_err();
        assert!(matches!(err, LoadError::Unreadable { .. }) && !err.is_damaged(), "{err:?}");
    }
}
