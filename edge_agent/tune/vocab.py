"""Word lists for synthetic households, as data: first names, surnames, pets, likes and titles.

Names come from many origins on purpose. None is taken from the evaluation world; a test checks
that no name of it appears in generated data.
"""
from __future__ import annotations


def _words(text: str) -> tuple[str, ...]:
    return tuple(text.split())


FEMALE_NAMES = _words("""
Aaliyah Abena Adaeze Agnieszka Aiko Aisling Alejandra Alina Amaya Anahita Anastasia Anjali Annika Aoife
Ayesha Beatriz Bethan Bronwen Caoimhe Carmen Catalina Chiara Chidinma Dagny Daria Deepika Delphine
Dilnoza Dominika Ebony Efua Eilidh Elif Elodie Esme Esperanza Farah Fatima Fenna Freya Gabriela Giulia
Grainne Hana Harriet Hiba Ifeoma Ilse Imogen Ilka Ingrid Isla Ivana Jadwiga Jasmin Jia Kalinda Kamila
Katarzyna Keira Kemi Kiri Lakshmi Laila Leilani Lena Liesel Linnea Lorena Lucia Mabel Maeve Magdalena
Mai Malak Mariam Marisol Marta Maryam Meera Mei Mirela Moana Nadia Naledi Nanami Nell Niamh Nkechi
Noor Oksana Olena Paloma Parisa Petra Phoebe Pilar Rania Rekha Rhiannon Rosalind Roxana Saanvi Sadia
Saoirse Selin Seren Shira Sigrid Simone Siobhan Soraya Sunita Svetlana Tallulah Tamsin Tanvi Thandiwe
Tove Uma Undine Valentina Vesna Wanjiru Xiomara Yara Yasmin Yetunde Yuki Zainab Zara Zofia Zuzana
Hollie Kirsty Lorna Morag Fiona Gemma Naomi Poppy Hattie Orla Agathe Bianca Consuelo Dorothea Edith
Flavia Greta Henrike Iolanthe Juliette Kasia Lucinda Marguerite Nerys Odette Philippa Romilly Sunniva
Tatiana Veronika Wilhelmina Yolanda Zsofia Adwoa Akosua Chiamaka Folake Halima Imani Makena Nia Zawadi
Chinatsu Haruka Kaori Misaki Sakura Ji-woo Min-seo Seo-yeon Anh Linh Thuy Pooja Shreya Divya Ishani
""")
"""First names of women and girls."""

MALE_NAMES = _words("""
Abdul Adebayo Aarav Ahmed Aidan Alasdair Aleksander Alessandro Anders Andrzej Anton Arjun Bartek
Bastian Bjorn Bongani Callum Cathal Chidi Ciaran Cosmin Dafydd Dario Declan Dmitri Duc Emeka Emil Enzo
Eoin Esteban Ewan Farid Felipe Finlay Florin Gareth Gustavo Hamish Hamza Haruto Hassan Hemi Hiroshi
Ibrahim Idris Ifan Ignacio Ilyas Imran Ivo Jakub Jasper Javier Jonas Jun Kenji Kofi Kwame Lachlan Lars
Luca Lukas Malik Mateo Mattias Mehmet Mihai Minh Musa Nikhil Nils Nnamdi Oisin Olamide Omar Oskar
Pavel Pedro Piotr Rafael Rahul Rami Ravi Reuben Rhys Rory Rustam Sami Sandeep Santiago Seamus
Sebastian Stellan Sunil Taiwo Tariq Teodor Thabo Tiago Tomasz Tuan Umar Vikram Viktor Wiremu Xavier
Yannick Yusuf Zoltan Barnaby Hugo Alfie Archie Angus Fergus Gethin Dewi Niall Cormac Padraig Darragh
Ambrose Benedikt Cillian Desmond Evander Florian Gideon Horatio Ismael Joaquin Kasimir Lorcan Magnus
Napoleon Octavian Percival Quentin Rodrigo Severin Thaddeus Ulrich Valentin Wendell Yaw Kojo Kwesi
Chukwudi Obinna Tunde Jomo Baraka Takumi Ren Daichi Hyun-woo Jae-won Quang Bao Aditya Karan Rohan
""")
"""First names of men and boys."""

NEUTRAL_NAMES = _words("""
Ari Avery Charlie Eden Jordan Kit Morgan Noa Quinn Remy Robin Sasha Sky Tenzin Yael Ash Frankie Jules
Kai Lou Marlowe Nico Ollie Parker Reese Rio Sage Toni
""")
"""First names used for anyone (people given "they")."""

SURNAMES = _words("""
Abara Achterberg Adeyemi Agarwal Ahn Akhtar Almeida Andersen Antonelli Aoki Appiah Arslan Asante
Bachmann Balogun Banerjee Barros Bautista Bergstrom Bhatt Blackwood Bondarenko Borkowski Brannigan
Caldwell Campbell Carvalho Castellanos Chandra Chaudhry Cheng Chowdhury Ciobanu Coleridge Costa Cronin
Dalgleish Danso Das Delacroix Demir Desai Dimitrov Doherty Donnelly Dube Eriksen Esposito Fairbairn
Farouk Ferreira Fitzgerald Fonseca Fraser Gallagher Garrido Gashi Ghosh Gonzaga Grabowski Greenhalgh
Gunawardena Haddad Halloran Hansen Haque Hartmann Hashemi Hewitt Ibekwe Iqbal Ivanova Jablonski Jansen
Jaramillo Jovanovic Kapoor Karimi Kaur Kavanagh Kiplagat Kowalczyk Krishnan Kuznetsov Lachance
Lindqvist Llewellyn Lombardi Lungu MacAulay Madsen Mahlangu Malhotra Mancini McCreadie Mendoza Mensah
Moreau Mukherjee Murphy Nakamura Nascimento Ndlovu Nguyen Nyambura O'Connell Odhiambo Ogunleye Oliveira
Osei Ozturk Pacheco Papadopoulos Baek Pereira Petrov Pham Quigley Quintero Rahman Rasmussen Reyes
Rosenberg Rossi Sadeghi Salazar Sandoval Santos Sato Schofield Schreiber Sesay Shah Shapiro Sithole
Sokolova Suzuki Szabo Tanaka Tembo Thorsen Toivonen Trinh Ugwu Valdez Varga Vasquez Verhoeven Volkov
Wainwright Watanabe Weiss Whitcombe Wojcik Xu Yamamoto Yilmaz Yoon Zamora Zielinski Zhou Abernethy
Blackburn Cartwright Dunmore Ellery Featherstone Goodwin Hargreaves Inglis Jessop Kettering Lockhart
Merriweather Northcott Pemberton Radcliffe Sutherland Thackeray Underwood Vickers Westbrook Yardley
Achebe Boateng Chikwanha Diallo Eze Fofana Gyamfi Hakimi Ilunga Jalloh Kamara Lumumba Mwangi Nwosu
Obi Pretorius Quaye Ramaphosa Sibanda Traore Umeh Vambe Wekesa Yeboah Zulu Alvarado Benitez Cordero
Duarte Echeverria Figueroa Galindo Herrera Ibarra Jimenez Lozano Medina Navarro Ortega Paredes Quiroga
Rios Serrano Tovar Urrutia Vidal Zapata Aalto Berg Dahl Ek Falk Holm Lund Nyberg Strand Virtanen
""")
"""Surnames."""

PET_NAMES = _words("""
Pickle Mochi Pepper Ziggy Nutmeg Waffles Juno Luna Otis Pippin Miso Tofu Cleo Rolo Bean Clementine
Puffin Olive Chutney Crumpet Fudge Gizmo Hazel Indie Jinx Kiwi Loki Mango Noodle Oreo Peanut Quince
Rascal Sprocket Toffee Velvet Whisky Yoyo Dumpling Sardine Pancake Marmalade Scout Bonnie Boris Dexter
Truffle Sushi Widget Bramble Cinnamon Paprika Pebble Smudge Tinker Hobnob Custard Nacho Bagel Mittens
""")
"""Pet names."""

PET_KINDS = {
    "cat": ("tabby", "Maine Coon", "British Shorthair", "ragdoll", "black-and-white moggy", "Siamese cross",
            "tortoiseshell", "Bengal"),
    "dog": ("border collie", "cockapoo", "Labrador", "whippet", "rescue greyhound", "dachshund",
            "Staffordshire bull terrier", "springer spaniel", "beagle", "Shih Tzu"),
    "rabbit": ("lionhead", "Netherland dwarf", "lop-eared", "Rex"),
}
"""Species -> breeds."""

PET_FOODS = ("salmon kibble", "grain-free chicken pouches", "senior dry food", "sensitive-stomach biscuits",
             "raw turkey mince", "timothy hay and pellets", "lamb and rice kibble", "prescription renal diet")
"""What a pet eats."""

LIKES = ("dark chocolate", "jigsaw puzzles", "sourdough baking", "vinyl records", "orchids", "crime novels",
         "single malt whisky", "Lego sets", "board games", "succulents", "cold-water swimming", "jazz",
         "Japanese whisky", "fountain pens", "trail running", "birdwatching", "ceramics", "gin and tonic",
         "watercolour painting", "science fiction", "salted caramel", "climbing", "podcasts about history",
         "fancy olive oil", "hot sauce", "crossword books", "bonsai", "k-dramas", "pickled vegetables",
         "craft beer", "cashmere socks", "scented candles", "tea from Darjeeling", "rugby", "chess")
"""Things people like (gift ideas)."""

DISLIKES = ("coriander", "mushrooms", "olives", "loud restaurants", "horror films", "early mornings",
            "blue cheese", "fizzy drinks", "raisins", "spicy food", "musicals", "beetroot", "aubergine")
"""Things people dislike."""

ALLERGIES = ("peanuts", "shellfish", "penicillin", "cats", "pollen", "sesame", "latex", "dairy", "wasp stings")
"""Allergies."""

JOBS = ("software developer", "primary school teacher", "accountant", "architect", "pharmacist",
        "electrical engineer", "graphic designer", "civil engineer", "physiotherapist", "librarian",
        "journalist", "chef", "paramedic", "marketing manager", "project manager", "solicitor",
        "veterinary nurse", "lab technician", "bus driver", "UX researcher", "HR adviser", "social worker",
        "midwife", "translator", "carpenter", "sound engineer", "museum curator", "firefighter",
        "estate agent", "personal trainer", "speech therapist", "air traffic controller", "florist",
        "structural engineer", "radiographer", "copywriter", "bookseller", "data scientist", "optometrist")
"""Jobs."""

BOOK_WORDS_A = _words("""Glass Salt Paper Silent Hollow Winter Iron Copper Drowned Lantern-lit Quiet Northern
Borrowed Amber Fallow Crooked Second Lost Burning Velvet""")
BOOK_WORDS_B = _words("""Orchard Cartographer Lighthouse Ferryman Archive Inheritance Tide Garden Atlas
Almanac Sisters Harvest Meridian Weather Causeway Apiary Signal Correspondent""")
"""Invented book titles: "The {A} {B}"."""

FILM_WORDS = _words("""Midnight Static Paper Moons Hinterland Lights Small Hours Lowland Echoes Blue Hour Far
Country Night Train Slow Burn""")
"""Words invented film titles are made from."""

DISHES = (("banana bread", "180°C", "55 minutes"), ("lemon drizzle cake", "170°C", "45 minutes"),
          ("shepherd's pie", "200°C", "30 minutes"), ("vegetable lasagne", "190°C", "40 minutes"),
          ("focaccia", "220°C", "25 minutes"), ("cornbread", "200°C", "22 minutes"),
          ("roast chicken thighs", "210°C", "35 minutes"), ("apple crumble", "180°C", "40 minutes"),
          ("chickpea traybake", "200°C", "35 minutes"), ("flapjacks", "160°C", "28 minutes"),
          ("fish pie", "190°C", "30 minutes"), ("carrot cake", "175°C", "50 minutes"))
"""(dish, oven temperature, baking time) for recipe files."""

CARS = ("Skoda Fabia", "Honda Jazz", "Kia Picanto", "VW Polo", "Ford Fiesta", "Renault Clio", "Mazda 2",
        "Hyundai i20", "Nissan Leaf", "Subaru Outback", "Honda Civic", "Seat Ibiza", "Kia Niro",
        "Volvo V60", "Peugeot 208", "Fiat Panda")
"""Cars."""

COLOURS = ("silver", "dark blue", "white", "red", "grey", "black", "green", "orange")
"""Car colours."""

NICKNAMES = ("Bee", "Jojo", "Dee", "Bear", "Nell", "Mack", "Pip", "Teddy", "Lulu", "Buzz", "Red")
"""Nicknames the user asks to be called."""

STEMS = _words("""
Alder Beech Birchwood Bramblewood Cedar Chestnut Elm Foxglove Hawthorn Heather Holly Juniper Laurel
Linden Maple Mulberry Oakfield Orchard Primrose Sycamore Thistle Willow Yew Albion Beaconsfield Carlton
Clarendon Dunstan Elgin Fairfield Grosvenor Inkerman Jubilee Kingsley Lansdowne Marlborough Osborne
Palmerston Regent Stanley Tennyson Wellington Windsor Mayfield Rosemount Hillcrest Brookside Meadowbank
Ravenscroft Ivydene Thornbury Glenview Westfield Summerhill Greystone Bellevue Cromwell Montague
""")
"""Words street, practice and business names are built from."""

BRAND_A = _words("""Aldergrove Bluefin Brackenridge Cobalt Copperbeech Driftwood Emberline Foxhollow
Glasshouse Halcyon Lumen Meridian Northgate Oakridge Pinecrest Quillon Riverstone Silverbirch
Tidewater Umbra Vantage Westerly Yarrow Zephyr Beacon Cinder Dovetail Evergreen Flint Granite Heron
Ivory Jasper Kelp Lodestar Marigold Nimbus Opal Pebblebrook Quartz Rushmere Saffron Talisman""")
"""First words of invented company and shop names."""
