//! Positions the unit tests of several modules share.

use super::{Color, Position, Setup};

/// A position from its setup JSON.
pub(crate) fn setup(json: &str) -> Position {
    Setup::from_json(json).unwrap().to_position().unwrap()
}

/// White to remove a run holding black's last GIPF piece: taking it
/// (`xb5,c5,d5,e5,f4,g3,h2`) wins.
pub(crate) fn win_in_one() -> Position {
    let mut pos = setup(
        r#"{"variant": "standard", "board": {"b5": "b", "c5": "B", "d5": "w", "e5": "w", "f4": "w",
            "h2": "w", "g2": "w", "e2": "W"}, "reserve": {"white": 7, "black": 14}, "to_move": "white"}"#,
    );
    pos.play("g1-g2".parse().unwrap()).unwrap();
    pos
}

/// Basic variant, white to push. Black has one piece left in reserve and
/// three in column b: unless white blocks the column now, black's last push
/// makes a row and takes four pieces back. After a block, black pushes its
/// last piece, white pushes, and black cannot push: a win in two of white's
/// pushes.
pub(crate) fn forced_win_in_two() -> Position {
    setup(
        r#"{"variant": "basic", "board": {"b3": "b", "b4": "b", "b5": "b", "e2": "w", "h5": "w", "e8": "w"},
            "reserve": {"white": 9, "black": 1}, "to_move": "white"}"#,
    )
}

/// White's push `b1-c2` has completed a black row: black, who did not push,
/// must decide how to remove it, and then pushes.
pub(crate) fn removal_by_the_player_who_did_not_push() -> Position {
    let mut pos = setup(
        r#"{"variant": "standard", "board": {"c2": "w", "d3": "b", "e2": "B", "e3": "b", "e5": "b",
            "e8": "W", "h5": "W", "b2": "B"}, "reserve": {"white": 9, "black": 8}, "to_move": "white"}"#,
    );
    pos.play("b1-c2".parse().unwrap()).unwrap();
    assert_eq!((pos.to_move(), pos.to_act()), (Color::White, Some(Color::Black)));
    pos
}
