//! The trainer.

fn main() -> anyhow::Result<()> {
    anyhow::bail!("trainer: the trainer is not implemented yet")
}
