"""How long the spoken-form finders take on a typical agent utterance (cold and cached).

The caller and the grader run them on every agent turn. "Cold" clears the speech cache
before each sample (the first finder on a text parses it); "cached" is every later call
on the same text, by any finder's caller (the parse and each finder's result are kept).
Prints medians in microseconds.
Run: .venv/bin/python benchmarks/speech.py
"""

from __future__ import annotations

import statistics
import time

from vamos_env.speech import (
    clear_cache,
    find_amounts,
    find_counts,
    find_dates,
    find_digit_strings,
    find_email,
    find_money,
    find_rates,
)

UTTERANCES = [
    "Thanks for waiting. Your current balance is two hundred fourteen dollars and seven "
    "cents, and it was due on September tenth. I can set up six monthly payments of "
    "thirty-five sixty-eight, with the first one due October tenth. Would you like that?",
    "Okay, so I have your account four four one seven dash nine zero seven eight one, and "
    "the card ending in four two four two. To confirm, you want to pay sixty-five dollars "
    "and fifty-two cents today with that card, is that right?",
]


def median_us(fn, cold: bool, rounds: int = 2000) -> float:
    samples = []
    for k in range(rounds):
        if cold:
            clear_cache()
        text = UTTERANCES[k % 2]
        t = time.perf_counter()
        fn(text)
        samples.append(time.perf_counter() - t)
    return statistics.median(samples) * 1e6


def main() -> None:
    print(f"{'finder':20} {'cold us':>9} {'cached us':>10}   (40-word utterance; target 200 us)")
    finders = (find_amounts, find_money, find_rates, find_dates, find_counts)
    for fn in (*finders, find_digit_strings, find_email):
        print(f"{fn.__name__:20} {median_us(fn, True):9.1f} {median_us(fn, False):10.1f}")


if __name__ == "__main__":
    main()
