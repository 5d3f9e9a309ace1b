//! Growing a trained network into a larger shape with its function kept
//! (Net2Net-style, Chen et al. 2016, in its zero-initialised form): more
//! blocks, more channels in the tower, a wider value head. Every old weight
//! keeps its place; the new weights out of new channels (or hidden units)
//! into old ones are zero, so the old outputs are unchanged, while the new
//! weights into new channels keep their fresh initialisation and so receive
//! gradients from the first step; a new residual block starts as the
//! identity (its second convolution zero).

use anyhow::{ensure, Result};
use tch::{Device, IndexOp, Tensor};

use super::{NetConfig, Network};

/// Whether `to` is `from` grown: no fewer blocks, channels or hidden units,
/// the same options.
fn check_growth(from: &NetConfig, to: &NetConfig) -> Result<()> {
    ensure!(
        to.blocks >= from.blocks && to.channels >= from.channels && to.value_hidden >= from.value_hidden,
        "a network grows only: {from:?} has more blocks, channels or hidden units than {to:?}"
    );
    ensure!(
        (to.value_pooling, to.aux_targets) == (from.value_pooling, from.aux_targets),
        "growing keeps value_pooling and aux_targets: {from:?} and {to:?} differ"
    );
    Ok(())
}

impl Network {
    /// `parent` grown to the shape `to` on `device` (new weights drawn from
    /// `seed`), computing the same outputs: an error for a shape that is
    /// not `parent`'s grown.
    pub fn grown(parent: &Network, to: &NetConfig, device: Device, seed: i64) -> Result<Network> {
        check_growth(&parent.config, to)?;
        let grown = Network::new(to, device, seed);
        let old = parent.vs.variables();
        tch::no_grad(|| {
            for (name, mut var) in grown.vs.variables() {
                match old.get(&name) {
                    Some(before) => keep(&mut var, &before.to_device(device)),
                    // A new block's second convolution: the block adds nothing.
                    None if name.ends_with(".conv2.weight") => _ = var.zero_(),
                    None => {}
                }
            }
        });
        Ok(grown)
    }
}

/// Puts `before` into the leading corner of `var` and, where `var` has more
/// inputs (its second dimension), zeroes the weights from the new inputs
/// into the old outputs.
fn keep(var: &mut Tensor, before: &Tensor) {
    let old = before.size();
    let mut corner = var.shallow_clone();
    for (dim, &n) in old.iter().enumerate() {
        corner = corner.narrow(dim as i64, 0, n);
    }
    corner.copy_(before);
    let size = var.size();
    if size.len() >= 2 && size[1] > old[1] {
        _ = var.i((..old[0], old[1]..)).zero_();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::net::random_input;

    fn shape(blocks: usize, channels: i64, value_hidden: i64) -> NetConfig {
        NetConfig { blocks, channels, value_hidden, value_pooling: true, aux_targets: true }
    }

    /// Outputs (policy, value, auxiliary) on `n` inputs, in evaluation mode.
    fn outputs(network: &Network, input: &Tensor) -> Vec<Tensor> {
        let (policy, value, aux) = network.net.forward_all_t(input, false);
        vec![policy, value, aux.expect("aux outputs")]
    }

    #[test]
    fn a_grown_network_computes_what_it_computed() {
        let parent = Network::new(&shape(2, 8, 8), Device::Cpu, 3);
        // Batch-norm statistics away from their start, as after training.
        tch::no_grad(|| {
            for (name, mut var) in parent.vs.variables() {
                if name.ends_with("running_mean") || name.ends_with("running_var") || name.ends_with("bn.bias") {
                    var.copy_(&(crate::net::seeded(1, || Tensor::rand_like(&var)) + 0.5));
                }
            }
        });
        let input = random_input(5);
        for to in [shape(2, 8, 8), shape(3, 8, 8), shape(2, 12, 8), shape(2, 8, 16), shape(4, 16, 24)] {
            let grown = Network::grown(&parent, &to, Device::Cpu, 9).unwrap();
            assert_eq!(grown.config, to);
            for (a, b) in outputs(&parent, &input).iter().zip(outputs(&grown, &input)) {
                let gap = (a - b).abs().max().double_value(&[]);
                assert!(gap < 1e-5, "{to:?}: outputs differ by {gap}");
            }
        }
    }

    /// The weights that start at zero (out of a new block, out of new
    /// channels) have gradients, so training puts the new parts to use.
    #[test]
    fn a_grown_network_learns_in_its_new_weights() {
        let parent = Network::new(&shape(1, 8, 8), Device::Cpu, 3);
        let grown = Network::grown(&parent, &shape(2, 12, 8), Device::Cpu, 9).unwrap();
        let input = random_input(4);
        let (policy, value, _) = grown.net.forward_all_t(&input, true);
        (policy.square().mean(None) + value.square().mean(None)).backward();
        let variables = grown.vs.variables();
        let gradient = |name: &str, from: i64| variables[name].grad().i((.., from..)).abs().sum(None).double_value(&[]);
        // The zero weights out of the new block and the new channels.
        for (name, from) in [("blocks.1.conv2.weight", 0), ("policy_conv.weight", 8), ("value_fc1.weight", 49 + 8)] {
            assert!(gradient(name, from) > 0.0, "{name} gets no gradient");
        }
    }

    #[test]
    fn only_growth_is_allowed() {
        let parent = Network::new(&shape(2, 8, 8), Device::Cpu, 3);
        for to in [shape(1, 8, 8), shape(2, 4, 8), shape(2, 8, 4), NetConfig { value_pooling: false, ..shape(2, 8, 8) }]
        {
            assert!(Network::grown(&parent, &to, Device::Cpu, 9).is_err(), "{to:?}");
        }
    }
}
