"""Question and instruction templates about money and work files, as data: intent -> (questions, instructions).

Slots are the probe's own (documents.py, documents_long.py, stories.py): {kind} {month} {supplier},
{shop} {item}, {word}, {appliance} {code}, {dish}, {dept}, {place}, {pet}, {topic}, {fault}, {scene}...
"""
from __future__ import annotations

MONEY_DOCS = {
    "doc.bill_total": ((
        "what did the {kind} bill for {month} come to in the end",
        "pull up the {month} {kind} bill, I want to check we can cover it",
        "can you find the {kind} bill from {month}? what do we owe them",
        "{month} {kind} bill - what's the damage this time",
        "what total did {supplier} charge us for {month}",
        "how much are we paying for {kind} in {month}, it felt high",
        "open the {kind} bill for {month} and tell me the amount due",
        "checking the budget: what was the {month} {kind} bill",
        "was the {kind} bill for {month} expensive? give me the figure",
    ), (
        "the {kind} bill for {month}, for the total",
        "the user's {month} {kind} bill and its amount",
        "{kind} bill, {month}: total due",
        "find the {kind} bill for {month} {year}",
        "the {supplier} bill for {month}: how much",
    )),
    "doc.bill_account": ((
        "the {kind} company wants my account number on the phone, what is it",
        "need the {kind} account number for a switching form",
        "dig out the account number from one of the {kind} bills please",
        "can you find my {kind} account number, it's printed on the bills",
        "which account number do we have with {supplier}",
        "I'm on hold with the {kind} supplier, what's our account number",
        "what account number is on our {kind} bills, for the meter reading",
        "quick, the {kind} account number? they're asking for it now",
    ), (
        "a {kind} bill, for the account number",
        "the account number on the user's {kind} bill",
        "{kind} bill account number",
        "the {supplier} account number from a bill",
    )),
    "doc.receipt_total": ((
        "how much did I end up spending at {shop} that time",
        "find my receipt from {shop}, how much did it come to",
        "{shop} receipt - what was the grand total",
        "I bought a few bits at {shop}, what did it all cost",
        "how much was that trip to {shop}? doing my budget",
        "can you check the {shop} receipt and give me the total",
        "what did the {shop} shopping cost me altogether",
        "dig out the {shop} receipt, I need the total for expenses",
    ), (
        "the receipt from {shop}, for the total",
        "the user's {shop} receipt and what it came to",
        "{shop} receipt total",
        "find the {shop} receipt",
    )),
    "doc.receipt_item": ((
        "how much was the {item} I bought from {shop}",
        "what did I pay for the {item} at {shop}? want to compare prices",
        "check the {shop} receipt, what did the {item} cost",
        "price of the {item} I picked up at {shop}?",
        "I want to return the {item} to {shop}, how much did it cost",
        "on the {shop} receipt, how much was the {item}",
        "how much did {shop} charge me for the {item}",
        "find the {shop} receipt - the {item}, what was its price",
    ), (
        "the {shop} receipt, for the price of the {item}",
        "what the {item} cost at {shop}",
        "the {item} on the {shop} receipt",
        "the receipt from {shop}: {item} price",
    )),
    "doc.payslip_net": ((
        "how much was my take-home pay in {month}, after everything",
        "what did I actually get paid for {month} once tax came off",
        "find my {word} for {month}, what's the net figure",
        "{month} {word} - how much landed in the bank",
        "how much hit my account for {month}, after deductions",
        "what figure is on the {month} {word} after deductions? doing the budget",
        "check my {month} {word} for the take-home amount",
        "remind me what I took home in {month}, it's on the {word}",
    ), (
        "the user's {word} for {month}, for the net pay",
        "{month} {word}: net pay",
        "the {word} from {month} and what was paid after tax",
        "find the {month} {word}",
    )),
    "doc.policy_number": ((
        "the {kind} insurance people want my policy reference on the phone",
        "can you find the {kind} cover documents? I need the policy reference",
        "look up the reference on our {kind} cover with {insurer}",
        "I'm filling in a claim form, which reference is our {kind} policy",
        "{insurer} sent a letter about the {kind} cover, which reference is ours",
        "dig out the {kind} insurance schedule and read me the reference on it",
        "where's the {kind} insurance paperwork? need the policy ID",
        "{insurer} wants our {kind} policy details, what's the reference",
    ), (
        "the user's {kind} insurance policy, for the policy number",
        "{kind} insurance policy number",
        "the {kind} insurance schedule from {insurer}",
        "find the {kind} insurance documents: policy number",
    )),
    "doc.policy_excess": ((
        "what's the excess on the {kind} insurance if I make a claim",
        "how much would I pay myself if I claimed on the {kind} cover",
        "thinking of claiming on the {kind} insurance, what's the excess",
        "check the {kind} insurance policy for the excess amount",
        "how big is the excess on our {kind} cover with {insurer}",
        "what excess did we agree on the {kind} insurance",
        "find the {kind} insurance and tell me the excess per claim",
        "before I claim on the {kind} policy, how much is the excess",
    ), (
        "the {kind} insurance policy, for the excess",
        "the excess on the user's {kind} insurance",
        "{kind} insurance: excess per claim",
        "the {insurer} {kind} policy excess",
    )),
    "doc.policy_claims": ((
        "what number do I call to make a claim on the {kind} insurance",
        "something's happened, I need the {kind} insurance claims line",
        "I need to make a {kind} insurance claim, what's their phone number",
        "how do I contact {insurer} about a {kind} claim, any number",
        "find the claims number on the {kind} insurance documents",
        "who do I ring to claim on the {kind} cover, the number please",
        "what's the claims phone line for our {kind} policy",
        "check the {kind} insurance paperwork for the claims helpline",
    ), (
        "the {kind} insurance policy, for the claims phone number",
        "the claims line on the user's {kind} insurance",
        "how to claim on the {kind} insurance",
        "{kind} insurance claims number",
    )),
    "doc.cv_email": ((
        "the {word} I send out - which inbox does it point people to",
        "check my {word} before I send it - what email is on there",
        "is the right email on my {word}? which one did I use",
        "what contact email is on the {word} I keep on file",
        "look at my {word} and tell me the email address on it",
        "my {word} - what email address does it give recruiters",
        "sending my {word} off today, which email is on the top",
        "which of my emails ended up on the {word}",
    ), (
        "the user's {word}, for the email address on it",
        "the email address on the user's {word}",
        "find the user's {word}",
        "the {word}: contact details",
    )),
    "doc.cv_years": ((
        "what years does my {word} say I was at {employer}",
        "when did I work at {employer}, going by my {word}",
        "check my {word}: what dates did I give for {employer}",
        "how long was I at {employer}? it should be on my {word}",
        "what dates did I put for the {employer} job on the {word}",
        "filling in an application, which years was I with {employer}",
        "look at the {word} for when I started and left {employer}",
        "remind me of the {employer} dates from my {word}",
    ), (
        "the user's {word}, for the years at {employer}",
        "the {employer} job on the user's {word}",
        "when the user worked at {employer}, from the {word}",
        "the {word}: dates of the {employer} role",
    )),
    "doc.lease_notice": ((
        "how much notice do I have to give if we leave the flat",
        "if we want to move out, what notice does our lease ask for",
        "check the tenancy agreement: how much warning do I give before moving",
        "thinking of leaving the rental, how long is my notice",
        "how long's my notice if I end the tenancy, per the agreement",
        "can you look in the lease for how much notice I need to give",
        "we might move next year, what notice period applies to me as tenant",
        "the tenancy agreement - how much notice for the tenant",
    ), (
        "the lease, for the notice the tenant must give",
        "the tenancy agreement: notice period",
        "the user's lease, ending the tenancy",
        "find the lease and the notice period clause",
    )),
    "doc.lease_deposit": ((
        "what deposit did we hand over for this place",
        "check the lease for the deposit amount we paid",
        "how much deposit should we get back when we move out",
        "what's the deposit written in the tenancy agreement",
        "remind me of the deposit we paid {landlord}",
        "dig out the lease, how much was the security deposit",
        "moving out soon, what deposit is held for the flat",
        "what figure does the tenancy agreement give for the deposit",
    ), (
        "the lease, for the deposit amount",
        "the deposit in the user's tenancy agreement",
        "the tenancy agreement: deposit clause",
        "find the lease and the deposit",
    )),
    "doc.lease_rent": ((
        "what monthly figure does the lease give for rent",
        "what rent does our tenancy agreement set",
        "check the lease for the monthly rent figure",
        "what are we meant to pay {landlord} every month",
        "remind me what the agreed rent is on the flat",
        "doing a budget, what's the monthly rent in the lease",
        "look in the tenancy agreement: what's the rent per month",
        "how much is our rent officially, per the agreement",
    ), (
        "the lease, for the monthly rent",
        "the rent in the user's tenancy agreement",
        "the tenancy agreement: rent clause",
        "find the lease and the rent",
    )),
    "doc.meeting_due": ((
        "when did {colleague} say the {topic} figures would be ready",
        "check the {topic} meeting notes, when's {colleague}'s action due",
        "what date is {colleague} sending the {topic} figures by",
        "in the {topic} meeting notes, when is the deadline for the figures",
        "when are the revised {topic} figures due from {colleague}",
        "{topic} meeting actions - what's {colleague}'s date",
        "by when is {colleague} meant to send the {topic} numbers",
        "find the notes from the {topic} meeting, when are the figures due",
    ), (
        "the {topic} meeting notes, for {colleague}'s action and its date",
        "when the revised {topic} figures are due",
        "the notes of the {topic} meeting: actions",
        "find the {topic} meeting notes",
    )),
}
"""Facts inside money and work files."""

DEVICE_ASKS = ("search the {device} for this: ", "on the {device}, ", "look on my {device} - ", "can you search the {device}? ",
               "only check the {device}: ", "search just the {device} - ")
"""Openers that explicitly ask to search one device (the call lists it)."""
DEVICE_PASSING = ("I'm on the {device} now, ", "typing this on the {device}: ", "sat at the {device} - ",
                  "the {device} is being slow today but anyway, ", "while I'm at the {device}: ")
"""Openers that mention a device in passing (the call still searches everywhere)."""
DEVICE_INSTRUCTIONS = (" (search the {device} only)", ", on the {device}", " - the user asked to search the {device}")
"""Tails added to L2's instruction when the user asked for one device."""


def _all_docs() -> dict:
    from edge_agent.tune.templates_home import HOME_DOCS

    return {**MONEY_DOCS, **HOME_DOCS}


DOCS = _all_docs()
"""Every file intent."""
