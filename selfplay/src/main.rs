//! The self-play generator.

fn main() -> anyhow::Result<()> {
    anyhow::bail!("selfplay: the self-play generator is not implemented yet")
}
