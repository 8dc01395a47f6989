"""Short first-person backstories written for each task: who travels, why, and what they value.

The story is in the user's own voice (the user then speaks in the first person too) and states
the task's objective in words of its own: the metric a single-metric user optimises, or the
favourite wishes of a feature-count user. It never names a preference the objective does not
rank. Every sentence is drawn from several templates and filled with the task's details, so
no sentence is shared by many stories.
"""

from __future__ import annotations

import numpy as np

from travelgym.suites.compass.objectives import FEATURES

# Who travels, for each party size: (words, what the party includes). The words name exactly
# ``size - 1`` companions, so a reader can count the party from the story alone.
PARTIES: dict[int, tuple[tuple[str, frozenset[str]], ...]] = {
    1: (("on my own", frozenset()), ("by myself", frozenset()), ("solo", frozenset())),
    2: (("with my partner", frozenset({"partner"})), ("with a friend", frozenset({"friends"})),
        ("with my old college roommate", frozenset({"friends"})),
        ("with my sister", frozenset({"family"}))),
    3: (("with two friends", frozenset({"friends"})),
        ("with my partner and our teenager", frozenset({"partner", "kids"})),
        ("with my two brothers", frozenset({"family"}))),
    4: (("with three friends", frozenset({"friends"})),
        ("with my partner and our two kids", frozenset({"partner", "kids"})),
        ("with my parents and my sister", frozenset({"family"}))),
    5: (("with four friends", frozenset({"friends"})),
        ("with my partner and our three kids", frozenset({"partner", "kids"})),
        ("with four colleagues", frozenset({"colleagues"}))),
    6: (("with five friends", frozenset({"friends"})),
        ("with my partner, our three kids and my mother", frozenset({"partner", "kids", "family"})),
        ("with my partner and two other couples", frozenset({"partner", "friends"}))),
}  # fmt: skip
# What a sentence presumes of the party: None (anyone), "company" (at least two travel),
# "partner", "kids", or "group" (friends or family, e.g. a reunion).
MOTIVES = (
    ("to celebrate our anniversary", "partner"),
    ("to finally see the park after years of planning", None),
    ("for a long-awaited hiking trip", None), ("to photograph the landscapes", None),
    ("for a quiet break from work", None), ("to celebrate a birthday", None),
    ("to hike the best trails", None), ("for a reunion", "group"),
    ("to watch the night sky", None), ("to tick another national park off the list", None),
    ("for some fresh air", None), ("to see the wildlife", None),
    ("to show the kids the park", "kids"), ("for a few days away from the city", None),
)  # fmt: skip
OPENINGS = (
    ("I'm planning a trip to {park} {party} {motive}.", None),
    ("I'm heading to {park} {party} {motive}.", None),
    ("This summer I'm going to {park} {party} {motive}.", None),
    ("I want to visit {park} {party} {motive}.", None),
    ("I'm organising a trip to {park} {party} {motive}.", None),
    ("We've been talking about {park} for ages, and now I'm going {party} {motive}.", "company"),
)  # fmt: skip
# single metric -> (reasons, wants); a story joins one reason and one want (a reason may
# presume something of the party, as a motive can)
PREFERENCES: dict[str, tuple[tuple[str | tuple[str, str], ...], tuple[str, ...]]] = {
    "total_cost": (
        ("Money is tight this year", "I'd rather spend on the trip than on the booking",
         "Every dollar I save goes to gear and park fees", "I've promised myself a frugal trip",
         "Things have been expensive lately", "I'm saving for a bigger trip next year"),
        ("so the lowest total price wins", "so I'm after the cheapest package that works",
         "so whatever costs least overall is my pick", "so the smallest total bill is what I want",
         "so I want to pay as little as possible in total", "so the cheapest option gets my vote"),
    ),
    "review_score": (
        ("I've had bad stays before", "A good night's sleep makes or breaks a trip for me",
         "I trust what other guests say", "Last time the hotel ruined the holiday",
         "I read every review before I book", "Comfort matters a lot to me"),
        ("so I want the hotel guests rate highest", "so the best-reviewed hotel is my priority",
         "so top guest ratings matter most", "so I'm looking for the highest review score",
         "so the hotel with the happiest guests wins", "so great reviews come first"),
    ),
    "distance": (
        ("I want to be on the trails at sunrise", "I hate long drives after a day of hiking",
         "Every minute in the car is a minute not in the park",
         ("We plan early starts every day", "company"),
         "I'd love to pop back to the room at midday", "Driving at night makes me nervous"),
        ("so the closer the hotel is to the park, the better",
         "so I want to sleep as near the park as possible",
         "so the shortest distance to the park wins", "so being right next to the park matters most",
         "so a hotel close to the entrance is my priority",
         "so I'll pick whichever hotel is nearest the park"),
    ),
    "review_count": (
        ("I only trust places lots of people have tried", "Popular places rarely disappoint me",
         "A handful of reviews tells me nothing", "I like a hotel with a proven track record",
         "I've been burned by hotels with few reviews", "I go where the crowds have been"),
        ("so the most-reviewed hotel is my pick", "so I want the hotel with the most reviews",
         "so a long list of reviews matters most", "so the hotel most guests have reviewed wins",
         "so I'm after the most widely reviewed place", "so the number of reviews decides it"),
    ),
    "star_rating": (
        ("This trip is a treat", "I want to feel pampered after the hikes",
         ("We're celebrating in style", "company"), "I've saved up for something special",
         "I deserve some luxury this time", "Comfort is the whole point"),
        ("so the more stars, the better", "so I want the highest-rated hotel class",
         "so the hotel with the most stars wins", "so star rating matters most to me",
         "so I'm after the fanciest hotel", "so a top-class hotel is my priority"),
    ),
    "airport_drive": (
        ("I hate long drives after a flight", "Jet lag makes me a terrible driver",
         ("The kids get carsick on long drives", "kids"),
         "I'd rather not spend the trip in a rental car",
         "Driving after flying wears me out", "I want to reach the park quickly after landing"),
        ("so the shortest drive from the airport to the park matters most",
         "so I want the airport with the quickest drive to the park",
         "so the airport with the shortest transfer wins", "so a short airport transfer is my priority",
         "so whichever airport is the shortest drive gets my vote",
         "so I want the least driving from the airport"),
    ),
    "flight_duration": (
        ("I get restless on planes", "Long flights wipe me out",
         "I'd rather spend the time in the park than in the air", "Flying makes me anxious",
         "I can't sleep on planes", "Every hour in the air is an hour lost"),
        ("so the shortest total flying time wins", "so I want the quickest flights overall",
         "so the less time in the air, the better", "so short flights are my priority",
         "so I'm after the fastest round trip", "so total flight time decides it for me"),
    ),
}  # fmt: skip
WISH_LEADS = (
    "What would make it for me is {wishes}.", "I'd be thrilled with {wishes}.",
    "My wish list starts with {wishes}.", "Ideally I'd have {wishes}, and more extras are better.",
    "The more extras the better, especially {wishes}.", "Above all I'm hoping for {wishes}.",
)  # fmt: skip


def _choice(rng: np.random.Generator, options):
    return options[int(rng.integers(len(options)))]


def _fitting(options, party: frozenset[str]) -> list[str]:
    """The options (plain text, or ``(text, presumes)``) whose presumption the party meets."""
    out = []
    for option in options:
        text, presumes = option if isinstance(option, tuple) else (option, None)
        if (
            presumes is None
            or presumes in party
            or (presumes == "group" and party & {"friends", "family"})
        ):
            out.append(text)
    return out


def preference_sentence(
    rng: np.random.Generator, objective, party: frozenset[str] = frozenset()
) -> str:
    """The story's sentence about what makes one option better, in the objective's terms
    (never presuming more of the ``party`` than it includes)."""
    if objective.type == "single_metric":
        reasons, wants = PREFERENCES[objective.metric]
        return f"{_choice(rng, _fitting(reasons, party))}, {_choice(rng, wants)}."
    favourites = [FEATURES[n][2] for n in objective.features]
    order = rng.permutation(len(favourites))[:2]
    picked = [favourites[i] for i in sorted(order.tolist())]
    wishes = " and ".join(picked)
    return _choice(rng, WISH_LEADS).format(wishes=wishes)


def write_story(rng: np.random.Generator, park_names: list[str], travellers: int, objective) -> str:
    """A two-sentence first-person story consistent with the party, the park(s) and the
    objective: its words name exactly the travellers, and no sentence presumes a companion
    (a partner, children, a group) the party does not include."""
    park = " or ".join(park_names)
    party, includes = _choice(rng, PARTIES[min(travellers, 6)])
    tags = includes | ({"company"} if travellers > 1 else set())
    motive = _choice(rng, _fitting(MOTIVES, tags))
    opening = _choice(rng, _fitting(OPENINGS, tags)).format(park=park, party=party, motive=motive)
    return f"{opening} {preference_sentence(rng, objective, tags)}"
