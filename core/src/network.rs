//! The network's shape, as a checkpoint's description and a config's
//! `[network]` table record it, with its bounds: here, without LibTorch,
//! so that every reader of a description (the trainer, the Python package)
//! checks the same bounds before building anything.

use serde::{Deserialize, Serialize};

use crate::bounds::{check_range, Checked};

/// The shape of the network (what a checkpoint records with its weights).
#[derive(Clone, Copy, Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct NetConfig {
    /// Residual blocks in the tower.
    pub blocks: usize,
    /// Channels of the tower's convolutions.
    pub channels: i64,
    /// Width of the value head's hidden layer.
    pub value_hidden: i64,
    /// The value head also reads the tower's mean over the board, channel by
    /// channel (global pooling, as in KataGo's heads).
    #[serde(default, skip_serializing_if = "is_false")]
    pub value_pooling: bool,
    /// The value head's hidden layer also predicts the auxiliary targets of
    /// `samples::AUX_TARGETS` (trained, never used by the search).
    #[serde(default, skip_serializing_if = "is_false")]
    pub aux_targets: bool,
}

impl PartialEq for NetConfig {
    fn eq(&self, other: &NetConfig) -> bool {
        let shape = |c: &NetConfig| (c.blocks, c.channels, c.value_hidden, c.value_pooling, c.aux_targets);
        shape(self) == shape(other)
    }
}

impl Eq for NetConfig {}

fn is_false(b: &bool) -> bool {
    !*b
}

impl NetConfig {
    /// Checks each dimension against its range (a shape out of bounds
    /// would make a network allocate without limit).
    pub fn validate(&self) -> Checked {
        check_range("network.blocks", self.blocks as i64, 1, 64)?;
        check_range("network.channels", self.channels, 4, 512)?;
        check_range("network.value_hidden", self.value_hidden, 4, 1024)
    }
}
