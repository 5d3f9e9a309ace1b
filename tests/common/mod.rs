//! Helpers shared by the integration tests.

#![allow(dead_code)]

pub mod help_page;
pub mod s3;

use gipf::rules::{lines, BoardEntries, Color, PerColor, Point, Setup, Variant};
use rand::rngs::SmallRng;
use rand::seq::SliceRandom;
use rand::Rng;

/// A random legal-looking setup of `variant`: `pieces` points filled with
/// random colours (a `white_share` of white, a `gipf_share` of GIPF pieces where
/// the variant has them), mostly full reserves, the rest captured. With
/// `gipf_row`, four GIPF pieces of one colour are first put in a row. Crowded
/// boards with rows already on them make the removal rules work hard after
/// the first push.
pub fn random_setup(
    rng: &mut SmallRng,
    variant: Variant,
    pieces: usize,
    gipf_share: f64,
    white_share: f64,
    gipf_row: bool,
) -> Setup {
    let mut points: Vec<Point> = Point::all().collect();
    points.shuffle(rng);
    let mut forced = Vec::new();
    if gipf_row && variant.has_gipf_pieces() {
        let line = &lines()[rng.random_range(0..lines().len())];
        let start = rng.random_range(0..=line.points.len() - 4);
        forced = line.points[start..start + 4].to_vec();
        points.retain(|p| !forced.contains(p));
        points.splice(0..0, forced.iter().copied());
    }
    let row_color = if rng.random_bool(0.5) { Color::White } else { Color::Black };
    let total = variant.total_pieces() as u32;
    let mut weight = [0u32; 2];
    let mut board = Vec::new();
    for &p in points.iter().take(pieces) {
        let in_row = forced.contains(&p);
        let color = match in_row || rng.random_bool(white_share) {
            true if in_row => row_color,
            true => Color::White,
            false => Color::Black,
        };
        let gipf = variant.has_gipf_pieces() && (in_row || rng.random_bool(gipf_share));
        let w = 1 + gipf as u32;
        if weight[color.index()] + w > total - 5 {
            continue;
        }
        weight[color.index()] += w;
        let letter = match (color, gipf) {
            (Color::White, false) => "w",
            (Color::Black, false) => "b",
            (Color::White, true) => "W",
            (Color::Black, true) => "B",
        };
        board.push((p.to_string(), letter.to_string()));
    }
    let mut reserve = |c: Color| {
        let rest = total - weight[c.index()];
        (rest - rng.random_range(0..=rest / 3)) as u8
    };
    let reserve = PerColor { white: reserve(Color::White), black: reserve(Color::Black) };
    Setup {
        variant,
        board: BoardEntries(board),
        reserve,
        captured: None,
        to_move: if rng.random_bool(0.5) { Color::White } else { Color::Black },
        gipf_allowed: (variant == Variant::Tournament)
            .then(|| PerColor { white: rng.random_bool(0.5), black: rng.random_bool(0.5) }),
    }
}

/// A checkpoint of the tiny network (step 30) and what `gipf export` wrote of
/// it, run from a folder outside the checkout: made once for the tests that
/// check an export (the conversion through Python takes seconds). Links to
/// `victim` were planted in the export's folder under the names it writes
/// (and its converter's old name) before it ran.
pub struct Exported {
    pub weights: std::path::PathBuf,
    pub victim: std::path::PathBuf,
    /// The export's folder (`exported` in the folder it ran from).
    pub dir: std::path::PathBuf,
    /// What `gipf export` printed.
    pub stdout: String,
}

pub fn exported() -> &'static Exported {
    static EXPORTED: std::sync::OnceLock<Exported> = std::sync::OnceLock::new();
    EXPORTED.get_or_init(|| {
        let root = std::path::Path::new(env!("CARGO_TARGET_TMPDIR")).join("shared-export");
        let _ = std::fs::remove_dir_all(&root);
        let elsewhere = root.join("elsewhere");
        std::fs::create_dir_all(&elsewhere).unwrap();
        let config =
            gipf::config::Config::load(&std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("configs/tiny.toml"))
                .unwrap();
        let mut trainer = gipf::train::Trainer::new(&config, tch::Device::Cpu, 31);
        trainer.step = 30;
        let weights = trainer.save(&root.join("models")).unwrap();
        let victim = root.join("victim.txt");
        std::fs::write(&victim, "precious").unwrap();
        std::fs::create_dir(elsewhere.join("exported")).unwrap();
        for name in ["model.onnx", "model.pt"] {
            std::os::unix::fs::symlink(&victim, elsewhere.join("exported").join(name)).unwrap();
        }
        let out = std::process::Command::new(env!("CARGO_BIN_EXE_gipf"))
            .args(["export", weights.to_str().unwrap(), "--out", "exported"])
            .current_dir(&elsewhere)
            .output()
            .unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(out.status.success(), "gipf export: {stderr}");
        Exported {
            weights,
            victim,
            dir: elsewhere.join("exported"),
            stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
        }
    })
}
