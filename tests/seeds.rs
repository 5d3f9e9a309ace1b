//! The worked examples of the original rule texts, in the official
//! coordinates, and the points `docs/rules.md` settles beyond them.

use gipf::rules::{Action, Color, IllegalAction, Phase, Position, Setup, Variant, WinReason};

/// A position from a compact board description like `"e2:W e3:w c2:b"`, with
/// the given reserves (the rest captured).
fn position_with_reserve(
    variant: Variant,
    board: &str,
    reserve: (u8, u8),
    to_move: Color,
    gipf_allowed: Option<(bool, bool)>,
) -> Position {
    let entries: Vec<String> = board
        .split_whitespace()
        .map(|entry| {
            let (cell, piece) = entry.split_once(':').unwrap();
            format!("\"{cell}\": \"{piece}\"")
        })
        .collect();
    let allowed = gipf_allowed
        .map(|(w, b)| format!(", \"gipf_allowed\": {{\"white\": {w}, \"black\": {b}}}"))
        .unwrap_or_default();
    let json = format!(
        "{{\"variant\": \"{variant}\", \"board\": {{{}}}, \"reserve\": {{\"white\": {}, \"black\": {}}}, \"to_move\": \"{to_move}\"{allowed}}}",
        entries.join(", "),
        reserve.0,
        reserve.1
    );
    Setup::from_json(&json).unwrap().to_position().unwrap()
}

/// A position with nothing captured: each reserve is what the board leaves.
fn position(variant: Variant, board: &str, to_move: Color) -> Position {
    let weight = |color: char| -> u8 {
        board.split_whitespace().filter(|e| e.ends_with(color)).count() as u8
            + 2 * board.split_whitespace().filter(|e| e.ends_with(color.to_ascii_uppercase())).count() as u8
    };
    let total = variant.total_pieces();
    position_with_reserve(variant, board, (total - weight('w'), total - weight('b')), to_move, None)
}

/// How many pieces `color`'s reserve gained from `before` to `after`.
fn gained(before: &Position, after: &Position, color: Color) -> i32 {
    after.reserve(color) as i32 - before.reserve(color) as i32
}

fn play(pos: &mut Position, actions: &str) {
    for text in actions.split_whitespace() {
        let action: Action = text.parse().unwrap();
        pos.play(action).unwrap_or_else(|e| panic!("{text}: {e}"));
    }
}

fn legal(pos: &Position) -> Vec<String> {
    let mut legal: Vec<String> = pos.legal_actions().iter().map(|a| a.to_string()).collect();
    legal.sort();
    legal
}

fn board(pos: &Position) -> String {
    gipf::rules::Point::all()
        .filter_map(|p| pos.piece_at(p).map(|piece| format!("{p}:{}", piece.letter())))
        .collect::<Vec<_>>()
        .join(" ")
}

/// seeds/001 (1a)-(3b): pushes move the pieces ahead up to the first gap, and a
/// push that would push a piece off the board is illegal.
#[test]
fn basic_pushes_and_a_blocked_line() {
    let mut pos = Position::new(Variant::Basic);
    play(&mut pos, "b1-b2");
    assert_eq!(board(&pos), "b2:w b3:b b5:w e2:w e8:b h2:b h5:w");
    play(&mut pos, "b6-b5");
    assert_eq!(board(&pos), "b2:w b3:b b4:w b5:b e2:w e8:b h2:b h5:w");
    // (3a) the column is full: b1-b2 would push black's b5 off the board.
    let blocked: Action = "b1-b2".parse().unwrap();
    assert!(matches!(pos.check(blocked), Err(IllegalAction::LineFull(_))));
    assert!(!legal(&pos).contains(&"b1-b2".to_string()));
    assert!(!legal(&pos).contains(&"b6-b5".to_string()));
    // b1-c2, a2-b2 and a2-b3 are legal; a2-b3 pushes black's b3 to c4.
    for text in ["b1-c2", "a2-b2", "a2-b3"] {
        assert!(legal(&pos).contains(&text.to_string()), "{text}");
    }
    let mut after = pos;
    play(&mut after, "a2-b3");
    assert_eq!(board(&after), "b2:w b3:w b4:w b5:b c4:b e2:w e8:b h2:b h5:w");
}

/// seeds/001 ex.1: black's b1-c2 completes e4,f4,g4,h4; the run c2..h4 goes,
/// five black pieces back to the reserve and one white piece captured.
#[test]
fn a_row_removes_its_whole_run() {
    let mut pos = position(Variant::Basic, "c2:w d3:b e4:b f4:b h4:b", Color::Black);
    let start = pos;
    play(&mut pos, "b1-c2");
    assert_eq!(pos.phase(), Phase::Push, "a lone row without GIPF pieces goes without a choice");
    assert_eq!(pos.to_act(), Some(Color::White));
    assert_eq!(board(&pos), "");
    assert_eq!((gained(&start, &pos, Color::Black), pos.captured(Color::White)), (5 - 1, 1));
    assert_eq!(gained(&start, &pos, Color::White), 0);
}

/// seeds/001 ex.2: the mover's removal takes d3, breaking the white row
/// b3,c3,d3,e3 (extended by black's f2) before white could take it.
#[test]
fn the_mover_resolves_first_and_can_break_the_other_row() {
    let mut pos = position(Variant::Basic, "c2:w d3:b e4:b f4:b h4:b b3:w c3:w e3:w f2:b", Color::Black);
    play(&mut pos, "b1-c2");
    assert_eq!(pos.phase(), Phase::Push);
    assert_eq!(board(&pos), "b3:w c3:w e3:w f2:b");
    assert_eq!(pos.captured(Color::White), 1);
    assert_eq!(pos.captured(Color::Black), 0, "white captures nothing: f2 stays");
}

/// seeds/001 ex.3: black's rows c2..h4 and b4..g2 cross at e4; black takes
/// one, not both. c2..h4 returns five and captures one; b4..g2 returns four
/// and captures two.
#[test]
fn crossing_rows_the_owner_chooses_one() {
    let board_before = "c2:w d3:b e4:b f4:b h4:b b4:w c4:w d4:b f3:b g2:b";
    let start = position(Variant::Basic, board_before, Color::Black);
    let mut pos = start;
    play(&mut pos, "b1-c2");
    assert_eq!(pos.to_act(), Some(Color::Black));
    assert_eq!(legal(&pos), ["xb4,c4,d4,e4,f3,g2", "xc2,d3,e4,f4,g4,h4"]);

    let mut first = pos;
    play(&mut first, "xc2,d3,e4,f4,g4,h4");
    assert_eq!(first.phase(), Phase::Push, "the other row lost e4 and is a row no longer");
    assert_eq!((gained(&start, &first, Color::Black), first.captured(Color::White)), (5 - 1, 1));
    assert_eq!(board(&first), "b4:w c4:w d4:b f3:b g2:b");

    let mut second = pos;
    play(&mut second, "xb4,c4,d4,e4,f3,g2");
    assert_eq!((gained(&start, &second, Color::Black), second.captured(Color::White)), (4 - 1, 2));
    assert_eq!(board(&second), "c2:b d3:w f4:b g4:b h4:b");
}

/// seeds/000: white's a1-f5 (the push a1-b2) brings a white piece to e5 and
/// makes a row in column e with three singles and a GIPF piece: the singles go,
/// the GIPF piece may stay; e7 and e8 stay, past the gap.
#[test]
fn a_gipf_piece_in_a_run_may_be_kept() {
    let before = "b2:b c3:b d4:w e5:b e2:W e3:w e4:w e7:b e8:B h2:B h5:W";
    let mut pos = position(Variant::Standard, before, Color::White);
    let start = pos;
    play(&mut pos, "a1-b2");
    assert_eq!(pos.to_act(), Some(Color::White));
    assert_eq!(legal(&pos), ["xe2,e3,e4,e5", "xe3,e4,e5"]);
    let mut keep = pos;
    play(&mut keep, "xe3,e4,e5");
    assert_eq!(board(&keep), "b2:w c3:b d4:b e2:W e7:b e8:B f5:b h2:B h5:W");
    assert_eq!(gained(&start, &keep, Color::White), 3 - 1);
    play(&mut pos, "xe2,e3,e4,e5");
    assert_eq!(gained(&start, &pos, Color::White), 5 - 1);
}

/// seeds/000: a white row on b5..h2 extended by black pieces: white removes the
/// run and takes the black GIPF piece at c5, capturing 3 black pieces and
/// recycling 5 white ones.
#[test]
fn capturing_the_opponents_gipf_piece_in_a_run() {
    let before = "b5:b c5:B d5:w e5:w f4:w h2:w g2:w e2:W e8:B";
    let mut pos = position(Variant::Standard, before, Color::White);
    let start = pos;
    play(&mut pos, "g1-g2");
    assert_eq!(legal(&pos), ["xb5,c5,d5,e5,f4,g3,h2", "xb5,d5,e5,f4,g3,h2"]);
    play(&mut pos, "xb5,c5,d5,e5,f4,g3,h2");
    assert_eq!((pos.captured(Color::Black), gained(&start, &pos, Color::White)), (3, 5 - 1));
    assert_eq!(pos.to_act(), Some(Color::Black));
}

/// seeds/000, forced capture: white's b1-e4 (the push b1-c2) completes a black
/// row; black must remove it, choosing for the GIPF piece, and then push.
#[test]
fn the_other_player_removes_a_row_the_mover_made() {
    let before = "c2:w d3:b e2:B e3:b e5:b e8:W h5:W b2:B";
    let mut pos = position(Variant::Standard, before, Color::White);
    let start = pos;
    play(&mut pos, "b1-c2");
    assert_eq!(pos.to_move(), Color::White);
    assert_eq!(pos.to_act(), Some(Color::Black), "black decides during white's turn");
    assert_eq!(legal(&pos), ["xe2,e3,e4,e5", "xe3,e4,e5"]);
    play(&mut pos, "xe3,e4,e5");
    assert_eq!((pos.phase(), pos.to_act()), (Phase::Push, Some(Color::Black)));
    assert_eq!(gained(&start, &pos, Color::Black), 3);
}

/// seeds/000: two rows crossing at a GIPF piece: white removes one keeping the
/// GIPF piece, and the other row, still whole, is offered next.
#[test]
fn crossing_rows_sharing_a_kept_gipf_piece_are_both_taken() {
    let before = "e3:w e4:w e5:W e6:w c3:w d4:w f5:w d2:B h2:B h5:W";
    let mut pos = position(Variant::Standard, before, Color::White);
    play(&mut pos, "e9-e8");
    assert_eq!(legal(&pos), ["xc3,d4,e5,f5", "xc3,d4,f5", "xe3,e4,e5,e6", "xe3,e4,e6"]);
    play(&mut pos, "xe3,e4,e6");
    assert_eq!(legal(&pos), ["xc3,d4,e5,f5", "xc3,d4,f5"], "the other row is offered again");
    play(&mut pos, "xc3,d4,f5");
    assert_eq!(board(&pos), "d2:B e5:W e8:w h2:B h5:W");
    assert_eq!(pos.to_act(), Some(Color::Black));
}

/// seeds/000: when both must remove, the mover goes first (taking 4 white
/// pieces and a black GIPF piece), then black removes their own row and
/// captures nothing. White's e1-e2 brings white to e3 (row c3,d3,e3,f2 with
/// black's GIPF piece on b3 in its run) and black to e4 (row d4,e4,f3,g2).
#[test]
fn both_players_remove_mover_first() {
    let before = "e2:w e3:b b3:B c3:w d3:w f2:w d4:b f3:b g2:b h5:W e8:B";
    let mut pos = position(Variant::Standard, before, Color::White);
    let start = pos;
    play(&mut pos, "e1-e2");
    assert_eq!(pos.to_act(), Some(Color::White));
    assert_eq!(legal(&pos), ["xb3,c3,d3,e3,f2", "xc3,d3,e3,f2"]);
    play(&mut pos, "xb3,c3,d3,e3,f2");
    // Black's row touches no other row and holds no GIPF piece: it goes at once.
    assert_eq!((pos.phase(), pos.to_act()), (Phase::Push, Some(Color::Black)));
    assert_eq!(board(&pos), "e2:w e8:B h5:W");
    assert_eq!((gained(&start, &pos, Color::White), pos.captured(Color::Black)), (4 - 1, 2));
    assert_eq!((gained(&start, &pos, Color::Black), pos.captured(Color::White)), (4, 0));
}

/// seeds/000: white captures the last black GIPF piece and wins at once.
#[test]
fn taking_the_last_gipf_piece_wins() {
    let before = "b5:b c5:B d5:w e5:w f4:w h2:w g2:w e2:W";
    let mut pos = position(Variant::Standard, before, Color::White);
    play(&mut pos, "g1-g2");
    play(&mut pos, "xb5,c5,d5,e5,f4,g3,h2");
    let outcome = pos.outcome().expect("game over");
    assert_eq!((outcome.winner, outcome.reason), (Color::White, WinReason::NoGipfPiece));
    assert!(pos.legal_actions().is_empty());
    assert_eq!(pos.to_act(), None);
}

/// docs/rules.md: if one removal leaves both players without a GIPF piece, the
/// player who removed wins; removing one's own last GIPF piece loses.
#[test]
fn removing_both_last_gipf_pieces_the_remover_wins() {
    let before = "b5:b c5:B d5:W e5:w f4:w h2:w g2:w";
    let mut pos = position(Variant::Standard, before, Color::White);
    play(&mut pos, "g1-g2");
    let mut both = pos;
    play(&mut both, "xb5,c5,d5,e5,f4,g3,h2");
    assert_eq!(both.outcome().unwrap().winner, Color::White);
    let mut own = pos;
    play(&mut own, "xb5,d5,e5,f4,g3,h2");
    assert_eq!(own.outcome().unwrap().winner, Color::Black, "white removed their own last GIPF piece");
}

/// seeds/000: black has one piece left and no way to recycle: after pushing it,
/// black cannot push on the next turn and loses.
#[test]
fn running_out_of_reserve_loses() {
    let mut pos = position_with_reserve(Variant::Standard, "b2:B e2:W", (10, 1), Color::Black, None);
    play(&mut pos, "i5-h5 a1-b2");
    let outcome = pos.outcome().expect("black cannot push");
    assert_eq!((outcome.winner, outcome.reason), (Color::White, WinReason::NoReserve));
}

/// docs/rules.md: a row made only of GIPF pieces may be left, and is offered again
/// each time its owner resolves rows: after the opponent's push too.
#[test]
fn a_row_of_gipf_pieces_may_be_left_and_is_offered_again() {
    let before = "c3:W d4:W e5:W f5:W h2:B";
    let mut pos = position(Variant::Standard, before, Color::White);
    let start = pos;
    play(&mut pos, "e9-e8");
    let options = legal(&pos);
    assert!(options.contains(&"x-".to_string()));
    assert_eq!(options.len(), 15 + 1, "every non-empty subset of four GIPF pieces, or leave");
    play(&mut pos, "x-");
    assert_eq!((pos.phase(), pos.to_act()), (Phase::Push, Some(Color::Black)));
    play(&mut pos, "a5-b5");
    // After black's push, white resolves again, during black's turn.
    assert_eq!(pos.to_act(), Some(Color::White));
    assert!(legal(&pos).contains(&"x-".to_string()));
    play(&mut pos, "xd4");
    // What is left on that line is not offered again in this resolution.
    assert_eq!((pos.phase(), pos.to_act()), (Phase::Push, Some(Color::White)));
    assert_eq!(gained(&start, &pos, Color::White), 2 - 1, "d4 back to the reserve, less the push");
}

/// docs/rules.md: rows of singles must go; `x-` is offered only when every
/// remaining row is made of GIPF pieces alone.
#[test]
fn rows_with_singles_cannot_be_left() {
    let before = "c3:W d4:w e5:W f5:W h2:B";
    let mut pos = position(Variant::Standard, before, Color::White);
    play(&mut pos, "e9-e8");
    assert!(!legal(&pos).contains(&"x-".to_string()));
    assert_eq!(pos.check(Action::Leave), Err(IllegalAction::CannotLeave));
}

/// docs/rules.md, tournament: the first push must bring in a GIPF piece; GIPF
/// pieces may follow until the first single; then singles only.
#[test]
fn tournament_gipf_phase() {
    let mut pos = Position::new(Variant::Tournament);
    assert!(legal(&pos).iter().all(|a| a.starts_with('G')));
    assert_eq!(pos.check("a1-b2".parse().unwrap()), Err(IllegalAction::FirstPushMustBeGipf(Color::White)));
    play(&mut pos, "Ga1-b2");
    assert_eq!(pos.reserve(Color::White), 16);
    assert!(legal(&pos).iter().all(|a| a.starts_with('G')), "black's first push too");
    play(&mut pos, "Gi5-h5");
    let options = legal(&pos);
    assert!(options.iter().any(|a| a.starts_with('G')) && options.iter().any(|a| !a.starts_with('G')));
    play(&mut pos, "e1-e2");
    assert!(legal(&pos).iter().any(|a| a.starts_with('G')), "black has not pushed a single yet");
    play(&mut pos, "Gi1-h2");
    assert!(legal(&pos).iter().all(|a| !a.starts_with('G')), "white pushed a single");
    assert_eq!(pos.check("Ga2-b3".parse().unwrap()), Err(IllegalAction::GipfPushNoLonger(Color::White)));
    play(&mut pos, "a2-b3 e9-e8");
    assert!(legal(&pos).iter().all(|a| !a.starts_with('G')), "black pushed a single");
    // Other variants never bring GIPF pieces in.
    let standard = Position::new(Variant::Standard);
    assert_eq!(standard.check("Ga1-b2".parse().unwrap()), Err(IllegalAction::GipfPushNotInVariant));
}

/// docs/rules.md, tournament: a player without a GIPF piece loses only after their
/// first push.
#[test]
fn tournament_no_gipf_loss_before_the_first_push() {
    let pos = position_with_reserve(Variant::Tournament, "e5:W", (16, 18), Color::Black, Some((true, true)));
    assert!(!pos.is_over());
    let lost = position_with_reserve(Variant::Tournament, "e5:W e6:b", (16, 17), Color::Black, Some((true, false)));
    assert_eq!(lost.outcome().map(|o| o.winner), Some(Color::White));
}
