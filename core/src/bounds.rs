//! Configured numbers checked against their ranges, each error naming its
//! key: the checks every layer's settings use beside their fields. Each
//! check also tells [`ranges_checked`] the range it applies, so that the
//! reference page (`docs/reference.md`) gives the ranges that are enforced.

use std::cell::RefCell;

/// A setting outside its range: `key = value is out of range ...`.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
#[error("{0}")]
pub struct OutOfRange(String);

/// What a check returns: nothing, or the setting out of range.
pub type Checked = Result<(), OutOfRange>;

/// A range a check applied: the key and the range as its error states it
/// (`1..=256`, `0..=1`, `(0, 10]`, `0..`, `2..=selfplay.simulations`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Range {
    /// The setting's key, like `selfplay.simulations`.
    pub key: String,
    /// The range allowed, as the error states it.
    pub range: String,
}

thread_local! {
    static CHECKED: RefCell<Option<Vec<Range>>> = const { RefCell::new(None) };
}

/// Runs `f` and returns the ranges the checks it made applied, in order
/// (a key checked twice is listed once).
pub fn ranges_checked(f: impl FnOnce()) -> Vec<Range> {
    let outer = CHECKED.with(|checked| checked.replace(Some(Vec::new())));
    f();
    CHECKED.with(|checked| checked.replace(outer)).unwrap_or_default()
}

fn note(key: &str, range: impl FnOnce() -> String) {
    CHECKED.with(|checked| {
        if let Some(ranges) = checked.borrow_mut().as_mut() {
            if !ranges.iter().any(|r| r.key == key) {
                ranges.push(Range { key: key.to_string(), range: range() });
            }
        }
    });
}

fn integers(min: i64, max: i64) -> String {
    match max {
        i64::MAX => format!("{min}.."),
        _ => format!("{min}..={max}"),
    }
}

/// `min <= value <= max`.
pub fn check_range(key: &str, value: i64, min: i64, max: i64) -> Checked {
    note(key, || integers(min, max));
    match (min..=max).contains(&value) {
        true => Ok(()),
        false => Err(OutOfRange(format!("{key} = {value} is out of range {}", integers(min, max)))),
    }
}

/// `min <= value <= max`, where `max` is the value of the key `max_key`.
pub fn check_range_to_key(key: &str, value: i64, min: i64, max: i64, max_key: &str) -> Checked {
    note(key, || format!("{min}..={max_key}"));
    match (min..=max).contains(&value) {
        true => Ok(()),
        false => Err(OutOfRange(format!("{key} = {value} is out of range {min}..={max_key} ({max})"))),
    }
}

/// `0 <= value <= max` (NaN is out).
pub fn check_up_to(key: &str, value: f64, max: f64) -> Checked {
    note(key, || format!("0..={max}"));
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
    note(key, || format!("(0, {max}]"));
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
        let err = check_range_to_key("a.f", 5, 1, 4, "a.g").unwrap_err().to_string();
        assert_eq!(err, "a.f = 5 is out of range 1..=a.g (4)");
        assert_eq!(check_range("a.h", -1, 0, i64::MAX).unwrap_err().to_string(), "a.h = -1 is out of range 0..");
    }

    #[test]
    fn the_ranges_checked_are_listed_once_each() {
        let ranges = ranges_checked(|| {
            let _ = check_range("a.b", 3, 1, 3);
            let _ = check_positive("a.c", 5.0, 1.0);
            let _ = check_range("a.b", 3, 1, 3);
            let _ = check_range_to_key("a.d", 1, 0, 9, "a.b");
        });
        let listed: Vec<(&str, &str)> = ranges.iter().map(|r| (r.key.as_str(), r.range.as_str())).collect();
        assert_eq!(listed, [("a.b", "1..=3"), ("a.c", "(0, 1]"), ("a.d", "0..=a.b")]);
        assert!(ranges_checked(|| ()).is_empty());
        let _ = check_range("a.e", 1, 0, 1);
        assert!(ranges_checked(|| ()).is_empty(), "checks outside ranges_checked are not kept");
    }
}
