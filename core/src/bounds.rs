//! Configured numbers checked against their ranges, each error naming its
//! key: the checks every layer's settings use beside their fields.

/// A setting outside its range: `key = value is out of range ...`.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
#[error("{0}")]
pub struct OutOfRange(String);

pub type Checked = Result<(), OutOfRange>;

/// `min <= value <= max`.
pub fn check_range(key: &str, value: i64, min: i64, max: i64) -> Checked {
    match (min..=max).contains(&value) {
        true => Ok(()),
        false => Err(OutOfRange(format!("{key} = {value} is out of range {min}..={max}"))),
    }
}

/// `0 <= value <= max` (NaN is out).
pub fn check_up_to(key: &str, value: f64, max: f64) -> Checked {
    match (0.0..=max).contains(&value) {
        true => Ok(()),
        false => Err(OutOfRange(format!("{key} = {value} is out of range 0..={max}"))),
    }
}

/// `0 <= value <= 1`.
pub fn check_unit(key: &str, value: f64) -> Checked {
    check_up_to(key, value, 1.0)
}

/// `0 < value <= max`.
pub fn check_positive(key: &str, value: f64, max: f64) -> Checked {
    match value > 0.0 && value <= max {
        true => Ok(()),
        false => Err(OutOfRange(format!("{key} = {value} is out of range (0, {max}]"))),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn values_outside_their_ranges_are_named() {
        assert!(check_range("a.b", 3, 1, 3).is_ok() && check_range("a.b", 4, 1, 3).is_err());
        assert_eq!(check_unit("a.c", f64::NAN).unwrap_err().to_string(), "a.c = NaN is out of range 0..=1");
        assert!(check_positive("a.d", 0.0, 1.0).is_err() && check_positive("a.d", 1.0, 1.0).is_ok());
        assert!(check_up_to("a.e", -0.0, 2.0).is_ok() && check_up_to("a.e", 2.5, 2.0).is_err());
    }
}
