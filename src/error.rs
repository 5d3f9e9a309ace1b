//! Why a checkpoint or a weights file cannot be loaded, in kinds a caller
//! tells apart: damage ([`LoadError::is_damaged`]: a checkpoint cut short by
//! a crash or a full disk, which gives way to the one before it) against a
//! checkpoint that this program or configuration cannot use
//! ([`LoadError::is_incompatible`]: an error to report, nothing set aside).

use std::path::PathBuf;

use crate::rules::Variant;
use gipf_core::network::NetConfig;

/// Why a checkpoint, its description or a weights file cannot be loaded.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum LoadError {
    /// There is no such file.
    #[error("{}: does not exist", path.display())]
    Missing {
        /// The file.
        path: PathBuf,
    },
    /// The file is there but cannot be read (permissions, a failing disk).
    #[error("cannot read {}", path.display())]
    Unreadable {
        /// The file.
        path: PathBuf,
        /// Why it cannot be read.
        #[source]
        source: std::io::Error,
    },
    /// The file's contents are wrong: cut short, a bad header, tensors of
    /// the wrong name, shape or number format, values that are not finite,
    /// a description that is not JSON or holds counts out of bounds.
    #[error("{}: {why}", path.display())]
    Damaged {
        /// The file.
        path: PathBuf,
        /// What is wrong.
        why: String,
    },
    /// A checkpoint format this program does not read.
    #[error("{}: checkpoint format {found} (this program reads formats 1 to {newest})", path.display())]
    Format {
        /// The description.
        path: PathBuf,
        /// Its format.
        found: u32,
        /// The newest format this program reads.
        newest: u32,
    },
    /// Positions encoded otherwise than this program encodes them.
    #[error("{}: encoding version {found} (this program uses {expected})", path.display())]
    Encoding {
        /// The description.
        path: PathBuf,
        /// Its encoding version.
        found: u32,
        /// This program's ([`crate::encoding::ENCODING_VERSION`]).
        expected: u32,
    },
    /// A description of fields this program does not know: written by
    /// another version.
    #[error("{}: not a checkpoint description of this version ({why})", path.display())]
    Fields {
        /// The description.
        path: PathBuf,
        /// How the fields differ from this version's.
        why: String,
    },
    /// A network of another shape than the configuration's.
    #[error("{}: network {found:?} differs from the config's {expected:?}", path.display())]
    Shape {
        /// The description.
        path: PathBuf,
        /// The checkpoint's network.
        found: NetConfig,
        /// The configuration's.
        expected: NetConfig,
    },
    /// A network of another variant than the configuration's.
    #[error("{}: it plays the {found} variant and the config the {expected}", path.display())]
    Variant {
        /// The description.
        path: PathBuf,
        /// The variant the checkpoint plays.
        found: Variant,
        /// The configuration's.
        expected: Variant,
    },
}

impl LoadError {
    /// Whether the file is missing or its contents are wrong: a checkpoint
    /// such as this gives way to the one before it.
    pub fn is_damaged(&self) -> bool {
        matches!(self, LoadError::Missing { .. } | LoadError::Damaged { .. })
    }

    /// Whether the checkpoint is whole but of a kind this program or
    /// configuration cannot use.
    pub fn is_incompatible(&self) -> bool {
        matches!(
            self,
            LoadError::Format { .. }
                | LoadError::Encoding { .. }
                | LoadError::Fields { .. }
                | LoadError::Shape { .. }
                | LoadError::Variant { .. }
        )
    }

    /// `error`'s [`LoadError`], where one is in its chain of causes.
    pub fn find(error: &anyhow::Error) -> Option<&LoadError> {
        error.chain().find_map(|cause| cause.downcast_ref::<LoadError>())
    }
}
