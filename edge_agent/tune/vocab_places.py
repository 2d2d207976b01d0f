"""Places as data: one locale a region (time zones, towns, streets, money, spelling) and business words."""
from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Locale:
    """How a household in one region writes addresses, money, dates and phone numbers."""

    country: str
    """uk | ie | us | au | nz | de | nl | es."""
    zones: tuple[str, ...]
    """IANA time zones of the region."""
    towns: tuple[str, ...]
    """Towns and cities (none from the evaluation world)."""
    areas: tuple[str, ...]
    """Neighbourhoods, used in addresses."""
    street_types: tuple[str, ...]
    """Road, Street... (or "straat", "straße"...)."""
    currency: str
    """Symbol written before amounts."""
    american: bool = False
    """US spelling and month-first dates."""
    mum: str = "mum"
    """What the user calls their mother."""
    phones: str = "ofcom"
    """Which fiction range phone numbers come from: ofcom | us555."""
    postcode: str = "uk"
    """uk | ie | us | au | nz | de | nl | es."""
    suffix_street: bool = False
    """True where the street type is glued on ("Lindenstraße")."""


LOCALES: tuple[Locale, ...] = (
    Locale("uk", ("Europe/London",),
           ("York", "Norwich", "Exeter", "Cardiff", "Swansea", "Aberdeen", "Dundee", "Inverness", "Carlisle",
            "Durham", "Lancaster", "Preston", "Derby", "Nottingham", "Leicester", "Coventry", "Oxford", "Cambridge",
            "Reading", "Brighton", "Canterbury", "Portsmouth", "Southampton", "Plymouth", "Truro", "Hereford",
            "Worcester", "Lincoln", "Sheffield", "Manchester", "Liverpool", "Newcastle", "Stirling", "Belfast",
            "Harrogate", "Whitby", "Kendal", "Margate", "Ipswich", "Colchester", "Bangor", "Aberystwyth",
            "Wrexham", "Edinburgh", "Glasgow", "Bath", "Salisbury", "Winchester", "Chester"),
           ("Hackney", "Walthamstow", "Peckham", "Jesmond", "Didsbury", "Roath", "Leith", "Heaton", "Sneinton",
            "Kemptown", "Southsea", "Mumbles", "Partick", "Acomb", "Headington", "Chorlton"),
           ("Road", "Street", "Lane", "Avenue", "Close", "Crescent", "Terrace", "Gardens", "Grove", "Place"),
           "£"),
    Locale("ie", ("Europe/Dublin",),
           ("Dublin", "Galway", "Cork", "Limerick", "Kilkenny", "Sligo", "Wexford", "Athlone", "Drogheda",
            "Dundalk", "Ennis", "Tralee", "Westport", "Waterford"),
           ("Rathmines", "Drumcondra", "Phibsborough", "Ranelagh", "Stoneybatter", "Clontarf", "Salthill",
            "Ballintemple"),
           ("Road", "Street", "Avenue", "Terrace", "Park", "Drive"), "€", postcode="ie"),
    Locale("us", ("America/New_York", "America/Chicago", "America/Denver", "America/Los_Angeles"),
           ("Albany", "Providence", "Hartford", "Burlington", "Pittsburgh", "Baltimore", "Richmond", "Raleigh",
            "Savannah", "Brooklyn", "Hoboken", "Ithaca", "Madison", "Milwaukee", "Evanston", "Boulder", "Denver",
            "Oakland", "Pasadena", "Sacramento", "Asheville", "Minneapolis", "Columbus", "Tucson"),
           ("Park Slope", "Astoria", "Fishtown", "Wicker Park", "Capitol Hill", "Old Town", "Midtown",
            "Riverside", "Hyde Park", "Highland Park"),
           ("Street", "Avenue", "Boulevard", "Drive", "Court", "Lane", "Way"), "$", american=True, mum="mom",
           phones="us555", postcode="us"),
    Locale("au", ("Australia/Sydney", "Australia/Melbourne", "Australia/Brisbane", "Australia/Perth"),
           ("Wollongong", "Parramatta", "Katoomba", "Geelong", "Ballarat", "Bendigo", "Toowoomba", "Cairns",
            "Fremantle", "Hobart", "Canberra", "Townsville"),
           ("Fitzroy", "Brunswick", "Newtown", "Glebe", "Paddington", "Leederville", "West End", "Marrickville"),
           ("Street", "Road", "Parade", "Avenue", "Crescent", "Place"), "$", postcode="au"),
    Locale("nz", ("Pacific/Auckland",),
           ("Auckland", "Christchurch", "Dunedin", "Napier", "Tauranga", "Rotorua", "Whanganui", "Queenstown"),
           ("Ponsonby", "Grey Lynn", "Mount Eden", "Sydenham", "Aro Valley", "Devonport"),
           ("Street", "Road", "Terrace", "Crescent", "Place"), "$", postcode="nz"),
    Locale("de", ("Europe/Berlin",),
           ("Berlin", "Hamburg", "Leipzig", "Dresden", "Freiburg", "Heidelberg", "Bremen", "Hannover", "Potsdam"),
           ("Kreuzberg", "Neukölln", "Friedrichshain", "Ottensen", "Plagwitz", "Neustadt", "Wiehre"),
           ("straße", "weg", "allee", "gasse"), "€", postcode="de", suffix_street=True),
    Locale("nl", ("Europe/Amsterdam",),
           ("Amsterdam", "Utrecht", "Haarlem", "Leiden", "Delft", "Groningen", "Nijmegen", "Eindhoven"),
           ("De Pijp", "Jordaan", "Oost", "Lombok", "Wittevrouwen"),
           ("straat", "laan", "gracht", "weg"), "€", postcode="nl", suffix_street=True),
    Locale("es", ("Europe/Madrid",),
           ("Madrid", "Valencia", "Bilbao", "Granada", "Zaragoza", "Malaga", "Salamanca", "Cadiz"),
           ("Lavapiés", "Malasaña", "Ruzafa", "Gràcia", "Triana"),
           ("Calle", "Avenida", "Plaza", "Paseo"), "€", postcode="es"),
)
"""Every region a household may be in."""

REGION_WEIGHTS = {"uk": 5, "ie": 2, "us": 3, "au": 2, "nz": 1, "de": 1, "nl": 1, "es": 1}
"""How often each region is picked."""

TRIP_PLACES = ("Porto", "Kraków", "Ljubljana", "Valletta", "Copenhagen", "Bruges", "Tallinn", "Split",
               "Reykjavik", "Naples", "Marrakech", "Vienna", "Budapest", "Seoul", "Kyoto", "Montreal",
               "Vancouver", "Hanoi", "Cape Town", "Oaxaca", "Tbilisi", "Gdańsk", "Palermo", "Bordeaux")
"""Places the household travels to."""

HILLS = ("Helvellyn", "Pen y Fan", "Ben Lomond", "Snowdon", "Scafell Pike", "Croagh Patrick", "Mount Keira",
         "Roys Peak", "Table Mountain", "Mam Tor", "Cat Bells", "Arthur's Seat")
"""Hills a post or journal mentions climbing."""

BUSINESS_TYPES = {
    "dentist": ("Dental Practice", "Dental Care", "Family Dentistry", "Smile Studio"),
    "doctor": ("Medical Centre", "Health Centre", "Family Practice", "Surgery"),
    "vet": ("Veterinary Clinic", "Vets", "Animal Hospital", "Pet Surgery"),
    "plumber": ("Plumbing & Heating", "Plumbing Services", "Heating Services"),
    "electrician": ("Electrical", "Electrics Ltd", "Wiring Services"),
    "mechanic": ("Garage", "Motor Repairs", "Auto Care"),
    "hairdresser": ("Hair Studio", "Barbers", "Salon"),
    "landlord": ("Lettings", "Property Management", "Homes"),
}
"""Professional role -> business name endings (after a STEMS word)."""

EMPLOYER_TYPES = ("Analytics", "Logistics", "Health", "Labs", "Consulting", "Software", "Foods",
                  "Engineering", "Architects", "Media", "Insurance", "Robotics", "Publishing", "Energy",
                  "Design", "Biotech", "Housing", "Learning", "Travel", "Systems")
"""Company name endings."""

SHOP_TYPES = ("Hardware", "Bookshop", "Garden Centre", "Electricals", "Deli", "Pharmacy", "Bike Shop",
              "Grocers", "Homeware", "Outdoor Store", "Butchers", "Toy Shop")
"""Shop name endings."""

RESTAURANT_WORDS = ("Trattoria", "Bistro", "Kitchen", "Canteen", "Brasserie", "Taqueria", "Dining Room",
                    "Noodle Bar", "Grill", "Tapas Bar")
"""Restaurant name endings."""

UTILITY_WORDS = {"electricity": "Energy", "water": "Water", "broadband": "Broadband", "gas": "Gas"}
"""Bill kind -> supplier name ending."""

COURIERS = ("Parcelwise", "QuickDrop", "Swiftpost", "Dispatchly", "Boxline", "Parcelhop")
"""Invented delivery firms (scam messages and real ones)."""
