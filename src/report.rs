//! How long work shows its progress, the one reporter of the programs: a
//! bar on a terminal; off one (a script's log, a worker's output) the bar
//! is hidden and, where asked, a plain line comes every few items and at
//! each new stage.

use std::time::Duration;

use indicatif::{ProgressBar, ProgressStyle};

/// Shows how far work has got: a bar on a terminal, off one a plain line
/// every few items where asked.
pub struct Reporter {
    bar: ProgressBar,
    /// What is counted, e.g. "games".
    unit: &'static str,
    /// Off a terminal: a line every this many items (none: no lines).
    every: Option<u64>,
}

impl Reporter {
    /// A bar over `len` items of `unit` (a count beside a spinner where
    /// the length is unknown); off a terminal, a line every `every` items.
    pub fn counting(len: Option<u64>, unit: &'static str, every: Option<u64>) -> Reporter {
        let (bar, template) = match len {
            Some(len) => {
                (ProgressBar::new(len), format!("{{spinner}} [{{elapsed_precise}}] {{pos}}/{{len}} {unit} {{msg}}"))
            }
            None => (ProgressBar::new_spinner(), format!("{{spinner}} [{{elapsed_precise}}] {{pos}} {unit} {{msg}}")),
        };
        bar.set_style(ProgressStyle::with_template(&template).expect("valid progress template"));
        Reporter { bar, unit, every: every.map(|n| n.max(1)) }
    }

    /// Nothing shown, on a terminal or off.
    pub fn hidden() -> Reporter {
        Reporter { bar: ProgressBar::hidden(), unit: "", every: None }
    }

    /// A spinner beside a stage's name (`stage`), for work of unknown length.
    pub fn stages() -> Reporter {
        let bar = ProgressBar::new_spinner();
        bar.set_style(ProgressStyle::with_template("{spinner} [{elapsed_precise}] {msg}").expect("valid template"));
        bar.enable_steady_tick(Duration::from_millis(250));
        Reporter { bar, unit: "", every: Some(1) }
    }

    fn logged(&self) -> bool {
        self.bar.is_hidden() && self.every.is_some()
    }

    /// `done` items so far, and how they stand.
    pub fn set(&self, done: u64, standing: String) {
        if let Some(every) = self.every.filter(|_| self.logged()) {
            if done.is_multiple_of(every) {
                let len = self.bar.length().unwrap_or(0);
                let sep = if standing.is_empty() { "" } else { ": " };
                eprintln!("{done}/{len} {}{sep}{standing}", self.unit);
            }
        }
        self.bar.set_position(done);
        self.bar.set_message(standing);
    }

    /// One more item.
    pub fn inc(&self) {
        self.set(self.bar.position() + 1, String::new());
    }

    /// `n` more items, their standing unchanged.
    pub fn add(&self, n: u64) {
        self.bar.inc(n);
    }

    /// Items counted from `done`, their standing unchanged.
    pub fn start_at(&self, done: u64) {
        self.bar.set_position(done);
    }

    /// How the items stand, beside the count.
    pub fn message(&self, standing: String) {
        self.bar.set_message(standing);
    }

    /// The stage the work is at.
    pub fn stage(&self, what: &str) {
        if self.logged() {
            eprintln!("{what}");
        }
        self.bar.set_message(what.to_string());
    }

    /// Runs `f` (a log line, say) with the bar out of its way.
    pub fn suspend<R>(&self, f: impl FnOnce() -> R) -> R {
        self.bar.suspend(f)
    }

    /// Ends the bar, leaving its last state on the terminal.
    pub fn finish(&self) {
        self.bar.finish();
    }

    /// Ends the bar and clears it.
    pub fn clear(&self) {
        self.bar.finish_and_clear();
    }
}
