"""The preference vocabularies of Behavior2Trip (paper Table 9): one definition shared by the POI
database generator, the tools, the profile and trajectory generators and the checks."""

from __future__ import annotations

CITIES: tuple[str, ...] = (
    "Beijing", "Shanghai", "Guangzhou", "Shenzhen", "Chengdu", "Chongqing", "Hangzhou", "Xi'an",
    "Nanjing", "Suzhou", "Wuhan", "Changsha", "Xiamen", "Qingdao", "Kunming", "Guilin", "Sanya",
    "Lijiang", "Harbin", "Tianjin", "Dalian", "Zhangjiajie", "Huangshan", "Lhasa",
)  # fmt: skip

STAR_LEVELS = (
    "2-Star & Below/Economy",
    "3-Star/Comfort",
    "4-Star/Upscale",
    "5-Star/Luxury",
    "City Homestay",
)
FACILITIES = ("Free WiFi", "Private Bathroom", "Parking", "Gym", "Swimming Pool", "Restaurant")
ATTRACTION_TYPES = (
    "Park/Square", "Museum/Exhibition", "Cultural/Historic Site", "Cityscape", "Natural Landscape",
    "Comprehensive Scenic Area", "Religious Site", "Theme Park", "Outdoor Adventure",
    "Water Activities", "Hot Spring/Wellness", "Rural/Folk Village", "Animal Watching",
    "Ice/Snow Sports", "Water Conservancy Facility",
)  # fmt: skip
WALKING_TOLERANCE = ("Low (1-3km)", "Medium (3-5km)", "High (5km+)")
CUISINES = (
    "Beverages", "Snacks/Fast Food", "Other Cuisines", "Hot Pot", "Western Food", "Cantonese",
    "Other Chinese Food", "Shanghai/Zhejiang Cuisine", "Sichuan Cuisine", "Bakery/Desserts",
    "Barbecue", "Buffet", "Northern Chinese Food", "Hunan Cuisine", "Seafood",
    "Japanese/Korean Cuisine", "Southeast Asian Cuisine",
)  # fmt: skip
PRICE_LEVELS = (
    "Budget (30-80 CNY/person)", "Moderate (80-150 CNY/person)", "Generous (150-300 CNY/person)",
    "Luxury (300-500 CNY/person)",
)  # fmt: skip
# price level -> (min, max) CNY per person: the numeric range a restaurant's average price falls in
PRICE_RANGES = {PRICE_LEVELS[0]: (30, 80), PRICE_LEVELS[1]: (80, 150), PRICE_LEVELS[2]: (150, 300),
                PRICE_LEVELS[3]: (300, 500)}  # fmt: skip
DINING_ENVIRONMENTS = ("Quiet", "Scenic View", "Family-friendly", "Lively", "Unique Decor")
INTERCITY_TRANSPORT = ("High-speed Rail", "Regular Train", "Airplane", "Long-distance Bus")
INTRACITY_TRANSPORT = ("Subway", "Bus", "Taxi", "Ride-sharing", "Walking")
SEAT_CLASSES = ("Economy Class", "Business Class", "First Class Seat", "Second Class Seat")
FLIGHT_SEAT_CLASSES = ("Economy Class", "Business Class")
TRAIN_SEAT_CLASSES = ("Second Class Seat", "First Class Seat")
# the seats trains really sell -> the Table 9 seat class they count as. High-speed trains (G/D/C)
# sell second and first class seats; regular trains (K/T/Z) hard seats and hard sleepers (the
# standard classes: "Second Class Seat") and soft sleepers (the premium class: "First Class Seat").
HIGH_SPEED_SEAT_TYPES = ("Second Class Seat", "First Class Seat")
REGULAR_SEAT_TYPES = ("Hard Seat", "Hard Sleeper", "Soft Sleeper")
TRAIN_SEAT_TYPES = {"Second Class Seat": "Second Class Seat", "First Class Seat": "First Class Seat",
                    "Hard Seat": "Second Class Seat", "Hard Sleeper": "Second Class Seat",
                    "Soft Sleeper": "First Class Seat"}  # fmt: skip
ENTERTAINMENT_TYPES = (
    "KTV", "Bar/Pub", "Theatre/Show", "Escape Room", "Spa/Massage", "Cinema", "Night Market",
    "Live Music", "Board Game Cafe", "Acrobatics",
)  # fmt: skip
WEATHER_KINDS = (
    "Sunny",
    "Cloudy",
    "Overcast",
    "Light Rain",
    "Moderate Rain",
    "Thunderstorm",
    "Snow",
    "Fog",
)
POI_CATEGORIES = ("hotel", "restaurant", "attraction", "entertainment")

# the 5 preference dimensions and their 14 attributes (Table 9)
PREFERENCE_DIMENSIONS: dict[str, tuple[str, ...]] = {
    "historical_travel_experiences": (
        "accommodations",
        "restaurants",
        "attractions",
        "transportation",
    ),
    "hotel_preferences": ("star_requirement", "essential_facilities"),
    "attraction_preferences": ("preferred_attraction_types", "walking_tolerance"),
    "dining_requirements": ("cuisine_preferences", "price_level", "dining_environment"),
    "transportation_preferences": ("intercity_transport", "intracity_transport", "seat_class"),
}
