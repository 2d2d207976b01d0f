"""Filler sections that make manuals, leases and policies long, so the answer sits deep inside.

None of them uses a word a probe's query relies on for its own section (no "rent", "deposit" or "notice" in
lease filler; no "excess", "claim", "home", "car" or "pet" in policy filler; no error codes in manual filler).
"""
from __future__ import annotations

MANUAL = (
    ("Before first use", "Remove all packaging, including the transit bolts or foam blocks. Keep them in case the "
                         "appliance ever has to be moved. Wipe the inside with a damp cloth and run one empty cycle "
                         "on the hottest setting to clear any residue left from manufacturing and testing."),
    ("Control panel", "The panel has a programme dial, a start and pause button, a delay timer and three option "
                      "buttons. Press and hold the two outer option buttons together for three seconds to lock the "
                      "panel; a padlock symbol lights up. Hold them again to unlock. The display dims after two "
                      "minutes without use to save energy."),
    ("Delay start", "You can delay the start by up to 24 hours. Turn the dial to the programme you want, press the "
                    "delay button until the display shows the number of hours, then press start. The countdown "
                    "appears on the display and the appliance starts by itself when it reaches zero."),
    ("Saving energy", "Full loads use water and electricity most efficiently. Lower temperatures are fine for "
                      "everyday items. The eco setting lowers the temperature and lengthens the cycle, which uses "
                      "less energy overall even though it takes longer."),
    ("Noise", "A humming or clicking sound while the appliance fills or drains is normal. A loud banging noise "
              "usually means the appliance is not level: adjust the feet with a spanner until it stands firmly "
              "and does not rock when you press on the corners."),
    ("Maintenance schedule", "Weekly: wipe the door and seals. Monthly: clean the filters and check the hoses for "
                             "cracks. Every six months: descale if you live in a hard water area. Every year: have "
                             "the appliance checked by a qualified engineer if you use it every day."),
    ("Technical data", "Supply voltage 220-240 V, 50 Hz. Rated power 2,100 W. Water pressure 0.05-1 MPa. Height 85 cm, "
                       "width 60 cm, depth 58 cm. Weight 68 kg unpacked. Noise level 47 dB in normal use."),
    ("Accessories", "Replacement filters, hoses and cleaning tablets are sold by authorised dealers. Using parts "
                    "that are not approved by the manufacturer may damage the appliance and is not covered."),
    ("Child safety", "Packaging materials can be dangerous for children. Keep detergents out of reach. When the "
                     "appliance is not in use, leave the door slightly open so that a child cannot be trapped inside."),
    ("Moving the appliance", "Disconnect the power and water first. Drain any water left inside. Refit the transit "
                             "bolts before moving it any distance, and keep it upright at all times."),
)
"""(heading, text) sections of an appliance manual."""

LEASE = (
    ("Inventory", "An inventory and schedule of condition is attached. The tenant should check it within seven days "
                  "of moving in and report anything that is wrong or missing, in writing."),
    ("Decoration", "The tenant must not repaint, wallpaper or make holes in the walls without written permission. "
                   "Small picture hooks are allowed as long as any marks are made good at the end."),
    ("Garden and outside areas", "The tenant keeps any garden tidy, cuts the grass in season and does not remove "
                                 "plants or trees. Shared paths and bin stores must be kept clear."),
    ("Belongings", "The landlord looks after the building itself. The tenant is responsible for protecting their "
                   "own belongings, which the landlord's arrangements do not include."),
    ("Meter readings", "Both parties record the meter readings on the day the tenancy starts and on the day it ends, "
                       "and the tenant tells the suppliers."),
    ("Subletting", "The tenant must not sublet the property, take in lodgers or list it on short-stay websites."),
    ("Nuisance", "The tenant must not cause a nuisance or annoyance to neighbours, including loud music late at "
                 "night, and must not use the property for any business open to the public."),
    ("Condensation", "The tenant should heat and ventilate the property properly, open windows after showers and "
                     "cooking, and wipe away condensation, to keep mould from building up."),
    ("Data", "The landlord keeps the tenant's contact details only to manage this tenancy and shares them only with "
             "contractors who need them to carry out repairs."),
)
"""(heading, text) extra clauses of a tenancy agreement."""

POLICY = (
    ("Definitions", "You and your means the policyholder named in the schedule. We, us and our means the insurer. "
                    "The address means the private dwelling shown in the schedule, with its garage and outbuildings. "
                    "Valuables means jewellery, watches, furs and items of gold or silver."),
    ("General conditions", "You must take reasonable care to protect your property and prevent loss or damage. "
                           "Tell us about any change in your circumstances, such as moving address, having building "
                           "work done or leaving the property empty for more than 30 days in a row."),
    ("Fraud", "If any request for payment is false or exaggerated, we will not pay it and may cancel the cover "
              "from the date of the fraudulent act and keep any premium paid."),
    ("Your cover abroad", "Personal possessions are covered anywhere in the world for up to 60 days in any one "
                          "period of insurance, provided they are with you or locked away securely."),
    ("Complaints", "If you are unhappy with our service, contact our customer relations team first. If we cannot "
                   "put things right, you can ask the independent ombudsman to review your complaint free of charge."),
    ("Data protection", "We use your information to manage your cover, prevent fraud and meet our legal duties. "
                        "We may share it with other insurers and fraud prevention agencies."),
)
"""(heading, text) sections of an insurance policy's wording."""
