use criterion::{criterion_group, criterion_main, Criterion};
use gipf::rules::{Position, Variant};
use rand::rngs::SmallRng;
use rand::{Rng, SeedableRng};

/// One random game of each variant per iteration: list the legal actions, play one.
fn random_game(c: &mut Criterion) {
    for variant in Variant::ALL {
        let mut rng = SmallRng::seed_from_u64(1);
        let mut legal = Vec::new();
        c.bench_function(&format!("random game ({variant})"), |b| {
            b.iter(|| {
                let mut pos = Position::new(variant);
                let mut n = 0;
                while n < 1000 {
                    pos.legal_actions_into(&mut legal);
                    if legal.is_empty() {
                        break;
                    }
                    pos.play_unchecked(legal[rng.random_range(0..legal.len())]);
                    n += 1;
                }
                n
            })
        });
    }
}

fn legal_actions(c: &mut Criterion) {
    let pos = Position::new(Variant::Standard);
    let mut legal = Vec::new();
    c.bench_function("legal actions (standard start)", |b| {
        b.iter(|| {
            pos.legal_actions_into(&mut legal);
            legal.len()
        })
    });
}

criterion_group!(benches, random_game, legal_actions);
criterion_main!(benches);
