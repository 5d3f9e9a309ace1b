"""What the binding costs: random games played from Python, an action at a
time through legal_actions() and play() (or their index forms), beside the same games played
inside the core by gipf.random_games() in the same run.

    ./.python python/benches/random_games.py [GAMES]
"""

import random
import sys
import time

import gipf


def random_games(games: int, legal, play) -> int:
    """Plays `games` random games through the methods `legal` and `play`."""
    rng = random.Random(1)
    actions = 0
    for _ in range(games):
        game = gipf.Game()
        while not game.is_over:
            moves = legal(game)
            play(game, moves[rng.randrange(len(moves))])
            actions += 1
    return actions


def from_python(games: int) -> int:
    return random_games(games, gipf.Game.legal_actions, gipf.Game.play)


def by_index(games: int) -> int:
    return random_games(games, gipf.Game.legal_indices, gipf.Game.play_index)


def rate(play, games: int) -> float:
    start = time.perf_counter()
    actions = play(games)
    return actions / (time.perf_counter() - start)


def main() -> None:
    games = int(sys.argv[1]) if len(sys.argv) > 1 else 2000
    python = rate(from_python, games)
    indices = rate(by_index, games)
    core = rate(lambda n: gipf.random_games(n, seed=1), games)
    print(f"{games} random games, actions per second: in the core (random_games) {core:,.0f}; "
          f"from Python by notation (legal_actions + play) {python:,.0f} ({python / core:.1%} of the core); "
          f"by index (legal_indices + play_index) {indices:,.0f} ({indices / core:.1%})")


if __name__ == "__main__":
    main()
