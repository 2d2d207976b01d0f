"""The memory log: a year of everyday chat, journal, posts, messages and calls, with planted recall probes."""
from __future__ import annotations

from datetime import timedelta

from edge_agent.tune import vocab as V
from edge_agent.tune.common import MONTHS, WEEKDAYS, long_date, money
from edge_agent.tune.context import Ctx
from edge_agent.tune.vocab_places import HILLS, RESTAURANT_WORDS, TRIP_PLACES

FAULTS = ("dripping kitchen tap", "leaking shower valve", "noisy radiator", "blocked sink", "running toilet cistern")
LENT = ("tent", "drill", "ladder", "projector", "camping stove", "sewing machine", "pressure washer", "e-reader")


def _season(month: int, south: bool) -> str:
    seasons = ("winter", "winter", "spring", "spring", "spring", "summer", "summer", "summer", "autumn", "autumn",
               "autumn", "winter")
    s = seasons[month - 1]
    return {"winter": "summer", "summer": "winter", "spring": "autumn", "autumn": "spring"}[s] if south else s


WEATHER = {"winter": ("Frost on the car this morning.", "Sleet all afternoon; stayed in.", "Dark by half four. Soup night.",
                      "Icy pavements, walked very slowly to the shop."),
           "spring": ("First properly warm day, sat outside with a coffee.", "Showers on and off all day.",
                      "Blossom everywhere on the walk in.", "Windy enough to knock the bins over."),
           "summer": ("Far too hot to sleep.", "Ate dinner outside, light until late.", "Thunderstorm cleared the air.",
                      "Sun cream, hat, water: the full routine today."),
           "autumn": ("Leaves all over the path; raked them up.", "Foggy start, bright afternoon.",
                      "Heating on for the first time this year.", "Rain, rain, rain. Wet socks twice.")}
JOURNAL = ("Long day at work; {food} for dinner and an early night.", "Batch-cooked {food} for the week.",
           "Cleared out the cupboard under the stairs. Found three phone chargers.", "Watched two episodes of {film} with tea.",
           "Slept badly. Too much coffee after lunch.", "Walked into {town} for bread and a browse.",
           "Tidied the desk and paid the bills that were waiting.", "Read for an hour in the bath. Bliss.",
           "Cycled to work; legs complaining by Thursday.", "Made a list of things to fix around the house.")
POSTS = ("Best {food} in {town} is at the place by the station. Don't @ me.", "Sunset over {town} tonight was unreal.",
         "Finished {film}. No spoilers, but wow.", "Anyone know a good cobbler in {town}?",
         "{pet} has claimed the warm spot by the radiator again.", "New plant, new me.")
MESSAGES = ("Running ten minutes late, sorry!", "Can you pick up milk on the way home?", "Call me when you're free x",
            "Did you see the match?", "Thanks for yesterday, it was lovely.", "Happy Friday!",
            "Are we still on for the weekend?", "Sent you that link, have a look when you can.")
CALLS = ("Chatted for ages about nothing much.", "Quick call about the weekend plans.",
         "Caught up on family news; all fine.", "Talked through the week ahead.")
TIPS = (("banana bread", "a spoonful of yoghurt in the batter"), ("chilli", "a square of dark chocolate at the end"),
        ("roast potatoes", "semolina on them before they go in"), ("pancakes", "letting the batter rest for an hour"),
        ("risotto", "a splash of vermouth instead of wine"), ("brownies", "taking them out while still wobbly"),
        ("curry", "toasting the spices in a dry pan first"), ("scones", "grating the butter in frozen"))
MEET_PLACES = ("the station clock", "the café by the park gates", "the big fountain", "the library steps",
               "the bus stop outside the cinema", "the top of the high street", "the market entrance")
FOODS = ("dal", "risotto", "tacos", "pasta bake", "stir-fry", "soup", "curry", "shakshuka", "jacket potatoes")


def filler(ctx: Ctx, n: int) -> None:
    """`n` everyday entries spread over the last year (nothing a probe depends on)."""
    r, u = ctx.rng, ctx.user
    south = ctx.loc.country in ("au", "nz")
    close = [p for p in ctx.cast.people if p.key in ("partner", "mum", "dad", "sibling1", "sibling2", "friend1",
                                                     "friend2", "friend3")]
    pet = ctx.cast.pets[0].name if ctx.cast.pets else "The neighbour's cat"
    film = f"{r.choice(V.FILM_WORDS)} {r.choice(V.FILM_WORDS)}"
    for _ in range(n):
        day = ctx.past_day(1, 365)
        when = ctx.at(day, r.randint(7, 22), r.randrange(60))
        kind = r.choices(("journal", "post", "message", "call", "chat"), (40, 15, 25, 12, 8))[0]
        fill = {"food": r.choice(FOODS), "town": ctx.cast.town, "film": film, "pet": pet}
        if kind == "journal":
            pool = JOURNAL + WEATHER[_season(day.month, south)]
            ctx.remember(when, kind, u.name, r.choice(pool).format(**fill))
        elif kind == "post":
            ctx.remember(when, kind, u.name, r.choice(POSTS).format(**fill))
        elif kind == "message":
            ctx.remember(when, kind, r.choice(close).name, r.choice(MESSAGES))
        elif kind == "call":
            ctx.remember(when, kind, r.choice(close).name, r.choice(CALLS))
        else:
            ctx.remember(when, kind, u.name, r.choice(("Asked for a packing list for a weekend away.",
                                                       "Asked what to cook with leeks and potatoes.",
                                                       "Asked how long to boil an egg for a runny yolk.")))


def planted(ctx: Ctx) -> None:
    """Entries that answer recall questions: recommendations, a quote, a dinner, a run, a loan, a deadline."""
    r, u, loc, cast = ctx.rng, ctx.user, ctx.loc, ctx.cast
    friends = [p for p in cast.people if p.key.startswith("friend")]
    f1, f2 = friends[0], friends[1]
    title = f"The {r.choice(V.BOOK_WORDS_A)} {r.choice(V.BOOK_WORDS_B)}"
    author = f"{r.choice(V.FEMALE_NAMES + V.MALE_NAMES)} {r.choice(V.SURNAMES)}"
    ctx.remember(ctx.at(ctx.past_day(10, 200), 20, 14), "message", f1.name,
                 f"Book recommendation for you: {title} by {author}. Couldn't put it down, you'll love it.")
    ctx.probe("recall.book", "grep_memory", f"{f1.first} book", title, slots={"author": author}, person=f1.key)
    film = f"{r.choice(V.FILM_WORDS)} {r.choice(V.FILM_WORDS)}"
    ctx.remember(ctx.at(ctx.past_day(5, 150), 21, 3), "message", f2.name,
                 f"Film tip: watch {film} this weekend, it's streaming now. Bring tissues.")
    ctx.probe("recall.film", "grep_memory", f"{f2.first} film", film, person=f2.key)
    plumber = cast.get("plumber")
    fault = r.choice(FAULTS)
    quote = r.randrange(80, 420, 5)
    visit = ctx.past_day(15, 120)
    ctx.remember(ctx.at(visit - timedelta(days=r.randint(2, 6)), 17, 40), "call", plumber.name,
                 f"Plumber rang back about the {fault}: quoted {money(quote, loc)} including parts, can come on "
                 f"{WEEKDAYS[visit.weekday()]}.")
    ctx.probe("recall.quote", "grep_memory", "plumber quote", money(quote, loc), slots={"fault": fault},
              person="plumber")
    ctx.trade_job = (fault, quote, visit)
    partner = cast.get("partner")
    honoree = partner or cast.get("mum")
    restaurant = f"{r.choice(V.STEMS)} {r.choice(RESTAURANT_WORDS)}"
    bday = honoree.birthday.replace(year=ctx.today.year)
    if bday >= ctx.today:
        bday = bday.replace(year=ctx.today.year - 1)
    ctx.remember(ctx.at(bday, 22, 10), "journal", u.name,
                 f"Birthday dinner for {honoree.first} at {restaurant}. The lamb was superb, the pudding even better.")
    ctx.probe("recall.dinner", "grep_memory", f"{honoree.first} birthday dinner", restaurant, person=honoree.key)
    secs = r.randrange(22 * 60, 34 * 60)
    pb = f"{secs // 60}:{secs % 60:02d}"
    ctx.remember(ctx.at(ctx.past_day(3, 90), 11, 5), "post", u.name, f"Parkrun this morning in {pb}, a new PB! Legs like jelly.")
    ctx.probe("recall.parkrun", "grep_memory", "parkrun", pb)
    borrower = r.choice(friends + [p for p in cast.people if p.key.startswith("sibling")])
    item = r.choice(LENT)
    ctx.remember(ctx.at(ctx.past_day(10, 150), 19, 30), "journal", u.name,
                 f"Lent {borrower.name} my {item}; {borrower.subj} promised it back within the month.")
    ctx.probe("recall.lent", "grep_memory", f"lent {item}", borrower.first, slots={"item": item}, person=borrower.key)
    colleague = cast.get("colleague")
    topic = r.choice(("budget", "website", "launch", "audit", "rota", "report"))
    due = ctx.future_day(3, 30)
    ctx.remember(ctx.at(ctx.past_day(1, 10), 16, 20), "message", colleague.name,
                 f"Heads up: the {topic} deadline has moved to {long_date(due, loc, weekday=True)}.")
    ctx.probe("recall.deadline", "grep_memory", f"{topic} deadline", long_date(due, loc, weekday=True),
              slots={"topic": topic}, person="colleague")
    mum = cast.get("mum")
    place = r.choice(TRIP_PLACES)
    month = MONTHS[(ctx.today.month - 1 + r.randint(1, 5)) % 12]
    ctx.remember(ctx.at(ctx.past_day(5, 60), 18, 45), "call", mum.name,
                 f"{loc.mum.capitalize()} rang: she has booked a cottage near {place} for all of us in {month}.")
    ctx.probe("recall.cottage", "grep_memory", f"{loc.mum} cottage", place, slots={"month": month}, person="mum")
    hill = r.choice(HILLS)
    ctx.remember(ctx.at(ctx.past_day(20, 300), 16, 0), "post", u.name, f"Climbed {hill} today. Foggy at the top but worth every step.")
    ctx.probe("recall.hill", "grep_memory", "climbed", hill)
    neighbour = cast.get("neighbour")
    if neighbour:
        number = neighbour.address.split()[0]
        ctx.remember(ctx.at(ctx.past_day(1, 30), 13, 12), "message", neighbour.name,
                     f"Hi, it's {neighbour.first} your {neighbour.role}. Your parcel is with me at number {number}.")
        ctx.probe("recall.parcel", "grep_memory", f"parcel {neighbour.role}", f"number {number}", person="neighbour")
    if cast.car:
        mech = cast.get("mechanic")
        cost = r.randrange(90, 480, 10)
        ctx.remember(ctx.at(ctx.past_day(5, 100), 12, 30), "call", mech.name,
                     f"Garage called: the {cast.car['make']} needs new brake pads, about {money(cost, loc)} fitted.")
        ctx.probe("recall.brakes", "grep_memory", "brake pads", money(cost, loc), person="mechanic")
    cook = r.choice(friends + [p for p in cast.people if p.key in ("mum", "dad", "sibling1")])
    dish, tip = r.choice(TIPS)
    ctx.remember(ctx.at(ctx.past_day(7, 200), 19, 50), "message", cook.name,
                 f"You asked about my {dish}: the secret is {tip}. Works every time!")
    ctx.probe("recall.recipe", "grep_memory", f"{cook.first} {dish}", tip, slots={"dish": dish}, person=cook.key)
    mate = friends[-1]
    spot = r.choice(MEET_PLACES)
    hour, minute = r.randint(9, 19), r.choice((0, 15, 30, 45))
    when = f"{hour % 12 or 12}:{minute:02d}" + ("am" if hour < 12 else "pm") if loc.american else f"{hour}:{minute:02d}"
    ctx.remember(ctx.at(ctx.past_day(1, 6), 21, 30), "message", mate.name,
                 f"Sorted for {WEEKDAYS[ctx.future_day(1, 6).weekday()]}? Meet you at {spot} at {when}.")
    ctx.probe("recall.meet", "grep_memory", f"{mate.first} meet", when, slots={"spot": spot}, person=mate.key)
