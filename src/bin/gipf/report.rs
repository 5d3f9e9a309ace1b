//! How a long command shows its progress: a bar on a terminal; off one (a
//! script's log), where the bar is hidden, a plain line every few items and
//! at each new stage.

use std::time::Duration;

use indicatif::{ProgressBar, ProgressStyle};

pub struct Progress {
    bar: ProgressBar,
    /// What is counted, e.g. "games".
    unit: &'static str,
    /// Off a terminal: a line every this many items.
    every: u64,
}

impl Progress {
    /// A bar over `len` items of `unit`.
    pub fn counting(len: u64, unit: &'static str, every: u64) -> Progress {
        let bar = ProgressBar::new(len);
        let template = format!("{{spinner}} [{{elapsed_precise}}] {{pos}}/{{len}} {unit} {{msg}}");
        bar.set_style(ProgressStyle::with_template(&template).expect("valid progress template"));
        Progress { bar, unit, every: every.max(1) }
    }

    /// A spinner beside a stage's name (`stage`), for work of unknown length.
    pub fn stages() -> Progress {
        let bar = ProgressBar::new_spinner();
        bar.set_style(ProgressStyle::with_template("{spinner} [{elapsed_precise}] {msg}").expect("valid template"));
        bar.enable_steady_tick(Duration::from_millis(250));
        Progress { bar, unit: "", every: 1 }
    }

    fn logged(&self) -> bool {
        self.bar.is_hidden()
    }

    /// `done` items so far, and how they stand.
    pub fn set(&self, done: u64, standing: String) {
        if self.logged() && done.is_multiple_of(self.every) {
            let len = self.bar.length().unwrap_or(0);
            let sep = if standing.is_empty() { "" } else { ": " };
            eprintln!("{done}/{len} {}{sep}{standing}", self.unit);
        }
        self.bar.set_position(done);
        self.bar.set_message(standing);
    }

    /// One more item.
    pub fn inc(&self) {
        self.set(self.bar.position() + 1, String::new());
    }

    /// The stage the work is at.
    pub fn stage(&self, what: &str) {
        if self.logged() {
            eprintln!("{what}");
        }
        self.bar.set_message(what.to_string());
    }

    pub fn finish(&self) {
        self.bar.finish_and_clear();
    }
}
