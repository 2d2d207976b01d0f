"""Money documents: utility bills, shop receipts, payslips and insurance policies, each with its probes.

Every fact a probe names sits in a sentence that also holds the probe's query words, so the
passage the file search brings back is the one that answers.
"""
from __future__ import annotations

from datetime import date, timedelta

from edge_agent.tune import doc_filler, vocab as V
from edge_agent.tune.common import MONTHS, code, long_date, money, slug
from edge_agent.tune.context import Ctx
from edge_agent.tune.vocab_places import SHOP_TYPES, UTILITY_WORDS


def _month_start(d: date, back: int) -> date:
    index = d.year * 12 + d.month - 1 - back
    return date(index // 12, index % 12 + 1, 1)


def _month_end(first: date) -> date:
    nxt = _month_start(first, -1)
    return nxt - timedelta(days=1)


def bills(ctx: Ctx) -> None:
    """Two recent monthly bills for each of two or three utilities."""
    r, loc = ctx.rng, ctx.loc
    kinds = r.sample(("electricity", "gas", "water", "broadband"), r.choice((2, 3)))
    for kind in kinds:
        supplier = f"{r.choice(V.BRAND_A)} {UTILITY_WORDS[kind]}"
        account = code(r, r.choice(("N9999999", "AA-9999999", "N999 9999 99")))
        help_line = {"us555": "(800) 555-01"}.get(loc.phones, "0808 157 0")
        help_line += f"{r.randrange(100):02d}" if loc.phones == "us555" else f"{r.randrange(1000):03d}"
        ext = r.choice(("txt", "txt", "md"))
        for back in (1, 2):
            first = _month_start(ctx.today, back)
            last = _month_end(first)
            month = MONTHS[first.month - 1]
            issued = last + timedelta(days=r.randint(2, 6))
            total = _bill_lines(ctx, kind, first, last)
            name = f"{slug(supplier)}-{kind if kind not in supplier.lower() else ''}-bill-{first.year}-{first.month:02d}.{ext}".replace("--", "-")
            body = [f"{supplier}", f"{kind.capitalize()} bill — {month} {first.year}", "",
                    f"Account holder: {ctx.user.name}", f"Supply address: {ctx.cast.home}",
                    f"Account number: {account}", f"Bill date: {long_date(issued, loc)}",
                    f"Billing period: {long_date(first, loc)} to {long_date(last, loc)}", ""]
            body += total[0] + ["", f"Total of your {month} {kind} bill: {money(total[1], loc)}", "",
                                f"We will collect {money(total[1], loc)} by direct debit on or after "
                                f"{long_date(issued + timedelta(days=14), loc)}. If you think this bill is wrong, "
                                f"call us on {help_line} or write to help@{slug(supplier)}.example and quote your "
                                f"account number.", "",
                                "Thank you for being a customer. Please keep this bill for your records."]
            ctx.doc("Bills", name, "\n".join(body), issued)
            slots = {"kind": kind, "month": month, "supplier": supplier, "year": str(first.year)}
            if back == 1:
                ctx.probe("doc.bill_total", "find_file", f"{kind} bill {month}", money(total[1], loc),
                          slots=slots, file=name, device=ctx.home_device)
                ctx.probe("doc.bill_account", "find_file", f"{kind} bill account number", account,
                          slots=slots, file=None, device=ctx.home_device)
    ctx.topics += [f"bill:{k}" for k in kinds]


def _bill_lines(ctx: Ctx, kind: str, first: date, last: date) -> tuple[list[str], float]:
    r, loc = ctx.rng, ctx.loc
    days = (last - first).days + 1
    if kind == "broadband":
        price = r.choice((24.99, 27.50, 31.00, 35.99, 42.00))
        extra = r.choice((0.0, 0.0, 4.50, 7.00))
        lines = [f"Fibre {r.choice((150, 300, 500, 900))} package, {days} days: {money(price, loc)}"]
        if extra:
            lines.append(f"Calls bundle: {money(extra, loc)}")
        return lines, round(price + extra, 2)
    unit = {"electricity": "kWh", "gas": "kWh", "water": "cubic metres"}[kind]
    used = r.randint(6, 14) if kind == "water" else r.randint(120, 950)
    rate = r.uniform(1.2, 2.4) if kind == "water" else r.uniform(0.07, 0.29)
    charge = round(used * rate, 2)
    standing = round(days * r.uniform(0.2, 0.6), 2)
    vat = round((charge + standing) * 0.05, 2) if kind != "water" else 0.0
    lines = [f"Your {kind} use: {used} {unit} at {rate * 100:.2f}p each = {money(charge, loc)}",
             f"Standing charge: {days} days = {money(standing, loc)}"]
    if vat:
        lines.append(f"VAT at 5%: {money(vat, loc)}")
    return lines, round(charge + standing + vat, 2)


SHOP_ITEMS = {
    "Hardware": (("picture hooks", 3.49), ("wood filler", 6.99), ("cordless drill", 69.0), ("sandpaper pack", 4.25),
                 ("extension lead", 12.99), ("paint roller set", 9.5)),
    "Bookshop": (("hardback novel", 18.99), ("road atlas", 12.0), ("birthday card", 3.25), ("notebook", 7.5)),
    "Garden Centre": (("compost 40L", 6.0), ("tomato plants", 8.0), ("secateurs", 21.99), ("bird feeder", 14.5)),
    "Electricals": (("kettle", 34.99), ("HDMI cable", 8.99), ("smart plug", 15.0), ("toaster", 42.0)),
    "Deli": (("olive oil", 11.5), ("sourdough loaf", 4.2), ("aged cheddar", 6.8), ("coffee beans", 9.9)),
    "Pharmacy": (("sun cream", 9.0), ("antihistamines", 4.49), ("plasters", 2.99), ("toothpaste", 3.1)),
    "Bike Shop": (("inner tube", 7.99), ("bike lights", 29.99), ("chain oil", 6.5), ("service", 55.0)),
    "Grocers": (("apples", 2.4), ("oat milk", 1.85), ("free-range eggs", 3.2), ("basmati rice", 4.1)),
    "Homeware": (("bath towels", 24.0), ("table lamp", 39.0), ("storage boxes", 15.5), ("doormat", 18.0)),
    "Outdoor Store": (("walking socks", 14.0), ("head torch", 25.0), ("waterproof jacket", 119.0)),
    "Butchers": (("lamb shoulder", 21.5), ("sausages", 5.6), ("chicken thighs", 6.3)),
    "Toy Shop": (("jigsaw", 16.99), ("wooden train set", 34.0), ("colouring pens", 8.5)),
}
"""Shop kind -> (item, price) choices."""


def receipts(ctx: Ctx) -> None:
    """Three or four shop receipts from the last few months."""
    r, loc = ctx.rng, ctx.loc
    kinds = r.sample(tuple(k for k in SHOP_TYPES if k in SHOP_ITEMS), r.choice((3, 4)))
    for kind in kinds:
        stem = r.choice(V.STEMS)
        shop = f"{stem} {kind}"
        day = ctx.past_day(3, 150)
        items = r.sample(SHOP_ITEMS[kind], min(len(SHOP_ITEMS[kind]), r.choice((2, 3))))
        total = round(sum(p for _, p in items), 2)
        name = f"receipt-{slug(shop)}-{day.isoformat()}.txt"
        lines = [shop.upper(), f"{ctx.cast.town}", f"{long_date(day, loc)}  {r.randint(9, 18):02d}:{r.randrange(60):02d}", ""]
        lines += [f"{item:<24}{money(price, loc):>10}" for item, price in items]
        lines += ["", f"TOTAL {money(total, loc)} paid at {shop}",
                  f"Card ending {r.randrange(1000, 9999)}, contactless", "",
                  f"Receipt no. {code(r, 'R9999-999')}. Keep your receipt: returns within 28 days.",
                  f"Thank you for shopping at {shop}!"]
        ctx.doc("Receipts", name, "\n".join(lines), day)
        slots = {"shop": shop, "shop_stem": stem, "month": MONTHS[day.month - 1]}
        ctx.probe("doc.receipt_total", "find_file", f"{stem} {kind.split()[0].lower()} receipt", money(total, loc),
                  slots=slots, file=name, device=ctx.home_device)
        item, price = items[0]
        # The item line carries no query word but the item; the receipt is short enough to be one passage.
        keyword = [w for w in item.split() if w not in ("pack", "set", "plants", "loaf", "40L")][-1]
        ctx.probe("doc.receipt_item", "find_file", f"{stem} receipt {keyword}", money(price, loc),
                  slots={**slots, "item": item}, file=name, device=ctx.home_device)


def payslips(ctx: Ctx) -> None:
    """The last two payslips, on the personal computer."""
    r, loc = ctx.rng, ctx.loc
    user = ctx.user
    gross = r.randrange(2200, 6400) + r.choice((0, 0.5, 0.33, 0.67))
    number = code(r, "E99999")
    word = "pay stub" if loc.american else "payslip"
    for back in (1, 2):
        first = _month_start(ctx.today, back)
        month = MONTHS[first.month - 1]
        pay_day = _month_end(first) - timedelta(days=r.randint(0, 3))
        tax = round(gross * r.uniform(0.12, 0.22), 2)
        second = round(gross * r.uniform(0.04, 0.09), 2)
        pension = round(gross * 0.05, 2)
        net = round(gross - tax - second - pension, 2)
        second_name = {"uk": "National Insurance", "us": "Social Security and Medicare"}.get(loc.country,
                                                                                             "Social insurance")
        name = f"{slug(user.employer)}-{word.replace(' ', '-')}-{first.year}-{first.month:02d}.{r.choice(('txt', 'md'))}"
        text = "\n".join([
            user.employer, f"{word.capitalize()} for {month} {first.year}", "",
            f"Employee: {user.name}", f"Employee number: {number}", f"Job title: {user.job}",
            f"Pay date: {long_date(pay_day, loc)}", "",
            f"Gross pay for {month}: {money(gross, loc)}", f"Income tax: {money(tax, loc)}",
            f"{second_name}: {money(second, loc)}", f"Pension (5%): {money(pension, loc)}", "",
            f"Net pay for {month}: {money(net, loc)}, paid to your account ending {r.randrange(1000, 9999)}.",
            "", "This payslip is confidential. Questions about your pay go to payroll@"
                f"{slug(user.employer)}.example."])
        ctx.doc("Documents", name, text, pay_day, device=ctx.work_device)
        if back == 1:
            ctx.probe("doc.payslip_net", "find_file", f"{word} {month}", money(net, loc),
                      slots={"month": month, "word": word}, file=name, device=ctx.work_device)


def insurance(ctx: Ctx) -> None:
    """A home or contents policy, a car policy when there is a car, sometimes pet cover."""
    r, loc = ctx.rng, ctx.loc
    kinds = ["home"] + (["car"] if ctx.cast.car else []) + (["pet"] if ctx.cast.pets and r.random() < 0.3 else [])
    for kind in kinds:
        insurer = f"{r.choice(V.BRAND_A)} {r.choice(('Insurance', 'Mutual', 'Assurance', 'Cover'))}"
        policy = code(r, r.choice(("AAA-9999-9999", "AA999999A", "N999-AA-99999")))
        start = ctx.past_day(30, 300)
        renew = start.replace(year=start.year + 1) if not (start.month == 2 and start.day == 29) else start + timedelta(365)
        excess = r.choice((100, 150, 250, 350, 500))
        premium = round(r.uniform(120, 900), 2)
        claims = {"us555": f"(800) 555-01{r.randrange(100):02d}"}.get(
            loc.phones, f"0808 157 0{r.randrange(1000):03d}")
        cover = {"home": "Home contents insurance", "car": "Car insurance", "pet": "Pet insurance"}[kind]
        what = {"home": f"the contents of {ctx.cast.home}",
                "car": f"{ctx.cast.car.get('colour', '')} {ctx.cast.car.get('make', '')}, registration {ctx.cast.car.get('reg', '')}",
                "pet": ", ".join(f"{p.name} ({p.breed} {p.species})" for p in ctx.cast.pets)}[kind]
        name = f"{kind}-insurance-{r.choice(('policy', 'schedule', 'certificate'))}-{start.year}.md"
        sections = [
            f"# {insurer}", f"## {cover}: policy schedule", "",
            f"Policyholder: {ctx.user.name}", f"{cover} policy number: {policy}", f"What is insured: {what}",
            f"Cover starts {long_date(start, loc)}. Your {kind} insurance renews on {long_date(renew, loc)}.", "",
            "## Your premium", f"You pay {money(premium, loc)} a year, in twelve monthly instalments.", "",
            "## What is covered",
            _cover_text(kind), ""]
        for heading, body in r.sample(doc_filler.POLICY, r.randint(3, len(doc_filler.POLICY))):
            sections += [f"## {heading}", body, ""]
        sections += [
            "## Excess", f"The excess on your {kind} insurance is {money(excess, loc)} for each claim. "
                         "This is the part of any claim you pay yourself.", "",
            "## Making a claim",
            f"To claim on your {kind} insurance, call our claims line on {claims}, open 24 hours, and quote "
            f"policy number {policy}. Tell us as soon as you can and keep any damaged items.", "",
            "## Cancelling", "You can cancel within 14 days of the start date for a full refund. After that we "
                             "refund the unused part of the premium, less an admin fee of 25.00.", ""]
        ctx.doc("Documents", name, "\n".join(sections), start)
        slots = {"kind": kind, "insurer": insurer, "cover": cover.lower()}
        ctx.probe("doc.policy_number", "find_file", f"{kind} insurance policy number", policy, slots=slots,
                  file=name, device=ctx.home_device)
        ctx.probe("doc.policy_excess", "find_file", f"{kind} insurance excess", money(excess, loc), slots=slots,
                  file=name, device=ctx.home_device)
        ctx.probe("doc.policy_claims", "find_file", f"{kind} insurance claims line", claims, slots=slots,
                  file=name, device=ctx.home_device)
        ctx.topics.append(f"insurance:{kind}")


def _cover_text(kind: str) -> str:
    return {
        "home": "Theft, fire, flood and escape of water, accidental damage to televisions and laptops, and "
                "personal possessions taken out of the home up to 1,500.00 an item. Not covered: wear and tear, "
                "damage caused by animals, and bicycles worth more than 600.00 unless named.",
        "car": "Comprehensive cover: damage to your car, fire and theft, windscreen repair, and third-party "
               "liability. A courtesy car is provided while yours is repaired by an approved garage.",
        "pet": "Vet fees up to 4,000.00 a condition each year, dental treatment after an accident, and "
               "boarding fees if you go into hospital. Not covered: routine vaccinations and neutering.",
    }[kind]
