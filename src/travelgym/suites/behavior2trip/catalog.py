"""Reference facts of the 24 Behavior2Trip cities and the name parts the generator combines.

Names are real (cities, districts, railway stations, airlines, hotel and restaurant brands,
famous attractions); coordinates are never typed here: city centres come from ``pyecharts``'s
bundled city table and airports from ``airportsdata`` (:func:`city_coordinates`,
:func:`airport_records`).
Climate normals (October / November mean highs and lows, rain share) calibrate the weather.
"""

from __future__ import annotations

import csv
import importlib.util
import json
from dataclasses import dataclass
from functools import lru_cache
from importlib import resources
from pathlib import Path

from travelgym.suites.behavior2trip.vocab import CITIES


@dataclass(frozen=True)
class CityInfo:
    name: str  # as in vocab.CITIES
    name_zh: str  # key of the pyecharts coordinate table
    province: str
    area_code: str  # telephone area code
    tier: float  # relative size: POI counts and flight/train frequencies scale with it
    price_index: float  # hotel and restaurant price level relative to the national mean
    airports: tuple[str, ...]  # IATA codes (airportsdata); empty: no commercial airport
    city_code: str | None  # IATA metropolitan code used in flight records
    stations: tuple[str, ...]  # railway stations, the high-speed one first
    districts: tuple[str, ...]
    climate: tuple[float, float, float, float, float]  # Oct max/min, Nov max/min (C), rain share
    famous: tuple[tuple[str, str], ...]  # (attraction name, vocab.ATTRACTION_TYPES value)


def _c(*args) -> CityInfo:
    return CityInfo(*args)


CITY_INFO: dict[str, CityInfo] = {c.name: c for c in (
    _c("Beijing", "北京", "Beijing", "010", 1.6, 1.3, ("PEK", "PKX"), "BJS",
       ("Beijing South", "Beijing West", "Beijing"),
       ("Dongcheng", "Xicheng", "Chaoyang", "Haidian", "Fengtai", "Shijingshan"),
       (19, 7, 10, -1, 0.15),
       (("The Forbidden City", "Cultural/Historic Site"), ("Temple of Heaven", "Cultural/Historic Site"),
        ("Summer Palace", "Comprehensive Scenic Area"), ("Tiananmen Square", "Park/Square"),
        ("National Museum of China", "Museum/Exhibition"), ("Lama Temple", "Religious Site"),
        ("Beijing Zoo", "Animal Watching"), ("Universal Beijing Resort", "Theme Park"))),
    _c("Shanghai", "上海", "Shanghai", "021", 1.6, 1.3, ("SHA", "PVG"), "SHA",
       ("Shanghai Hongqiao", "Shanghai"),
       ("Huangpu", "Xuhui", "Jing'an", "Pudong New Area", "Changning", "Hongkou"),
       (23, 16, 17, 10, 0.3),
       (("The Bund", "Cityscape"), ("Yu Garden", "Cultural/Historic Site"),
        ("Shanghai Museum", "Museum/Exhibition"), ("Oriental Pearl Tower", "Cityscape"),
        ("Shanghai Disneyland", "Theme Park"), ("Jade Buddha Temple", "Religious Site"),
        ("Zhujiajiao Ancient Town", "Rural/Folk Village"),
        ("Shanghai Wild Animal Park", "Animal Watching"))),
    _c("Guangzhou", "广州", "Guangdong", "020", 1.5, 1.1, ("CAN",), "CAN",
       ("Guangzhou South", "Guangzhou"),
       ("Yuexiu", "Tianhe", "Haizhu", "Liwan", "Baiyun", "Panyu"),
       (29, 21, 25, 16, 0.3),
       (("Canton Tower", "Cityscape"), ("Chimelong Safari Park", "Animal Watching"),
        ("Chen Clan Ancestral Hall", "Cultural/Historic Site"),
        ("Baiyun Mountain", "Natural Landscape"), ("Yuexiu Park", "Park/Square"),
        ("Guangdong Museum", "Museum/Exhibition"))),
    _c("Shenzhen", "深圳", "Guangdong", "0755", 1.5, 1.2, ("SZX",), "SZX",
       ("Shenzhen North", "Shenzhen"),
       ("Futian", "Luohu", "Nanshan", "Bao'an", "Longgang", "Yantian"),
       (29, 22, 25, 17, 0.25),
       (("Window of the World", "Theme Park"), ("OCT Happy Valley", "Theme Park"),
        ("Lianhuashan Park", "Park/Square"), ("Dameisha Beach", "Water Activities"),
        ("Shenzhen Museum", "Museum/Exhibition"), ("Wutong Mountain", "Natural Landscape"))),
    _c("Chengdu", "成都", "Sichuan", "028", 1.3, 1.0, ("CTU", "TFU"), "CTU",
       ("Chengdu East", "Chengdu"),
       ("Jinjiang", "Qingyang", "Wuhou", "Jinniu", "Chenghua", "Gaoxin"),
       (21, 15, 16, 10, 0.4),
       (("Chengdu Research Base of Giant Panda Breeding", "Animal Watching"),
        ("Wuhou Shrine", "Cultural/Historic Site"), ("Kuanzhai Alley", "Cultural/Historic Site"),
        ("Wenshu Monastery", "Religious Site"), ("People's Park", "Park/Square"),
        ("Jinsha Site Museum", "Museum/Exhibition"),
        ("Dujiangyan Irrigation System", "Water Conservancy Facility"))),
    _c("Chongqing", "重庆", "Chongqing", "023", 1.3, 0.95, ("CKG",), "CKG",
       ("Chongqing North", "Chongqing West"),
       ("Yuzhong", "Jiangbei", "Nan'an", "Shapingba", "Jiulongpo", "Yubei"),
       (22, 16, 16, 11, 0.4),
       (("Hongyadong", "Cityscape"), ("Ciqikou Ancient Town", "Rural/Folk Village"),
        ("Three Gorges Museum", "Museum/Exhibition"), ("Wulong Karst", "Natural Landscape"),
        ("Yangtze River Cableway", "Cityscape"), ("Chongqing Zoo", "Animal Watching"))),
    _c("Hangzhou", "杭州", "Zhejiang", "0571", 1.3, 1.15, ("HGH",), "HGH",
       ("Hangzhou East", "Hangzhou"),
       ("Shangcheng", "Xihu", "Gongshu", "Binjiang", "Xiaoshan", "Yuhang"),
       (23, 15, 17, 9, 0.3),
       (("West Lake", "Comprehensive Scenic Area"), ("Lingyin Temple", "Religious Site"),
        ("Xixi National Wetland Park", "Natural Landscape"),
        ("China National Tea Museum", "Museum/Exhibition"),
        ("Leifeng Pagoda", "Cultural/Historic Site"), ("Hangzhou Songcheng", "Theme Park"))),
    _c("Xi'an", "西安", "Shaanxi", "029", 1.2, 0.9, ("XIY",), "SIA",
       ("Xi'an North", "Xi'an"),
       ("Beilin", "Lianhu", "Xincheng", "Yanta", "Weiyang", "Baqiao"),
       (20, 9, 11, 2, 0.25),
       (("Terracotta Warriors", "Cultural/Historic Site"), ("Big Wild Goose Pagoda", "Religious Site"),
        ("Xi'an City Wall", "Cultural/Historic Site"), ("Shaanxi History Museum", "Museum/Exhibition"),
        ("Huaqing Palace", "Hot Spring/Wellness"), ("Mount Hua", "Outdoor Adventure"),
        ("Datang Everbright City", "Cityscape"))),
    _c("Nanjing", "南京", "Jiangsu", "025", 1.2, 1.0, ("NKG",), "NKG",
       ("Nanjing South", "Nanjing"),
       ("Xuanwu", "Qinhuai", "Gulou", "Jianye", "Qixia", "Jiangning"),
       (22, 13, 16, 6, 0.3),
       (("Sun Yat-sen Mausoleum", "Cultural/Historic Site"), ("Confucius Temple", "Religious Site"),
        ("Nanjing Museum", "Museum/Exhibition"), ("Xuanwu Lake", "Park/Square"),
        ("Purple Mountain", "Natural Landscape"), ("Ming Xiaoling Mausoleum", "Cultural/Historic Site"))),
    _c("Suzhou", "苏州", "Jiangsu", "0512", 1.1, 1.0, (), None,
       ("Suzhou", "Suzhou North"),
       ("Gusu", "Wuzhong", "Xiangcheng", "Huqiu", "Suzhou Industrial Park", "Wujiang"),
       (23, 15, 17, 9, 0.3),
       (("Humble Administrator's Garden", "Cultural/Historic Site"),
        ("Tiger Hill", "Comprehensive Scenic Area"), ("Zhouzhuang Water Town", "Rural/Folk Village"),
        ("Suzhou Museum", "Museum/Exhibition"), ("Hanshan Temple", "Religious Site"),
        ("Jinji Lake", "Water Activities"))),
    _c("Wuhan", "武汉", "Hubei", "027", 1.2, 0.9, ("WUH",), "WUH",
       ("Wuhan", "Hankou", "Wuchang"),
       ("Jiang'an", "Jianghan", "Wuchang", "Hongshan", "Hanyang", "Qiaokou"),
       (23, 14, 16, 7, 0.3),
       (("Yellow Crane Tower", "Cultural/Historic Site"), ("East Lake", "Comprehensive Scenic Area"),
        ("Hubei Provincial Museum", "Museum/Exhibition"), ("Guiyuan Temple", "Religious Site"),
        ("Wuhan Yangtze River Bridge", "Cityscape"), ("Hankou Riverside Park", "Park/Square"))),
    _c("Changsha", "长沙", "Hunan", "0731", 1.1, 0.85, ("CSX",), "CSX",
       ("Changsha South", "Changsha"),
       ("Furong", "Tianxin", "Yuelu", "Kaifu", "Yuhua", "Wangcheng"),
       (23, 15, 17, 9, 0.35),
       (("Orange Isle", "Park/Square"), ("Yuelu Mountain", "Natural Landscape"),
        ("Hunan Museum", "Museum/Exhibition"), ("Yuelu Academy", "Cultural/Historic Site"),
        ("Taiping Street", "Cultural/Historic Site"), ("Changsha Ecological Zoo", "Animal Watching"))),
    _c("Xiamen", "厦门", "Fujian", "0592", 0.9, 1.05, ("XMN",), "XMN",
       ("Xiamen North", "Xiamen"),
       ("Siming", "Huli", "Jimei", "Haicang", "Tong'an", "Xiang'an"),
       (27, 20, 23, 16, 0.2),
       (("Gulangyu Island", "Comprehensive Scenic Area"), ("Nanputuo Temple", "Religious Site"),
        ("Zengcuoan Village", "Rural/Folk Village"), ("Huandao Road", "Cityscape"),
        ("Xiamen Botanical Garden", "Natural Landscape"))),
    _c("Qingdao", "青岛", "Shandong", "0532", 0.9, 0.95, ("TAO",), "TAO",
       ("Qingdao North", "Qingdao"),
       ("Shinan", "Shibei", "Laoshan", "Licang", "Chengyang", "Huangdao"),
       (19, 12, 12, 5, 0.2),
       (("Zhanqiao Pier", "Cityscape"), ("Mount Laoshan", "Natural Landscape"),
        ("Tsingtao Beer Museum", "Museum/Exhibition"),
        ("Badaguan Scenic Area", "Comprehensive Scenic Area"), ("Golden Beach", "Water Activities"),
        ("Qingdao Polar Ocean World", "Animal Watching"))),
    _c("Kunming", "昆明", "Yunnan", "0871", 0.9, 0.85, ("KMG",), "KMG",
       ("Kunming South", "Kunming"),
       ("Wuhua", "Panlong", "Guandu", "Xishan", "Chenggong"),
       (20, 11, 18, 7, 0.3),
       (("Dianchi Lake", "Natural Landscape"), ("Stone Forest", "Natural Landscape"),
        ("Green Lake Park", "Park/Square"), ("Yunnan Nationalities Village", "Rural/Folk Village"),
        ("Yuantong Temple", "Religious Site"), ("Western Hills", "Outdoor Adventure"))),
    _c("Guilin", "桂林", "Guangxi", "0773", 0.6, 0.8, ("KWL",), "KWL",
       ("Guilin North", "Guilin"),
       ("Xiufeng", "Xiangshan", "Diecai", "Qixing", "Yanshan", "Yangshuo County"),
       (25, 17, 19, 12, 0.35),
       (("Li River", "Water Activities"), ("Elephant Trunk Hill", "Natural Landscape"),
        ("Reed Flute Cave", "Natural Landscape"), ("Longji Rice Terraces", "Rural/Folk Village"),
        ("Seven Star Park", "Park/Square"))),
    _c("Sanya", "三亚", "Hainan", "0898", 0.8, 1.35, ("SYX",), "SYX",
       ("Sanya",),
       ("Jiyang", "Tianya", "Haitang", "Yazhou"),
       (30, 24, 28, 21, 0.3),
       (("Yalong Bay", "Water Activities"), ("Tianya Haijiao", "Natural Landscape"),
        ("Nanshan Cultural Tourism Zone", "Religious Site"), ("Wuzhizhou Island", "Water Activities"),
        ("Atlantis Sanya Aquaventure", "Theme Park"), ("Luhuitou Park", "Park/Square"),
        ("Yanoda Rainforest", "Outdoor Adventure"))),
    _c("Lijiang", "丽江", "Yunnan", "0888", 0.6, 0.9, ("LJG",), "LJG",
       ("Lijiang",),
       ("Gucheng", "Yulong County"),
       (19, 8, 16, 3, 0.2),
       (("Lijiang Old Town", "Cultural/Historic Site"),
        ("Jade Dragon Snow Mountain", "Natural Landscape"), ("Black Dragon Pool", "Park/Square"),
        ("Shuhe Ancient Town", "Rural/Folk Village"), ("Blue Moon Valley", "Natural Landscape"))),
    _c("Harbin", "哈尔滨", "Heilongjiang", "0451", 0.9, 0.85, ("HRB",), "HRB",
       ("Harbin West", "Harbin"),
       ("Daoli", "Nangang", "Daowai", "Xiangfang", "Songbei", "Pingfang"),
       (12, 0, -1, -12, 0.2),
       (("Central Street", "Cityscape"), ("Saint Sophia Cathedral", "Religious Site"),
        ("Harbin Ice and Snow World", "Ice/Snow Sports"), ("Sun Island", "Comprehensive Scenic Area"),
        ("Siberian Tiger Park", "Animal Watching"), ("Yabuli Ski Resort", "Ice/Snow Sports"))),
    _c("Tianjin", "天津", "Tianjin", "022", 1.2, 0.95, ("TSN",), "TSN",
       ("Tianjin West", "Tianjin"),
       ("Heping", "Hexi", "Nankai", "Hedong", "Hebei", "Binhai New Area"),
       (20, 9, 10, 0, 0.15),
       (("Tianjin Eye", "Cityscape"), ("Italian Style Town", "Cultural/Historic Site"),
        ("Ancient Culture Street", "Cultural/Historic Site"), ("Five Great Avenues", "Cityscape"),
        ("Tianjin Museum", "Museum/Exhibition"), ("Tianjin Water Park", "Park/Square"))),
    _c("Dalian", "大连", "Liaoning", "0411", 0.9, 0.9, ("DLC",), "DLC",
       ("Dalian North", "Dalian"),
       ("Zhongshan", "Xigang", "Shahekou", "Ganjingzi", "Lushunkou", "Jinzhou"),
       (18, 10, 9, 2, 0.2),
       (("Xinghai Square", "Park/Square"), ("Tiger Beach Ocean Park", "Animal Watching"),
        ("Bangchuidao", "Natural Landscape"), ("Golden Pebble Beach", "Water Activities"),
        ("Discoveryland Dalian", "Theme Park"), ("Lushun Museum", "Museum/Exhibition"))),
    _c("Zhangjiajie", "张家界", "Hunan", "0744", 0.6, 0.8, ("DYG",), "DYG",
       ("Zhangjiajie West", "Zhangjiajie"),
       ("Yongding", "Wulingyuan", "Cili County", "Sangzhi County"),
       (22, 14, 16, 8, 0.4),
       (("Zhangjiajie National Forest Park", "Natural Landscape"),
        ("Tianmen Mountain", "Outdoor Adventure"),
        ("Zhangjiajie Grand Canyon Glass Bridge", "Outdoor Adventure"),
        ("Huanglong Cave", "Natural Landscape"), ("Baofeng Lake", "Water Activities"),
        ("Tujia Folk Customs Park", "Rural/Folk Village"))),
    _c("Huangshan", "黄山", "Anhui", "0559", 0.6, 0.85, ("TXN",), "TXN",
       ("Huangshan North", "Huangshan"),
       ("Tunxi", "Huangshan District", "Huizhou", "Yi County", "Shexian"),
       (23, 12, 17, 6, 0.35),
       (("Mount Huangshan", "Natural Landscape"), ("Hongcun Village", "Rural/Folk Village"),
        ("Xidi Village", "Rural/Folk Village"), ("Tunxi Old Street", "Cultural/Historic Site"),
        ("Huangshan Hot Spring", "Hot Spring/Wellness"))),
    _c("Lhasa", "拉萨", "Tibet", "0891", 0.5, 1.0, ("LXA",), "LXA",
       ("Lhasa",),
       ("Chengguan", "Doilungdeqen", "Dagze"),
       (17, 1, 11, -6, 0.1),
       (("Potala Palace", "Cultural/Historic Site"), ("Jokhang Temple", "Religious Site"),
        ("Barkhor Street", "Cultural/Historic Site"), ("Norbulingka", "Park/Square"),
        ("Namtso Lake", "Natural Landscape"), ("Tibet Museum", "Museum/Exhibition"))),
)}  # fmt: skip

assert tuple(CITY_INFO) == CITIES, "catalog must list the cities in vocab order"

# Extra spellings accepted for city names (besides case and punctuation differences).
CITY_ALIASES: dict[str, tuple[str, ...]] = {
    "Beijing": ("Peking", "BJS"), "Shanghai": ("SHA",), "Guangzhou": ("Canton",),
    "Xi'an": ("Xian", "Xi an", "Sian"), "Chongqing": ("Chungking",), "Lhasa": ("Lasa",),
    "Xiamen": ("Amoy",), "Qingdao": ("Tsingtao",), "Nanjing": ("Nanking",),
    "Harbin": ("Haerbin",), "Tianjin": ("Tientsin",), "Huangshan": ("Yellow Mountain",),
}  # fmt: skip

# (code, name, hub cities)
AIRLINES: tuple[tuple[str, str, tuple[str, ...]], ...] = (
    ("CA", "Air China", ("Beijing", "Chengdu", "Chongqing", "Tianjin")),
    ("MU", "China Eastern Airlines", ("Shanghai", "Kunming", "Xi'an", "Nanjing", "Wuhan")),
    ("CZ", "China Southern Airlines", ("Guangzhou", "Shenzhen", "Changsha", "Dalian", "Harbin")),
    ("HU", "Hainan Airlines", ("Beijing", "Sanya", "Xi'an", "Dalian")),
    ("MF", "Xiamen Airlines", ("Xiamen", "Hangzhou", "Tianjin")),
    ("ZH", "Shenzhen Airlines", ("Shenzhen", "Nanjing")),
    ("3U", "Sichuan Airlines", ("Chengdu", "Chongqing", "Kunming")),
    ("FM", "Shanghai Airlines", ("Shanghai",)),
    ("9C", "Spring Airlines", ("Shanghai",)),
    ("HO", "Juneyao Air", ("Shanghai",)),
    ("SC", "Shandong Airlines", ("Qingdao", "Xiamen")),
    ("TV", "Tibet Airlines", ("Lhasa", "Chengdu")),
    ("GJ", "Loong Air", ("Hangzhou",)),
    ("GS", "Tianjin Airlines", ("Tianjin",)),
)
LOW_COST_AIRLINES = ("9C",)  # economy cabin only
AIRCRAFT_NARROW = ("Airbus A320neo", "Airbus A321", "Boeing 737-800", "Boeing 737 MAX 8",
                   "COMAC C919", "Airbus A319")  # fmt: skip
AIRCRAFT_WIDE = ("Airbus A330-300", "Airbus A350-900", "Boeing 787-9", "Boeing 777-300ER")
AIRCRAFT_REGIONAL = ("COMAC ARJ21-700",)  # economy only
ECONOMY_CODES = ("Y", "B", "M", "H", "K", "L", "Q", "V")  # from full fare to deep discount
BUSINESS_CODES = ("C", "D", "I")

HOTEL_BRANDS: dict[str, tuple[str, ...]] = {
    "5-Star/Luxury": ("The Ritz-Carlton", "Four Seasons Hotel", "JW Marriott Hotel", "Park Hyatt",
                      "Mandarin Oriental", "Shangri-La Hotel", "InterContinental", "Conrad",
                      "Grand Hyatt", "Kempinski Hotel", "Sofitel", "Wanda Vista", "Banyan Tree",
                      "The Westin", "Waldorf Astoria"),
    "4-Star/Upscale": ("Crowne Plaza", "Sheraton", "Hilton Garden Inn", "Courtyard by Marriott",
                       "Novotel", "Holiday Inn", "Wyndham Grand", "New Century Hotel",
                       "Atour S Hotel", "Pullman", "Four Points by Sheraton", "Jin Jiang Hotel",
                       "Radisson Blu", "Hyatt Place", "Jinling Hotel"),
    "3-Star/Comfort": ("Atour Hotel", "Ji Hotel", "Orange Hotel", "Vienna Hotel",
                       "Holiday Inn Express", "Manxin Hotel", "Crystal Orange Hotel",
                       "Lavande Hotel", "Mercure", "Ibis Styles", "CitiGO Hotel", "Hampton by Hilton",
                       "James Joyce Coffetel", "Campanile Hotel"),
    "2-Star & Below/Economy": ("Hanting Hotel", "Home Inn", "Jinjiang Inn", "7 Days Inn",
                               "GreenTree Inn", "Super 8 Hotel", "Ibis Hotel", "Motel 168",
                               "Pod Inn", "Elan Hotel", "City Comfort Inn", "Hi Inn"),
}  # fmt: skip
HOMESTAY_WORDS = ("Courtyard", "Old Town", "Riverside", "Bamboo", "Cloud", "Lotus", "Tea House",
                  "Garden", "Lakeview", "Mountain View", "Moonlight", "Sunrise", "Blue Sky",
                  "Little Fox", "Stone Bridge", "Willow", "Orchid", "Pine", "Starry", "Maple")  # fmt: skip
HOMESTAY_NOUNS = ("Homestay", "Guesthouse", "Inn", "Lodge", "Residence", "House")
HOTEL_STYLES: dict[str, tuple[str, ...]] = {
    "5-Star/Luxury": ("Luxury", "Resort", "Business"),
    "4-Star/Upscale": ("Upscale", "Business", "Resort"),
    "3-Star/Comfort": ("Comfort", "Chain", "Business"),
    "2-Star & Below/Economy": ("Economy", "Chain", "Budget"),
    "City Homestay": ("Homestay", "Boutique", "Apartment"),
}
LANDMARKS = ("Railway Station", "Metro Station", "Convention Center", "Riverside", "Downtown",
             "University Town", "Airport", "Pedestrian Street", "Central Plaza", "Science Park",
             "Old Town", "Exhibition Center", "Financial District", "Sports Center", "Lakeside")  # fmt: skip
ROADS = ("Jiefang Road", "Renmin Road", "Zhongshan Road", "Jianshe Road", "Heping Road",
         "Xinhua Road", "Wenhua Road", "Dongfeng Road", "Changjiang Road", "Beijing Road",
         "Yan'an Road", "Huaihai Road", "Nanjing Road", "Chaoyang Road", "Qingnian Road",
         "Shengli Road", "Gongyuan Road", "Binjiang Avenue", "Century Avenue", "Xueyuan Road")  # fmt: skip

# cuisine -> (brand names, sub-cuisines for the tertiary category)
RESTAURANT_BRANDS: dict[str, tuple[tuple[str, ...], tuple[str, ...]]] = {
    "Beverages": (("HeyTea", "Nayuki", "Luckin Coffee", "Starbucks", "Chagee", "Manner Coffee",
                   "Coco Fresh Tea", "Mixue", "Lelecha", "Tims Coffee"),
                  ("Milk Tea", "Coffee", "Fresh Juice")),
    "Snacks/Fast Food": (("KFC", "McDonald's", "Wallace", "Dicos", "Yonghe King", "Shaxian Snacks",
                          "Lanzhou Beef Noodles", "Zhou Hei Ya", "Laoxiangji", "Burger King"),
                         ("Fast Food", "Noodles", "Street Snacks")),
    "Other Cuisines": (("Xinjiang Grill House", "Mongolian Lamb Kitchen", "Indian Curry House",
                        "Middle Eastern Kitchen", "Vegetarian Garden", "Halal Noodle House",
                        "Tibetan Yak Kitchen", "Mexican Cantina", "Russian Restaurant"),
                       ("Xinjiang Cuisine", "Vegetarian", "Halal", "Middle Eastern")),
    "Hot Pot": (("Haidilao Hot Pot", "Xiaolongkan Hot Pot", "Dalongyi Hot Pot", "Shu Daxia Hot Pot",
                 "Coucou Hot Pot", "Banu Hot Pot", "Donglaishun Mutton Hot Pot",
                 "Chaoshan Beef Hot Pot", "Qiao Yi Qiao Hot Pot", "Chuanchuan Xiang"),
                ("Chongqing Hot Pot", "Beef Hot Pot", "Mutton Hot Pot", "Skewer Hot Pot")),
    "Western Food": (("Wang Steak", "Pizza Hut", "Blue Frog", "Element Fresh", "Bistro 1920",
                      "Trattoria Italiana", "Prime Steakhouse", "Brasserie Parisienne"),
                     ("Steak", "Italian", "French", "Burgers")),
    "Cantonese": (("Tao Heung", "Dian Dou De", "Guangzhou Restaurant", "Bingsheng", "Tim Ho Wan",
                   "Lei Garden", "Taotaoju", "Canton Roast Goose House"),
                  ("Dim Sum", "Roast Meats", "Cantonese Seafood")),
    "Other Chinese Food": (("Xibei Youmian Village", "Jiangxi Home Kitchen", "Dongbei Home Kitchen",
                            "Guizhou Sour Soup Fish", "Yunnan Home Cooking", "Hakka Kitchen",
                            "Fujian Home Cooking", "Anhui Cuisine House"),
                           ("Northwest Cuisine", "Yunnan Cuisine", "Guizhou Cuisine", "Hakka")),
    "Shanghai/Zhejiang Cuisine": (("Lv Bo Lang", "Din Tai Fung", "Jia Jia Tang Bao", "Louwailou",
                                   "Xiao Nan Guo", "Grandma's Home", "Jiangnan Kitchen",
                                   "Xinrongji"),
                                  ("Shanghainese", "Hangzhou Cuisine", "Soup Dumplings")),
    "Sichuan Cuisine": (("Chen Mapo Tofu", "Yu's Family Kitchen", "South Beauty",
                         "Tai Er Sauerkraut Fish", "Yuxin Sichuan Dish", "Chuan Ban",
                         "Spicy Sichuan Kitchen", "Ba Guo Bu Yi"),
                        ("Classic Sichuan", "Sauerkraut Fish", "Spicy Stir-fry")),
    "Bakery/Desserts": (("85C Bakery", "Holiland", "BreadTalk", "Paris Baguette",
                         "Tous Les Jours", "Hui Lau Shan", "Xu Ji Desserts", "Sweet Dessert House"),
                        ("Bakery", "Desserts", "Cakes")),
    "Barbecue": (("Feng Mao Lamb Skewers", "Muwu BBQ", "Korean BBQ House", "Night Grill",
                  "Charcoal BBQ Yard", "Xinjiang Lamb Skewers"),
                 ("Skewers", "Korean BBQ", "Grilled Fish")),
    "Buffet": (("Jin Qian Bao Buffet", "Ocean Seafood Buffet", "Sky Buffet", "Grand Buffet",
                "Hot Pot Buffet House", "International Buffet"),
               ("Seafood Buffet", "International Buffet", "Hot Pot Buffet")),
    "Northern Chinese Food": (("Quanjude Roast Duck", "Da Dong Roast Duck", "Dumpling King",
                               "Xiao Diao Li Tang", "Zhajiangmian House", "Shandong Kitchen",
                               "Northeast Dumpling House", "Siji Minfu"),
                              ("Peking Duck", "Dumplings", "Shandong Cuisine", "Noodles")),
    "Hunan Cuisine": (("Fei Da Ye Hunan Kitchen", "Wen Heyou", "Xiang E Qing", "Huogongdian",
                       "Fei Zai Wei", "Old Hunan Cuisine", "Tan Zong Lin Xiang Kitchen"),
                      ("Classic Hunan", "Spicy Crayfish", "Stinky Tofu")),
    "Seafood": (("Seafood Fangzhou", "Ocean Harbor Seafood", "Fisherman's Wharf Seafood",
                 "Jiangbian Chengwai", "Pier Seafood", "Seafood Market Kitchen"),
                ("Fresh Seafood", "Grilled Fish", "Crayfish")),
    "Japanese/Korean Cuisine": (("Sushi Oh", "Ajisen Ramen", "Yoshinoya", "Izakaya Tori",
                                 "Ramen Bar Ichi", "Seoul Kimchi House", "Sushi Bar Hanami"),
                                ("Sushi", "Ramen", "Korean Cuisine", "Izakaya")),
    "Southeast Asian Cuisine": (("Thai Kitchen", "Pho Saigon", "Malaysian Kopitiam",
                                 "Singapore Laksa House", "Bali Garden", "Coconut Curry House"),
                                ("Thai", "Vietnamese", "Malaysian", "Singaporean")),
}  # fmt: skip

# entertainment type -> (brand names, tertiary categories)
ENTERTAINMENT_BRANDS: dict[str, tuple[tuple[str, ...], tuple[str, ...]]] = {
    "KTV": (("Partyworld KTV", "Melody KTV", "Haoledi KTV", "Magic Mike KTV", "K-Party KTV"),
            ("Karaoke",)),
    "Bar/Pub": (("Blue Moon Bar", "Hops Craft Beer", "Great Leap Brewing", "Jing-A Taproom",
                 "Rooftop Lounge", "The Irish Pub"), ("Cocktail Bar", "Craft Beer", "Pub")),
    "Theatre/Show": (("Grand Theatre", "Opera House", "Tang Dynasty Show", "Impression Show",
                      "Poly Theatre"), ("Opera", "Drama", "Dance Show")),
    "Escape Room": (("Mystery Escape Room", "Room Escape Studio", "Secret Chamber", "Puzzle Lab"),
                    ("Escape Game", "Immersive Mystery")),
    "Spa/Massage": (("Huaxia Liangzi Foot Spa", "Tai Chi Spa", "Bamboo Massage", "Lotus Spa",
                     "Zen Wellness"), ("Foot Massage", "Spa", "Traditional Massage")),
    "Cinema": (("Wanda Cinemas", "CGV Cinemas", "Jinyi Cinemas", "Bona Cinemas", "UME Cineplex"),
               ("IMAX", "Cinema")),
    "Night Market": (("Night Market", "Food Night Market", "Riverside Night Market"),
                     ("Night Market",)),
    "Live Music": (("MAO Livehouse", "Yugong Yishan", "School Bar", "Jazz Club", "Livehouse"),
                   ("Livehouse", "Jazz")),
    "Board Game Cafe": (("Dice & Tea", "Meeple Cafe", "Werewolf Club", "Game On Cafe"),
                        ("Board Games", "Murder Mystery")),
    "Acrobatics": (("Acrobatic Theatre", "Acrobatic Troupe Show", "Circus World"),
                   ("Acrobatics", "Circus")),
}  # fmt: skip

# attraction type -> name patterns ({w} a place word, {c} the city)
ATTRACTION_PATTERNS: dict[str, tuple[str, ...]] = {
    "Park/Square": ("{w} Park", "{w} Square", "{w} Forest Park", "{w} Botanical Garden"),
    "Museum/Exhibition": ("{c} {w} Museum", "{w} Art Gallery", "{c} Science Museum",
                          "{w} Memorial Hall", "{c} Planning Exhibition Hall"),
    "Cultural/Historic Site": ("{w} Ancient Street", "{w} Former Residence", "{w} Pagoda",
                               "{w} Gate", "{w} Historic Courtyard"),
    "Cityscape": ("{w} Observation Deck", "{w} Riverside Promenade", "{w} Skyline Walk",
                  "{w} Bridge", "{w} Street"),
    "Natural Landscape": ("{w} Mountain", "{w} Gorge", "{w} Lake", "{w} Waterfall", "{w} Cave"),
    "Comprehensive Scenic Area": ("{w} Scenic Area", "{w} Cultural Tourism Zone", "{w} Eco Park"),
    "Religious Site": ("{w} Temple", "{w} Monastery", "{w} Taoist Temple", "{w} Church"),
    "Theme Park": ("{w} Happy Valley", "{w} Fantawild Adventure", "{w} Amusement Park",
                   "{w} Ocean Kingdom"),
    "Outdoor Adventure": ("{w} Hiking Trail", "{w} Rock Climbing Park", "{w} Zipline Park",
                          "{w} Canyon Rafting"),
    "Water Activities": ("{w} Beach", "{w} Water Park", "{w} Lake Boating", "{w} Rafting"),
    "Hot Spring/Wellness": ("{w} Hot Spring Resort", "{w} Hot Spring", "{w} Wellness Valley"),
    "Rural/Folk Village": ("{w} Ancient Village", "{w} Folk Village", "{w} Water Town"),
    "Animal Watching": ("{w} Zoo", "{w} Aquarium", "{w} Wildlife Park", "{w} Bird Sanctuary"),
    "Ice/Snow Sports": ("{w} Ski Resort", "{w} Indoor Ski Hall", "{w} Ice Rink", "{w} Snow Park"),
    "Water Conservancy Facility": ("{w} Dam", "{w} Reservoir", "{w} Water Conservancy Park",
                                   "{w} Ship Lock"),
}  # fmt: skip
PLACE_WORDS = ("Qinghe", "Baiyun", "Longtan", "Xiangshan", "Jinshan", "Yuhua", "Fenghuang",
               "Taoyuan", "Qingshui", "Yunlong", "Wanshou", "Huilong", "Shuangxi", "Dongfang",
               "Tianfu", "Jinhua", "Lianhua", "Biyun", "Cuiwei", "Songhe", "Wolong", "Jiuxi",
               "Baihe", "Hongshan", "Luojia", "Meiling", "Xinghai", "Yuquan", "Zijin", "Qixia",
               "Feilai", "Tianping", "Shizi", "Nanhu", "Beihu", "Hexi", "Jingshan", "Liuyun")  # fmt: skip

REVIEW_GOOD = ("Clean and comfortable, would come again.", "Great location and friendly staff.",
               "Worth the price, highly recommended.", "Excellent service and atmosphere.",
               "Exceeded our expectations.", "Convenient transport nearby.")  # fmt: skip
REVIEW_MIXED = ("Decent overall but a bit crowded.", "Good value, service could be faster.",
                "Nice place, though parking was hard to find.", "Average experience, nothing special.",
                "A little noisy at night.")  # fmt: skip
REVIEW_BAD = ("Disappointing, not as described.", "Long waiting time and rude staff.",
              "Overpriced for what you get.")  # fmt: skip

WIND_DIRECTIONS = ("North", "Northeast", "East", "Southeast", "South", "Southwest", "West",
                   "Northwest")  # fmt: skip


@lru_cache(maxsize=1)
def city_coordinates() -> dict[str, tuple[float, float]]:
    """City name -> (lat, lon) of its centre, read from pyecharts' bundled coordinate table."""
    table = json.loads(_package_file("pyecharts", "datasets", "city_coordinates.json"))
    out = {}
    for name, info in CITY_INFO.items():
        lon, lat = table.get(info.name_zh + "市") or table[info.name_zh]
        out[name] = (round(float(lat), 5), round(float(lon), 5))
    return out


def _package_file(package: str, *parts: str) -> str:
    """The text of a data file of an installed ``package``, found without importing it
    (importing pyecharts takes longer than reading the table)."""
    spec = importlib.util.find_spec(package)
    if spec is None or not spec.submodule_search_locations:
        return (resources.files(package).joinpath(*parts)).read_text(encoding="utf-8")
    return Path(spec.submodule_search_locations[0], *parts).read_text(encoding="utf-8")


@lru_cache(maxsize=1)
def airport_records() -> dict[str, dict]:
    """IATA code -> {name, city, lat, lon} for every airport of a catalogue city (airportsdata).

    Reads airportsdata's table as ``airportsdata.load("IATA")`` does (the last row of a code
    wins), parsing only the rows of the codes needed."""
    wanted = {code for info in CITY_INFO.values() for code in info.airports}
    table: dict[str, dict] = {}
    lines = _package_file("airportsdata", "airports.csv").splitlines()
    header = next(csv.reader(lines[:1]))
    rows = [line for line in lines[1:] if line.split(",", 2)[1].strip('"') in wanted]
    for values in csv.reader(rows, quoting=csv.QUOTE_NONNUMERIC):
        row = dict(zip(header, values, strict=True))
        table[row["iata"]] = row
    out = {}
    for name, info in CITY_INFO.items():
        for code in info.airports:
            rec = table[code]
            out[code] = {
                "code": code,
                "name": rec["name"],
                "city": name,
                "lat": round(float(rec["lat"]), 5),
                "lon": round(float(rec["lon"]), 5),
            }
    return out
