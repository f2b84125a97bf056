"""TPCx-AI text tables: review (UC04), marketplace (UC05) and product_rating (UC07).

- review(review_id, spam, text): product reviews; spam (label, 0/1) is a minority (~20 %).
  Genuine reviews draw words from one Zipf distribution over a vocabulary, spam from a
  different, overlapping one mixed with the genuine one, plus promotional phrases that genuine
  reviews use rarely; some spam reads exactly like a genuine review (noise), so no model is
  perfect. Rows: the reference's product-rating count (~133 k at SF 1).
- marketplace(listing_id, price, description): one listing per customer (~68 k at SF 1). The
  description names a size, a material, a category, a brand and a condition among filler words;
  the price (label) is the product of their effects (brand -> tier, unseen in the text) times
  log-normal noise.
- product_rating(user_id, product_id, rating): user ids in 0..customers-1, product ids in
  0..products-1 (spec.row_drivers). Ratings 1..5 come from a latent score (global user and item
  biases plus a low-rank user x item interaction plus noise) cut into five bins; they are
  polarised (mostly 1 or 5), as on-line ratings are, so a constant prediction is off by ~2.

The vocabularies, brands and their tiers, and the user/item factors are the population: drawn from
spec.rng(seed, "text", "population", ...), shared by the training, serving and scoring splits.
Every other draw comes from spec.rng(seed, "text", split, "chunk", chunk, table).

Text is built without per-row Python: a flat array of token indices per table, turned into a
pyarrow list array over the vocabulary and joined with spaces (pyarrow.compute.binary_join).

Minimums for a tiny SF (the reference counts are used above them): 10 000 reviews, 3 000
listings, 10 000 ratings, 1 000 customers and 20 products in the training split; the serving and
scoring splits are spec.SERVING_FRACTION of these.
"""

import functools
import math

from suite.tpcx_ai import spec

NAME = "text"
CHUNK_ROWS = 1 << 15  # rows of the largest table per chunk (text is costlier than numbers)
MIN_FULL = {"review": 10000, "marketplace": 3000, "product_rating": 10000}
MIN_CUSTOMERS, MIN_PRODUCTS = 1000, 20
SPAM_RATE = 0.2
SPAM_HIDDEN = 0.25  # share of spam written like a genuine review (UC04 F1 ~0.8, the kit 0.71 at SF 10)
SPAM_MIX = 0.6  # share of a spam review's words drawn from the spam distribution
PHRASE_P = (0.008, 0.08)  # chance that a word is a promotional phrase: genuine, spam
SPAM_ZIPF = 1.2  # exponent of the spam word distribution (genuine: 1.05)

_REVIEW_WORDS = (
    "great good bad poor excellent quality price value product item order delivery shipping fast slow "
    "arrived package box broke broken works working stopped battery screen sound color size fit small large "
    "comfortable cheap expensive worth money recommend return refund seller service support love hate "
    "happy disappointed perfect terrible awesome nice solid sturdy flimsy easy hard install setup manual "
    "instructions design material plastic metal fabric smell noise loud quiet bright dark light heavy weeks "
    "months days year daughter son husband wife gift birthday kitchen office car garden kids dog cat"
).split()
_SPAM_WORDS = (
    "free deal deals offer discount coupon code promo bonus cash winner win prize guaranteed exclusive "
    "limited click visit website link subscribe cheapest bargain sale clearance unbelievable amazing "
    "incredible instant best lowest"
).split()
_SPAM_PHRASES = (
    "buy now", "limited offer", "free shipping", "click link", "visit website", "discount code",
    "best price", "act fast", "order today", "special promotion", "money back", "huge savings",
    "exclusive deal", "free gift", "lowest price", "top seller",
)
_CATEGORIES = (  # (words, base price in dollars)
    ("phone case", 12), ("mug", 9), ("t-shirt", 15), ("notebook", 7), ("backpack", 45),
    ("headphones", 80), ("desk lamp", 35), ("sneakers", 70), ("jacket", 95), ("blender", 60),
    ("office chair", 150), ("wristwatch", 180), ("tent", 190), ("power drill", 110),
    ("acoustic guitar", 320), ("camera", 520), ("bicycle", 450), ("sofa", 750), ("laptop", 900),
    ("engagement ring", 1200),
)
_MATERIALS = (("plastic", 0.75), ("cotton", 0.9), ("glass", 1.0), ("wooden", 1.15), ("steel", 1.3),
              ("aluminium", 1.4), ("leather", 1.7), ("carbon fiber", 2.1))
_SIZES = (("mini", 0.7), ("small", 0.85), ("medium", 1.0), ("large", 1.25), ("extra large", 1.5))
_CONDITIONS = (("brand new", 1.0), ("like new", 0.85), ("refurbished", 0.7), ("used", 0.55),
               ("for parts", 0.3))
_TIERS = (0.55, 1.0, 1.8, 3.2)  # budget, standard, premium, luxury brands
_FILLERS = (
    "condition shipping available pickup local original box included works perfectly tested clean "
    "smoke free home barely great deal must sell moving sale price firm negotiable cash only ask "
    "questions message details photos see description authentic genuine color black white blue red "
    "grey green pink model year warranty receipt accessories charger manual"
).split()
_ONSETS = ("b", "c", "d", "f", "g", "h", "j", "k", "l", "m", "n", "p", "r", "s", "t", "v", "z",
           "br", "cr", "dr", "fl", "gr", "pl", "st", "tr", "sk", "qu")
_VOWELS = ("a", "e", "i", "o", "u", "ai", "ea", "ou", "io")
_CODAS = ("", "", "n", "r", "s", "l", "x", "m")

PSEUDO_WORDS = 1500
WORD_TABLE = 1 << 16  # slots of a word distribution (see _zipf_table)
BRANDS = 80
RATING_FACTORS = 8
RATING_CUTS = (-0.45, -0.2, 0.2, 0.45)  # latent score -> rating 1..5


def _label(field):
    return field.with_metadata({b"label": b"1"})


def schemas():
    import pyarrow as pa

    return {
        "review": pa.schema([pa.field("review_id", pa.int64()), _label(pa.field("spam", pa.int8())),
                             pa.field("text", pa.string())]),
        "marketplace": pa.schema([pa.field("listing_id", pa.int64()), _label(pa.field("price", pa.float64())),
                                  pa.field("description", pa.string())]),
        "product_rating": pa.schema([pa.field("user_id", pa.int64()), pa.field("product_id", pa.int64()),
                                     _label(pa.field("rating", pa.int8()))]),
    }


def population_size(sf: float) -> tuple[int, int]:
    """(customers, products) whose ids the ratings use."""
    d = spec.row_drivers(sf)
    return max(MIN_CUSTOMERS, int(round(d["customers"]))), max(MIN_PRODUCTS, int(round(d["products"])))


def table_rows(sf: float, split: str) -> dict[str, int]:
    d = spec.row_drivers(sf)
    full = {"review": d["product_ratings"], "marketplace": d["marketplace"], "product_rating": d["product_ratings"]}
    return {t: spec.split_rows(max(MIN_FULL[t], n), split) for t, n in full.items()}


def chunks(sf: float, split: str) -> int:
    return max(1, math.ceil(max(table_rows(sf, split).values()) / CHUNK_ROWS))


def _bounds(n: int, k: int, c: int) -> tuple[int, int]:
    return c * n // k, (c + 1) * n // k


def _pseudo_words(rng, count: int) -> list[str]:
    import numpy as np

    syl = np.array([o + v + c for o in _ONSETS for v in _VOWELS for c in _CODAS])
    syl = np.unique(syl)
    words: dict[str, None] = {}
    while len(words) < count:
        n = np.where(rng.random(2 * count) < 0.2, 3, 2)
        parts = rng.integers(0, len(syl), (2 * count, 3))
        joined = np.char.add(np.char.add(syl[parts[:, 0]], syl[parts[:, 1]]),
                             np.where(n == 3, syl[parts[:, 2]], ""))
        for w in joined.tolist():
            words.setdefault(w, None)
    return list(words)[:count]


def _zipf_table(rank, s: float):
    """A Zipf(s) distribution over the words in `rank` order, as WORD_TABLE equally likely slots
    (each word gets its probability's share of slots): a draw is one integer index, no search."""
    import numpy as np

    w = 1.0 / np.arange(1, len(rank) + 1) ** s
    ends = np.round(np.cumsum(w) / w.sum() * WORD_TABLE).astype(np.int64)
    return np.repeat(rank, np.diff(ends, prepend=0)).astype(np.int32)


@functools.lru_cache(maxsize=4)
def _vocabulary(seed: int) -> dict:
    """Review and listing vocabularies, word distributions and brand tiers (the population)."""
    import numpy as np
    import pyarrow as pa

    rng = spec.rng(seed, NAME, "population", "vocabulary")
    pseudo = _pseudo_words(rng, PSEUDO_WORDS + BRANDS)
    real = [w for w in _REVIEW_WORDS if w not in set(pseudo)]
    words = real + _SPAM_WORDS + pseudo[:PSEUDO_WORDS]
    review_vocab = words + list(_SPAM_PHRASES)
    nw, nr, ns = len(words), len(real), len(_SPAM_WORDS)
    # genuine: Zipf over a ranking that puts the review words first, the spam words far down
    ham_rank = np.concatenate([rng.permutation(nr), nr + ns + rng.permutation(PSEUDO_WORDS)])
    ham_rank = np.insert(ham_rank, rng.integers(nr, len(ham_rank), ns), nr + np.arange(ns))
    # spam: the spam words first, then a partly reshuffled genuine ranking (overlapping)
    head = rng.permutation(ham_rank[:300])
    spam_rank = np.concatenate([nr + rng.permutation(ns), [t for t in np.concatenate([head, ham_rank[300:]])
                                                          if not nr <= t < nr + ns]])
    brands = pseudo[PSEUDO_WORDS:]
    listing_vocab = ([c for c, _ in _CATEGORIES] + [m for m, _ in _MATERIALS] + [s for s, _ in _SIZES]
                     + [c for c, _ in _CONDITIONS] + brands + list(_FILLERS) + ["by"])
    return {
        "review_vocab": pa.array(review_vocab, pa.string()),
        "ham_table": _zipf_table(ham_rank, 1.05), "spam_table": _zipf_table(spam_rank, SPAM_ZIPF),
        "phrase_base": nw, "phrases": len(_SPAM_PHRASES),
        "listing_vocab": pa.array(listing_vocab, pa.string()),
        "brand_tier": rng.integers(0, len(_TIERS), BRANDS),
    }


@functools.lru_cache(maxsize=4)
def _rating_population(seed: int, customers: int, products: int) -> dict:
    """User and item biases, factors and activity: who rates what, and how."""
    import numpy as np

    rng = spec.rng(seed, NAME, "population", "ratings", customers, products)
    k = RATING_FACTORS
    scale = (0.8 ** 2 / k) ** 0.25  # the interaction p_u . q_i has std 0.8
    user_w = rng.lognormal(0.0, 1.0, customers)
    item_w = rng.lognormal(0.0, 0.8, products)
    user_cdf, item_cdf = np.cumsum(user_w) / user_w.sum(), np.cumsum(item_w) / item_w.sum()
    user_bias, item_bias = rng.normal(0.0, 0.6, customers), rng.normal(0.0, 1.2, products)
    population = {
        "user_bias": user_bias, "item_bias": item_bias,
        "user_f": rng.normal(0.0, scale, (customers, k)), "item_f": rng.normal(0.0, scale, (products, k)),
        "user_cdf": user_cdf, "item_cdf": item_cdf, "centre": 0.0,
    }
    # the cuts are centred on the median score of what gets rated, so 1s and 5s are about equally
    # common and the mean rating is ~3 (a constant prediction is then off by ~2 on most ratings)
    population["centre"] = float(np.median(_scores(population, rng, 1 << 16)[2]))
    return population


def _scores(p, rng, n):
    """n (user, item, latent score) draws: who rates what, and how much they like it."""
    import numpy as np

    user = np.minimum(np.searchsorted(p["user_cdf"], rng.random(n)), len(p["user_cdf"]) - 1)
    item = np.minimum(np.searchsorted(p["item_cdf"], rng.random(n)), len(p["item_cdf"]) - 1)
    score = (p["user_bias"][user] + p["item_bias"][item]
             + np.einsum("ij,ij->i", p["user_f"][user], p["item_f"][item]) + rng.normal(0.0, 0.5, n))
    return user, item, score - p["centre"]


def _join(vocab, tokens, lengths):
    """Rows of space-joined words: tokens (flat indices into vocab), lengths (tokens per row)."""
    import numpy as np
    import pyarrow as pa
    import pyarrow.compute as pc

    offsets = np.zeros(len(lengths) + 1, np.int32)
    np.cumsum(lengths, out=offsets[1:])
    values = vocab.take(pa.array(tokens, pa.int32()))
    return pc.binary_join(pa.ListArray.from_arrays(pa.array(offsets), values), " ")


def _reviews(seed: int, sf: float, rng, start: int, n: int):
    import numpy as np
    import pyarrow as pa

    v = _vocabulary(seed)
    spam = rng.random(n) < SPAM_RATE
    spammy = spam & (rng.random(n) >= SPAM_HIDDEN)
    lengths = np.minimum(4 + rng.geometric(1 / 22, n), 150)
    row = np.repeat(np.arange(n), lengths)
    total = len(row)
    from_spam = spammy[row] & (rng.random(total) < SPAM_MIX)
    slot = rng.integers(0, WORD_TABLE, total)
    tokens = np.where(from_spam, v["spam_table"][slot], v["ham_table"][slot])
    phrase_p = np.where(spammy, PHRASE_P[1], PHRASE_P[0])[row]
    phrase = rng.random(total) < phrase_p
    tokens[phrase] = v["phrase_base"] + rng.integers(0, v["phrases"], int(phrase.sum()))
    return pa.table({"review_id": pa.array(np.arange(start, start + n, dtype=np.int64)),
                     "spam": pa.array(spam.astype(np.int8)),
                     "text": _join(v["review_vocab"], tokens, lengths)})


def _listings(seed: int, sf: float, rng, start: int, n: int):
    import numpy as np
    import pyarrow as pa

    v = _vocabulary(seed)
    nc, nm, ns, nk = len(_CATEGORIES), len(_MATERIALS), len(_SIZES), len(_CONDITIONS)
    base = {"m": nc, "s": nc + nm, "k": nc + nm + ns, "b": nc + nm + ns + nk}
    base["f"] = base["b"] + BRANDS
    by = base["f"] + len(_FILLERS)
    cat, mat, size, cond = (rng.integers(0, m, n) for m in (nc, nm, ns, nk))
    brand = rng.integers(0, BRANDS, n)
    log_price = (np.log([p for _, p in _CATEGORIES])[cat] + np.log([f for _, f in _MATERIALS])[mat]
                 + np.log([f for _, f in _SIZES])[size] + np.log([f for _, f in _CONDITIONS])[cond]
                 + np.log(_TIERS)[v["brand_tier"][brand]] + rng.normal(0.0, 0.2, n))
    price = np.maximum(1.0, np.round(np.exp(log_price), 2))

    def fill(width, lo, hi):  # a block of `width` slots, lo..hi filler words, the rest empty
        cells = base["f"] + rng.integers(0, len(_FILLERS), (n, width))
        return np.where(np.arange(width) < rng.integers(lo, hi + 1, n)[:, None], cells, -1)

    drop_size = rng.random(n) < 0.15  # not every seller says the size or the condition
    drop_cond = rng.random(n) < 0.1
    mat_grid = np.column_stack([
        fill(3, 0, 3), np.where(drop_size, -1, base["s"] + size), base["m"] + mat, cat,
        fill(6, 1, 6), np.full(n, by), base["b"] + brand, fill(8, 0, 8),
        np.where(drop_cond, -1, base["k"] + cond)])
    keep = mat_grid >= 0
    return pa.table({"listing_id": pa.array(np.arange(start, start + n, dtype=np.int64)),
                     "price": pa.array(price),
                     "description": _join(v["listing_vocab"], mat_grid[keep].astype(np.int32), keep.sum(1))})


def _ratings(seed: int, sf: float, rng, start: int, n: int):
    import numpy as np
    import pyarrow as pa

    p = _rating_population(seed, *population_size(sf))
    user, item, score = _scores(p, rng, n)
    rating = np.digitize(score, RATING_CUTS) + 1
    return pa.table({"user_id": pa.array(user.astype(np.int64)), "product_id": pa.array(item.astype(np.int64)),
                     "rating": pa.array(rating.astype(np.int8))})


def generate(sf: float, split: str, seed: int, chunk: int) -> dict:
    rows, k = table_rows(sf, split), chunks(sf, split)
    if not 0 <= chunk < k:
        raise ValueError(f"chunk: expected 0..{k - 1} for SF {sf} {split}, got {chunk}")
    out = {}
    for table, make in (("review", _reviews), ("marketplace", _listings), ("product_rating", _ratings)):
        lo, hi = _bounds(rows[table], k, chunk)
        out[table] = make(seed, sf, spec.rng(seed, NAME, split, "chunk", chunk, table), lo, hi - lo)
    return out


GROUP = spec.TableGroup(
    name=NAME, schemas=schemas, chunks=chunks, generate=generate, rows=table_rows,
    description="product reviews (spam), marketplace listings (price) and product ratings",
)
