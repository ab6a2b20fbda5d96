"""Recipes world data (a seeded cookbook, read-only) and the runtime overlay that edits it.

Titles and ingredient lists are curated; servings, prep times and favourites vary with the
world seed. Runtime data is an overlay (`put` edited/created recipes by id, `deleted` ids).
"""

from __future__ import annotations

import random
from typing import Any

from phonesim import records

CATEGORIES = ("Breakfast", "Main", "Salad", "Soup", "Dessert")
BOOK = {  # category -> title -> ingredients
    "Breakfast": {
        "Fluffy Pancakes": "flour, eggs, milk, baking powder, butter, maple syrup",
        "Shakshuka": "eggs, canned tomatoes, red pepper, onion, cumin, feta",
        "Overnight Oats": "rolled oats, almond milk, chia seeds, honey, blueberries",
        "Banana Bread": "ripe bananas, flour, brown sugar, eggs, walnuts, butter",
        "Veggie Omelette": "eggs, spinach, mushrooms, cheddar, chives",
        "French Toast": "brioche, eggs, milk, cinnamon, vanilla extract",
    },
    "Main": {
        "Chicken Curry": "chicken thighs, coconut milk, curry paste, onion, ginger, basmati rice",
        "Spaghetti Bolognese": "spaghetti, minced beef, canned tomatoes, carrot, celery, parmesan",
        "Beef Tacos": "tortillas, minced beef, lettuce, salsa, sour cream, lime",
        "Mushroom Risotto": "arborio rice, mushrooms, vegetable stock, white wine, parmesan, shallot",
        "Salmon Teriyaki": "salmon fillets, soy sauce, mirin, honey, sesame seeds, jasmine rice",
        "Vegetable Stir-Fry": "broccoli, bell pepper, snap peas, soy sauce, ginger, egg noodles",
        "Lentil Dahl": "red lentils, turmeric, garlic, coconut milk, cumin, coriander",
        "Margherita Pizza": "pizza dough, mozzarella, tomato passata, basil, olive oil",
        "Chili con Carne": "minced beef, kidney beans, chili powder, onion, canned tomatoes",
        "Pad Thai": "rice noodles, shrimp, peanuts, tamarind paste, bean sprouts, lime",
    },
    "Salad": {
        "Greek Salad": "cucumber, tomatoes, feta, kalamata olives, red onion, oregano",
        "Caesar Salad": "romaine lettuce, croutons, parmesan, anchovies, lemon",
        "Quinoa Salad": "quinoa, chickpeas, cucumber, parsley, lemon, pomegranate",
        "Caprese Salad": "mozzarella, tomatoes, basil, balsamic vinegar, olive oil",
    },
    "Soup": {
        "Tomato Soup": "tomatoes, onion, garlic, vegetable stock, cream, basil",
        "Minestrone": "cannellini beans, pasta, zucchini, carrot, celery, vegetable stock",
        "Pumpkin Soup": "pumpkin, onion, nutmeg, vegetable stock, cream",
        "Chicken Noodle Soup": "chicken breast, egg noodles, carrot, celery, chicken stock, thyme",
        "Miso Soup": "miso paste, tofu, wakame, spring onion, dashi",
    },
    "Dessert": {
        "Chocolate Brownies": "dark chocolate, butter, sugar, eggs, flour, cocoa powder",
        "Apple Crumble": "apples, flour, butter, brown sugar, cinnamon, oats",
        "Lemon Cheesecake": "cream cheese, digestive biscuits, lemon, sugar, butter",
        "Tiramisu": "mascarpone, ladyfingers, espresso, cocoa powder, eggs, sugar",
        "Rice Pudding": "short-grain rice, milk, sugar, vanilla extract, nutmeg",
        "Oatmeal Cookies": "rolled oats, flour, butter, brown sugar, raisins, eggs",
    },
}
PREP_MINUTES = (10, 15, 20, 25, 30, 35, 40, 45, 50, 60, 75, 90)


def make_world(seed: int) -> dict[str, Any]:
    rng = random.Random(f"recipes:{seed}")
    entries = [(cat, title, ings) for cat, book in BOOK.items() for title, ings in book.items()]
    rng.shuffle(entries)
    out = {}
    for i, (cat, title, ings) in enumerate(entries):
        ingredients = ings.split(", ")
        prep = rng.choice(PREP_MINUTES)
        out[f"r{i + 1}"] = {
            "id": f"r{i + 1}", "title": title, "category": cat, "servings": rng.randint(1, 8), "prep": prep,
            "ingredients": ingredients, "favorite": rng.random() < 0.25,
            "directions": (f"Prepare the {ingredients[0]} and the {ingredients[1]}. Combine everything with the "
                           f"remaining ingredients and cook for about {prep} minutes. Serve warm."),
        }
    return {"recipes": out}


def initial_data(world: dict[str, Any]) -> dict[str, Any]:
    return records.overlay()


def all_recipes(world: dict[str, Any], data: dict[str, Any]) -> list[dict[str, Any]]:
    """Merged recipes sorted by title."""
    return sorted(records.merged(world["recipes"], data),
                  key=lambda r: (r["title"].casefold(), r["id"]))


def get_recipe(world: dict[str, Any], data: dict[str, Any], rid: str) -> dict[str, Any] | None:
    return records.get(world["recipes"], data, rid)


def view(world: dict[str, Any], data: dict[str, Any]) -> dict[str, Any]:
    """Judge view: `recipes` by id with the overlay applied."""
    return {"recipes": {r["id"]: r for r in all_recipes(world, data)}}
