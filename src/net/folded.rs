//! The network's layers for play: each batch norm folded into the
//! convolution before it (its scale into the weights, its shift into a
//! bias), so that a forward pass runs one operation where the trained
//! layers run two. The same function as [`PolicyValueNet::forward_t`] in
//! evaluation mode, to rounding. Weights and activations are laid out
//! channels last (NHWC strides), as oneDNN's convolutions prefer: on a
//! 2-core AMD EPYC in fp32 the forward pass takes about 1/1.25 of the time
//! NCHW takes, at batches of 4 to 32.

use tch::{nn, Kind, Tensor};

use super::{PolicyValueNet, BATCH_NORM_EPS};

/// The forward pass at play, as a match record names it: a faster one is
/// a stronger player at a time per action, so its name changes with it.
pub const FORWARD: &str = "folded, channels last";

/// A convolution and the batch norm after it, as one convolution.
#[derive(Debug)]
pub(super) struct FoldedConv {
    pub(super) weight: Tensor,
    pub(super) bias: Tensor,
    pub(super) padding: i64,
}

impl FoldedConv {
    fn new(conv: &nn::Conv2D, norm: &nn::BatchNorm, kind: Kind) -> FoldedConv {
        let gamma = norm.ws.as_ref().expect("the network's batch norms are affine");
        let beta = norm.bs.as_ref().expect("the network's batch norms are affine");
        let scale = gamma / (&norm.running_var + BATCH_NORM_EPS).sqrt();
        let bias = beta - &norm.running_mean * &scale;
        let weight = &conv.ws * scale.view([-1, 1, 1, 1]);
        let padding = conv.ws.size()[2] / 2;
        FoldedConv { weight: channels_last(&weight.to_kind(kind)), bias: bias.to_kind(kind), padding }
    }

    fn forward(&self, x: &Tensor) -> Tensor {
        x.conv2d(&self.weight, Some(&self.bias), [1, 1], [self.padding, self.padding], [1, 1], 1)
    }
}

/// `x` (N, C, H, W) with its values stored as (N, H, W, C): the same tensor
/// to every operation, laid out as LibTorch's channels-last memory format,
/// which convolutions given such an input or weight keep.
fn channels_last(x: &Tensor) -> Tensor {
    x.permute([0, 2, 3, 1]).contiguous().permute([0, 3, 1, 2])
}

/// A linear layer's weights in the kind of play.
#[derive(Debug)]
pub(super) struct Dense {
    pub(super) weight: Tensor,
    pub(super) bias: Tensor,
}

impl Dense {
    fn new(layer: &nn::Linear, kind: Kind) -> Dense {
        let bias = layer.bs.as_ref().expect("the network's linear layers have biases");
        Dense { weight: layer.ws.to_kind(kind), bias: bias.to_kind(kind) }
    }

    fn forward(&self, x: &Tensor) -> Tensor {
        x.linear(&self.weight, Some(&self.bias))
    }
}

/// [`PolicyValueNet`] with its batch norms folded, in one kind, for play
/// only (it has no gradients and is never saved).
#[derive(Debug)]
pub struct FoldedNet {
    pub(super) stem: FoldedConv,
    pub(super) blocks: Vec<(FoldedConv, FoldedConv)>,
    pub(super) policy_conv: FoldedConv,
    pub(super) policy_fc: Dense,
    pub(super) value_conv: FoldedConv,
    pub(super) value_fc1: Dense,
    pub(super) value_fc2: Dense,
    pub(super) value_pooling: bool,
}

impl FoldedNet {
    /// Folds `net`'s current weights, converted to `kind`.
    pub fn new(net: &PolicyValueNet, kind: Kind) -> FoldedNet {
        let _guard = tch::no_grad_guard();
        let fold = |conv, norm| FoldedConv::new(conv, norm, kind);
        FoldedNet {
            stem: fold(&net.stem, &net.stem_bn),
            blocks: net.blocks.iter().map(|b| (fold(&b.conv1, &b.bn1), fold(&b.conv2, &b.bn2))).collect(),
            policy_conv: fold(&net.policy_conv, &net.policy_bn),
            policy_fc: Dense::new(&net.policy_fc, kind),
            value_conv: fold(&net.value_conv, &net.value_bn),
            value_fc1: Dense::new(&net.value_fc1, kind),
            value_fc2: Dense::new(&net.value_fc2, kind),
            value_pooling: net.value_pooling,
        }
    }

    /// Policy logits and values, as [`PolicyValueNet::forward_t`] returns
    /// them (no auxiliary outputs: the search does not read them).
    pub fn forward(&self, xs: &Tensor) -> (Tensor, Tensor) {
        let mut x = self.stem.forward(&channels_last(xs)).relu();
        for (conv1, conv2) in &self.blocks {
            x = (conv2.forward(&conv1.forward(&x).relu()) + &x).relu();
        }
        let policy = self.policy_fc.forward(&self.policy_conv.forward(&x).relu().flatten(1, -1));
        let mut features = self.value_conv.forward(&x).relu().flatten(1, -1);
        if self.value_pooling {
            features = Tensor::cat(&[features, x.mean_dim(&[2i64, 3][..], false, None::<Kind>)], 1);
        }
        let value = self.value_fc2.forward(&self.value_fc1.forward(&features).relu()).tanh().squeeze_dim(1);
        (policy, value)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::encoding::{encode, INPUT_SIZE};
    use crate::net::{is_batch_norm, NetConfig, Network};
    use crate::rules::{Position, Variant};
    use tch::Device;

    /// Folding changes the outputs by rounding only, with batch-norm
    /// statistics and scales far from their initial values.
    #[test]
    fn the_folded_layers_compute_what_the_trained_layers_do() {
        let config = NetConfig { blocks: 2, channels: 8, value_hidden: 8, value_pooling: true, aux_targets: true };
        let mut network = Network::new(&config, Device::Cpu, 7);
        tch::no_grad(|| {
            for (name, mut var) in network.vs.variables() {
                if is_batch_norm(&name) {
                    var.copy_(&(crate::net::seeded(1, || var.rand_like()) * 2.0 + 0.1));
                }
            }
        });
        let positions = [Position::new(Variant::Standard), Position::new(Variant::Basic)];
        let mut input = vec![0.0; positions.len() * INPUT_SIZE];
        for (chunk, pos) in input.chunks_mut(INPUT_SIZE).zip(&positions) {
            encode(pos, chunk);
        }
        let (logits, values) = network.infer(&input, positions.len());
        network.prepare_for_play(crate::net::Inference::FP32_LIBTORCH).unwrap();
        let (folded_logits, folded_values) = network.infer(&input, positions.len());
        let close = |a: &[f32], b: &[f32]| a.iter().zip(b).all(|(x, y)| (x - y).abs() <= 1e-4 * (1.0 + x.abs()));
        assert!(close(&logits, &folded_logits), "policy logits differ");
        assert!(close(&values, &folded_values), "values differ: {values:?} {folded_values:?}");
        assert!(logits.iter().any(|&x| x.abs() > 0.1), "the outputs are not all near zero");
    }

    /// Activations stay channels last through the tower: each convolution
    /// given a channels-last input and weight returns one, so no layer
    /// pays for a change of layout.
    #[test]
    fn the_tower_runs_channels_last() {
        let config = NetConfig { blocks: 2, channels: 8, value_hidden: 8, value_pooling: true, aux_targets: true };
        let folded = FoldedNet::new(&Network::new(&config, Device::Cpu, 7).net, tch::Kind::Float);
        let xs = crate::net::random_input(3);
        let nhwc = |t: &Tensor| {
            let (size, stride) = (t.size(), t.stride());
            stride == [size[1] * size[2] * size[3], 1, size[3] * size[1], size[1]]
        };
        let mut x = folded.stem.forward(&channels_last(&xs));
        assert!(nhwc(&x), "the stem's output: strides {:?}", x.stride());
        for (conv1, conv2) in &folded.blocks {
            x = (conv2.forward(&conv1.forward(&x).relu()) + &x).relu();
            assert!(nhwc(&x), "a block's output: strides {:?}", x.stride());
        }
        assert!(!nhwc(&xs) && nhwc(&channels_last(&xs)));
    }
}
